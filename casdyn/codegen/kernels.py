"""C loops for the generated code where an SX graph would unroll into scalar instructions.

CasADi's code generator writes an SX graph as straight-line scalar C, one statement per
instruction, which no compiler turns into vector instructions. Most of casdyn's graphs are
best that way (their constants fold, their zeros vanish), but the ``n^3`` part of the
forward-dynamics derivatives, ``M^-1`` times the ``2 n`` columns of inverse dynamics'
partials, is the same multiply-add on whole rows: as loops over those rows the C compiler
uses its SIMD instructions (four or eight columns at once with ``-march=native``).

The loops are the body of a CasADi ``Function.jit`` made for the code generator only
(``"jit": False``): it cannot be evaluated in Python, it is inlined into the C of the
Function that calls it. Numeric and symbolic calls keep the SX graphs; the two forms are
tested to agree.
"""

from __future__ import annotations

import casadi as ca

from ..math.factorization import TreeLDLT


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
