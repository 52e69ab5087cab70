"""The C loops of casdyn.codegen.forms: the solve itself on random trees, and the forward-dynamics
derivatives of long chains exported and compiled with them, against the SX graphs and
Pinocchio."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest
from conftest import assert_close, random_state
from pinocchio_reference import Reference, aba_derivatives
from random_trees import random_urdf

import casdyn
from casdyn.codegen import forms, library
from casdyn.codegen.forms import for_c, solves_in_loops
from casdyn.math.factorization import TreeLDLT

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


@pytest.mark.parametrize("seed", range(3))
def test_tree_solve_loops_equal_a_dense_solve(tmp_path, seed):
    M, order = random_tree_system(seed)
    n, m = len(order), 5
    ldlt = TreeLDLT(ca.SX(M), order)
    solve = forms.tree_solve(ldlt, m, "tree_solve")
    BT, ld = ca.MX.sym("BT", m, n), ca.MX.sym("ld", solve.size1_in(1))
    wrapper = ca.Function("loops", [BT, ld], solve(BT, ld))
    (loaded,) = library.export_functions([wrapper], tmp_path, "kernel")
    B = np.random.default_rng(seed).normal(size=(n, m))
    XT, Z = loaded(B.T, ca.evalf(ldlt.values()))
    M_inv = np.linalg.inv(M)
    assert_close(XT, -(M_inv @ B).T)
    assert_close(Z, M_inv[np.ix_(order, order)])


def test_only_long_chains_get_loops():
    chain = casdyn.load_urdf(random_urdf(3, 30, chain=True))
    tree = casdyn.load_urdf(random_urdf(3, 40))
    assert chain.nv >= 16 and tree.nv >= 16
    assert solves_in_loops(chain._model)
    assert not solves_in_loops(tree._model)  # a branched tree: M half empty
    assert not solves_in_loops(casdyn.load_robot("ur5e")._model)  # too small


def test_long_chain_forward_derivatives_compiled_as_loops_agree(tmp_path, monkeypatch):
    """Both variants (with and without fext) through export_c and compile(): the loops'
    C is in the library, and its numbers equal the SX graph's and Pinocchio's."""
    # loops from 8 velocities: a 10-link chain compiles in a third of an 18-link one's time
    monkeypatch.setattr(forms, "LOOP_SOLVE_VELOCITIES", 8)
    text = random_urdf(3, 10, chain=True)
    robot = casdyn.load_urdf(text)
    key = robot._functions.key("forward_dynamics_derivatives", fext=False)
    assert for_c(robot._functions, key).is_a("MXFunction")
    exported = robot.export_c(tmp_path / "out", [("forward_dynamics_derivatives",
                                                  {"fext": False})])
    assert "_solve:(BT[" in next((tmp_path / "out").glob("*.c")).read_text()
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
