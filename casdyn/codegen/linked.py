"""The forward-dynamics derivatives in C from functions the same library exports.

``d qdd / d(q, qd, tau)`` is ``-M^-1 [d tau/dq, d tau/dqd]`` and ``M^-1`` at ``qdd = FD(q,
qd, tau)``, where ``d tau/d(q, qd)`` and ``M = d tau/d qdd`` are the inverse-dynamics
derivatives. Written as one SX graph it repeats those derivatives (the floating TALOS:
153,235 instructions against 52,036), and compiling that C was a third of an export's time.
Where a library exports the forward dynamics and the inverse-dynamics derivatives with the
same options, the forward-dynamics derivatives call those two C functions, factorise ``M``
(a small SX graph, :class:`casdyn.math.factorization.TreeLDLT` on ``M``'s sparsity) and
solve with the loops of :func:`casdyn.codegen.kernels.tree_solve`.

The calls are CasADi ``Function.jit`` bodies made for the code generator only, like the
loops: the form cannot be evaluated in Python, only exported; numeric and symbolic calls
keep the SX graph. The two are tested to agree.
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from ..functions.build_dynamics import factorization_order
from ..functions.cache import FunctionCache
from ..math.factorization import TreeLDLT
from . import kernels
from .loops import solves_in_loops

# the forward-dynamics derivatives are linked from this many instructions of their SX graph,
# where their C is not the loop form of casdyn.codegen.loops: a 24-link chain's linked form
# ran in 12.75 us against 10.0 us for the loop form (whose SX part computes the partials
# and FD together), the floating TALOS's in 18.55 against 18.77 us for its SX graph's C
# (built for the processor, best of 101 interleaved rounds)
LINKED_FROM = 20_000


def forward_dynamics_derivatives(cache: FunctionCache, key: tuple, forward: tuple[str, tuple],
                                 inverse: tuple[str, tuple]) -> ca.Function:
    """The forward-dynamics derivatives of ``key`` as the code generator should write them
    in a library whose C functions ``forward = (symbol, key)`` (the forward dynamics) and
    ``inverse = (symbol, key)`` (the inverse-dynamics derivatives) have the same options:
    the name, inputs, outputs and output sparsity of the cached Function; one C function
    (:func:`linked_body`) between the copies of its inputs and outputs."""
    function = cache.get_key(key)
    fd, idd = cache.get_key(forward[1]), cache.get_key(inverse[1])
    ldlt = TreeLDLT(ca.SX.sym("M", idd.sparsity_out(2)), factorization_order(cache.stages))
    body, scratch = linked_body(function, fd, idd, ldlt, forward[0], inverse[0])
    n_in, n_out = function.n_in(), function.n_out()
    names_in = [f"x{i}" for i in range(n_in)]
    names_out = [f"y{i}" for i in range(n_out)] + ["scratch"]
    jit = ca.Function.jit(
        f"{function.name()}_linked", body, names_in, names_out,
        [function.sparsity_in(i) for i in range(n_in)],
        [function.sparsity_out(i) for i in range(n_out)] + [ca.Sparsity.dense(scratch, 1)],
        {"jit": False})
    inputs = [ca.MX.sym(function.name_in(i), function.sparsity_in(i)) for i in range(n_in)]
    outputs = jit(*inputs)[:n_out]
    return ca.Function(function.name(), inputs, outputs, function.name_in(),
                       function.name_out())


def _nonzeros(sparsity: ca.Sparsity) -> list[tuple[int, int]]:
    """``(row, column)`` of each nonzero of ``sparsity``, in storage order."""
    rows, columns = sparsity.get_triplet()
    return list(zip(rows, columns, strict=True))


def _table(name: str, values: list[int]) -> str:
    """A C array of integers ``name`` (one zero where ``values`` is empty)."""
    listed = ", ".join(map(str, values or [0]))
    return f"static const casadi_int {name}[{max(len(values), 1)}] = {{{listed}}};"


def linked_body(function: ca.Function, fd: ca.Function, idd: ca.Function, ldlt: TreeLDLT,
                fd_symbol: str, idd_symbol: str) -> tuple[str, int]:
    """``(C, scratch size)``: the body of the forward-dynamics derivatives ``function``
    (inputs ``x0, ...``, outputs ``y0, y1, y2``, work array ``scratch``) calling the C
    functions ``fd_symbol`` (``fd``) and ``idd_symbol`` (``idd``), factorising ``M`` as
    ``ldlt`` (its structure; straight-line C of RBDA table 6.3 on the numbers) and solving
    with :func:`casdyn.codegen.kernels.tree_solve_lines`."""
    nv, n = ldlt.n, ldlt.n
    m = 2 * nv
    entries = ldlt.entries()
    index = {entry: k for k, entry in enumerate(entries)}
    d = len(entries)
    order = ldlt.order
    at_M = {rc: k for k, rc in enumerate(_nonzeros(idd.sparsity_out(2)))}
    # the factorisation, as TreeLDLT does it, on numbers: mm holds the permuted lower triangle
    slots: dict[tuple[int, int], int] = {}
    rows: list[set[int]] = [set() for _ in range(n)]
    factor = []
    for k in range(n):
        for c in range(k + 1):
            if (order[k], order[c]) in at_M:
                slots[k, c] = len(slots)
                rows[k].add(c)
                factor.append(f"mm[{slots[k, c]}] = Mv[{at_M[order[k], order[c]]}];")
    for k in reversed(range(n)):
        factor.append(f"ld[{d + k}] = mm[{slots[k, k]}];" if k in rows[k] else
                      f"ld[{d + k}] = 0;")
        below = sorted(rows[k] - {k})
        factor += [f"ld[{index[k, c]}] = mm[{slots[k, c]}] / ld[{d + k}];" for c in below]
        for a, i in enumerate(below):
            for j in below[: a + 1]:
                if j not in rows[i]:
                    slots[i, j] = len(slots)
                    rows[i].add(j)
                    factor.append(f"mm[{slots[i, j]}] = 0;")
                factor.append(f"mm[{slots[i, j]}] -= mm[{slots[k, i]}] * ld[{index[k, j]}];")
    # the scratch array: qdd, the ID derivatives' outputs, ld, mm, BT, XT, Z
    sizes = {"qdd": nv, "A": idd.nnz_out(0), "B": idd.nnz_out(1), "Mv": idd.nnz_out(2),
             "ld": d + n, "mm": len(slots), "BT": m * nv, "XT": m * nv, "Z": n * n}
    offsets, total = {}, 0
    for name, size in sizes.items():
        offsets[name] = total
        total += size
    position = np.argsort(order)  # Z[a, b] = M^-1[order[a], order[b]]
    into_bt = ([r * m + c for r, c in _nonzeros(idd.sparsity_out(0))],
               [r * m + nv + c for r, c in _nonzeros(idd.sparsity_out(1))])
    out_of = ([r * m + c for r, c in _nonzeros(function.sparsity_out(0))],
              [r * m + nv + c for r, c in _nonzeros(function.sparsity_out(1))],
              [int(position[r]) * n + int(position[c])
               for r, c in _nonzeros(function.sparsity_out(2))])
    fd_args = [f"x{function.name_in().index(name)}" for name in fd.name_in()]
    idd_args = ["qdd" if name == "qdd" else f"x{function.name_in().index(name)}"
                for name in idd.name_in()]
    signature = ("(const casadi_real** arg, casadi_real** res, casadi_int* iw, casadi_real* w, "
                 "int mem)")
    lines = [
        "{",
        f"int {fd_symbol}{signature};",
        f"int {idd_symbol}{signature};",
        _table("into_a", into_bt[0]), _table("into_b", into_bt[1]),
        *(_table(f"out_{k}", table) for k, table in enumerate(out_of)),
        f"const casadi_real* a[{max(fd.n_in(), idd.n_in())}]; casadi_real* r[3];",
        *(f"casadi_real* {name} = scratch + {offset};" for name, offset in offsets.items()),
        "casadi_int i, j;",
        *(f"a[{k}] = {x};" for k, x in enumerate(fd_args)),
        f"r[0] = qdd; if ({fd_symbol}(a, r, 0, 0, 0)) return 1;",
        *(f"a[{k}] = {x};" for k, x in enumerate(idd_args)),
        f"r[0] = A; r[1] = B; r[2] = Mv; if ({idd_symbol}(a, r, 0, 0, 0)) return 1;",
        f"for (i = 0; i < {m * nv}; ++i) BT[i] = 0;",
        f"for (i = 0; i < {sizes['A']}; ++i) BT[into_a[i]] = A[i];",
        f"for (i = 0; i < {sizes['B']}; ++i) BT[into_b[i]] = B[i];",
        *factor,
        *(line for line in kernels.tree_solve_lines(ldlt, m) if line != "casadi_int i, j;"),
        *(f"for (i = 0; i < {len(table)}; ++i) y{k}[i] = {'Z' if k == 2 else 'XT'}[out_{k}[i]];"
          for k, table in enumerate(out_of)),
        "(void) j;",
        "}",
    ]
    return "\n".join(lines), total


def forms(cache: FunctionCache, keys: list[tuple], symbols: list[str]) -> dict[tuple, ca.Function]:
    """The linked C form of each large forward-dynamics derivatives among ``keys`` (exported
    as the C functions ``symbols``) whose forward dynamics and inverse-dynamics derivatives
    of the same options are exported too: ``{key: Function}``."""
    where = dict(zip(keys, symbols, strict=True))
    linked: dict[tuple, ca.Function] = {}
    if solves_in_loops(cache.model):
        return linked  # chains: the loop form's pieces share FD's work with the partials
    for key in keys:
        if key[0] != "forward_dynamics_derivatives" or \
                cache.get_key(key).n_instructions() < LINKED_FROM:
            continue
        fext = dict(key[1:])["fext"]
        forward = cache.key("forward_dynamics", fext=fext)
        inverse = cache.key("inverse_dynamics_derivatives", fext=fext)
        if forward in where and inverse in where:
            linked[key] = forward_dynamics_derivatives(
                cache, key, (where[forward], forward), (where[inverse], inverse))
    return linked
