"""Progress of long work (building graphs, compiling C) on stderr.

Exporting or compiling a humanoid's functions takes 10-30 s. A :class:`Progress` says what is
being done, but only once the work has taken more than a moment (:data:`DELAY`): quick calls
print nothing. Whether it prints at all: ``progress=True`` forces it, ``progress=False``
silences it; ``None`` (the default) follows ``$CASDYN_PROGRESS`` (``1`` / ``0``) if set, else
prints only when stderr is a terminal, so logs and pipes stay clean. One object may be used
from several threads (the C files compile in parallel).

Lines look like::

    casdyn: talos: building 7 functions
    casdyn: talos: [3/7] forward_dynamics_derivatives (12.3 s)
    casdyn: talos: compiling 3 C files
    casdyn: talos: [1/3] casdyn_talos.c (1.2 s)
    casdyn: talos: done in 25.3 s
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from .errors import InputError

DELAY = 1.0  # seconds of work before anything is printed
ENVIRONMENT = "CASDYN_PROGRESS"


def enabled(progress: bool | None, stream: TextIO | None = None) -> bool:
    """Whether to print progress: ``progress`` if it is True or False, else
    ``$CASDYN_PROGRESS`` (``1``/``0``) if set, else whether ``stream`` (default stderr) is a
    terminal."""
    if progress is not None:
        if not isinstance(progress, bool):
            raise InputError(f"progress must be True, False or None, got {progress!r}")
        return progress
    setting = os.environ.get(ENVIRONMENT, "").strip().lower()
    if setting in ("1", "true", "yes", "on"):
        return True
    if setting in ("0", "false", "no", "off"):
        return False
    stream = stream if stream is not None else sys.stderr
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


class Progress:
    """Phases of counted steps, reported on ``stream`` (default: stderr at the time of each
    line) once :data:`DELAY` seconds have passed; nothing at all when not ``shown``.

    ``phase(title, total)`` starts a phase; ``with step(label):`` times one of its steps
    (steps may run in parallel threads); ``finish()`` ends the work (a closing line if
    anything was printed). Steps that ended before the delay are counted, not listed; when
    the delay passes, the current phase and the steps running then are printed.
    """

    def __init__(self, subject: str, shown: bool, stream: TextIO | None = None,
                 delay: float | None = None):
        self._subject = subject
        self._shown = shown
        self._stream = stream
        self._lock = threading.Lock()
        self._start = time.monotonic()
        self._active = False
        self._title = ""
        self._total = 0
        self._done = 0
        self._running: dict[int, str] = {}  # step id -> its line while it runs
        self._ids = iter(range(1 << 62))
        self._timer: threading.Timer | None = None
        delay = DELAY if delay is None else delay
        if shown and delay <= 0:
            self._active = True
        elif shown:
            self._timer = threading.Timer(delay, self._activate)
            self._timer.daemon = True
            self._timer.start()

    def _write(self, text: str) -> None:
        stream = self._stream if self._stream is not None else sys.stderr
        try:
            stream.write(f"casdyn: {self._subject}: {text}\n")
            stream.flush()
        except (OSError, ValueError):  # stderr closed or gone: progress is not worth failing
            pass

    def _activate(self) -> None:
        with self._lock:
            if self._active or not self._shown:
                return
            self._active = True
            if self._title:
                self._write(self._title)
            for line in self._running.values():
                self._write(f"{line} ...")

    def phase(self, title: str, total: int) -> None:
        """Start a phase of ``total`` steps, e.g. ``("building 7 functions", 7)``."""
        with self._lock:
            self._title, self._total, self._done = title, total, 0
            if self._active:
                self._write(title)

    @contextmanager
    def step(self, label: str) -> Iterator[None]:
        """Time one step of the current phase, ``label`` saying what it is."""
        if not self._shown:
            yield
            return
        with self._lock:
            key = next(self._ids)
            self._running[key] = f"[{self._done + len(self._running) + 1}/{self._total}] " \
                f"{label}"
        start = time.monotonic()
        try:
            yield
        finally:
            with self._lock:
                del self._running[key]
                self._done += 1
                if self._active:
                    self._write(f"[{self._done}/{self._total}] {label} "
                                f"({time.monotonic() - start:.1f} s)")

    def finish(self) -> None:
        """End of the work: no more lines after this one."""
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            if self._active:
                self._write(f"done in {time.monotonic() - self._start:.1f} s")
            self._shown = self._active = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.finish()


SILENT = Progress("", shown=False)
