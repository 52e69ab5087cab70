"""The QP of an optimal control problem without inequalities, solved by one Riccati
recursion (the discrete-time LQR with affine terms): what a QP solver's interior point would
reach after several iterations, in one backward and one forward pass.

The QP, stage by stage (``n`` states ``dx``, ``m`` controls ``du``, ``N`` intervals)::

    min  sum_k 0.5 w_k^T H_k w_k + g_k^T w_k + 0.5 dx_N^T H_N dx_N + g_N^T dx_N
    s.t. dx_{k+1} = A_k dx_k + B_k du_k + d_k,   dx_0 given,

with ``w_k = [dx_k; du_k]``. Backward, from ``V_N = H_N`` and ``v_N = g_N``: the stage's
``Q = H_k + [A_k B_k]^T V_{k+1} [A_k B_k]`` and ``q = g_k + [A_k B_k]^T (V_{k+1} d_k +
v_{k+1})``, the feedback ``du_k = K_k dx_k + k_k`` with ``K_k = -Q_uu^-1 Q_ux`` and
``k_k = -Q_uu^-1 q_u``, then ``V_k = Q_xx + Q_ux^T K_k``, ``v_k = q_x + Q_ux^T k_k``.
Forward, from ``dx_0``: the controls by the feedback and the states by the dynamics.
Every ``Q_uu`` must be positive definite (a Gauss-Newton Hessian with a regularisation is).
"""

from __future__ import annotations

import numpy as np


def solve(H: np.ndarray, H_N: np.ndarray, g: np.ndarray, g_N: np.ndarray, A: np.ndarray,
          B: np.ndarray, d: np.ndarray, dx0: np.ndarray) -> np.ndarray:
    """The QP's solution ``[dx_0 du_0 dx_1 du_1 ... dx_N]`` (``N (n + m) + n``).

    ``H``: ``(N, n + m, n + m)``, ``H_N``: ``(n, n)``, ``g``: ``(N, n + m)``, ``g_N``:
    ``(n,)``, ``A``: ``(N, n, n)``, ``B``: ``(N, n, m)``, ``d``: ``(N, n)``, ``dx0``:
    ``(n,)``. A ``Q_uu`` that is not positive definite raises numpy's ``LinAlgError``."""
    N, n = A.shape[0], A.shape[1]
    m = B.shape[2]
    V, v = H_N, g_N
    K, k = np.empty((N, m, n)), np.empty((N, m))
    for i in reversed(range(N)):
        AB = np.concatenate([A[i], B[i]], axis=1)
        VAB = V @ AB
        Q = H[i] + AB.T @ VAB
        q = g[i] + AB.T @ (V @ d[i] + v)
        L = np.linalg.cholesky(Q[n:, n:])
        gains = _cholesky_solve(L, np.concatenate([Q[n:, :n], q[n:, None]], axis=1))
        K[i], k[i] = -gains[:, :n], -gains[:, n]
        V = Q[:n, :n] + Q[n:, :n].T @ K[i]
        V = 0.5 * (V + V.T)
        v = q[:n] + Q[n:, :n].T @ k[i]
    w = np.empty(N * (n + m) + n)
    dx = dx0
    for i in range(N):
        du = K[i] @ dx + k[i]
        at = i * (n + m)
        w[at : at + n], w[at + n : at + n + m] = dx, du
        dx = A[i] @ dx + B[i] @ du + d[i]
    w[N * (n + m) :] = dx
    return w


def _cholesky_solve(L: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(L L^T)^-1 b`` for a lower triangular ``L``."""
    y = np.linalg.solve(L, b)
    return np.linalg.solve(L.T, y)
