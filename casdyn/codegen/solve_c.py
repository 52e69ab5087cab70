"""The C of the forward-dynamics derivatives' linear algebra, as loops on numbers.

``d qdd / d(q, qd) = -M^-1 [d tau/dq, d tau/dqd]`` and ``d qdd / d tau = M^-1``, from the
inverse-dynamics derivatives at ``qdd = FD(q, qd, tau)`` (their outputs ``A = d tau/dq``,
``B = d tau/dqd`` and ``M = d tau/d qdd``). :func:`body` writes the C that takes those three
CasADi arrays and fills the three outputs:

1. **factorise** ``M = L^T diag(d) L`` (RBDA table 6.3, from the last row up): for a tree
   in its parents-first order, straight-line C on ``M``'s structural nonzeros (little work,
   no fill-in); for a chain-like ``M`` (mostly full), loops whose rows the C compiler turns
   into vector instructions;
2. **invert**: ``M^-1 = L^-1 D^-1 L^-T``, row by row, into the third output;
3. **multiply**: ``-M^-1 [A B]`` column by column. The columns of ``A`` and ``B`` whose
   nonzero rows are the same (a limb's joints) form a group; each group is multiplied four
   columns and eight rows at a time (a tile of 32 sums a register file holds), reading only
   the rows of ``M^-1`` the group's nonzeros select. This is most of the work (``2 n^3``
   multiply-adds for a chain of ``n`` joints) and runs at several multiply-adds per
   nanosecond where the row-by-row solve it replaces ran one to three (docs/performance.md).

The C uses the names ``A``, ``B``, ``Mv`` (inputs, CasADi's nonzeros), ``y0``, ``y1``, ``y2``
(the dense outputs, column-major) and ``s`` (scratch of :func:`body`'s size), and declares the
integers it needs.
"""

from __future__ import annotations

import casadi as ca

# the tile of the product: columns of [A B] and rows of M^-1 at a time
TILE_COLUMNS = 4
TILE_ROWS = 8


def nonzeros(sparsity: ca.Sparsity) -> list[tuple[int, int]]:
    """``(row, column)`` of each nonzero of ``sparsity``, in storage order."""
    rows, columns = sparsity.get_triplet()
    return list(zip(rows, columns, strict=True))


def table(name: str, values: list[int]) -> str:
    """A C array of integers ``name`` (one zero where ``values`` is empty)."""
    listed = ", ".join(map(str, values or [0]))
    return f"static const casadi_int {name}[{max(len(values), 1)}] = {{{listed}}};"


def supported(sp_a: ca.Sparsity, sp_b: ca.Sparsity, outputs: list[ca.Sparsity]) -> bool:
    """Whether :func:`body` applies: dense square outputs and partials of their size."""
    n = sp_a.size1()
    return all(s.is_dense() and s.size() == (n, n) for s in outputs) and \
        sp_a.size() == (n, n) and sp_b.size() == (n, n)


def body(sp_a: ca.Sparsity, sp_b: ca.Sparsity, sp_m: ca.Sparsity, order: list[int],
         dense: bool) -> tuple[list[str], int]:
    """``(C lines, scratch size)`` of the three steps above for partials of sparsities
    ``sp_a``, ``sp_b`` and a mass matrix of sparsity ``sp_m`` (``n x n``). ``order``: the
    parents-first order of the tree factorisation; ``dense``: factorise and invert with
    loops on full rows (a chain), in the order of the velocities."""
    n = sp_m.size1()
    if dense:
        lines, scratch = _dense_inverse(sp_m, n)
    else:
        lines, scratch = _tree_inverse(sp_m, order)
    declared = "casadi_int i, j, k, t, g, v;"
    unused = "(void) i; (void) j; (void) k; (void) t; (void) g; (void) v;"
    return [declared, *lines, *_product(sp_a, sp_b, n), unused], scratch


