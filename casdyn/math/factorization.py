"""Factorisations of symmetric positive definite SX matrices, solved without inverses.

* :class:`LDLT`: ``D = L diag(d) L^T`` of a small dense matrix (a multi-dof joint's
  ``S^T IA S`` in ABA, the Delassus matrix of a few contacts).
* :class:`TreeLDLT`: ``M = L^T diag(d) L`` of a joint-space mass matrix, eliminating from
  the leaves towards the root (Featherstone's LTDL, RBDA sec. 6.5): with the velocities
  ordered parents first, ``L`` has the sparsity of ``M`` itself (no fill-in), so branches
  that do not share a joint, a quadruped's legs, never meet in the factors.
"""

from __future__ import annotations

import casadi as ca

from .spatial import SX, reciprocal


def _over(x: SX, d: SX, d_inv: SX | None) -> SX:
    """``x / d``: the product by ``d_inv`` (``1 / d``) where that was formed, because ``d``
    divides more than once; else the quotient."""
    return x / d if d_inv is None else x * d_inv


class LDLT:
    """``D = L diag(d) L^T`` of a small symmetric positive definite SX matrix (no pivoting),
    to solve with ``D`` and to form ``D^-1`` products without an explicit inverse."""

    def __init__(self, D: SX):
        n = D.size1()
        L = [[None] * n for _ in range(n)]
        Ld = [[None] * n for _ in range(n)]  # L[i][k] * d[k], formed once
        d = [None] * n
        d_inv = [None] * n  # 1 / d[j] where it divides more than once
        for j in range(n):
            d[j] = D[j, j] - sum((L[j][k] * Ld[j][k] for k in range(j)), SX(0))
            d_inv[j] = reciprocal(d[j]) if n > 1 else None
            for i in range(j + 1, n):
                Ld[i][j] = D[i, j] - sum((L[i][k] * Ld[j][k] for k in range(j)), SX(0))
                L[i][j] = Ld[i][j] * d_inv[j]
        self.n, self.L, self.d, self.d_inv = n, L, d, d_inv

    def solve(self, b: SX) -> SX:
        """``D^-1 b`` for ``b`` (n x m)."""
        n, L = self.n, self.L
        # row by row: every column of b at once (the same operations as column by column)
        y = [None] * n
        for i in range(n):
            y[i] = b[i, :] - sum((L[i][k] * y[k] for k in range(i)), SX(0))
        x = [None] * n
        for i in reversed(range(n)):
            x[i] = _over(y[i], self.d[i], self.d_inv[i]) - sum(
                (L[k][i] * x[k] for k in range(i + 1, n)), SX(0))
        return ca.vertcat(*x)


class TreeLDLT:
    """``M = L^T diag(d) L`` (unit lower triangular ``L``) of a symmetric positive definite
    ``n x n`` SX matrix, in the permuted order ``order`` (a list of row indices of ``M``):
    eliminating from the last entry of ``order`` up, as RBDA table 6.3. Where ``order`` puts
    every joint's velocities after its ancestors', ``L`` keeps ``M``'s structural zeros; for
    any other order the result is still exact, only less sparse. Entries that are structural
    or constant zeros are skipped, so the graph holds the tree's work only."""

    def __init__(self, M: SX, order: list[int]):
        n = len(order)
        # lower triangle of the permuted matrix, nonzero entries only: rows[k] = {col: value}
        rows: list[dict[int, SX]] = [{} for _ in range(n)]
        for k in range(n):
            for c in range(k + 1):
                entry = M[order[k], order[c]]
                if not entry.is_zero():
                    rows[k][c] = entry
        d: list[SX] = [None] * n
        d_inv: list[SX | None] = [None] * n  # 1 / d[k] where it divides more than once
        L: list[dict[int, SX]] = [{} for _ in range(n)]
        for k in reversed(range(n)):
            d[k] = rows[k].pop(k, SX(0))
            below = sorted(rows[k])  # columns c < k with M[k, c] != 0: k's ancestors
            d_inv[k] = reciprocal(d[k]) if below else None
            L[k] = {c: rows[k][c] * d_inv[k] for c in below}
            for a, i in enumerate(below):
                for j in below[: a + 1]:
                    rows[i][j] = rows[i].get(j, SX(0)) - rows[k][i] * L[k][j]
        self.n, self.order, self.L, self.d, self.d_inv = n, list(order), L, d, d_inv

    def entries(self) -> list[tuple[int, int]]:
        """The ``(row, column)`` of every stored entry of ``L``, row by row."""
        return [(k, c) for k in range(self.n) for c in self.L[k]]

    def values(self) -> SX:
        """The stored entries of ``L`` (in the order of :meth:`entries`), then ``d``: the
        numbers a solve needs besides the sparsity."""
        return ca.vertcat(*(self.L[k][c] for k, c in self.entries()), *self.d)

    def _permuted(self, b: SX) -> list[SX]:
        return [b[self.order[k], :] for k in range(self.n)]

    def solve_transposed(self, b: SX) -> list[SX]:
        """``y = L^-T P b`` for ``b`` (n x m), as rows (1 x m) in the permuted order (``P b``
        reorders the rows of ``b`` by ``order``). Rows are updated whole: one CasADi
        operation per entry of ``L``, not one per entry and column."""
        y = self._permuted(b)
        for k in reversed(range(self.n)):
            for c, l_kc in self.L[k].items():
                y[c] = y[c] - l_kc * y[k]
        return y

    def scaled(self, y: list[SX]) -> list[SX]:
        """``D^-1 y`` for rows ``y`` in the permuted order."""
        scaled = []
        for row, d, d_inv in zip(y, self.d, self.d_inv, strict=True):
            if d_inv is None and row.numel() > 1:  # a root's d divides each of the columns
                d_inv = reciprocal(d)
            scaled.append(_over(row, d, d_inv))
        return scaled

    def finish(self, z: list[SX]) -> SX:
        """``P^T L^-1 z``: rows ``z`` in the permuted order back to ``M``'s order (n x m)."""
        x = list(z)
        for k in range(self.n):
            for c, l_kc in self.L[k].items():
                x[k] = x[k] - l_kc * x[c]
        rows: list = [None] * self.n
        for k, row in enumerate(x):
            rows[self.order[k]] = row
        return ca.vertcat(*rows)

    def solve(self, b: SX) -> SX:
        """``M^-1 b`` for ``b`` (n x m)."""
        return self.finish(self.scaled(self.solve_transposed(b)))
