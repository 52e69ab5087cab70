"""C that generated code needs beside CasADi's: the sources of external routines that casdyn's
graphs call (such as the convex-mesh distance routine of :mod:`casdyn.codegen.convex_routine`).

A module that puts calls of its own C routines into graphs registers, under the prefix of
their symbols, a function that writes the C of a set of those symbols; :func:`sources_for`
collects what a set of Functions calls, so that every C file written from them
(``compile()``, ``export_c``, the OCP's compiled callbacks) is self-contained.
:func:`with_prefix` renames a routine's symbols in a library's C after the library's prefix,
so that two libraries carrying one routine link into one program.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

import casadi as ca

_WRITERS: dict[str, Callable[[set[str]], str]] = {}

# the modules that register writers, by prefix: imported when a graph calls one of theirs (a
# Function deserialised in a process that has not built such a graph itself)
_MODULES = {"casdyn_convex_": "casdyn.codegen.convex_routine"}


def register(prefix: str, write: Callable[[set[str]], str]) -> None:
    """``write(symbols)``: the C defining the external routines ``symbols`` (each starting
    with ``prefix``), valid once per C file."""
    _WRITERS[prefix] = write


def routines_called(functions: Iterable[ca.Function]) -> set[str]:
    """The names of the registered routines that ``functions`` (or the Functions they call)
    call."""
    import importlib

    names = {inner.name() for function in functions
             for inner in [function, *function.find_functions()]}
    for prefix, module in _MODULES.items():
        if prefix not in _WRITERS and any(n.startswith(prefix) for n in names):
            importlib.import_module(module)
    return {n for n in names if n.startswith(tuple(_WRITERS))}


def source_of(names: set[str]) -> str:
    """The C of the registered routines ``names`` (:func:`routines_called`); empty for
    none."""
    return "\n".join(_WRITERS[prefix](found) for prefix in sorted(_WRITERS)
                     if (found := {n for n in names if n.startswith(prefix)}))


def sources_for(functions: Iterable[ca.Function]) -> str:
    """The C of every registered routine that ``functions`` (or the Functions they call)
    call; empty where they call none."""
    return source_of(routines_called(functions))


# the forms of a routine's symbol that generated C names: the routine's own, those of the
# derivatives CasADi asks an external for (jac_, fwd1_, adj1_, ... in front) and their
# companions (_n_in, _sparsity_out, ... behind)
_DERIVATIVES = r"(?:(?:jac|fwd\d+|adj\d+)_)*"


def with_prefix(source: str, names: Iterable[str], prefix: str) -> str:
    """``source`` with every symbol of the routines ``names`` starting with ``<prefix>_``:
    ``casdyn_convex_<digest>`` becomes ``<prefix>_convex_<digest>``,
    ``fwd1_casdyn_convex_<digest>_n_in`` ``<prefix>_fwd1_convex_<digest>_n_in``.

    A routine's C is written into every library whose Functions call it, under a name
    that depends only on the routine (its hulls): two libraries holding it could not be
    linked into one program. In each library it takes the library's prefix instead."""
    names = sorted(names, key=len, reverse=True)  # a longer name before its own start
    if not names:
        return source
    pattern = re.compile(rf"\b({_DERIVATIVES})({'|'.join(map(re.escape, names))})"
                         r"(?![A-Za-z0-9])")
    return pattern.sub(lambda m: f"{prefix}_{m[1]}{m[2].removeprefix('casdyn_')}", source)
