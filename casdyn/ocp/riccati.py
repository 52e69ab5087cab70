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


# -- the same recursion in C ---------------------------------------------------------------
# CasADi's external calling convention; dense inputs (H, H_N, g, g_N, A, B, d, dx0) in
# CasADi's column-major storage, the output w; the work vector holds M, V M, Q, V, the
# gains and Q_uu's Cholesky factor. A null argument (CasADi's all-zero input) reads as 0.
_C = r"""
#ifndef casadi_real
#define casadi_real double
#endif
#ifndef casadi_int
#define casadi_int long long int
#endif
#include <math.h>
#define NK {N}
#define NX {n}
#define NU {m}
#define NS (NX + NU)
#define AT(p, k) ((p) ? (p)[k] : 0.0)
static const casadi_int {name}_sp_H[] = {{NS, NS * NK, 1}};
static const casadi_int {name}_sp_HN[] = {{NX, NX, 1}};
static const casadi_int {name}_sp_g[] = {{NS, NK, 1}};
static const casadi_int {name}_sp_gN[] = {{NX, 1, 1}};
static const casadi_int {name}_sp_A[] = {{NX, NX * NK, 1}};
static const casadi_int {name}_sp_B[] = {{NX, NU * NK, 1}};
static const casadi_int {name}_sp_d[] = {{NX, NK, 1}};
static const casadi_int {name}_sp_x[] = {{NX, 1, 1}};
static const casadi_int {name}_sp_w[] = {{NK * NS + NX, 1, 1}};
#define W_M 0
#define W_VM (W_M + (NX + 1) * (NS + 1))
#define W_Q (W_VM + (NX + 1) * (NS + 1))
#define W_V (W_Q + (NS + 1) * (NS + 1))
#define W_G (W_V + (NX + 1) * (NX + 1))
#define W_L (W_G + NK * NU * (NX + 1))
#define W_X (W_L + NU * NU)
#define W_SIZE (W_X + NX + NU)

int {name}(const casadi_real **arg, casadi_real **res, casadi_int *iw, casadi_real *w,
           int mem) {{
  const casadi_real *H = arg[0], *HN = arg[1], *g = arg[2], *gN = arg[3], *A = arg[4],
                    *B = arg[5], *d = arg[6], *dx0 = arg[7];
  casadi_real *M = w + W_M, *VM = w + W_VM, *Q = w + W_Q, *V = w + W_V, *G = w + W_G,
              *L = w + W_L, *x = w + W_X, *u = w + W_X + NX, *out = res[0];
  int i, r, c, k, xa, xb;
  (void)iw; (void)mem;
  /* V = [H_N g_N; g_N^T 0], row-major (NX + 1)^2 */
  for (r = 0; r < NX; ++r) {{
    for (c = 0; c < NX; ++c) V[r * (NX + 1) + c] = AT(HN, c * NX + r);
    V[r * (NX + 1) + NX] = V[NX * (NX + 1) + r] = AT(gN, r);
  }}
  V[NX * (NX + 1) + NX] = 0.0;
  for (i = NK - 1; i >= 0; --i) {{
    /* M = [A B d; 0 0 1], row-major (NX + 1) x (NS + 1) */
    for (r = 0; r < NX; ++r) {{
      for (c = 0; c < NX; ++c) M[r * (NS + 1) + c] = AT(A, (i * NX + c) * NX + r);
      for (c = 0; c < NU; ++c) M[r * (NS + 1) + NX + c] = AT(B, (i * NU + c) * NX + r);
      M[r * (NS + 1) + NS] = AT(d, i * NX + r);
    }}
    for (c = 0; c < NS; ++c) M[NX * (NS + 1) + c] = 0.0;
    M[NX * (NS + 1) + NS] = 1.0;
    /* VM = V M */
    for (r = 0; r <= NX; ++r) {{
      casadi_real *row = VM + r * (NS + 1);
      for (c = 0; c <= NS; ++c) row[c] = 0.0;
      for (k = 0; k <= NX; ++k) {{
        const casadi_real v = V[r * (NX + 1) + k], *mk = M + k * (NS + 1);
        for (c = 0; c <= NS; ++c) row[c] += v * mk[c];
      }}
    }}
    /* Q = [H g; g^T 0] + M^T V M: its lower triangle (Q is symmetric) */
    for (r = 0; r < NS; ++r) {{
      for (c = 0; c <= r; ++c) Q[r * (NS + 1) + c] = AT(H, (i * NS + c) * NS + r);
      Q[NS * (NS + 1) + r] = AT(g, i * NS + r);
    }}
    Q[NS * (NS + 1) + NS] = 0.0;
    for (k = 0; k <= NX; ++k) {{
      const casadi_real *mk = M + k * (NS + 1), *vk = VM + k * (NS + 1);
      for (r = 0; r <= NS; ++r) {{
        const casadi_real a = mk[r];
        casadi_real *row = Q + r * (NS + 1);
        for (c = 0; c <= r; ++c) row[c] += a * vk[c];
      }}
    }}
    for (r = 0; r <= NS; ++r)
      for (c = r + 1; c <= NS; ++c) Q[r * (NS + 1) + c] = Q[c * (NS + 1) + r];
    /* Q_uu = L L^T */
    for (r = 0; r < NU; ++r) {{
      for (c = 0; c <= r; ++c) {{
        casadi_real s = Q[(NX + r) * (NS + 1) + NX + c];
        for (k = 0; k < c; ++k) s -= L[r * NU + k] * L[c * NU + k];
        if (r == c) {{
          /* a pivot that rounding alone made small or negative (Q_uu positive semidefinite
             and large, as with weights of 1e8) is held at 1e-12 of its diagonal entry */
          const casadi_real floor = 1e-12 * Q[(NX + r) * (NS + 1) + NX + r];
          if (s < floor) s = floor;
          if (!(s > 0.0)) {{  /* not positive definite: no step */
            if (out) for (k = 0; k < NK * NS + NX; ++k) out[k] = NAN;
            return 1;
          }}
          L[r * NU + r] = sqrt(s);
        }} else {{
          L[r * NU + c] = s / L[c * NU + c];
        }}
      }}
    }}
    /* the gains [K k] = -Q_uu^-1 Q_u,x (x: the states, then the affine coordinate) */
    casadi_real *Gi = G + i * NU * (NX + 1);
    for (xb = 0; xb <= NX; ++xb) {{
      const int col = xb < NX ? xb : NS;
      for (r = 0; r < NU; ++r) {{
        casadi_real s = Q[(NX + r) * (NS + 1) + col];
        for (k = 0; k < r; ++k) s -= L[r * NU + k] * u[k];
        u[r] = s / L[r * NU + r];
      }}
      for (r = NU - 1; r >= 0; --r) {{
        casadi_real s = u[r];
        for (k = r + 1; k < NU; ++k) s -= L[k * NU + r] * u[k];
        u[r] = s / L[r * NU + r];
      }}
      for (r = 0; r < NU; ++r) Gi[r * (NX + 1) + xb] = -u[r];
    }}
    /* V = Q_xx + Q_u,x^T [K k], symmetrised */
    for (xa = 0; xa <= NX; ++xa) {{
      const int ra = xa < NX ? xa : NS;
      for (xb = 0; xb <= xa; ++xb) {{
        const int cb = xb < NX ? xb : NS;
        casadi_real s = Q[ra * (NS + 1) + cb];
        for (k = 0; k < NU; ++k)
          s += 0.5 * (Q[(NX + k) * (NS + 1) + ra] * Gi[k * (NX + 1) + xb] +
                      Q[(NX + k) * (NS + 1) + cb] * Gi[k * (NX + 1) + xa]);
        V[xa * (NX + 1) + xb] = V[xb * (NX + 1) + xa] = s;
      }}
    }}
  }}
  /* forward: du = K dx + k, dx+ = A dx + B du + d */
  for (r = 0; r < NX; ++r) x[r] = AT(dx0, r);
  for (i = 0; i < NK; ++i) {{
    const casadi_real *Gi = G + i * NU * (NX + 1);
    for (r = 0; r < NU; ++r) {{
      casadi_real s = Gi[r * (NX + 1) + NX];
      for (c = 0; c < NX; ++c) s += Gi[r * (NX + 1) + c] * x[c];
      u[r] = s;
    }}
    if (out) {{
      for (r = 0; r < NX; ++r) out[i * NS + r] = x[r];
      for (r = 0; r < NU; ++r) out[i * NS + NX + r] = u[r];
    }}
    for (r = 0; r < NX; ++r) {{
      casadi_real s = AT(d, i * NX + r);
      for (c = 0; c < NX; ++c) s += AT(A, (i * NX + c) * NX + r) * x[c];
      for (c = 0; c < NU; ++c) s += AT(B, (i * NU + c) * NX + r) * u[c];
      VM[r] = s;
    }}
    for (r = 0; r < NX; ++r) x[r] = VM[r];
  }}
  if (out) for (r = 0; r < NX; ++r) out[NK * NS + r] = x[r];
  return 0;
}}
casadi_int {name}_n_in(void) {{ return 8; }}
casadi_int {name}_n_out(void) {{ return 1; }}
const casadi_int *{name}_sparsity_in(casadi_int i) {{
  switch (i) {{
    case 0: return {name}_sp_H;
    case 1: return {name}_sp_HN;
    case 2: return {name}_sp_g;
    case 3: return {name}_sp_gN;
    case 4: return {name}_sp_A;
    case 5: return {name}_sp_B;
    case 6: return {name}_sp_d;
    default: return {name}_sp_x;
  }}
}}
const casadi_int *{name}_sparsity_out(casadi_int i) {{ (void)i; return {name}_sp_w; }}
int {name}_work(casadi_int *sz_arg, casadi_int *sz_res, casadi_int *sz_iw,
                casadi_int *sz_w) {{
  *sz_arg = 8; *sz_res = 1; *sz_iw = 0; *sz_w = W_SIZE;
  return 0;
}}
"""


def compiled(N: int, n: int, m: int):
    """:func:`solve` for ``N`` stages of ``n`` states and ``m`` controls as a compiled
    ``casadi.external`` (C, for this processor, in casdyn's compile cache): inputs ``H``
    ``(n + m, (n + m) N)``, ``H_N``, ``g`` ``(n + m, N)``, ``g_N``, ``A`` ``(n, n N)``,
    ``B`` ``(n, m N)``, ``d`` ``(n, N)``, ``dx0``, as the stage blocks side by side; output
    ``w``. Where a ``Q_uu`` is not positive definite it returns a failure (CasADi's call
    raises; an evaluator's ``failed`` is set) and ``w`` is NaN."""
    from casdyn.codegen.library import compile_source

    name = f"casdyn_riccati_{N}_{n}_{m}"
    [function] = compile_source(_C.format(name=name, N=N, n=n, m=m), name, [name],
                                what="the OCP's Riccati recursion", native=True)
    return function
