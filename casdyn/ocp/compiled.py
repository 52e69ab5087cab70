"""Compile a ``casadi.Function`` to C and load it back, cached on disk by its source.

The OCP's functions (a whole horizon's linearisation, an NLP's callbacks) are large SX/MX
graphs; CasADi's virtual machine evaluates them several times slower than the same graph as
C. ``compiled(f)`` generates C with ``casadi.CodeGenerator``, builds a shared library with
the system C compiler and returns the loaded ``casadi.external`` Function (same inputs and
outputs, derivatives included when ``with_derivatives`` asks for them). The library is named by
a hash of the C source, the flags, the compiler and the processor, and kept under the
cache's rules (:mod:`casdyn.codegen.cache_dir`), so the next process loads it without
compiling, and never a damaged or foreign file.
"""

from __future__ import annotations

import os

import casadi as ca

from casdyn.codegen import externals
from casdyn.codegen.cache_dir import built_library, load_externals, trusted_folder
from casdyn.codegen.export import find_compiler
from casdyn.errors import ExportError
from casdyn.progress import Progress, enabled

DEFAULT_FLAGS = ("-O2", "-march=native", "-fPIC", "-shared")


def compiled(function: ca.Function, *, flags: tuple[str, ...] = DEFAULT_FLAGS,
             with_derivatives: bool = False, directory: str | os.PathLike | None = None,
             compiler: str | None = None, progress: bool | None = None) -> ca.Function:
    """``function`` as compiled C (a ``casadi.external`` of the same signature).

    ``with_derivatives`` also generates the forward/reverse derivatives and the Jacobian
    (what ``nlpsol`` asks of its callbacks). Needs a C compiler (``$CC``, else cc, gcc, clang) the
    first time; raises :class:`casdyn.CasdynError` naming the compiler's message when the
    build fails. ``progress``: report the build on stderr once it takes more than a second
    (True, False, or None: ``$CASDYN_PROGRESS``, else whether stderr is a terminal; see
    :mod:`casdyn.progress`) — a large horizon takes the compiler minutes.
    """
    compiler = find_compiler(compiler)  # an ExportError (a CasdynError) if none
    name = function.name()
    options = {"with_header": False}
    if with_derivatives:
        options["with_export"] = True
    generator = ca.CodeGenerator(f"{name}.c", options)
    generator.add(function, with_derivatives)
    if with_derivatives:
        generator.add(function.jacobian())
    source = generator.dump() + externals.sources_for([function])
    try:
        folder = trusted_folder(None if directory is not None else "ocp", directory)
    except OSError as exc:
        raise ExportError(f"the compile cache cannot be used for {name!r}: "
                          f"{exc.strerror or exc}; set CASDYN_CACHE to a writable "
                          "directory") from None
    with Progress(name, enabled(progress)) as report:
        report.phase("compiling 1 C file", 1)
        with report.step(f"{name}.c"):
            [loaded] = load_externals(
                [name], lambda: built_library(source, name, folder, compiler, flags, repr(name)),
                repr(name))
    return loaded
