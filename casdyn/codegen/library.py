"""Functions to a loaded library: the one path from a ``casadi.Function`` to machine code.

:func:`compile_functions` writes the C (:mod:`casdyn.codegen.source`), plans its build
under the one flags policy (:mod:`casdyn.codegen.build`), finds the library in the cache
by the key of that C and those commands, or builds and keeps it (:mod:`casdyn.codegen.store`),
and loads it. Every compiled thing goes this way: a robot's libraries
(:meth:`casdyn.RigidBodyTree.compile`, the background builds), any Function
(:func:`compile_function`: the OCP's horizons, the examples' MPC steps) and hand-written C
routines (:func:`compile_source`: the convex-mesh routine). :func:`export_functions` writes
the same C and builds it the same way into a directory of the caller's (``export_c``).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Collection, Sequence
from pathlib import Path
from types import ModuleType

import casadi as ca
import numpy as np

from ..errors import ExportError
from ..functions.names import identifier
from ..progress import SILENT, Progress, enabled
from ..runtime import entry
from ..runtime.batch import BatchKernel
from . import build, simd, source, store
from .cache_dir import durable_replace


def compile_function(function: ca.Function, *, with_derivatives: bool = False,
                     flags=None, native: bool = True,
                     directory: str | os.PathLike | None = None, compiler: str | None = None,
                     progress: bool | None = None) -> ca.Function:
    """``function`` (any ``casadi.Function``: SX, MX, calling others) as compiled C: a
    ``casadi.external`` Function of the same name, inputs and outputs.

    The C is CasADi's code generator's, compiled with the system C compiler (``compiler``,
    else ``$CC``, else cc, gcc, clang) under casdyn's flags policy (by the graph's size,
    for this machine's processor where ``native`` and the compiler takes it; ``flags``, a
    sequence or one string, replaces the policy's flags) and kept in casdyn's compile cache
    (``directory``, else ``$CASDYN_CACHE``, ...) under the key of its C, flags, compiler
    and processor: the next process loads it without compiling. ``with_derivatives`` also
    compiles its forward and reverse derivatives and Jacobian (what ``nlpsol`` asks of its
    callbacks). ``progress``: report the build on stderr once it takes more than a second
    (True, False, or None: ``$CASDYN_PROGRESS``, else whether stderr is a terminal) — a
    large horizon takes the compiler minutes. A missing compiler or a failed build is a
    :class:`casdyn.ExportError` with the compiler's message.
    """
    name = function.name()
    with Progress(name, enabled(progress)) as report:
        [compiled], _, _ = compile_functions(
            [function], name, directory=directory, native=native, flags=flags,
            compiler=compiler, progress=report, with_derivatives=with_derivatives)
    return compiled


def compile_functions(
    functions: list[ca.Function], name: str, *,
    directory: str | os.PathLike | None = None,
    native: bool = True,
    flags=None,
    compiler: str | None = None,
    vector_outputs: Collection[str] | None = None,
    batched: Sequence[ca.Function | None] | None = None,
    with_derivatives: bool = False,
    quick: bool = False,
    progress: Progress = SILENT,
) -> tuple[list[ca.Function], ModuleType | None, list[BatchKernel | None]]:
    """``functions`` compiled into one library ``lib<name>_<key>.so`` of the cache (see
    :mod:`casdyn.codegen.store`) and loaded: ``(Functions, module, kernels)``, the Functions
    in the same order.

    ``native``: for this processor where the compiler takes :data:`build.NATIVE_FLAG` (a
    compiler that takes it but cannot build with it, such as an older assembler's, gets a
    portable library). ``vector_outputs``: the library also holds the Python entry point
    (:mod:`casdyn.runtime.entry`; the module returned, None where Python's or NumPy's C
    headers are missing), which returns those outputs as 1-D arrays; None: no entry point.
    ``batched``: for each of ``functions``, the SX Function (same inputs and outputs) whose
    batched entry point ``<name>_batch`` (:mod:`casdyn.codegen.simd`) the library also
    holds, or None; returned as :class:`casdyn.runtime.batch.BatchKernel` (None where none).
    ``quick``: large files get the quick flags (:func:`casdyn.codegen.build.flags_for`).
    """
    cc = build.find_compiler(compiler)
    flags = build.checked_flags(flags)
    batched = list(batched) if batched is not None else [None] * len(functions)
    batches = [(f"{f.name()}_batch", sx) for f, sx in zip(functions, batched, strict=True)
               if sx is not None]
    include = entry.include_flags() if vector_outputs is not None else None
    appended = entry.source(functions, vector_outputs, batched) if include is not None \
        else None
    # the outside headers the entry point includes are part of its C text
    headers = [f"python {sys.version}", f"numpy {np.__version__}"] if include else []
    basename = identifier(name, "casdyn")
    cache = store.folder(directory)
    symbols = [f.name() for f in functions]

    def load(path: Path):
        compiled, module, kernels = store.load(path, symbols, include is not None, batches)
        found = iter(kernels)
        return compiled, module, [next(found) if sx is not None else None for sx in batched]

    tries = [build.native_flags(cc)] if native else []
    tries = [extra for extra in tries if extra] + [()]
    for attempt, extra in enumerate(tries):
        with _scratch(cache) as scratch:
            progress.phase("generating C", 1)
            with progress.step(f"{len(functions)} function{'s' if len(functions) > 1 else ''}"):
                files = source.write(functions, scratch, basename, appended=appended,
                                     cut=build.CUT_PORTABLE and build.NATIVE_FLAG not in extra,
                                     batches=batches, with_derivatives=with_derivatives)
            library = store.library_path(scratch, basename).name
            plan = build.commands(cc, files, library, flags, (*(include or ()), *extra), quick)
            texts = [*(p.read_bytes() for p in sorted(scratch.iterdir())), *headers]
            key = store.key(texts, [command for command, *_ in plan])
            path = store.library_path(cache, f"{basename}_{key}")

            built: list[Path] = []

            def make(plan=plan, scratch=scratch, library=library, built=built) -> Path:
                build.run(plan, scratch, progress)
                built.append(scratch / library)
                return built[0]

            try:
                return store.cached(path, make, load)
            except ExportError:
                if built or attempt == len(tries) - 1:  # not the build for this processor
                    raise
    raise AssertionError("unreachable")


def compile_source(text: str, name: str, symbols: list[str], *, what: str,
                   native: bool = False, shared: tuple[str, str] | None = None) -> list:
    """The ``casadi.external`` Functions ``symbols`` of the hand-written C ``text`` (a
    routine's entry points, in CasADi's external calling convention), compiled as
    ``lib<name>_<key>.so`` of the cache under the flags policy (portable by default: such a
    routine may serve a graph deserialised on another machine; ``native``: for this
    processor, where the compiler takes :data:`build.NATIVE_FLAG`, for a routine only this
    process calls). ``shared``, a C file's ``(name, text)`` that ``text`` calls, is compiled
    to an object kept in the cache and linked in: the part many such libraries have alike
    is compiled once. A missing compiler, a failed build or an unusable cache is an
    :class:`ExportError` that starts with ``what`` (such as "the distance of these shapes
    is computed by a C routine")."""
    try:
        cc = build.find_compiler()
        cache = store.folder()
    except ExportError as exc:
        raise ExportError(f"{what} compiled on first use: {exc}") from None
    with _scratch(cache) as scratch:
        (scratch / f"{name}.c").write_text(text)
        files = [source.CFile(name, 0, 0)]
        if shared is not None:
            (scratch / f"{shared[0]}.c").write_text(shared[1])
            files.append(source.CFile(shared[0], 0, 1, shared=True))
        library = store.library_path(scratch, name).name
        plan = build.commands(cc, files, library,
                              extra=build.native_flags(cc) if native else ())
        texts = [text] if shared is None else [text, shared[1]]
        path = store.library_path(cache, f"{name}_{store.key(texts, [c for c, *_ in plan])}")

        def make() -> Path:
            build.run(plan, scratch)
            return scratch / library

        try:
            compiled, _, _ = store.cached(path, make, lambda p: store.load(p, symbols))
        except ExportError as exc:
            raise ExportError(f"{what}: {exc}") from None
    return compiled


class _scratch:
    """A scratch directory in ``folder``, removed on exit; an :class:`ExportError` where it
    cannot be made."""

    def __init__(self, folder: Path):
        self.folder = folder

    def __enter__(self) -> Path:
        try:
            self.path = Path(tempfile.mkdtemp(prefix=".casdyn-build-", dir=self.folder))
        except OSError as exc:
            raise ExportError(f"the compile cache {self.folder} cannot be used: "
                              f"{exc.strerror or exc}; set CASDYN_CACHE to a writable "
                              "directory") from None
        return self.path

    def __exit__(self, *exc) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def export_functions(
    functions: list[ca.Function],
    directory: str | os.PathLike,
    basename: str,
    *,
    compile: bool = True,
    compiler: str | None = None,
    flags: tuple[str, ...] | None = None,
    prefix: str = "",
    native: bool = False,
    names: list[str] | None = None,
    progress: Progress = SILENT,
    batched: list[ca.Function] | None = None,
) -> list[ca.Function]:
    """Write ``basename.c`` and ``basename.h`` for ``functions`` into ``directory`` (see
    :mod:`casdyn.codegen.source` for the files of large Functions); with ``compile``, also
    build ``lib<basename>.so`` under the flags policy and return the functions loaded from
    it, in the same order and with the same names; else return ``functions`` themselves.

    ``flags`` (a sequence, or one string split as a shell would): the compiler's flags for
    every file instead of the policy's. ``names``: the names to export the functions under
    (default: their own; valid C identifiers, distinct). With a ``prefix`` the C symbols
    are ``<prefix>_<name>``, so that the libraries of several robots link into one program;
    the returned Functions are called ``<name>``. ``native``: build the library for this
    machine's processor (:data:`casdyn.codegen.build.NATIVE_FLAG` added to every command;
    an error where the compiler does not take it) — faster, but it may not run on another
    machine; the C stays portable. Nothing is written unless all of it succeeded: the
    files are made in a scratch directory beside the target and moved into place at the
    end. ``progress`` reports the generation and the compilation. ``batched``: for each
    function, the SX Function of the same inputs and outputs whose batched entry point
    ``<symbol>_batch`` (:mod:`casdyn.codegen.simd`) is exported too.
    """
    prefix = source.checked_prefix(prefix)
    flags = build.checked_flags(flags)
    names = [f.name() for f in functions] if names is None else list(names)
    if len(names) != len(functions) or len(set(names)) != len(names):
        raise ExportError(f"export names must be distinct, one per function: {names}")
    cc = build.find_compiler(compiler) if compile else None
    extra: tuple[str, ...] = ()
    if native and cc is not None:
        extra = build.native_flags(cc)
        if not extra:
            raise ExportError(f"the compiler {cc} does not accept {build.NATIVE_FLAG}; "
                              "export with native=False")
    symbols = [f"{prefix}_{name}" if prefix else name for name in names]
    renamed = [source.renamed(f, symbol) for f, symbol in zip(functions, symbols, strict=True)]
    batches = []
    for function, symbol in zip(batched, symbols, strict=True) if batched else ():
        if not simd.supported(function):
            raise ExportError(f"{symbol} has no batched form: the batched C takes SX "
                              "Functions of arithmetic and C library operations")
        batches.append((f"{symbol}_batch", function))
    directory = Path(directory)
    basename = identifier(basename, "casdyn")
    library = _write(renamed, directory, basename, cc, flags, extra, prefix, progress, batches)
    if library is None:
        return list(functions)
    loaded, _, _ = store.load(library, symbols, private=True)
    # the C symbol carries the prefix; the Function keeps the name it was exported under
    return [f if f.name() == name else f.wrap(name)
            for f, name in zip(loaded, names, strict=True)]


def _write(functions: list[ca.Function], directory: Path, basename: str, cc: str | None,
           flags: tuple[str, ...] | None, extra: tuple[str, ...], prefix: str,
           progress: Progress, batches: list) -> Path | None:
    """The C files and the header of ``functions`` and, with a compiler ``cc``, their
    library, made in a scratch directory and moved into ``directory`` once all of it
    succeeded; the library's path (None without ``cc``)."""
    if directory.exists() and not directory.is_dir():
        raise ExportError(f"cannot export into {directory}: it is a file, not a directory")
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".casdyn-export-", dir=directory.parent))
    except OSError as exc:
        raise ExportError(f"cannot export into {directory}: {exc.strerror or exc}") from None
    try:
        progress.phase("generating C", 1)
        with progress.step(f"{len(functions)} function{'s' if len(functions) > 1 else ''}"):
            files = source.write(functions, scratch, basename, prefix=prefix, batches=batches,
                                 cut=build.CUT_PORTABLE and build.NATIVE_FLAG not in extra)
        produced = [f"{c_file.name}.c" for c_file in files] + [f"{basename}.h"]
        if cc is not None:
            library = store.library_path(scratch, basename).name
            build.run(build.commands(cc, files, library, flags, extra), scratch, progress)
            produced.append(library)
        directory.mkdir(parents=True, exist_ok=True)
        for name in produced:  # each on disk before it takes its place
            durable_replace(scratch / name, directory / name)
    except OSError as exc:
        raise ExportError(f"cannot export into {directory}: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return directory / produced[-1] if cc is not None else None

