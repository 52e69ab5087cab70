"""The C loops of casdyn.codegen.solve_c on random trees and full matrices against NumPy, and
the forward-dynamics derivatives exported and compiled in their composed form (casdyn.codegen.
forms) against the SX graphs and Pinocchio."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest
from conftest import assert_close, random_state
from pinocchio_reference import Reference, aba_derivatives
from random_trees import random_urdf

import casdyn
from casdyn import sizes
from casdyn.codegen import forms, library, solve_c
from casdyn.codegen.forms import dense_solve, for_c

pytestmark = pytest.mark.slow  # C export of long chains


def random_tree_system(seed: int, n: int = 9):
    """A random symmetric positive definite ``M`` (n x n) with the sparsity of a branched
    tree's mass matrix, and a parents-first order of its rows that is not ``0..n-1``."""
    rng = np.random.default_rng(seed)
    order = [0]
    for k in rng.permutation(np.arange(1, n)):
        order.append(int(k))
    parent = {order[0]: None}
    for position, k in enumerate(order[1:], start=1):  # a parent listed before the child
        parent[k] = order[int(rng.integers(position))]

    def ancestors(k):
        while parent[k] is not None:
            k = parent[k]
            yield k

    L = np.eye(n)  # M = L^T D L with L's entries at (row, ancestor): no fill-in
    for k in range(n):
        for a in ancestors(k):
            L[k, a] = rng.normal()
    M = L.T @ np.diag(rng.uniform(0.5, 2.0, n)) @ L
    return M, order


def loops(tmp_path, M, order, dense, seed):
    """The loops of solve_c.body on ``M`` and random partials with some structural zeros,
    compiled: (their outputs, the partials)."""
    n = M.shape[0]
    rng = np.random.default_rng(seed)
    sp_m = ca.sparsify(ca.DM(M)).sparsity()  # a tree's M: zeros between branches
    pattern = sp_m
    lines, scratch = solve_c.body(pattern, pattern, sp_m, order, dense)
    dense_n = ca.Sparsity.dense(n, n)
    function = ca.Function.jit("loops", "\n".join(["{", *lines, "}"]), ["A", "B", "Mv"],
                               ["y0", "y1", "y2", "s"], [pattern, pattern, sp_m],
                               [dense_n] * 3 + [ca.Sparsity.dense(scratch, 1)], {"jit": False})
    A, B, Mv = (ca.MX.sym(name, sp) for name, sp in (("A", pattern), ("B", pattern), ("M", sp_m)))
    wrapper = ca.Function("wrapper", [A, B, Mv], function(A, B, Mv)[:3])
    (loaded,) = library.export_functions([wrapper], tmp_path, f"kernel_{seed}_{dense}")
    partials = [ca.DM(pattern, rng.normal(size=pattern.nnz())) for _ in range(2)]
    outputs = loaded(*partials, ca.DM(M))
    return [o.full() for o in outputs], [p.full() for p in partials]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("dense", [False, True])
def test_the_loops_equal_numpy_on_trees(tmp_path, seed, dense):
    """Tree-sparse (a random tree's M in a parents-first order that is not 0..n-1) and full
    rows (the same M, every entry of L formed): M^-1 and -M^-1 [A B], the partials with the
    tree's sparsity (columns of one branch share their rows: the product's groups)."""
    M, order = random_tree_system(seed, n=13)
    (y0, y1, y2), (A, B) = loops(tmp_path, M, order, dense, seed)
    M_inv = np.linalg.inv(M)
    assert_close(y2, M_inv)
    assert_close(y0, -M_inv @ A)
    assert_close(y1, -M_inv @ B)


@pytest.mark.parametrize("n", [5, 8, 12, 21])
def test_the_loops_equal_numpy_on_full_matrices(tmp_path, n):
    """Full M and partials, sizes below, at and above the product's tile of rows, multiples
    of it and not (the last tile overlaps), more columns than a multiple of its four."""
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, n))
    M = X @ X.T + n * np.eye(n)
    (y0, y1, y2), (A, B) = loops(tmp_path, M, list(range(n)), True, n)
    M_inv = np.linalg.inv(M)
    assert_close(y2, M_inv)
    assert_close(y0, -M_inv @ A)
    assert_close(y1, -M_inv @ B)


def test_only_long_chains_get_full_rows():
    chain = casdyn.load_urdf(random_urdf(3, 30, chain=True))
    tree = casdyn.load_urdf(random_urdf(3, 40))
    assert chain.nv >= 16 and tree.nv >= 16
    assert dense_solve(chain._model)
    assert not dense_solve(tree._model)  # a branched tree: M half empty
    assert not dense_solve(casdyn.load_robot("ur5e")._model)  # too small


def test_long_chain_forward_derivatives_compiled_composed_agree(tmp_path, monkeypatch):
    """Both variants (with and without fext) through export_c and compile(): the composed
    form's C is in the library, and its numbers equal the SX graph's and Pinocchio's."""
    # full rows from 8 velocities: a 10-link chain compiles in a third of an 18-link one's time
    monkeypatch.setattr(forms, "DENSE_SOLVE_VELOCITIES", 8)
    monkeypatch.setattr(sizes, "COMPOSED_FROM", 0)
    text = random_urdf(3, 10, chain=True)
    robot = casdyn.load_urdf(text)
    key = robot._functions.key("forward_dynamics_derivatives", fext=False)
    assert for_c(robot._functions, key).is_a("MXFunction")
    exported = robot.export_c(tmp_path / "out", [("forward_dynamics_derivatives",
                                                  {"fext": False})])
    assert "_solve:(A[" in next((tmp_path / "out").glob("*.c")).read_text()
    robot.compile(["forward_dynamics_derivatives"], directory=tmp_path / "cache")
    reference = Reference(text, robot.joint_names, robot.body_names)
    q, qd, tau, fext = random_state(robot)
    (no_fext,) = exported.values()
    sx = robot.function("forward_dynamics_derivatives")
    expected = aba_derivatives(reference, q, qd, tau)
    for ours, theirs, pinocchio in zip(no_fext(q, qd, tau), sx(q, qd, tau, 0 * fext),
                                       expected, strict=True):
        assert_close(ours.full(), theirs.full())
        assert_close(ours.full(), pinocchio)
    with_fext = robot.forward_dynamics_derivatives(q, qd, tau, fext)  # compiled
    for ours, theirs in zip(with_fext, sx(q, qd, tau, fext), strict=True):
        assert_close(ours, theirs.full())
