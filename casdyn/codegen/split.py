"""Long straight-line C functions cut into parts, for the C compiler's sake.

CasADi writes an SX Function as one C function of straight-line code, one statement per
instruction, on a few thousand reused local variables. On such a function GCC spends most of
its time in register allocation, whose cost grows with the length of the function times the
number of values alive at once: the floating TALOS's ID derivatives (52,036 statements) took
15.5 s of processor time at -O2, 12 of them allocating registers, and the allocator keeps
most of those values on the stack anyway (16 vector registers against 1,655 variables).

:func:`split_functions` cuts every such function into parts of about
:data:`casdyn.sizes.SPLIT_PART` statements, each its own function (never inlined), called in
turn by the original one. A value computed in one part and used in a later one goes through
an array on the caller's stack, stored right after its last assignment in its part, loaded
right before its first use in a later part, so that each part's register allocation sees
only its own short live ranges. Every arithmetic statement is kept as written and in order:
the results are those of the uncut function (up to the compiler's contraction of a
multiplication and an addition into one fused instruction, which it no longer does across
two parts).
"""

from __future__ import annotations

import re

from .. import sizes
from .casadi_c import ASSIGNED, DECLARATION, header, rewrite_functions

_VARIABLE = re.compile(r"\ba\d+\b")
# what a part may not contain: blocks, loops, the work vectors, calls of other functions
_UNSAFE = re.compile(r"[{}]|\b(?:w|iw)\[|\bcasadi_f\d|\bfor\b|\bwhile\b|\breturn\b|\bgoto\b")

NOINLINE = """#ifndef CASDYN_NOINLINE
#if defined(__GNUC__) || defined(__clang__)
#define CASDYN_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define CASDYN_NOINLINE __declspec(noinline)
#else
#define CASDYN_NOINLINE
#endif
#endif
#ifndef CASDYN_RESTRICT
#if defined(__GNUC__) || defined(__clang__) || defined(_MSC_VER)
#define CASDYN_RESTRICT __restrict
#else
#define CASDYN_RESTRICT
#endif
#endif
"""


def split_functions(source: str, part: int | None = None, split_from: int | None = None) -> str:
    """``source`` (CasADi-generated C) with each straight-line function of ``split_from``
    (default :data:`casdyn.sizes.SPLIT_FROM`) statements or more cut into parts of about
    ``part`` (default :data:`casdyn.sizes.SPLIT_PART`) statements (see the module's
    documentation); other functions stay as they are."""
    part = sizes.SPLIT_PART if part is None else part
    split_from = sizes.SPLIT_FROM if split_from is None else split_from
    return rewrite_functions(
        source, lambda name, body: _split(name, body, part, split_from), NOINLINE)


def _split(name: str, body: str, part: int, split_from: int) -> str | None:
    """The C of function ``name`` with ``body`` cut into parts, or None if it is not
    straight-line code of ``split_from`` statements or more."""
    lines = body.splitlines()
    while lines and DECLARATION.match(lines[0]):
        lines.pop(0)
    if not lines or lines[-1] != "  return 0;":
        return None
    statements = lines[:-1]
    if len(statements) < split_from or any(
            not line.startswith("  ") or not line.endswith(";") or _UNSAFE.search(line)
            for line in statements):
        return None
    n_parts = -(-len(statements) // part)
    size = -(-len(statements) // n_parts)
    chunks = [statements[k:k + size] for k in range(0, len(statements), size)]
    # (variables assigned, variables read before any assignment) of each statement
    uses = []
    for line in statements:
        assigned = ASSIGNED.match(line)
        target = assigned.group(1) if assigned else None
        rest = line[assigned.end():] if assigned else line
        uses.append((target, _VARIABLE.findall(rest)))
    # the variables each part needs from earlier ones (upward exposed), and assigns
    exposed, written = [], []
    start = 0
    for chunk in chunks:
        seen, needed = set(), set()
        for target, reads in uses[start:start + len(chunk)]:
            needed.update(v for v in reads if v not in seen)
            if target:
                seen.add(target)
        exposed.append(needed)
        written.append(seen)
        start += len(chunk)
    live_after = [set() for _ in chunks]  # needed by a later part, from this one or before
    live = set()
    for k in reversed(range(len(chunks))):
        live_after[k] = set(live)
        live = exposed[k] | (live - written[k])
    # a slot for each value a later part needs: (variable, the part that assigned it), so
    # that no part writes a slot it reads
    slots: dict[tuple[str, int], int] = {}
    came_from: list[dict[str, int]] = []  # the part each needed value was assigned in
    origin: dict[str, int] = {}
    for k in range(len(chunks)):
        if not exposed[k] <= origin.keys():
            return None  # read before any assignment: not CasADi's code
        came_from.append({v: origin[v] for v in exposed[k]})
        for v in sorted(exposed[k]):
            slots.setdefault((v, origin[v]), len(slots))
        for v in sorted(written[k] & live_after[k]):
            slots.setdefault((v, k), len(slots))
        origin.update({v: k for v in written[k]})
    functions, calls, start = [], [], 0
    for k, chunk in enumerate(chunks):
        part_name = f"{name}_part{k}"
        stores = written[k] & live_after[k]
        last = {}  # the last assignment of each stored variable in this part
        for i, (target, _) in enumerate(uses[start:start + len(chunk)]):
            if target in stores:
                last[target] = i
        loaded, assigned, out = set(), set(), []
        for i, (line, (target, reads)) in enumerate(
                zip(chunk, uses[start:start + len(chunk)], strict=True)):
            for v in dict.fromkeys(reads):
                if v not in assigned and v not in loaded:
                    out.append(f"  {v}=si[{slots[v, came_from[k][v]]}];")
                    loaded.add(v)
            out.append(line)
            if target:
                assigned.add(target)
                if last.get(target) == i:
                    out.append(f"  so[{slots[target, k]}]={target};")
        variables = sorted(loaded | assigned, key=lambda v: int(v[1:]))
        declarations = [f"  casadi_real {', '.join(variables[j:j + 12])};"
                        for j in range(0, len(variables), 12)]
        functions.append(f"static CASDYN_NOINLINE void {part_name}(const casadi_real** arg, "
                         f"casadi_real** res, const casadi_real* CASDYN_RESTRICT si, "
                         f"casadi_real* CASDYN_RESTRICT so) {{\n"
                         + "\n".join(declarations + out) + "\n}\n")
        calls.append(f"  {part_name}(arg, res, s, s);")
        start += len(chunk)
    return ("\n".join(functions) + "\n" + header(name)
            + f"  casadi_real s[{max(len(slots), 1)}];\n" + "\n".join(calls) + "\n  return 0;\n}\n")