# --- step 1 and 2 for a tree -----------------------------------------------------------------
def _tree_inverse(sp_m: ca.Sparsity, order: list[int]) -> tuple[list[str], int]:
    """``M^-1`` into ``y2`` through ``M = L^T diag(d) L`` in ``order`` (as
    :class:`casdyn.math.factorization.TreeLDLT` eliminates, here on the numbers): straight-line
    C for the factors (``ld``: the entries of ``L``, ``dg``: ``d``), the permuted inverse
    ``Z`` by :func:`_inverse_rows`, then ``y2`` in the velocities' order."""
    n = len(order)
    at_m = {rc: k for k, rc in enumerate(nonzeros(sp_m))}
    slots: dict[tuple[int, int], int] = {}  # mm: the permuted lower triangle as it is reduced
    index: dict[tuple[int, int], int] = {}  # ld: the entries of L, as they are formed
    rows: list[set[int]] = [set() for _ in range(n)]
    factor = []
    for k in range(n):
        for c in range(k + 1):
            if (order[k], order[c]) in at_m:
                slots[k, c] = len(slots)
                rows[k].add(c)
                factor.append(f"mm[{slots[k, c]}] = Mv[{at_m[order[k], order[c]]}];")
    for k in reversed(range(n)):
        factor.append(f"dg[{k}] = mm[{slots[k, k]}];" if k in rows[k] else f"dg[{k}] = 0;")
        below = sorted(rows[k] - {k})
        if below:
            factor.append(f"r = 1 / dg[{k}];")
        for c in below:
            index[k, c] = len(index)
            factor.append(f"ld[{index[k, c]}] = mm[{slots[k, c]}] * r;")
        for a, i in enumerate(below):
            for j in below[: a + 1]:
                if j not in rows[i]:
                    slots[i, j] = len(slots)
                    rows[i].add(j)
                    factor.append(f"mm[{slots[i, j]}] = 0;")
                factor.append(f"mm[{slots[i, j]}] -= mm[{slots[k, i]}] * ld[{index[k, j]}];")
    dg, mm, z = len(index), len(index) + n, len(index) + n + len(slots)
    inverse = _inverse_rows("Z", n, {kc: f"ld[{e}]" for kc, e in index.items()},
                            [f"dg[{k}]" for k in range(n)])
    position = {o: a for a, o in enumerate(order)}
    gather = [position[r] * n + position[c] if position[r] <= position[c]
              else position[c] * n + position[r] for c in range(n) for r in range(n)]
    lines = [f"casadi_real* ld = s; casadi_real* dg = s + {dg}; casadi_real* mm = s + {mm}; "
             f"casadi_real* Z = s + {z}; casadi_real r;", *factor, *inverse,
             table("gather", gather),
             f"for (i = 0; i < {n * n}; ++i) y2[i] = Z[gather[i]];", "(void) r;"]
    return lines, z + n * n


def _inverse_rows(z: str, n: int, L: dict[tuple[int, int], str], d: list[str]) -> list[str]:
    """C for the upper triangle (by rows) of ``Z = L^-1 D^-1 L^-T`` in the array ``z``
    (``n x n``), then its lower triangle, from the C expressions ``L[k, c]`` of the stored
    entries of ``L`` and ``d[k]`` of ``D``: from ``I``, row ``c`` loses ``L[k, c]`` times the
    final rows ``k > c`` (from the last row up), then row ``k`` is divided by ``d[k]`` and
    loses ``L[k, c]`` times the final rows ``c < k`` (from the first down); each row one
    loop with its sum in registers."""
    below: list[list[int]] = [[] for _ in range(n)]
    above: list[list[int]] = [[] for _ in range(n)]
    for k, c in L:
        below[c].append(k)
        above[k].append(c)
    lines = [f"for (i = 0; i < {n * n}; ++i) {z}[i] = 0;",
             f"for (i = 0; i < {n}; ++i) {z}[i * {n + 1}] = 1;"]
    lines += [_rows(f"{z} + {c * n}", c, n, [(L[k, c], f"{z} + {k * n}") for k in below[c]],
                    None) for c in reversed(range(n))]
    lines += [_rows(f"{z} + {k * n}", k, n, [(L[k, c], f"{z} + {c * n}") for c in above[k]],
                    d[k]) for k in range(n)]
    lines.append(f"for (i = 1; i < {n}; ++i) for (j = 0; j < i; ++j) "
                 f"{z}[i * {n} + j] = {z}[j * {n} + i];")
    return [line for line in lines if line]


