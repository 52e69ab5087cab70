"""The external-force conventions of SPEC (MATLAB RST), checked on physical cases.

A planar two-link arm moving in the base x-y plane (joint axes along z, gravity along -y)
holds loads; its static torques are derived by hand in each test.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

import casdyn

L1, L2, M1, M2, G = 0.7, 0.5, 3.0, 2.0, 9.81

ARM = f"""<robot name="arm">
  <link name="world"/>
  <link name="upper"><inertial><origin xyz="{L1 / 2} 0 0"/><mass value="{M1}"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial></link>
  <link name="lower"><inertial><origin xyz="{L2 / 2} 0 0"/><mass value="{M2}"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial></link>
  <link name="tool"/>
  <joint name="shoulder" type="revolute"><parent link="world"/><child link="upper"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="lower"/>
    <origin xyz="{L1} 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="wrist" type="fixed"><parent link="lower"/><child link="tool"/>
    <origin xyz="{L2} 0 0" rpy="0.3 -0.2 0.9"/></joint>
</robot>"""

Q = np.array([0.4, -1.1])


@pytest.fixture
def arm():
    return casdyn.load_urdf(ARM, gravity=(0, -G, 0))


def tool_position(q):
    return np.array([L1 * np.cos(q[0]) + L2 * np.cos(q[0] + q[1]),
                     L1 * np.sin(q[0]) + L2 * np.sin(q[0] + q[1]), 0.0])


def test_holding_a_load_at_the_tool_needs_the_hand_derived_torques(arm):
    """A weight W hanging from the tool: tau = gravity torque + W times the horizontal arms."""
    W = 40.0
    c1, c12 = np.cos(Q[0]), np.cos(Q[0] + Q[1])
    expected = np.array([
        (M1 * G * L1 / 2 + M2 * G * L1 + W * L1) * c1 + (M2 * G * L2 / 2 + W * L2) * c12,
        (M2 * G * L2 / 2 + W * L2) * c12,
    ])
    force = np.array([0.0, -W, 0.0])
    p = tool_position(Q)
    base_frame = arm.external_force("tool", np.concatenate([np.cross(p, force), force]))
    R = arm.get_transform(Q, "tool")[:3, :3]
    body_frame = arm.external_force("tool", np.concatenate([np.zeros(3), R.T @ force]), Q)
    assert_close(arm.inverse_dynamics(Q, fext=base_frame), expected)
    assert_close(arm.inverse_dynamics(Q, fext=body_frame), expected)


def test_a_pure_moment_on_the_tool_is_resisted_by_every_joint(arm):
    """An external moment T about z on the tool: each joint must supply -T, anywhere."""
    T = 2.5
    fext = arm.external_force("tool", [0, 0, T, 0, 0, 0])
    no_gravity = casdyn.load_urdf(ARM, gravity=(0, 0, 0))
    assert_close(no_gravity.inverse_dynamics(Q, fext=fext), [-T, -T])


def test_base_frame_wrench_takes_its_moment_about_the_base_origin(arm):
    """Without q, the row is stored as given: a force with no moment acts through the base
    origin, so the joint torques see only its moment arm from there."""
    no_gravity = casdyn.load_urdf(ARM, gravity=(0, 0, 0))
    force = np.array([0.0, -10.0, 0.0])
    fext = no_gravity.external_force("tool", np.concatenate([np.zeros(3), force]))
    assert_close(fext[no_gravity.body_names.index("tool")], [0, 0, 0, 0, -10, 0])
    # through the base origin: the shoulder feels nothing; the elbow feels the force's
    # moment about the elbow axis, -(p_elbow x f)_z, with the sign of a reaction
    p_elbow = np.array([L1 * np.cos(Q[0]), L1 * np.sin(Q[0]), 0.0])
    expected = [0.0, np.cross(p_elbow, force)[2]]
    assert_close(no_gravity.inverse_dynamics(Q, fext=fext), expected)


def test_body_frame_wrench_is_a_full_spatial_transform(arm):
    """With q, row = [R n + p x (R f); R f] with R, p the body's pose in the base."""
    wrench = np.array([0.3, -0.2, 0.7, 4.0, -1.0, 2.0])
    T = arm.get_transform(Q, "tool")
    R, p = T[:3, :3], T[:3, 3]
    row = np.concatenate([R @ wrench[:3] + np.cross(p, R @ wrench[3:]), R @ wrench[3:]])
    assert_close(arm.external_force("tool", wrench, Q)[arm.body_names.index("tool")], row)
    assert_close(arm.external_force("tool", wrench, Q), arm.external_force("tool", row))


@pytest.mark.parametrize("name", casdyn.robot_names())
def test_inverse_dynamics_subtracts_jacobian_transpose_wrench(name):
    """ID with a force = ID without it - J_b^T w, with w the wrench about the body origin in
    base-frame axes (J_b is the Jacobian of that origin)."""
    robot = casdyn.load_robot(name)
    rng = np.random.default_rng(3)
    q, qd, qdd = robot.random_configuration(rng), *rng.normal(size=(2, robot.nq))
    total = np.zeros((robot.n_bodies, 6))
    expected = robot.inverse_dynamics(q, qd, qdd)
    for body in robot.body_names:
        wrench = rng.normal(size=6)
        total = total + robot.external_force(body, wrench, q)
        R = robot.get_transform(q, body)[:3, :3]
        about_origin = np.concatenate([R @ wrench[:3], R @ wrench[3:]])
        expected = expected - robot.geometric_jacobian(q, body).T @ about_origin
    assert_close(robot.inverse_dynamics(q, qd, qdd, total), expected)


def test_forces_on_bodies_fixed_to_the_base_change_nothing():
    robot = casdyn.load_robot("ur5e")
    q = robot.random_configuration(0)
    fext = robot.external_force("base_link_inertia", [1, 2, 3, 4, 5, 6]) + robot.external_force(
        "base", [1, 2, 3, 4, 5, 6], q)
    assert_close(robot.inverse_dynamics(q, fext=fext), robot.inverse_dynamics(q))


def test_external_force_matrices_add():
    robot = casdyn.load_robot("ur5e")
    q = robot.random_configuration(1)
    a = robot.external_force("tool0", [0, 0, 0, 0, 0, -20], q)
    b = robot.external_force("forearm_link", [1, 0, 0, 0, 3, 0])
    both = robot.inverse_dynamics(q, fext=a + b)
    separately = robot.inverse_dynamics(q, fext=a) + robot.inverse_dynamics(q, fext=b)
    assert_close(both, separately - robot.gravity_torque(q))
