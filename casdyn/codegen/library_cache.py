"""The on-disk cache of compiled libraries behind :meth:`casdyn.RigidBodyTree.compile`: one
library per model, set of Functions, versions and processor, kept under the cache's rules
(:mod:`casdyn.codegen.cache_dir`), so that the next process loads it instead of compiling."""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from collections.abc import Collection
from pathlib import Path
from types import ModuleType

import casadi as ca
import numpy as np

from .._version import __version__
from ..errors import ExportError
from ..functions.names import identifier
from ..progress import SILENT, Progress
from ..runtime import entry
from ..runtime.batch import BatchKernel
from . import simd
from .cache_dir import cache_directory, cpu_identity, seal, trusted_folder, verified
from .export import (
    DEFAULT_FLAGS,
    GLOBAL_HELPER,
    HUGE_FUNCTION,
    HUGE_FUNCTION_FLAGS,
    LARGE_FUNCTION,
    LARGE_FUNCTION_FLAGS,
    NATIVE_FLAG,
    find_compiler,
    library_path,
    load_library_parts,
    native_flags,
    write_library,
)


def cached_library(
    functions: list[ca.Function],
    name: str,
    model_key: bytes,
    directory: str | os.PathLike | None = None,
    vector_outputs: Collection[str] = (),
    progress: Progress = SILENT,
) -> tuple[list[ca.Function], ModuleType | None]:
    """``functions`` compiled and loaded (see :func:`cached_library_parts`), with the
    library's Python entry point."""
    compiled, module, _ = cached_library_parts(functions, name, model_key, directory,
                                               vector_outputs, progress)
    return compiled, module


def cached_library_parts(
    functions: list[ca.Function],
    name: str,
    model_key: bytes,
    directory: str | os.PathLike | None = None,
    vector_outputs: Collection[str] = (),
    progress: Progress = SILENT,
    batched: list[ca.Function | None] | None = None,
) -> tuple[list[ca.Function], ModuleType | None, list[BatchKernel | None]]:
    """``functions`` compiled into a library kept in ``directory`` (default
    :func:`cache_directory`), in the same order, named by a hash of the model, the
    functions, the versions of casdyn, CasADi and NumPy (whose C API the entry point uses)
    the way the C is made and this machine's processor (:func:`cpu_identity`): built the
    first time, for this processor (:data:`NATIVE_FLAG`, where the compiler takes it), and
    loaded afterwards. Returns them with
    the library's Python entry point (:mod:`casdyn.runtime.entry`; None where Python's or NumPy's C
    headers are missing), which returns the outputs named in ``vector_outputs`` as 1-D
    arrays.

    Each library obeys the cache's rules (:mod:`casdyn.codegen.cache_dir`): written on disk
    and moved into place in one step, then its SHA-256 beside it (``.sha256``); a library
    whose bytes do not match (truncated, overwritten, foreign) or that fails to load is
    built again instead of being loaded, and a cache others can write is not used.
    ``progress`` reports the compilation.

    ``batched``: for each of ``functions``, the SX Function (same inputs and outputs) whose
    batched entry point ``<name>_batch`` (:mod:`casdyn.codegen.simd`) the library also
    holds, or None; returned as :class:`casdyn.runtime.batch.BatchKernel` (None where none).
    """
    batched = list(batched) if batched is not None else [None] * len(functions)
    batches = [(f"{f.name()}_batch", sx) for f, sx in zip(functions, batched, strict=True)
               if sx is not None]
    include = entry.include_flags()
    entry_source = entry.source(functions, vector_outputs) if include else None
    digest = hashlib.sha256(pickle.dumps(
        (model_key, [f.serialize() for f in functions], ca.__version__, __version__,
         DEFAULT_FLAGS, LARGE_FUNCTION, LARGE_FUNCTION_FLAGS, HUGE_FUNCTION,
         HUGE_FUNCTION_FLAGS, GLOBAL_HELPER.pattern, NATIVE_FLAG, cpu_identity(),
         entry_source, include, np.__version__,
         [(symbol, sx.serialize()) for symbol, sx in batches], simd.FLAGS,
         Path(simd.__file__).read_bytes() if batches else b"")
    )).hexdigest()[:16]
    basename = f"{identifier(name, 'casdyn')}_{digest}"
    chosen = directory is not None
    configured = Path(directory) if chosen else cache_directory()
    where = str(configured) if chosen or "CASDYN_CACHE" not in os.environ else \
        f"{configured} ($CASDYN_CACHE)"
    try:
        directory = trusted_folder(None, configured)
        tempfile.TemporaryFile(dir=directory).close()  # writable?
    except OSError as exc:
        blocker = next((p for p in (configured, *configured.parents)
                        if p.exists() and not p.is_dir()), None)
        reason = f"{blocker} is a file" if blocker else exc.strerror or str(exc)
        raise ExportError(
            f"the compile cache {where} cannot be used: {reason}; set CASDYN_CACHE to a "
            "writable directory or pass directory="
        ) from None
    path = library_path(directory, basename)
    symbols = [f.name() for f in functions]

    def load() -> tuple[list[ca.Function], ModuleType | None, list[BatchKernel | None]]:
        compiled, module, kernels = load_library_parts(path, symbols, include is not None,
                                                       batches)
        found = iter(kernels)
        return compiled, module, [next(found) if sx is not None else None for sx in batched]

    try:
        if verified(path):
            try:
                return load()
            except ExportError:
                pass  # bytes as written but unusable here: build it again
        cc = find_compiler()
        native = native_flags(cc)
        try:
            write_library(functions, directory, basename, cc, None, (*(include or ()), *native),
                   entry_source, progress=progress, batches=batches)
        except ExportError:
            if not native:
                raise
            # the compiler takes the flag but cannot build with it (an older assembler)
            write_library(functions, directory, basename, cc, None, include or (), entry_source,
                   progress=progress, batches=batches)
        built = load()
        seal(path)
        return built
    except OSError as exc:
        raise ExportError(
            f"the compile cache {where} cannot be used: {exc.strerror or exc}; set "
            "CASDYN_CACHE to a writable directory or pass directory="
        ) from None
