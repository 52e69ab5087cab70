"""Compiled speed without :meth:`~casdyn.RigidBodyTree.compile`: the Functions a robot's
numeric calls use are compiled in the background and swapped in when ready.

After :data:`AFTER_CALLS` numeric calls of one Function (single or batched) its library —
the C of :meth:`compile`, batched entry points included — is built by one worker thread of
the process into the compile cache (:mod:`casdyn.codegen.library`), or loaded from it
where an earlier process built it, and installed in the robot's engine for every thread.
Until then, and wherever the build fails, calls take the SX path; no call ever waits for
the compiler, and a failure is no error (the first is logged as a warning on the ``casdyn`` logger).
Functions of more than :data:`casdyn.sizes.BACKGROUND_LARGEST` instructions are left to an
explicit ``compile()``: they take minutes to build.

``CASDYN_COMPILE=0`` in the environment (read when a robot is made) turns it off; without a
C compiler nothing is tried. :func:`wait` waits for the builds under way (for tests).
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import threading
import weakref

from .. import sizes

# Numeric calls of a Function before it is compiled: a Function called this often is
# called in a loop (a hundred SX calls of the UR5e's inverse dynamics take 0.4 ms)
AFTER_CALLS = 100

# On exit the process waits this long [s] for a build under way, so that the compiler's
# scratch files are cleaned up (the cache stays consistent either way: libraries are moved
# into place whole, then sealed with their digest). A build that the exit cuts short is
# given up without a word; the next process builds it.
EXIT_WAIT = 10.0

logger = logging.getLogger("casdyn")


def enabled() -> bool:
    """Whether numeric calls compile in the background: not with ``CASDYN_COMPILE=0``."""
    return os.environ.get("CASDYN_COMPILE", "1").strip().lower() not in ("0", "false", "no",
                                                                         "off")


class _Worker:
    """The process's one build thread and its queue of ``(engine reference, key)``."""

    def __init__(self):
        self.jobs: queue.Queue = queue.Queue()
        self.stopping = threading.Event()
        self.unavailable: str | None = None  # why nothing can be built (no compiler, ...)
        self.logged = False  # a failure was logged
        self.thread = threading.Thread(target=self._run, name="casdyn-compile", daemon=True)
        self.thread.start()
        atexit.register(self._stop)

    def _stop(self) -> None:
        self.stopping.set()
        self.jobs.put(None)
        self.thread.join(EXIT_WAIT)

    def _exiting(self) -> bool:
        """Whether the interpreter is shutting down: the main thread has ended (Python then
        refuses new work to thread pools, the compiler's among them) or exit has begun."""
        return self.stopping.is_set() or not threading.main_thread().is_alive()

    def _run(self) -> None:
        while True:
            job = self.jobs.get()
            try:
                if job is not None and not self._exiting() and not self.unavailable:
                    self._build(*job)
            except Exception as exc:  # a failed build is never an error
                if self._exiting():  # cut short by the exit: the cache holds no part of it
                    logger.debug("casdyn: a background build stopped at exit (%s)", exc)
                else:
                    self._log_once(f"casdyn: compiling in the background failed ({exc}); "
                                   "numeric calls keep the SX path (CASDYN_COMPILE=0 turns "
                                   "this off)")
            finally:
                self.jobs.task_done()
            if job is None:
                return

    def _build(self, reference: weakref.ref, key: tuple) -> None:
        engine = reference()
        if engine is None:
            return
        # imported here: the engine imports this module
        from ..errors import ExportError
        from ..functions.registry import VECTOR_OUTPUTS
        from . import build, library, simd
        from .forms import for_c

        try:
            build.find_compiler()
        except ExportError as exc:
            self.unavailable = str(exc)
            logger.debug("casdyn: no background compilation: %s", exc)
            return
        cache = engine.functions
        sx = cache.get_key(key)
        compiled, module, kernels = library.compile_functions(
            [for_c(cache, key)], f"casdyn_{cache.model.name}", vector_outputs=VECTOR_OUTPUTS,
            batched=[sx if simd.supported(sx) else None])
        engine.install([key], compiled, module, kernels)

    def _log_once(self, message: str) -> None:
        """The first failure of the process as a warning, later ones at debug level."""
        logger.log(logging.DEBUG if self.logged else logging.WARNING, message)
        self.logged = True


_worker: _Worker | None = None
_worker_lock = threading.Lock()


def _the_worker() -> _Worker:
    global _worker
    with _worker_lock:
        if _worker is None:
            _worker = _Worker()
        return _worker


class CallCounter:
    """Counts one engine's numeric calls of each Function not compiled yet and asks the
    worker for its library at the :data:`AFTER_CALLS`-th."""

    def __init__(self, engine):
        self._engine = weakref.ref(engine)
        self._counts: dict[tuple, int] = {}

    def note(self, key: tuple) -> None:
        """One numeric call of the Function of ``key`` (threads racing here may ask twice:
        the second build is a cache hit)."""
        count = self._counts.get(key, 0) + 1
        self._counts[key] = count
        if count != AFTER_CALLS:
            return
        engine = self._engine()
        if engine is None:
            return
        function = engine.functions.get_key(key)
        largest = sizes.BACKGROUND_LARGEST
        size = function.n_instructions() if function.is_a("SXFunction") else largest + 1
        if size <= largest:
            _the_worker().jobs.put((self._engine, key))


def wait(timeout: float | None = None) -> bool:
    """Wait until the background builds asked for so far are done (installed or given
    up); False if ``timeout`` [s] passed first."""
    worker = _worker
    if worker is None:
        return True
    done = threading.Event()

    def join() -> None:
        worker.jobs.join()
        done.set()

    threading.Thread(target=join, daemon=True).start()
    return done.wait(timeout)
