"""Second-order derivatives of inverse and forward dynamics (SPEC "Second-order
derivatives"): against central differences of the first-order Functions (tangent space on a
floating base), against CasADi's AD applied twice to inverse dynamics on a fixed base, and
the registered Functions' layout against the methods' tensors."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest
from ball_trees import ball_tree
from conftest import random_state

import casdyn


@pytest.fixture(scope="module", params=[("ur5e", False), ("solo12", True)],
                ids=["ur5e", "solo12-floating"])
def robot(request, shipped):
    name, floating = request.param
    return shipped(name, floating_base=floating)


def differences(first, robot, q, qd, x, by: str, h: float = 1e-6) -> list[np.ndarray]:
    """The first-order derivatives ``first(q, qd, x)`` differentiated along ``by`` by
    central differences: one ``(nv, nv, nv)`` tensor per output, ``[i, j, k]`` along
    coordinate ``k``."""
    nv = robot.nv
    tensors = None
    for k in range(nv):
        step = np.zeros(nv)
        step[k] = h
        if by == "q":
            ahead, behind = (first(robot.integrate(q, s * step), qd, x) for s in (1, -1))
        else:
            ahead, behind = first(q, qd + step, x), first(q, qd - step, x)
        if tensors is None:
            tensors = [np.zeros((nv, nv, nv)) for _ in ahead]
        for tensor, a, b in zip(tensors, ahead, behind, strict=True):
            tensor[:, :, k] = (a - b) / (2 * h)
    return tensors


def close(got, want, relative):
    assert np.abs(got - want).max() <= relative * max(1.0, np.abs(want).max())


@pytest.mark.parametrize("dynamics", ["inverse_dynamics", "forward_dynamics"])
def test_second_derivatives_match_differences_of_the_first(robot, dynamics):
    """Each tensor against central differences of the first-order derivatives: along ``q``
    for ``d2_dq2`` and the last (``dM/dq`` or ``d(M^-1)/dq``), along ``qd`` for the others."""
    q, qd, x, _ = random_state(robot, 3 if dynamics == "inverse_dynamics" else 4)
    d2q, d2qd, d2q_qd, d_last = getattr(robot, f"{dynamics}_second_derivatives")(q, qd, x)
    first = getattr(robot, f"{dynamics}_derivatives")
    along_q = differences(first, robot, q, qd, x, "q")
    along_qd = differences(first, robot, q, qd, x, "qd")
    close(d2q, along_q[0], 1e-6)
    close(d_last, along_q[2], 1e-6)
    close(d2qd, along_qd[1], 1e-6)
    close(d2q_qd, along_qd[0], 1e-6)


def test_on_a_fixed_base_they_are_ads_second_derivatives():
    """Exact: AD of AD of inverse dynamics; the mixed partials commute."""
    robot = casdyn.load_robot("ur5e")
    q, qd, qdd, _ = random_state(robot, 5)
    qs, qds = ca.SX.sym("q", robot.nv), ca.SX.sym("qd", robot.nv)
    tau = robot.function("inverse_dynamics", fext=False)(qs, qds, qdd)
    tensors = []
    for a, b in ((qs, qs), (qds, qds), (qs, qds)):
        second = ca.jacobian(ca.vec(ca.jacobian(tau, a)), b)
        value = np.asarray(ca.Function("d2", [qs, qds], [second])(q, qd))
        tensors.append(value.reshape(robot.nv, robot.nv, robot.nv, order="F"))
    d2q, d2qd, d2q_qd, _ = robot.inverse_dynamics_second_derivatives(q, qd, qdd)
    for got, want in zip((d2q, d2qd, d2q_qd), tensors, strict=True):
        close(got, want, 1e-10)
    close(d2q, d2q.transpose(0, 2, 1), 1e-10)


def test_the_functions_layout_is_the_methods_tensors(robot):
    q, qd, qdd, _ = random_state(robot, 6)
    nv = robot.nv
    f = robot.function("inverse_dynamics_second_derivatives", fext=False)
    assert f.name_out() == ["d2tau_dq2", "d2tau_dqd2", "d2tau_dq_dqd", "d2tau_dqdd_dq"]
    assert f.size_out(0) == (nv, nv * nv)
    tensors = robot.inverse_dynamics_second_derivatives(q, qd, qdd)
    for matrix, tensor in zip(f(q, qd, qdd), tensors, strict=True):
        matrix = np.asarray(matrix)
        for j, k in ((0, 1), (nv - 1, 2), (3, nv - 1)):
            assert np.array_equal(matrix[:, k * nv + j], tensor[:, j, k])


class Foreign:
    """An array of another library (as a GPU batch returns: CuPy, PyTorch, JAX), with the
    methods they share."""

    def __init__(self, array: np.ndarray):
        self.array = array
        self.shape = array.shape

    def reshape(self, *shape) -> Foreign:
        return Foreign(self.array.reshape(*shape))

    def swapaxes(self, a: int, b: int) -> Foreign:
        return Foreign(self.array.swapaxes(a, b))


def test_a_gpu_batchs_arrays_become_the_same_tensors(robot, monkeypatch):
    rng = np.random.default_rng(4)
    q = np.array([robot.random_configuration(rng) for _ in range(3)])
    qd, qdd = rng.normal(size=(2, 3, robot.nv))
    want = robot.inverse_dynamics_second_derivatives(q, qd, qdd)
    call = robot._call
    monkeypatch.setattr(robot, "_call", lambda *a, **k: tuple(map(Foreign, call(*a, **k))))
    got = robot.inverse_dynamics_second_derivatives(q, qd, qdd)
    for g, w in zip(got, want, strict=True):
        assert isinstance(g, Foreign) and np.array_equal(g.array, w)


def ad_of_the_first_order(robot, dynamics: str, q, qd, x, fext) -> list[np.ndarray]:
    """The four tensors as CasADi's AD of the first-order Function: along ``q`` as the
    Jacobian of ``first(q ⊕ v)`` in ``v`` at ``v = 0`` (through the ``integrate`` Function),
    so that no symmetry of the tensors is assumed."""
    nv = robot.nv
    v, qds = ca.SX.sym("v", nv), ca.SX.sym("qd", nv)
    moved = robot.function("integrate")(q, v)
    dq, dqd, last = robot.function(f"{dynamics}_derivatives")(moved, qds, x, fext)
    pairs = ((dq, v), (dqd, qds), (dq, qds), (last, v))
    values = ca.Function("ad", [v, qds], [ca.jacobian(ca.vec(a), b) for a, b in pairs])(
        np.zeros(nv), qd)
    return [np.asarray(value).reshape(nv, nv, nv, order="F") for value in values]


@pytest.mark.parametrize("dynamics", ["inverse_dynamics", "forward_dynamics"])
@pytest.mark.parametrize("seed, links", [(4, 6), (7, 5), (14, 6)])
def test_on_random_trees_with_lie_group_joints_they_are_ad_of_the_first_order(seed, links,
                                                                             dynamics):
    """Random floating trees with ball, planar and free joints (pairs of coordinates of one
    such joint do not commute, so the tensors are formed both ways there), with external
    forces: every entry against AD of the first-order Function."""
    robot, _, _ = ball_tree(seed, floating_base=True, n_links=links)
    q, qd, x, _ = random_state(robot, seed)
    fext = np.random.default_rng(seed).normal(size=(len(robot.body_names), 6))
    outputs = robot.function(f"{dynamics}_second_derivatives")(q, qd, x, fext)
    nv = robot.nv
    for got, want in zip(outputs, ad_of_the_first_order(robot, dynamics, q, qd, x, fext),
                         strict=True):
        close(np.asarray(got).reshape(nv, nv, nv).transpose(0, 2, 1), want, 1e-10)


@pytest.mark.parametrize("name, floating", [("ur5e", False), ("solo12", True)])
def test_the_graphs_are_smaller_than_ad_applied_twice(name, floating, shipped):
    """The second-order inverse dynamics's graph (all four tensors) against CasADi's AD
    applied twice to inverse dynamics, without ``fext``, both with CasADi's CSE. Along ``q``
    both times in the tangent space as defined (the Jacobian in ``h`` at ``h = 0`` of the
    derivative at ``q ⊕ h``): the symmetric pairs formed once make ours the smaller."""
    robot = shipped(name, floating_base=floating)
    nv = robot.nv
    q, qd, qdd = ca.SX.sym("q", robot.nq), ca.SX.sym("qd", nv), ca.SX.sym("qdd", nv)
    h = ca.SX.sym("h", nv)
    integrate = robot.function("integrate")

    def at_zero(expression):
        return ca.substitute(expression, h, ca.DM.zeros(nv))

    def along_q(expression):  # d/dh expression(q ⊕ h) at h = 0
        return at_zero(ca.jacobian(ca.substitute(expression, q, integrate(q, h)), h))

    tau = robot.function("inverse_dynamics", fext=False)(q, qd, qdd)
    by_q, by_qd, by_qdd = along_q(tau), ca.jacobian(tau, qd), ca.jacobian(tau, qdd)
    twice = [along_q(ca.vec(by_q)), ca.jacobian(ca.vec(by_qd), qd),
             ca.jacobian(ca.vec(by_q), qd), along_q(ca.vec(by_qdd))]
    ad = ca.Function("ad", [q, qd, qdd], twice, {"cse": True})
    ours = robot.function("inverse_dynamics_second_derivatives", fext=False)
    state = random_state(robot, 7)[:3]
    for got, want in zip(ours(*state), ad(*state), strict=True):  # the same tensors
        close(np.asarray(got), np.asarray(want).reshape(nv, nv * nv, order="F"), 1e-10)
    assert ours.n_instructions() < ad.n_instructions()
