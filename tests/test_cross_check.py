"""Every quantity against Pinocchio, on the shipped robots and on random trees, to 1e-9."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close
from pinocchio_reference import Reference, assert_center_of_mass_agrees

import casdyn

N_STATES = 5


@pytest.fixture
def pair(urdf_text):
    gravity = (0.3, -1.2, -9.81)
    robot = casdyn.load_urdf(urdf_text, gravity=gravity)
    return robot, Reference(urdf_text, robot.joint_names, robot.body_names, gravity)


def states(robot, seed=1):
    """Random states with external forces on several bodies, fixed-joint bodies included."""
    rng = np.random.default_rng(seed)
    for _ in range(N_STATES):
        q = robot.random_configuration(rng)
        qd, qdd, tau = rng.normal(size=(3, robot.nq))
        fext = np.zeros((robot.n_bodies, 6))
        for b in rng.choice(robot.n_bodies, size=min(3, robot.n_bodies), replace=False):
            fext[b] = rng.normal(size=6)
        yield q, qd, qdd, tau, fext


@pytest.mark.parametrize("method", ["inverse_dynamics", "forward_dynamics"])
def test_dynamics_match_pinocchio_with_and_without_external_forces(pair, method):
    """(q, qd, qdd) -> tau and (q, qd, tau) -> qdd, with fext and with fext left out."""
    robot, ref = pair
    ours, theirs = getattr(robot, method), getattr(ref, method)
    for q, qd, qdd, tau, fext in states(robot):
        x = qdd if method == "inverse_dynamics" else tau
        assert_close(ours(q, qd, x, fext), theirs(q, qd, x, fext))
        assert_close(ours(q, qd, x), theirs(q, qd, x, 0 * fext))


def test_mass_matrix_matches_pinocchio(pair):
    robot, ref = pair
    for q, *_ in states(robot):
        assert_close(robot.mass_matrix(q), ref.mass_matrix(q))


def test_velocity_product_and_gravity_match_pinocchio(pair):
    robot, ref = pair
    zero, no_force = np.zeros(robot.nq), np.zeros((robot.n_bodies, 6))
    for q, qd, *_ in states(robot):
        g = ref.inverse_dynamics(q, zero, zero, no_force)
        assert_close(robot.gravity_torque(q), g)
        assert_close(robot.velocity_product(q, qd), ref.inverse_dynamics(q, qd, zero, no_force) - g)


def test_body_transforms_match_pinocchio(pair):
    robot, ref = pair
    for q, *_ in states(robot):
        for b, body in enumerate(robot.body_names):
            assert_close(robot.get_transform(q, body), ref.body_transform(q, b))


def test_relative_transforms_match_pinocchio(pair):
    robot, ref = pair
    rng = np.random.default_rng(7)
    for q, *_ in states(robot):
        a, b = rng.choice(robot.n_bodies, size=2)
        expected = np.linalg.solve(ref.body_transform(q, a), ref.body_transform(q, b))
        assert_close(robot.get_transform(q, robot.body_names[b], relative_to=robot.body_names[a]),
                     expected)


def test_jacobians_match_pinocchio(pair):
    robot, ref = pair
    for q, *_ in states(robot):
        for b, body in enumerate(robot.body_names):
            assert_close(robot.geometric_jacobian(q, body), ref.jacobian(q, b))


def test_center_of_mass_matches_pinocchio(pair):
    robot, ref = pair
    for q, *_ in states(robot):
        assert_center_of_mass_agrees(robot, ref, q)


def test_body_frame_external_force_matches_pinocchio(pair):
    """external_force(body, w, q) against Pinocchio's own frame placement."""
    robot, ref = pair
    for q, qd, qdd, _, _ in states(robot):
        for b, body in enumerate(robot.body_names[:4]):
            wrench = np.arange(1.0, 7.0) * (b + 1)
            T = ref.body_transform(q, b)
            R, p = T[:3, :3], T[:3, 3]
            row = np.concatenate([R @ wrench[:3] + np.cross(p, R @ wrench[3:]), R @ wrench[3:]])
            fext = np.zeros((robot.n_bodies, 6))
            fext[b] = row
            assert_close(robot.external_force(body, wrench, q), fext)
            assert_close(robot.inverse_dynamics(q, qd, qdd, robot.external_force(body, wrench, q)),
                         ref.inverse_dynamics(q, qd, qdd, fext))
