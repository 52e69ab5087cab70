"""State-space Jacobians of the dynamics: against Pinocchio and finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close, random_state
from pinocchio_reference import Reference, aba_derivatives, rnea_derivatives

import casdyn


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
    import casadi as ca

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
