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
Every ``Q_uu`` must be regular (a Gauss-Newton Hessian with a regularisation is positive
definite).
"""

from __future__ import annotations

import numpy as np


def solve(H: np.ndarray, H_N: np.ndarray, g: np.ndarray, g_N: np.ndarray, A: np.ndarray,
          B: np.ndarray, d: np.ndarray, dx0: np.ndarray) -> np.ndarray:
    """The QP's solution ``[dx_0 du_0 dx_1 du_1 ... dx_N]`` (``N (n + m) + n``).

    ``H``: ``(N, n + m, n + m)``, ``H_N``: ``(n, n)``, ``g``: ``(N, n + m)``, ``g_N``:
    ``(n,)``, ``A``: ``(N, n, n)``, ``B``: ``(N, n, m)``, ``d``: ``(N, n)``, ``dx0``:
    ``(n,)``. A singular ``Q_uu`` raises numpy's ``LinAlgError``.

    The affine terms ride along as a last coordinate fixed at one (the stage's
    ``[A B d; 0 0 1]``, the value function's ``[V v; v^T c]``): one product pair, one solve
    and one update per stage."""
    N, n = A.shape[0], A.shape[1]
    m = B.shape[2]
    s = n + m
    M = np.zeros((N, n + 1, s + 1))
    M[:, :n, :n], M[:, :n, n:s], M[:, :n, s], M[:, n, s] = A, B, d, 1.0
    Q0 = np.zeros((N, s + 1, s + 1))
    Q0[:, :s, :s], Q0[:, :s, s], Q0[:, s, :s] = H, g, g
    x = np.r_[0:n, s]  # the state's rows and the affine one
    u = slice(n, s)
    V = np.zeros((n + 1, n + 1))
    V[:n, :n], V[:n, n], V[n, :n] = H_N, g_N, g_N
    gains = np.empty((N, m, n + 1))  # [K k]: du = K dx + k
    for i in reversed(range(N)):
        Q = Q0[i] + M[i].T @ (V @ M[i])
        Q_ux = Q[u][:, x]
        gains[i] = -np.linalg.solve(Q[u, u], Q_ux)
        V = Q[np.ix_(x, x)] + Q_ux.T @ gains[i]
        V = 0.5 * (V + V.T)
    w = np.empty(N * s + n)
    dx = dx0
    for i in range(N):
        du = gains[i, :, :n] @ dx + gains[i, :, n]
        w[i * s : i * s + n], w[i * s + n : (i + 1) * s] = dx, du
        dx = A[i] @ dx + B[i] @ du + d[i]
    w[N * s :] = dx
    return w
