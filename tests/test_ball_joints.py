"""Ball joints (SPEC "MJCF, ball joints and loops") against Pinocchio's
``JointModelSpherical``: random trees whose revolute joints are partly ball joints, on fixed
and floating bases, in every algorithm that takes a joint type: dynamics, their tangent-space
derivatives, kinematics and task space, contacts, identification, configurations and C
export."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from ball_trees import ball_tree
from conftest import assert_close, random_state
from pinocchio_reference import (
    TaskSpace,
    aba_derivatives,
    assert_agrees,
    assert_center_of_mass_agrees,
    assert_frame_motion_agrees,
    rnea_derivatives,
)

import casdyn
from casdyn import Contact, interop

CASES = [(0, False), (1, True), (5, False), (5, True)]


@pytest.fixture(params=CASES, ids=lambda c: f"seed{c[0]}-{'floating' if c[1] else 'fixed'}",
                scope="module")
def tree(request):
    return ball_tree(*request.param)


def test_dynamics_kinematics_and_derivatives_agree_with_pinocchio(tree):
    robot, reference, _ = tree
    for seed in (0, 1):
        state = random_state(robot, seed)
        q, qd, x, _ = state
        assert_agrees(robot, reference, state)
        assert_center_of_mass_agrees(robot, reference, q)
        for method, pinocchio in [("inverse_dynamics_derivatives", rnea_derivatives),
                                  ("forward_dynamics_derivatives", aba_derivatives)]:
            for ours, theirs in zip(getattr(robot, method)(q, qd, x),
                                    pinocchio(reference, q, qd, x), strict=True):
                assert_close(ours, theirs, rtol=1e-8)


def test_quaternions_of_any_norm_mean_their_rotation(tree):
    robot, reference, _ = tree
    q, qd, x, fext = random_state(robot, 4)
    scaled = q.copy()
    for joint in robot.model.coordinate_joints:
        at = joint.type.quaternion_at
        if at is not None:
            scaled[joint.idx_q + at : joint.idx_q + at + 4] *= 3.7
    assert_close(robot.inverse_dynamics(scaled, qd, x, fext),
                 reference.inverse_dynamics(q, qd, x, fext))
    assert_close(robot.mass_matrix(scaled), reference.mass_matrix(q))


@pytest.mark.parametrize("axes", ["base", "local"])
def test_frame_motion_agrees_with_pinocchio(tree, axes):
    robot, reference, _ = tree
    task = TaskSpace(reference)
    q, qd, qdd, _ = random_state(robot, 3)
    for body in range(robot.n_bodies):
        assert_frame_motion_agrees(robot, task, q, qd, qdd, body, (0.05, -0.1, 0.2), axes)
    assert_close(robot.kinetic_energy(q, qd), task.kinetic_energy(q, qd))
    assert_close(robot.potential_energy(q), task.potential_energy(q))
    com, _ = robot.center_of_mass(q)
    assert_close(robot.centroidal_momentum_matrix(q), task.centroidal_momentum_matrix(q, com))
    assert_close(robot.centroidal_momentum_bias(q, qd), task.centroidal_momentum_bias(q, qd,
                                                                                      com))


def test_integrate_and_difference_are_pinocchios(tree):
    robot, reference, _ = tree
    rng = np.random.default_rng(5)
    q0, q1 = robot.random_configuration(rng), robot.random_configuration(rng)
    v = rng.normal(size=robot.nv)
    model = reference.model
    expected = pin.integrate(model, reference.q(q0), reference.v(v))
    assert_close(reference.q(robot.integrate(q0, v)), expected)
    # near q0 (angles of continuous and planar joints are not wrapped in casdyn), and
    # anywhere on the ball and free joints' rotations
    near = robot.integrate(q0, 0.4 * v)
    assert_close(robot.difference(q0, near),
                 reference.from_v(pin.difference(model, reference.q(q0), reference.q(near))))
    rotations = [i for j in robot.model.coordinate_joints if j.type.quaternion_at is not None
                 for i in range(j.idx_v, j.idx_v + 3)]
    assert_close(robot.difference(q0, q1)[rotations], reference.from_v(
        pin.difference(model, reference.q(q0), reference.q(q1)))[rotations])
    assert_close(robot.difference(q0, robot.integrate(q0, 0.3 * v)), 0.3 * v)


def test_configurations_hold_unit_quaternions_and_map_to_pinocchio(tree):
    robot, reference, names = tree
    balls = [j for j in robot.model.joints if j.name in names]
    home = robot.home_configuration()
    batch = robot.random_configuration(3, n=2000)
    for joint in balls:
        where = slice(joint.idx_q, joint.idx_q + 4)
        assert home[where].tolist() == [1.0, 0.0, 0.0, 0.0]
        quaternions = batch[:, where]
        assert_close(np.linalg.norm(quaternions, axis=1), np.ones(len(batch)))
        # uniform rotations: each entry's square averages 1/4
        assert np.allclose(np.mean(quaternions ** 2, axis=0), 0.25, atol=0.03)
    q_pin, _ = interop.to_pinocchio(robot, reference.model, batch[:5])
    assert_close(q_pin, [reference.q(q) for q in batch[:5]])
    back, _ = interop.from_pinocchio(robot, reference.model, q_pin)
    assert_close(back, batch[:5])
    _, v_pin = interop.to_pinocchio(robot, reference.model, v=np.arange(robot.nv))
    assert_close(v_pin, reference.v(np.arange(robot.nv)))


def test_the_regressor_and_parameters_are_pinocchios(tree):
    robot, reference, _ = tree
    q, qd, qdd, _ = random_state(robot, 21)
    Y = robot.regressor(q, qd, qdd)
    assert_close(Y @ robot.inertial_parameters(), robot.inverse_dynamics(q, qd, qdd))
    blocks = reference.parameter_blocks(robot)
    Y_pin = pin.computeJointTorqueRegressor(reference.model, reference.data, reference.q(q),
                                            reference.v(qd), reference.v(qdd))
    columns = [10 * (j - 1) + k for j in blocks for k in range(10)]
    assert_close(Y, reference.from_v(Y_pin[:, columns]))
    expected = np.concatenate([reference.model.inertias[j].toDynamicParameters()
                               for j in blocks])
    assert_close(robot.inertial_parameters(), expected)
    P, beta = robot.base_parameters()  # identifiable combinations, found from samples
    q, qd, qdd, _ = random_state(robot, 22)
    assert_close(robot.base_regressor(q, qd, qdd) @ P, robot.regressor(q, qd, qdd))
    assert_close(robot.base_regressor(q, qd, qdd) @ beta, robot.inverse_dynamics(q, qd, qdd))


def test_contact_dynamics_below_a_ball_joint_agree_with_a_kkt_solve_from_pinocchio():
    robot, reference, names = ball_tree(1, floating_base=True)
    task = TaskSpace(reference)
    below = [body.name for body in robot.model.bodies
             if robot.model.joints[body.joint].name in names]
    contacts = [Contact(below[0], "point", (0.1, 0.0, -0.05))]
    q, qd, tau, _ = random_state(robot, 6)
    qdd, forces = robot.contact_dynamics(q, qd, tau, contacts)
    bodies = [robot.body_names.index(c.body) for c in contacts]
    expected_qdd, expected_forces = task.contact_dynamics(q, qd, tau, np.zeros(
        (robot.n_bodies, 6)), contacts, bodies)
    assert_close(qdd, expected_qdd, rtol=1e-8)
    assert_close(np.ravel(forces)[-3:], expected_forces, rtol=1e-8)


def test_a_zero_ball_quaternion_is_an_input_error():
    robot, _, names = ball_tree(0)
    joint = next(j for j in robot.model.joints if j.name == names[0])
    q = robot.home_configuration()
    q[joint.idx_q : joint.idx_q + 4] = 0.0
    with pytest.raises(casdyn.InputError, match=names[0]):
        robot.mass_matrix(q)


def test_a_locked_ball_joint_holds_its_rotation():
    robot, _, names = ball_tree(5)
    joint = next(j for j in robot.model.joints if j.name == names[0])
    q, qd, qdd, _ = random_state(robot, 8)
    held = q[joint.idx_q : joint.idx_q + 4] * 2.0
    locked = robot.locked({names[0]: held})
    keep = [i for i in range(robot.nv) if not joint.idx_v <= i < joint.idx_v + 3]
    keep_q = [i for i in range(robot.nq) if not joint.idx_q <= i < joint.idx_q + 4]
    qd[joint.idx_v : joint.idx_v + 3] = qdd[joint.idx_v : joint.idx_v + 3] = 0.0
    assert_close(locked.inverse_dynamics(q[keep_q], qd[keep], qdd[keep]),
                 robot.inverse_dynamics(q, qd, qdd)[keep])
    for body in robot.body_names:
        assert_close(locked.get_transform(q[keep_q], body), robot.get_transform(q, body))


@pytest.mark.slow
def test_exported_c_agrees_with_the_sx_functions(tmp_path):
    robot, _, _ = ball_tree(0, floating_base=True)
    names = ["inverse_dynamics", "forward_dynamics", "integrate"]
    compiled = robot.export_c(tmp_path, names)
    rng = np.random.default_rng(2)
    for name in names:
        sx = robot.function(name)
        args = [robot.random_configuration(rng) if sx.name_in(k) == "q" else
                rng.normal(size=sx.size_in(k)) for k in range(sx.n_in())]
        for ours, theirs in zip(compiled[name].call(args), sx.call(args), strict=True):
            assert_close(np.asarray(ours), np.asarray(theirs))