def _rows(target: str, start: int, stop: int, terms: list[tuple[str, str]],
          divisor: str | None) -> str:
    """C for ``target[i] = target[i] (/ divisor) - sum of factor * source[i]`` over ``terms``
    ``(factor, source)``, ``i`` from ``start`` to ``stop``: the factors read before the loop
    (they could alias the row), the sum in registers."""
    if not terms and divisor is None:
        return ""
    factors = [f"l{t}" for t in range(len(terms))]
    loads = "".join(f"const casadi_real {f} = {value}; "
                    for f, (value, _) in zip(factors, terms, strict=True))
    first = f"({target})[i]" + (" * w" if divisor else "")
    scale = f"const casadi_real w = 1 / {divisor}; " if divisor else ""
    products = [f"{f} * ({source})[i]" for f, (_, source) in zip(factors, terms, strict=True)]
    value = f"{first} - {_balanced(products)}" if terms else first
    return f"{{ {scale}{loads}for (i = {start}; i < {stop}; ++i) ({target})[i] = {value}; }}"


def _balanced(terms: list[str]) -> str:
    """The sum of ``terms`` as a balanced tree of additions, in parentheses: C adds left to
    right, so a plain sum of many terms is one long chain of dependent additions, while
    this one's depth grows with the logarithm of their number."""
    if len(terms) == 1:
        return terms[0]
    half = len(terms) // 2
    return f"({_balanced(terms[:half])} + {_balanced(terms[half:])})"


# --- step 1 and 2 for a chain ----------------------------------------------------------------
def _dense_inverse(sp_m: ca.Sparsity, n: int) -> tuple[list[str], int]:
    """``M^-1`` into ``y2`` by ``M = L^T diag(d) L`` in the velocities' order, every row
    full: ``F`` (n x n, by rows) holds ``M``, ``L`` the factor's rows, ``D`` its diagonal.
    From the last row up, row ``k`` of ``M`` less ``L[i, k] d_i`` times the final rows ``i >
    k`` is ``d_k L[k, :k+1]``: one loop per row, its sum in registers."""
    at_m = [r * n + c for r, c in nonzeros(sp_m)]  # M[r, c] into F by rows
    lines = [f"casadi_real* F = s; casadi_real* L = s + {n * n}; "
             f"casadi_real* D = s + {2 * n * n};",
             f"for (i = 0; i < {n * n}; ++i) F[i] = 0;",
             table("into_f", at_m),
             f"for (i = 0; i < {sp_m.nnz()}; ++i) F[into_f[i]] = Mv[i];"]
    for k in reversed(range(n)):
        terms = [(f"L[{i * n + k}] * D[{i}]", f"L + {i * n}") for i in range(k + 1, n)]
        row = f"F + {k * n}"
        lines.append(_rows(row, 0, k + 1, terms, None) if terms else "")
        lines.append(f"D[{k}] = F[{k * n + k}];")
        if k:
            lines.append(f"{{ const casadi_real w = 1 / D[{k}]; "
                         f"for (i = 0; i < {k}; ++i) L[{k * n} + i] = F[{k * n} + i] * w; }}")
    L = {(k, c): f"L[{k * n + c}]" for k in range(n) for c in range(k)}
    lines += _inverse_rows("y2", n, L, [f"D[{k}]" for k in range(n)])
    return [line for line in lines if line], 2 * n * n + n


# --- step 3 ----------------------------------------------------------------------------------
def _groups(sp_a: ca.Sparsity, sp_b: ca.Sparsity, n: int) -> list[tuple[list[int], list[int]]]:
    """The columns ``c`` of ``[A B]`` (``c >= n``: ``B``'s column ``c - n``) grouped by their
    nonzero rows: ``[(rows, columns)]``, in the order of first appearance."""
    found: dict[tuple[int, ...], list[int]] = {}
    for offset, sp in ((0, sp_a), (n, sp_b)):
        colind, row = sp.colind(), sp.row()
        for c in range(n):
            found.setdefault(tuple(row[colind[c]:colind[c + 1]]), []).append(offset + c)
    return [(list(rows), columns) for rows, columns in found.items()]


