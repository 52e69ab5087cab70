"""C export: CasADi code generation, compilation with the system C compiler, loading back.

Everything is generated and compiled in a scratch directory beside the target and moved into
place only when all of it succeeded, so a failed export leaves the target as it was.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import casadi as ca

from ._version import __version__
from .errors import ExportError

COMPILERS = ("cc", "gcc", "clang")
DEFAULT_FLAGS = ("-O3", "-fPIC", "-shared")
# CasADi writes its helpers (casadi_sq, casadi_fmin, casadi_copy, ...) as global functions. In
# a shared library a global function may be interposed at load time, so GCC calls it through
# the PLT rather than inlining it, and every call clobbers all floating-point registers: a
# 24-link chain's inverse dynamics ran 9 % slower for its 69 calls of casadi_sq. The helpers
# are private to the file, so they are made static.
_GLOBAL_HELPER = re.compile(
    r"^(?=(?:const )?(?:casadi_real|casadi_int|void|int)\*? ?casadi_\w+\()", re.MULTILINE)


def private_helpers(source: str) -> str:
    """``source`` (CasADi-generated C) with CasADi's helper functions declared ``static``."""
    return _GLOBAL_HELPER.sub("static ", source)


def find_compiler(compiler: str | None = None) -> str:
    """The C compiler to use: ``compiler``, else ``$CC``, else the first of cc, gcc, clang."""
    candidates = [compiler] if compiler else [os.environ["CC"]] if os.environ.get("CC") else []
    for name in candidates or COMPILERS:
        path = shutil.which(name)
        if path:
            return path
    looked = ", ".join(candidates or COMPILERS)
    raise ExportError(
        f"no C compiler found (looked for {looked}); install one (e.g. gcc) or set CC, "
        "or export with compile=False to get the C source only"
    )


def cache_directory() -> Path:
    """Where :meth:`RigidBodyTree.compile` keeps libraries: ``$CASDYN_CACHE``, else
    ``$XDG_CACHE_HOME/casdyn``, else ``~/.cache/casdyn``."""
    if os.environ.get("CASDYN_CACHE"):
        return Path(os.environ["CASDYN_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "casdyn"


def library_path(directory: str | os.PathLike, basename: str) -> Path:
    suffix = ".dylib" if sys.platform == "darwin" else ".so"
    return Path(directory) / ("lib" + re.sub(r"\W", "_", basename) + suffix)


def load_library(path: Path, functions: list[ca.Function]) -> dict[str, ca.Function]:
    """The named functions of a compiled library, as ``casadi.Function``s."""
    return {f.name(): ca.external(f.name(), str(path)) for f in functions}


def cached_library(
    functions: list[ca.Function],
    name: str,
    model_key: bytes,
    directory: str | os.PathLike | None = None,
) -> dict[str, ca.Function]:
    """The functions compiled into a library kept in ``directory`` (default
    :func:`cache_directory`), named by a hash of the model, the functions, the versions of
    casdyn and CasADi and the way the C is made: built the first time, loaded afterwards."""
    digest = hashlib.sha256(pickle.dumps(
        (model_key, [f.serialize() for f in functions], ca.__version__, __version__,
         DEFAULT_FLAGS, _GLOBAL_HELPER.pattern)
    )).hexdigest()[:16]
    basename = f"{name}_{digest}"
    directory = Path(directory) if directory is not None else cache_directory()
    path = library_path(directory, basename)
    if path.is_file():
        return load_library(path, functions)
    return export_functions(functions, directory, basename)


def export_functions(
    functions: list[ca.Function],
    directory: str | os.PathLike,
    basename: str,
    *,
    compile: bool = True,
    compiler: str | None = None,
    flags: tuple[str, ...] = DEFAULT_FLAGS,
) -> dict[str, ca.Function]:
    """Write ``basename.c`` and ``basename.h`` for ``functions`` into ``directory``; with
    ``compile``, also build ``lib<basename>.so`` and return the functions loaded from it
    (name → ``casadi.Function``), else return the given functions by name."""
    basename = re.sub(r"\W", "_", basename)
    directory = Path(directory)
    cc = find_compiler(compiler) if compile else None
    directory.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".casdyn-export-", dir=directory.parent))
    try:
        generator = ca.CodeGenerator(f"{basename}.c", {"with_header": True})
        for function in functions:
            generator.add(function)
        generator.generate(str(scratch) + os.sep)
        source = scratch / f"{basename}.c"
        source.write_text(private_helpers(source.read_text()))
        produced = [f"{basename}.c", f"{basename}.h"]
        if cc is not None:
            library = library_path(scratch, basename).name
            command = [cc, *flags, f"{basename}.c", "-o", library, "-lm"]
            result = subprocess.run(command, cwd=scratch, capture_output=True, text=True)
            if result.returncode != 0:
                tail = "\n".join(result.stderr.strip().splitlines()[-8:])
                raise ExportError(f"compiling {basename}.c failed ({' '.join(command)}):\n{tail}")
            produced.append(library)
        directory.mkdir(parents=True, exist_ok=True)
        for name in produced:
            os.replace(scratch / name, directory / name)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if cc is None:
        return {f.name(): f for f in functions}
    return load_library(directory / produced[-1], functions)
