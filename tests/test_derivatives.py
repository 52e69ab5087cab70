"""State-space Jacobians of the dynamics: against Pinocchio and finite differences."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest
from conftest import assert_close, load_case, random_state
from pinocchio_reference import Reference, aba_derivatives, rnea_derivatives
from random_trees import random_urdf

import casdyn
from casdyn.algorithms import derivatives, dynamics
from casdyn.algorithms.configuration import in_tangent_space


@pytest.mark.parametrize("method, pinocchio", [
    ("inverse_dynamics_derivatives", rnea_derivatives),
    ("forward_dynamics_derivatives", aba_derivatives),
])
def test_dynamics_derivatives_match_pinocchio(urdf_text, method, pinocchio):
    """(d/dq, d/dqd, d/d(qdd or tau)) without external forces."""
    robot = casdyn.load_urdf(urdf_text)
    reference = Reference(urdf_text, robot.joint_names, robot.body_names)
    q, qd, x, _ = random_state(robot)
    for ours, theirs in zip(getattr(robot, method)(q, qd, x),
                            pinocchio(reference, q, qd, x), strict=True):
        assert_close(ours, theirs)


def central_difference(f, x, step=1e-6):
    return np.column_stack([(f(x + step * e) - f(x - step * e)) / (2 * step)
                            for e in np.eye(len(x))])


@pytest.mark.parametrize("name", casdyn.robot_names())
def test_derivatives_with_external_forces_match_finite_differences(name):
    """fext is held fixed in the base frame while q varies (its moment about the base origin
    stays the same), so the q-derivative includes how the joint axes move under it."""
    robot = casdyn.load_robot(name)
    q, qd, x, fext = random_state(robot, 1)
    dq, dqd, dx = robot.inverse_dynamics_derivatives(q, qd, x, fext)
    assert_close(dq, central_difference(lambda y: robot.inverse_dynamics(y, qd, x, fext), q),
                 rtol=1e-6)
    assert_close(dqd, central_difference(lambda y: robot.inverse_dynamics(q, y, x, fext), qd),
                 rtol=1e-6)
    assert_close(dx, robot.mass_matrix(q))
    dq, dqd, dx = robot.forward_dynamics_derivatives(q, qd, x, fext)
    assert_close(dq, central_difference(lambda y: robot.forward_dynamics(y, qd, x, fext), q),
                 rtol=1e-6)
    assert_close(dqd, central_difference(lambda y: robot.forward_dynamics(q, y, x, fext), qd),
                 rtol=1e-6)
    assert_close(dx, np.linalg.inv(robot.mass_matrix(q)))


def test_hessian_of_a_scalar_cost_through_the_functions():
    """A torque-squared cost differentiated twice by CasADi equals its finite difference."""
    robot = casdyn.load_robot("planar_2link")
    q = ca.SX.sym("q", robot.nq)
    cost = ca.sumsqr(robot.gravity_torque(q))
    hessian = ca.Function("H", [q], [ca.hessian(cost, q)[0]])
    gradient = ca.Function("g", [q], [ca.gradient(cost, q)])
    x = np.array([0.3, -0.7])
    assert_close(hessian(x).full(),
                 central_difference(lambda y: gradient(y).full().ravel(), x), rtol=1e-6)


@pytest.mark.parametrize("floating_base", [False, True])
def test_rk4_step_is_fourth_order(floating_base):
    """RK4's one-step error is O(h^5): halving the step divides it by about 2^5 = 32, also
    on a floating base (the body twist through the tangent map, quaternions projected)."""
    from casdyn.integrators import rk4_step

    robot = casdyn.load_robot("planar_2link" if not floating_base else "ur5e",
                              floating_base=floating_base)
    rng = np.random.default_rng(1)
    if floating_base:
        x0 = np.r_[robot.random_configuration(rng), rng.normal(size=robot.nv)]
        tau = rng.normal(size=robot.nv)
    else:
        x0, tau = np.array([0.3, -0.5, 0.2, 0.1]), np.array([1.0, -0.5])

    def integrate(h, steps):
        x, step = x0, rk4_step(robot, h)
        for _ in range(steps):
            x = step(x, tau).full().ravel()
        return x

    def one_step_error(h):
        return np.abs(integrate(h, 1) - integrate(h / 64, 64)).max()

    assert 28 < one_step_error(0.02) / one_step_error(0.01) < 36


ANALYTICAL_CASES = [(kind, key, floating) for floating in (False, True) for kind, key in
                    [("shipped", "torso_two_arms"), ("shipped", "solo12"), ("random", 3),
                     ("random", 5), ("random", 6)]]


@pytest.mark.parametrize("case", ANALYTICAL_CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_analytical_rnea_derivatives_equal_ad(case):
    """casdyn.algorithms.derivatives against CasADi's AD through RNEA minus the external torques
    (and its mass matrix against CRBA), on the plain model and on the grouped one the Functions
    use, with external forces on every body; random trees with planar and floating joints
    inside, fixed and floating bases."""
    robot, _ = load_case(case)
    stages = robot._functions.stages
    rng = np.random.default_rng(7)
    for model in (robot.model, stages.grouped):
        q, qd, qdd = (ca.SX.sym(n, size) for n, size in (("q", model.nq), ("qd", model.nv),
                                                          ("qdd", model.nv)))
        fext = ca.SX.sym("fext", len(model.bodies), 6)
        gravity = dynamics.gravity_acceleration(model)
        tau = dynamics.rnea(model, q, qd, qdd, gravity) - dynamics.external_torque(model, q,
                                                                                   fext)
        expected = ca.Function("ad", [q, qd, qdd, fext], [
            in_tangent_space(model, ca.jacobian(tau, q), q), ca.jacobian(tau, qd),
            dynamics.crba(model, q)])
        actual = ca.Function("analytical", [q, qd, qdd, fext],
                             list(derivatives.rnea_derivatives(model, q, qd, qdd, gravity, fext)))
        state = [robot.random_configuration(rng), *rng.normal(size=(2, model.nv)),
                 rng.normal(size=(len(model.bodies), 6))]
        for a, b in zip(actual(*state), expected(*state), strict=True):
            assert_close(a.full(), b.full())


@pytest.mark.slow  # several seconds: the quick tier stays quick
@pytest.mark.parametrize("floating_base", [False, True])
def test_long_chains_take_the_analytical_derivatives(floating_base):
    """On a 16-link chain the analytical graph is the smaller (less than half of AD's): it is
    the one the Function holds, and it agrees with Pinocchio's computeRNEADerivatives and
    computeABADerivatives."""
    text = random_urdf(11, n_links=16, chain=True, multi_dof=True)
    robot = casdyn.load_urdf(text, floating_base=floating_base)
    model, s = robot.model, {"q": ca.SX.sym("q", robot.nq), "qd": ca.SX.sym("qd", robot.nv),
                             "qdd": ca.SX.sym("qdd", robot.nv)}
    tau = robot.inverse_dynamics(s["q"], s["qd"], s["qdd"])
    ad = ca.Function("ad", list(s.values()), [
        in_tangent_space(model, ca.jacobian(tau, s["q"]), s["q"]), ca.jacobian(tau, s["qd"]),
        robot.mass_matrix(s["q"])])
    chosen = robot.function("inverse_dynamics_derivatives", fext=False)
    assert chosen.n_instructions() < 0.6 * ad.n_instructions()
    reference = Reference(text, robot.joint_names, robot.body_names,
                          floating_base=floating_base)
    q, qd, x, _ = random_state(robot, 2)
    for method, pinocchio in [("inverse_dynamics_derivatives", rnea_derivatives),
                              ("forward_dynamics_derivatives", aba_derivatives)]:
        for ours, theirs in zip(getattr(robot, method)(q, qd, x),
                                pinocchio(reference, q, qd, x), strict=True):
            assert_close(ours, theirs, rtol=1e-8)


def test_analytical_mass_matrix_has_the_rotor_inertias():
    """d tau / d qdd from the derivative recursions is CRBA's M, armature on the diagonal."""
    robot = casdyn.load_robot("ur5e", armature={"shoulder_pan_joint": 0.3, "wrist_3_joint": 2.0})
    model = robot._functions.stages.grouped
    q = ca.SX.sym("q", model.nq)
    zero = ca.SX.zeros(model.nv)
    partials = derivatives.rnea_derivatives(model, q, zero, zero,
                                            dynamics.gravity_acceleration(model))
    both = ca.Function("M", [q], [partials.dqdd, dynamics.crba(model, q)])
    configuration = robot.random_configuration(np.random.default_rng(3))
    analytical, crba = both(configuration)
    assert_close(analytical.full(), crba.full())
    assert_close(crba.full() - casdyn.load_robot("ur5e").mass_matrix(configuration),
                 np.diag([0.3, 0, 0, 0, 0, 2.0]))
