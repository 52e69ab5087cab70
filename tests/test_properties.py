"""Identities that must hold between casdyn's own quantities, on every test model."""

from __future__ import annotations

import numpy as np
from conftest import assert_close, random_state

import casdyn


def test_forward_dynamics_inverts_inverse_dynamics(urdf_text):
    robot = casdyn.load_urdf(urdf_text)
    q, qd, qdd, fext = random_state(robot)
    assert_close(robot.forward_dynamics(q, qd, robot.inverse_dynamics(q, qd, qdd, fext), fext),
                 qdd)


def test_mass_matrix_is_positive_definite(urdf_text):
    robot = casdyn.load_urdf(urdf_text)
    M = robot.mass_matrix(random_state(robot)[0])
    assert np.linalg.eigvalsh(M).min() > 0


def test_mass_matrix_columns_are_inverse_dynamics_of_unit_accelerations(urdf_text):
    robot = casdyn.load_urdf(urdf_text, gravity=(0, 0, 0))
    q = random_state(robot)[0]
    columns = [robot.inverse_dynamics(q, qdd=e) for e in np.eye(robot.nq)]
    assert_close(robot.mass_matrix(q), np.column_stack(columns))


def test_gravity_torque_is_the_gradient_of_the_potential_energy(urdf_text):
    """``g = dV/dq``, with ``V = -m g . c`` from the centre of mass: independent of RNEA."""
    robot = casdyn.load_urdf(urdf_text)
    q = random_state(robot)[0]
    gradient = _finite_difference(robot.potential_energy, q)
    assert_close(robot.gravity_torque(q), np.array(gradient), rtol=1e-6)
    assert_close(robot.inverse_dynamics(q), robot.gravity_torque(q))


def test_velocity_product_is_quadratic_and_does_no_work_beyond_mdot(urdf_text):
    """``C(q, qd) qd`` is quadratic in ``qd``, and ``qd . c = qd^T Mdot qd / 2`` (the
    power balance ``dT/dt = qd . (tau - g)`` with ``T = qd^T M qd / 2``), ``Mdot`` by
    central differences of the mass matrix along ``qd``: independent of RNEA's terms."""
    robot = casdyn.load_urdf(urdf_text)
    q, qd, _, _ = random_state(robot)
    c = robot.velocity_product(q, qd)
    assert_close(robot.velocity_product(q, 2 * qd), 4 * c)
    step = 1e-6
    Mdot = (robot.mass_matrix(q + step * qd) - robot.mass_matrix(q - step * qd)) / (2 * step)
    assert abs(qd @ c - qd @ Mdot @ qd / 2) <= 1e-6 * max(1.0, abs(qd @ Mdot @ qd))
    assert_close(c, robot.inverse_dynamics(q, qd) - robot.gravity_torque(q))


def _finite_difference(f, q, step=1e-6):
    return [(f(q + step * e) - f(q - step * e)) / (2 * step) for e in np.eye(len(q))]


def test_jacobian_columns_are_derivatives_of_the_body_pose(urdf_text):
    robot = casdyn.load_urdf(urdf_text)
    q = random_state(robot)[0]
    for body in robot.body_names:
        J = robot.geometric_jacobian(q, body)
        R = robot.get_transform(q, body)[:3, :3]
        derivatives = _finite_difference(lambda x, b=body: robot.get_transform(x, b), q)
        for j, dT in enumerate(derivatives):
            W = dT[:3, :3] @ R.T  # skew matrix of the angular velocity
            angular = np.array([W[2, 1], W[0, 2], W[1, 0]])
            assert_close(J[:, j], np.concatenate([angular, dT[:3, 3]]), rtol=1e-6)


def test_center_of_mass_jacobian_is_its_derivative(urdf_text):
    robot = casdyn.load_urdf(urdf_text)
    q = random_state(robot)[0]
    derivatives = _finite_difference(lambda x: robot.center_of_mass(x)[0], q)
    assert_close(robot.center_of_mass(q)[1], np.column_stack(derivatives), rtol=1e-6)


def test_relative_transform_composes_base_transforms():
    robot = casdyn.load_robot("ur5e")
    q = robot.random_configuration(4)
    T_a, T_b = robot.get_transform(q, "upper_arm_link"), robot.get_transform(q, "tool0")
    assert_close(robot.get_transform(q, "tool0", relative_to="upper_arm_link"),
                 np.linalg.solve(T_a, T_b))
    assert_close(robot.get_transform(q, robot.base_name), np.eye(4))
    assert_close(robot.get_transform(q, robot.base_name, relative_to="tool0"), np.linalg.inv(T_b))


def test_energy_balance_of_forward_dynamics():
    """d/dt (kinetic + potential energy) = qd . tau along forward dynamics."""
    robot = casdyn.load_robot("kuka_iiwa14")
    rng = np.random.default_rng(5)
    q, qd, tau = robot.random_configuration(rng), *rng.normal(size=(2, robot.nq))
    qdd = robot.forward_dynamics(q, qd, tau)

    def energy(q, qd):
        com = robot.center_of_mass(q)[0]
        return 0.5 * qd @ robot.mass_matrix(q) @ qd - robot.mass * robot.gravity @ com

    h = 1e-6
    power = (energy(q + h * qd, qd + h * qdd) - energy(q - h * qd, qd - h * qdd)) / (2 * h)
    assert_close(power, qd @ tau, rtol=1e-6)
