"""The sines and cosines of a function's inputs, computed together at its start.

CasADi's C takes the sine and cosine of each revolute joint's angle where the graph needs
them, by the C library (GCC fuses each pair into one ``sincos`` call); on an arm that is
five or six calls in a row, each with its own argument reduction and polynomial, and the
rest of the function waits on them. Where a function of CasADi's C reads an input entry and
takes its sine or cosine, :func:`hoisted` computes all of those at the function's start,
four lanes at a time, with the batched C's routine (:func:`casdyn.codegen.simd.
sincos_routine`: one argument reduction for both, the C library's own result beyond 1e5
in magnitude, within one unit in the last place of the C library's elsewhere), and the
function reads them from there. Measured on the UR5e's inverse dynamics (an Intel Xeon,
``-O3 -march=native``, a C timer): 103 against 73 ns; in lanes of eight (AVX-512) it was
slower than the calls, 146 ns.

Only functions of up to :data:`MOST_STATEMENTS` statements are changed: in the longer ones
(the ID and FD derivatives of a 7-dof arm, of 6- and 12-link chains: 5,600-14,700
statements) the same change made the C 7-9 % slower (1,083 against 1,185 ns on the 6-link
chain's ID derivatives, 1,110 against 1,209 on the arm's), a cost that GCC's optimisation of
the longer straight-line code pays and that was not looked into further; below it every
function measured got faster (the arms' and chains' ID, FD and M, the UR5 and UR5e's ID and
FD derivatives: 2,900 and 4,100 statements).

Only CasADi's statements of the forms ``aN=arg[i]? arg[i][k] : 0;`` (an input entry),
``aN=<number>;``, ``aN=(aP+aQ);`` / ``aN=(aP-aQ);`` (an input entry plus or minus a number:
a joint's angle with the constant turn folded into it) and ``aM=sin(aN);`` / ``aM=cos(aN);``
are read; a function without two such sines or cosines is left as it was.
"""

from __future__ import annotations

import re

from .casadi_c import ASSIGNED, DECLARATION, header, rewrite_functions
from .simd import sincos_routine

LANES = 4
MOST_STATEMENTS = 5000  # longer functions are left as they are (measured: the docstring)

_READ = re.compile(r"^  (a\d+)=arg\[(\d+)\]\? arg\[\2\]\[(\d+)\] : 0;$")
_NUMBER = re.compile(r"^  (a\d+)=(-?\d+\.\d*(?:e[+-]\d+)?);$")
_SUM = re.compile(r"^  (a\d+)=\((a\d+)([+-])(a\d+)\);$")
_TRIG = re.compile(r"^  (a\d+)=(sin|cos)\((a\d+)\);$")

ROUTINE = f"""
/* sines and cosines of a function's inputs, {LANES} at a time (casdyn.codegen.trig) */
typedef double casdyn_trig_v __attribute__((vector_size({LANES} * sizeof(double))));
{sincos_routine("casdyn_trig_sincos", "casdyn_trig_v", LANES)}
static void casdyn_trig_lanes(const casadi_real* x, casadi_real* s, casadi_real* c, int n) {{
  int b, l;
  casdyn_trig_v v, sv, cv;
  for (b = 0; b < n; b += {LANES}) {{
    for (l = 0; l < {LANES}; ++l) v[l] = x[b + l];
    casdyn_trig_sincos(v, &sv, &cv);
    for (l = 0; l < {LANES}; ++l) {{
      s[b + l] = sv[l];
      c[b + l] = cv[l];
    }}
  }}
}}

"""


def hoisted(text: str) -> str:
    """``text`` (a C file of CasADi's code generator) with the sines and cosines of each
    function's input entries computed together at its start, where it takes two or more
    (the module's docstring); unchanged where none does."""
    return rewrite_functions(text, _function, ROUTINE)


def _function(name: str, body: str) -> str | None:
    """The C of CasADi's function ``name`` with ``body`` rewritten by :func:`_body`, or
    None where that leaves it as it is."""
    lines = _body(body.splitlines())
    return None if lines is None else header(name) + "\n".join(lines) + "\n}\n"


def _body(lines: list[str]) -> list[str] | None:
    """A function body's lines with the sines and cosines of its input entries (plus or
    minus a number) read from ``casdyn_s`` and ``casdyn_c``, computed at its start; None
    where fewer than two, or the body has more than :data:`MOST_STATEMENTS` lines."""
    if len(lines) > MOST_STATEMENTS:
        return None
    holds: dict[str, str] = {}  # variable -> the C expression of the angle it holds
    numbers: dict[str, str] = {}  # variable -> the number it holds
    slots: dict[str, int] = {}  # angle -> its lane
    changed = list(lines)
    for n, line in enumerate(lines):
        trig = _TRIG.match(line)
        if trig and trig.group(3) in holds:
            slot = slots.setdefault(holds[trig.group(3)], len(slots))
            array = "casdyn_s" if trig.group(2) == "sin" else "casdyn_c"
            changed[n] = f"  {trig.group(1)}={array}[{slot}];"
        angle = number = None
        if read := _READ.match(line):
            angle = f"(arg[{read.group(2)}] ? arg[{read.group(2)}][{read.group(3)}] : 0)"
        elif value := _NUMBER.match(line):
            number = value.group(2)
        elif (total := _SUM.match(line)) is not None:
            x, sign, y = total.group(2, 3, 4)
            if x in holds and y in numbers:
                # (q + c) or (q - c) as CasADi computes it (spaced: q - -c is not q--c)
                angle = f"({holds[x]} {sign} {numbers[y]})"
            elif sign == "+" and x in numbers and y in holds:
                angle = f"({numbers[x]} + {holds[y]})"
        if assigned := ASSIGNED.match(line):
            holds.pop(assigned.group(1), None)
            numbers.pop(assigned.group(1), None)
            if angle is not None:
                holds[assigned.group(1)] = angle
            if number is not None:
                numbers[assigned.group(1)] = number
    if len(slots) < 2:
        return None
    lanes = -(-len(slots) // LANES) * LANES
    start = next(n for n, line in enumerate(lines) if not DECLARATION.match(line))
    prologue = [f"  casadi_real casdyn_x[{lanes}], casdyn_s[{lanes}], casdyn_c[{lanes}];"]
    prologue += [f"  casdyn_x[{slot}] = {angle};" for angle, slot in slots.items()]
    prologue += [f"  casdyn_x[{slot}] = 0;" for slot in range(len(slots), lanes)]
    prologue.append(f"  casdyn_trig_lanes(casdyn_x, casdyn_s, casdyn_c, {lanes});")
    return changed[:start] + prologue + changed[start:]
