"""What casdyn reads of the C that CasADi's code generator writes for an SX Function: its
straight-line functions ``static int casadi_f<N>(arg, res, iw, w, mem)``, their declarations
of local variables ``a<N>`` and their assignments, and the rewriting of such functions that
:mod:`casdyn.codegen.split` and :mod:`casdyn.codegen.trig` do."""

from __future__ import annotations

import re
from collections.abc import Callable

FUNCTION = re.compile(
    r"^static int (casadi_f\d+)\(const casadi_real\*\* arg, casadi_real\*\* res, "
    r"casadi_int\* iw, casadi_real\* w, int mem\) \{\n(.*?)^\}\n",
    re.MULTILINE | re.DOTALL)
DECLARATION = re.compile(r"^  casadi_real a\d+(?:, a\d+)*;$")
ASSIGNED = re.compile(r"^  (a\d+)=")


def header(name: str) -> str:
    """The first line of CasADi's function ``name``, ``{`` and newline included."""
    return (f"static int {name}(const casadi_real** arg, casadi_real** res, casadi_int* iw, "
            f"casadi_real* w, int mem) {{\n")


def rewrite_functions(source: str, rewrite: Callable[[str, str], str | None],
                      preamble: str) -> str:
    """``source`` with each of CasADi's functions replaced by ``rewrite(name, body)`` (the
    whole C of what replaces it; None keeps it), ``preamble`` once before the first one
    replaced; ``source`` itself where none is."""
    pieces, end = [], 0
    for match in FUNCTION.finditer(source):
        new = rewrite(match.group(1), match.group(2))
        if new is None:
            continue
        pieces += [source[end:match.start()], "" if pieces else preamble, new]
        end = match.end()
    return "".join(pieces) + source[end:] if pieces else source
