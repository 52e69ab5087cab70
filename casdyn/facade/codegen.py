"""The C export part of :class:`casdyn.RigidBodyTree` (:mod:`casdyn.codegen`)."""

from __future__ import annotations

import os

import casadi as ca

from ..codegen.robot import compile_robot, export_robot
from ..codegen.robot_cuda import compile_robot_cuda, export_robot_cuda
from ..errors import InputError
from .base import RobotParts


class CodegenMethods(RobotParts):
    """C export and compiled numeric calls."""

    def export_c(
        self,
        directory: str | os.PathLike,
        functions=None,
        compile: bool = True,
        *,
        compiler: str | None = None,
        flags: str | tuple[str, ...] | None = None,
        prefix: str | None = None,
        native: bool = False,
        progress: bool | None = None,
        batch: bool = False,
    ) -> dict[str, ca.Function]:
        """Export Functions as C source and header, compile them to a shared library with the
        system C compiler and load them back; returns key -> loaded ``casadi.Function`` (the
        cached SX Functions when ``compile`` is False). A failed export writes nothing.

        ``functions``: a name; or a list of names, ``(name, options)`` pairs such as
        ``("geometric_jacobian", {"body": "tool0"})`` and ``(key, name, options)`` triples;
        or a dict ``{key: name or (name, options)}``; or None for every Function (the
        body-specific ones for each leaf body; the contact functions only when listed with
        their ``contacts``). A key is the caller's if given, else the name followed by what
        tells variants apart (``inverse_dynamics_nofext``, ``get_transform_tool0_base``,
        ``contact_dynamics`` for any contacts); two Functions under one key are an
        :class:`InputError`. Files: ``casdyn_<robot>.c``, ``.h``, ``libcasdyn_<robot>.so``
        (large Functions in files of their own, compiled in parallel). C symbols are
        ``<prefix>_<key>`` (``prefix`` default: the robot's name; ``""``: plain keys).
        ``flags``: a sequence of strings or one string (default ``-O3 -fPIC -shared``);
        ``native=True`` builds for this processor (``-march=native``; may not run
        elsewhere). ``progress``: report on stderr once the work takes more than a second;
        None: only when stderr is a terminal or ``$CASDYN_PROGRESS=1``. ``batch=True`` also
        exports each Function's batched entry point ``<prefix>_<key>_batch`` (samples in SIMD
        lanes; signature and layout in :mod:`casdyn.codegen.simd`). The rules in full: the
        documentation's "Optimisation" page.
        """
        return export_robot(self._functions, functions, directory, compile, compiler, flags,
                            prefix, native, progress, batch)

    def compile(self, functions=None, *, directory: str | os.PathLike | None = None,
                progress: bool | None = None, batch: bool | None = None,
                device: str = "cpu"):
        """Compile Functions to C once (cached on disk) and evaluate numbers with them.

        From then on numeric calls (single and batched) of those functions run compiled code
        — the fastest path from Python — while symbolic calls keep the SX graphs. Default
        ``functions``: both variants of inverse and forward dynamics, mass matrix, velocity
        product, gravity torque and centre of mass (same forms as :meth:`export_c`; keys are
        allowed and ignored); a function that takes ``fext`` named without that option is
        built with and without it, as calls with and without ``fext`` use both. The library
        is kept in ``directory`` (default
        :func:`casdyn.codegen.cache_dir.cache_directory`), named by a hash of its C, the
        flags, the compiler and this machine's processor (the library is built for it, with
        ``-march=native``; :mod:`casdyn.codegen.store`), so the next process loads it
        without compiling; a cached library that is damaged is built again. Needs a C
        compiler the first time. ``progress`` as in :meth:`export_c`. Returns ``self``.

        The library also holds each function's batched C (:mod:`casdyn.codegen.simd`):
        batched calls evaluate a block of samples per vector instruction, and large batches
        are split across threads. ``batch``: None builds it for functions of up to
        ``casdyn.sizes.BATCHED_BY_DEFAULT`` instructions (the batched C of larger
        ones takes minutes to build; they batch through ``Function.map``), True for all,
        False for none. Without ``compile()``, the functions that numeric calls use are
        compiled in the background after a while (:mod:`casdyn.codegen.background`;
        ``CASDYN_COMPILE=0`` turns that off).

        ``device="cuda"`` compiles the functions' CUDA kernels instead, for the NVIDIA GPU
        at hand (NVRTC, cached; :mod:`casdyn.codegen.cuda`), and from then on their batched
        calls run on it: inputs may be CuPy arrays or any GPU array with ``__dlpack__``
        (PyTorch, JAX), read in place, and the outputs are arrays of the same kind on the
        same device; float32 inputs run the float32 kernels. Batched NumPy inputs are copied
        over and the results back; single samples stay on the CPU. Without CuPy, NVRTC or a
        GPU: a :class:`casdyn.DeviceError` that says what is missing (``pip install
        "casdyn[gpu]"``). The documentation's "GPU" page has the layouts and numbers.
        """
        if device == "cuda":
            compile_robot_cuda(self._engine, functions, progress)
        elif device == "cpu":
            compile_robot(self._engine, functions, directory, progress, batch)
        else:
            raise InputError(f"device must be 'cpu' or 'cuda'; got {device!r}")
        return self

    def export_cuda(self, directory: str | os.PathLike, functions=None, *,
                    prefix: str | None = None, precision: str = "float64",
                    progress: bool | None = None) -> dict[str, ca.Function]:
        """Write the CUDA C of Functions for your own CUDA programs: ``<prefix>.cu`` with,
        per Function, a ``__device__`` function (one sample), a batched ``__global__``
        kernel (one thread per sample; a Function of more than
        ``casdyn.sizes.CUDA_STAGE`` instructions runs as several kernels, launched in
        turn) and a host launcher, and ``<prefix>.h`` declaring the launchers with their
        parameters. Needs nothing but the CUDA compiler (no casdyn or CasADi headers), and
        no GPU to write. ``functions`` and the keys as in :meth:`export_c`; every symbol
        is ``<prefix>_<key>...`` (``prefix`` default: the robot's name); ``precision``:
        ``"float64"`` or ``"float32"``. Returns key -> the SX ``casadi.Function``. Both
        files are written or neither. The layout, the strides and an example program:
        the documentation's "GPU" page.
        """
        return export_robot_cuda(self._functions, functions, directory, prefix, precision,
                                 progress)

    @property
    def compiled_functions(self) -> tuple[str, ...]:
        """Names of the Functions whose numeric calls run compiled code."""
        return tuple(self._functions.get_key(key).name() for key in self._engine.compiled_keys)
