"""The Riccati recursion that solves an OCP's QP without inequalities (casdyn.ocp.riccati),
in NumPy and in C, against the QP's KKT system solved densely."""

from __future__ import annotations

import numpy as np
import pytest

from casdyn.ocp import riccati
from casdyn.runtime.evaluator import NumericEvaluator

N, n, m = 5, 4, 2


def random_qp(seed: int = 0):
    """A QP of :mod:`casdyn.ocp.riccati`'s form with positive definite stage Hessians."""
    rng = np.random.default_rng(seed)
    s = n + m

    def spd(size):
        X = rng.normal(size=(size, size))
        return X @ X.T + 0.1 * np.eye(size)

    return (np.stack([spd(s) for _ in range(N)]), spd(n), rng.normal(size=(N, s)),
            rng.normal(size=n), np.eye(n) + 0.3 * rng.normal(size=(N, n, n)),
            rng.normal(size=(N, n, m)), rng.normal(size=(N, n)), rng.normal(size=n))


def kkt_solution(H, H_N, g, g_N, A, B, d, dx0) -> np.ndarray:
    """The QP's solution from its KKT system, one dense solve (the variables
    ``[dx_0 du_0 ... dx_N]``, the dynamics and ``dx_0``'s equality as constraints)."""
    s, size = n + m, N * (n + m) + n
    hessian, gradient = np.zeros((size, size)), np.zeros(size)
    for k in range(N):
        hessian[k * s : (k + 1) * s, k * s : (k + 1) * s] = H[k]
        gradient[k * s : (k + 1) * s] = g[k]
    hessian[N * s :, N * s :], gradient[N * s :] = H_N, g_N
    rows, rhs = [], []
    first = np.zeros((n, size))
    first[:, :n] = np.eye(n)
    rows.append(first), rhs.append(dx0)
    for k in range(N):
        row = np.zeros((n, size))
        row[:, k * s : k * s + n], row[:, k * s + n : (k + 1) * s] = A[k], B[k]
        row[:, (k + 1) * s : (k + 1) * s + n] = -np.eye(n)
        rows.append(row), rhs.append(-d[k])
    C = np.vstack(rows)
    kkt = np.block([[hessian, C.T], [C, np.zeros((len(C), len(C)))]])
    return np.linalg.solve(kkt, np.r_[-gradient, np.concatenate(rhs)])[:size]


def test_the_recursion_solves_the_kkt_system():
    qp = random_qp()
    expected = kkt_solution(*qp)
    assert np.abs(riccati.solve(*qp) - expected).max() <= 1e-10 * np.abs(expected).max()


def test_the_compiled_recursion_is_the_numpy_one():
    qp = random_qp(1)
    H, H_N, g, g_N, A, B, d, dx0 = qp
    evaluator = NumericEvaluator(riccati.compiled(N, n, m))
    side_by_side = (np.concatenate(H, axis=1), H_N, g.T, g_N, np.concatenate(A, axis=1),
                    np.concatenate(B, axis=1), d.T, dx0)
    for view, value in zip(evaluator.input_views, side_by_side, strict=True):
        view[...] = value.reshape(view.shape)
    expected = riccati.solve(*qp)
    assert np.abs(evaluator.evaluate().ravel() - expected).max() <= \
        1e-12 * np.abs(expected).max()


def test_an_indefinite_hessian_gives_a_failure_and_no_step():
    H, H_N, g, g_N, A, B, d, dx0 = random_qp(2)
    H[2, n:, n:] = -np.eye(m) * 1e6  # Q_uu indefinite at stage 2
    function = riccati.compiled(N, n, m)
    evaluator = NumericEvaluator(function)
    side_by_side = (np.concatenate(H, axis=1), H_N, g.T, g_N, np.concatenate(A, axis=1),
                    np.concatenate(B, axis=1), d.T, dx0)
    for view, value in zip(evaluator.input_views, side_by_side, strict=True):
        view[...] = value.reshape(view.shape)
    assert np.all(np.isnan(evaluator.evaluate())) and evaluator.failed
    with pytest.raises(RuntimeError):
        function(*side_by_side)
