"""The Python entry point compiled into the libraries of :meth:`RigidBodyTree.compile`.

CasADi's Python call of a compiled Function converts every argument to a ``DM`` (tens of
microseconds); casdyn's buffer path (:mod:`casdyn.runtime.evaluator`) brings that to a few. The
entry point (``entry.c``, appended to the generated C) goes the rest of the way: one C call
reads the NumPy arguments, evaluates and returns fresh NumPy arrays. The library is then
both a CasADi external and the extension module ``casdyn_entry``.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import sysconfig
from collections.abc import Collection, Sequence
from pathlib import Path
from types import ModuleType

import casadi as ca
import numpy as np

from .. import sizes

SOURCE = Path(__file__).with_name("entry.c")
MODULE = "casdyn_entry"


def include_flags() -> tuple[str, ...] | None:
    """Flags for Python's and NumPy's C headers (and macOS's lookup of Python's symbols at
    load time); None where either header is missing (the library is then built without the
    entry point)."""
    python = Path(sysconfig.get_paths()["include"])
    numpy = Path(np.get_include())
    if not (python / "Python.h").is_file() or not (numpy / "numpy" / "arrayobject.h").is_file():
        return None
    # macOS links an extension's Python symbols when the interpreter loads it
    lookup = ("-undefined", "dynamic_lookup") if sys.platform == "darwin" else ()
    return (f"-I{python}", f"-I{numpy}", *lookup)


def source(functions: list[ca.Function], vector_outputs: Collection[str],
           batched: Sequence[ca.Function | None] | None = None) -> str:
    """The C of the entry point for ``functions`` (under their C names), to append to the C
    that CasADi generated for them. ``batched``: per function, the SX Function whose
    batched entry point ``<name>_batch`` the library holds (:mod:`casdyn.codegen.simd`), or
    None; a batch call runs on it."""
    rows, prototypes = [], []
    for k, f in enumerate(functions):
        name = f.name()
        vector = "".join("1" if f.name_out(i) in vector_outputs else "0"
                         for i in range(f.n_out()))
        release = int(f.is_a("SXFunction") and f.n_instructions() > sizes.RELEASE_GIL)
        sx = batched[k] if batched else None
        batch = f"{name}_batch_dense" if sx is not None else "NULL"
        if sx is not None:
            prototypes.append(f"int {batch}(const double** arg, const long long* stride, "
                              "double** res, long long n);")
        work = max(sx.n_instructions(), 1) if sx is not None else 1
        rows.append(f"  {{{name}, {name}_work, {name}_sparsity_in, {name}_sparsity_out, "
                    f"{name}_name_in, {f.n_in()}, {f.n_out()}, \"{vector}\", {release}, "
                    f"{batch}, {work}LL}}")
    table = "#define CASDYN_ENTRIES { \\\n" + ", \\\n".join(rows) + " \\\n}\n"
    serial = f"#define CASDYN_SERIAL_WORK {2 * sizes.BATCH_WORK_PER_THREAD}LL\n"
    return (f"\n/* casdyn entry point */\n{''.join(p + chr(10) for p in prototypes)}{table}"
            f"{serial}{SOURCE.read_text()}")


def load(path: Path) -> ModuleType:
    """The module ``casdyn_entry`` of the library ``path`` (not put in ``sys.modules``)."""
    loader = importlib.machinery.ExtensionFileLoader(MODULE, str(path))
    spec = importlib.util.spec_from_loader(MODULE, loader, origin=str(path))
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module