def _product(sp_a: ca.Sparsity, sp_b: ca.Sparsity, n: int) -> list[str]:
    """C for ``y0 = -y2 A`` and ``y1 = -y2 B`` (``y2 = M^-1``, symmetric: its column ``k`` is
    its row ``k``), tiles of :data:`TILE_COLUMNS` columns by :data:`TILE_ROWS` rows."""
    groups = _groups(sp_a, sp_b, n)
    rows = [r for group_rows, _ in groups for r in group_rows]
    row_start, column_start, columns = [0], [0], []
    for group_rows, group_columns in groups:
        row_start.append(row_start[-1] + len(group_rows))
        column_start.append(column_start[-1] + len(group_columns))
        columns += group_columns
    starts = list(sp_a.colind()[:n]) + list(sp_b.colind()[:n])  # a column's first nonzero
    tc, tr = TILE_COLUMNS, min(TILE_ROWS, n)
    # the rows' tiles: the last one ends at the last row, overlapping the one before where
    # n is no multiple of the tile (its rows are stored twice, the same numbers)
    tiles = list(range(0, n - tr + 1, tr)) + ([n - tr] if n % tr else [])
    src = [f"const casadi_real* b{u} = (columns[t + {u}] < {n} ? A : B) + "
           f"start[columns[t + {u}]];" for u in range(tc)]
    dst = [f"casadi_real* x{u} = columns[t + {u}] < {n} ? y0 + columns[t + {u}] * {n} : "
           f"y1 + (columns[t + {u}] - {n}) * {n};" for u in range(tc)]
    zero = " ".join(f"casadi_real a{u}[{tr}] = {{0}};" for u in range(tc))
    accumulate = " ".join(f"a{u}[j] += c{u} * z[j];" for u in range(tc))
    factors = " ".join(f"const casadi_real c{u} = b{u}[k];" for u in range(tc))
    store = " ".join(f"x{u}[i + j] = -a{u}[j];" for u in range(tc))
    return [
        table("rows", rows), table("row_start", row_start), table("columns", columns),
        table("column_start", column_start), table("start", starts),
        table("tiles", tiles),
        f"for (g = 0; g < {len(groups)}; ++g) {{",
        " const casadi_int* rk = rows + row_start[g];",
        " const casadi_int m = row_start[g + 1] - row_start[g];",
        " const casadi_int last = column_start[g + 1];",
        f" for (t = column_start[g]; t + {tc} <= last; t += {tc}) {{",
        *("  " + line for line in src + dst),
        f"  for (v = 0; v < {len(tiles)}; ++v) {{",
        "   i = tiles[v];",
        f"   {zero}",
        f"   for (k = 0; k < m; ++k) {{ const casadi_real* z = y2 + rk[k] * {n} + i; {factors} "
        f"for (j = 0; j < {tr}; ++j) {{ {accumulate} }} }}",
        f"   for (j = 0; j < {tr}; ++j) {{ {store} }}",
        "  }",
        " }",
        " for (; t < last; ++t) {",
        f"  const casadi_real* b0 = (columns[t] < {n} ? A : B) + start[columns[t]];",
        f"  casadi_real* x0 = columns[t] < {n} ? y0 + columns[t] * {n} : "
        f"y1 + (columns[t] - {n}) * {n};",
        f"  for (i = 0; i < {n}; ++i) x0[i] = 0;",
        f"  for (j = 0; j < m; ++j) {{ const casadi_real c0 = b0[j]; "
        f"const casadi_real* z = y2 + rk[j] * {n}; "
        f"for (i = 0; i < {n}; ++i) x0[i] -= c0 * z[i]; }}",
        " }",
        "}",
    ]
