"""C that generated code needs beside CasADi's: the sources of external routines that casdyn's
graphs call (such as the convex-mesh distance routine of :mod:`casdyn.geometry.convex_routine`).

A module that puts calls of its own C routines into graphs registers, under the prefix of
their symbols, a function that writes the C of a set of those symbols; :func:`sources_for`
collects what a set of Functions calls, so that every C file written from them
(``compile()``, ``export_c``, the OCP's compiled callbacks) is self-contained.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import casadi as ca

_WRITERS: dict[str, Callable[[set[str]], str]] = {}

# the modules that register writers, by prefix: imported when a graph calls one of theirs (a
# Function deserialised in a process that has not built such a graph itself)
_MODULES = {"casdyn_convex_": "casdyn.geometry.convex_routine"}


def register(prefix: str, write: Callable[[set[str]], str]) -> None:
    """``write(symbols)``: the C defining the external routines ``symbols`` (each starting
    with ``prefix``), valid once per C file."""
    _WRITERS[prefix] = write


def sources_for(functions: Iterable[ca.Function]) -> str:
    """The C of every registered routine that ``functions`` (or the Functions they call)
    call; empty where they call none."""
    import importlib

    names = {inner.name() for function in functions
             for inner in [function, *function.find_functions()]}
    for prefix, module in _MODULES.items():
        if prefix not in _WRITERS and any(n.startswith(prefix) for n in names):
            importlib.import_module(module)
    called = {prefix: {n for n in names if n.startswith(prefix)} for prefix in _WRITERS}
    return "\n".join(_WRITERS[prefix](found) for prefix, found in sorted(called.items())
                     if found)
