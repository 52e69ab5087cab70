"""The forms of Functions that the code generator writes better than their SX graphs.

Each form has the name, inputs, outputs and output sparsity of its cached Function but
exists for the code generator only: its C parts are CasADi ``Function.jit`` bodies made
with ``"jit": False``, inlined into the C of the Function that calls them, so it cannot be
evaluated in Python. Numeric and symbolic calls keep the SX graphs; the two are tested to
agree.

* **Loops** (:func:`tree_solve`). CasADi writes an SX graph as straight-line scalar C, one
  statement per instruction, which no compiler turns into vector instructions. Most of
  casdyn's graphs are best that way (their constants fold, their zeros vanish), but the
  ``n^3`` part of the forward-dynamics derivatives, ``M^-1`` times the ``2 n`` columns of
  inverse dynamics' partials, is the same multiply-add on whole rows: as C loops over those
  rows the C compiler uses its SIMD instructions (four or eight columns at once with
  ``-march=native``). :func:`for_c` gives the forward-dynamics derivatives of chain-like
  models in that form.
* **Linked** (:func:`linked_forms`). ``d qdd / d(q, qd, tau)`` is ``-M^-1 [d tau/dq, d
  tau/dqd]`` and ``M^-1`` at ``qdd = FD(q, qd, tau)``, where ``d tau/d(q, qd)`` and ``M = d
  tau/d qdd`` are the inverse-dynamics derivatives. Written as one SX graph it repeats
  those derivatives (the floating TALOS: 153,235 instructions against 52,036), and compiling
  that C was a third of an export's time. Where a library exports the forward dynamics and
  the inverse-dynamics derivatives with the same options, the forward-dynamics derivatives
  call those two C functions, factorise ``M`` (straight-line C on ``M``'s sparsity,
  :class:`casdyn.math.factorization.TreeLDLT`) and solve with the same loops.
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from .. import sizes
from ..functions.build_dynamics import factorization_order, forward_dynamics_pieces
from ..functions.cache import FunctionCache, without_fext
from ..functions.registry import SIGNATURES
from ..functions.size_policy import sx_function, velocity_pairs
from ..functions.stages import Stages
from ..math.factorization import TreeLDLT
from ..math.spatial import SX
from ..model.tree import Model

# the loop form from this many velocities, where M's lower triangle is at least this
# full: chains more than trees (measurements: docs/performance.md, "Why these
# thresholds")
LOOP_SOLVE_VELOCITIES = 16
LOOP_SOLVE_FILL = 0.75


def for_c(cache: FunctionCache, key: tuple) -> ca.Function:
    """The Function of ``key`` as its C is best generated: the cached Function, but for the
    forward-dynamics derivatives of larger models one whose ``M^-1`` products are C loops,
    with the same name, inputs and outputs."""
    function = cache.get_key(key)
    name, options = key[0], dict(key[1:])
    if name != "forward_dynamics_derivatives" or not solves_in_loops(cache.model):
        return function

    def make() -> ca.Function:
        if options["fext"]:
            return _forward_dynamics_derivatives_in_loops(cache.stages, function)
        # from the full one's pieces with fext = 0, as the cache derives the SX variant
        full = for_c(cache, (name, *sorted({**options, "fext": True}.items())))
        return _without_fext_in_loops(full, function, cache.stages)

    return cache.derived(("for_c", key), make)


def solves_in_loops(model: Model) -> bool:
    """Whether the forward-dynamics derivatives' ``M^-1`` products are C loops in generated
    code: from :data:`LOOP_SOLVE_VELOCITIES` velocities on, where the lower triangle of
    ``M`` is at least :data:`LOOP_SOLVE_FILL` structurally nonzero."""
    nv = model.nv
    if nv < LOOP_SOLVE_VELOCITIES:
        return False
    within = sum(k * (k - 1) // 2 for k in (j.type.nv for j in model.joints))
    return (velocity_pairs(model) - within) / (nv * (nv + 1) / 2) >= LOOP_SOLVE_FILL


def _forward_dynamics_derivatives_in_loops(stages: Stages,
                                           function: ca.Function) -> ca.Function:
    """``function`` (the forward-dynamics derivatives with ``fext``) as the code generator
    should write it: the SX graph of the pieces (inverse dynamics' partials transposed, the
    numbers of ``M = L^T D L``) and the loops of :func:`casdyn.codegen.tree_solve`
    for ``-M^-1`` times the partials and ``M^-1``."""
    model = stages.reframed
    nv = model.nv
    s = {"q": SX.sym("q", model.nq), "qd": SX.sym("qd", nv), "tau": SX.sym("tau", nv),
         "fext": SX.sym("fext", len(model.bodies), 6)}
    partials, ldlt, _ = forward_dynamics_pieces(model, s, {"fext": True}, stages)
    names = list(SIGNATURES["forward_dynamics_derivatives"].inputs)
    c_name = function.name()
    pieces = sx_function(f"{c_name}_pieces", "forward_dynamics_derivatives",
                         [s[n] for n in names],
                         [ca.densify(ca.horzcat(*partials)).T, ldlt.values()],
                         names, ["BT", "ld"])
    solve = tree_solve(ldlt, 2 * nv, f"{c_name}_solve")
    return _solved_in_loops(function, pieces, solve, ldlt.order)


def _without_fext_in_loops(full: ca.Function, function: ca.Function,
                           stages: Stages) -> ca.Function:
    """``function`` (the variant without ``fext``) from ``full``, the loops' form of the
    variant with it: its pieces with ``fext = 0`` inlined, the same loops."""
    name = full.name()
    pieces = without_fext(full.find_function(f"{name}_pieces"), f"{function.name()}_pieces",
                          "forward_dynamics_derivatives")
    return _solved_in_loops(function, pieces, full.find_function(f"{name}_solve"),
                            factorization_order(stages))


def _solved_in_loops(function: ca.Function, pieces: ca.Function, solve: ca.Function,
                     order: list[int]) -> ca.Function:
    """The MX Function ``pieces`` then ``solve`` (in the factorisation's ``order``), with
    the name, inputs, outputs and output sparsity of ``function``."""
    nv = len(order)
    inputs = [ca.MX.sym(pieces.name_in(i), pieces.sparsity_in(i)) for i in range(pieces.n_in())]
    XT, Z = solve(*pieces(*inputs))
    X = XT.T
    back = np.argsort(order)  # M^-1 = Z with rows and columns in M's order
    outputs = [X[:, :nv], X[:, nv:], Z[back, back]]
    outputs = [ca.project(x, function.sparsity_out(k)) for k, x in enumerate(outputs)]
    return ca.Function(function.name(), inputs, outputs, pieces.name_in(),
                       function.name_out())


# --- the loops -------------------------------------------------------------------------------
def tree_solve(ldlt: TreeLDLT, columns: int, name: str) -> ca.Function:
    """``X^T = -(M^-1 B)^T`` and ``M^-1`` through the factorisation ``M = L^T diag(d) L`` of
    ``ldlt`` (its sparsity and order; its numbers are an input), as loops over the
    ``columns`` of ``B`` and the columns of ``M^-1``.

    Inputs: ``BT`` (``columns x n``, ``B^T``: each row of ``B`` contiguous) and ``ld``, the
    numbers of the factorisation (:meth:`TreeLDLT.values`: the entries of ``L``, then
    ``d``). Outputs: ``XT`` (``columns x n``), the rows of ``X`` contiguous, the solve in
    place there; ``Z`` (``n x n``), ``M^-1`` in the permuted order, ``Z[a, b] = M^-1[o[a],
    o[b]]`` for ``o = ldlt.order``.
    """
    dense = ca.Sparsity.dense
    n, m, d = ldlt.n, columns, len(ldlt.entries())
    return ca.Function.jit(name, "\n".join(tree_solve_lines(ldlt, columns)), ["BT", "ld"],
                           ["XT", "Z"], [dense(m, n), dense(d + n, 1)],
                           [dense(m, n), dense(n, n)], {"jit": False})


def tree_solve_lines(ldlt: TreeLDLT, columns: int) -> list[str]:
    """The C of :func:`tree_solve`, on the arrays ``BT``, ``ld``, ``XT`` and ``Z`` (as
    there) and the integers ``i`` and ``j`` it declares."""
    n, m = ldlt.n, columns
    entries = ldlt.entries()
    index = {entry: k for k, entry in enumerate(entries)}
    children: list[list[int]] = [[] for _ in range(n)]  # k with an entry L[k][c], by c
    for k, c in entries:
        children[c].append(k)
    below = [[(index[k, c], k) for k in children[c]] for c in range(n)]
    above = [[(index[k, c], c) for c in ldlt.L[k]] for k in range(n)]
    d = len(entries)  # d_k is ld[d + k]

    def x(k: int) -> int:  # the k-th row of the permuted system, at its place in X
        return ldlt.order[k] * m

    # y = L^-T P (-B), from the last row up (the rows below are final), then x = L^-1 D^-1 y
    # from the first row down (the rows of the ancestors are final)
    lines = ["casadi_int i, j;"]
    lines += [_rows("XT", x(c), 0, m, f"-BT[{x(c)} + i]", [(e, x(k)) for e, k in below[c]])
              for c in reversed(range(n))]
    lines += [_rows("XT", x(k), 0, m, f"XT[{x(k)} + i] / ld[{d + k}]",
                    [(e, x(c)) for e, c in above[k]]) for k in range(n)]
    # Z = L^-1 D^-1 L^-T: in the permuted order L^-T is upper triangular, so row a of it and
    # of Z's upper triangle starts at column a; Z's lower triangle mirrors the upper.
    lines.append(f"for (i = 0; i < {n * n}; ++i) Z[i] = 0;")
    lines.append(f"for (i = 0; i < {n}; ++i) Z[i * {n + 1}] = 1;")
    lines += [_rows("Z", c * n, c, n, f"Z[{c * n} + i]", [(e, k * n) for e, k in below[c]])
              for c in reversed(range(n))]
    lines += [_rows("Z", k * n, k, n, f"Z[{k * n} + i] / ld[{d + k}]",
                    [(e, c * n) for e, c in above[k]]) for k in range(n)]
    lines.append(f"for (i = 1; i < {n}; ++i) for (j = 0; j < i; ++j) Z[i * {n} + j] = "
                 f"Z[j * {n} + i];")
    return lines


def _rows(array: str, target: int, start: int, stop: int, first: str,
          terms: list[tuple[int, int]]) -> str:
    """C for ``array[target + i] = first - sum of ld[e] * array[source + i]`` over ``terms``
    ``(e, source)``, for ``i`` from ``start`` to ``stop``: one pass over the row with the sum
    in registers, the factors read before the loop (they could alias the row)."""
    factors = [f"l{t}" for t in range(len(terms))]
    loads = "".join(f"const casadi_real {f} = ld[{e}]; "
                    for f, (e, _) in zip(factors, terms, strict=True))
    products = [f"{f} * {array}[{source} + i]"
                for f, (_, source) in zip(factors, terms, strict=True)]
    value = f"{first} - {_balanced(products)}" if terms else first
    return f"{{ {loads}for (i = {start}; i < {stop}; ++i) {array}[{target} + i] = {value}; }}"


def _balanced(terms: list[str]) -> str:
    """The sum of ``terms`` as a balanced tree of additions, in parentheses: C adds left to
    right, so a plain sum of many terms is one long chain of dependent additions, while
    this one's depth grows with the logarithm of their number."""
    if len(terms) == 1:
        return terms[0]
    half = len(terms) // 2
    return f"({_balanced(terms[:half])} + {_balanced(terms[half:])})"


# --- the linked form -------------------------------------------------------------------------
def linked_forward_dynamics_derivatives(cache: FunctionCache, key: tuple,
                                        forward: tuple[str, tuple],
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
    with :func:`casdyn.codegen.tree_solve_lines`."""
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
        *(line for line in tree_solve_lines(ldlt, m) if line != "casadi_int i, j;"),
        *(f"for (i = 0; i < {len(table)}; ++i) y{k}[i] = {'Z' if k == 2 else 'XT'}[out_{k}[i]];"
          for k, table in enumerate(out_of)),
        "(void) j;",
        "}",
    ]
    return "\n".join(lines), total


def linked_forms(cache: FunctionCache, keys: list[tuple],
                 symbols: list[str]) -> dict[tuple, ca.Function]:
    """The linked C form of each large forward-dynamics derivatives among ``keys`` (exported
    as the C functions ``symbols``) whose forward dynamics and inverse-dynamics derivatives
    of the same options are exported too: ``{key: Function}``."""
    where = dict(zip(keys, symbols, strict=True))
    linked: dict[tuple, ca.Function] = {}
    if solves_in_loops(cache.model):
        return linked  # chains: the loop form's pieces share FD's work with the partials
    for key in keys:
        if key[0] != "forward_dynamics_derivatives" or \
                cache.get_key(key).n_instructions() < sizes.LINKED_FROM:
            continue
        fext = dict(key[1:])["fext"]
        forward = cache.key("forward_dynamics", fext=fext)
        inverse = cache.key("inverse_dynamics_derivatives", fext=fext)
        if forward in where and inverse in where:
            linked[key] = linked_forward_dynamics_derivatives(
                cache, key, (where[forward], forward), (where[inverse], inverse))
    return linked
