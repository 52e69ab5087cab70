"""Loading URDF files: what is read, what is ignored, and the tree's names and limits."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_close

import casdyn

UR5E_JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
               "wrist_2_joint", "wrist_3_joint")


def test_ur5e_names_follow_document_order():
    robot = casdyn.load_robot("ur5e")
    assert robot.base_name == "base_link"
    assert robot.joint_names == UR5E_JOINTS and robot.nq == robot.nv == 6
    assert robot.body_names == ("base", "base_link_inertia", "shoulder_link", "upper_arm_link",
                                "forearm_link", "wrist_1_link", "wrist_2_link", "wrist_3_link",
                                "flange", "tool0")


def test_path_string_and_pathlike_load_the_same_model(tmp_path):
    text = casdyn.robot_urdf("kuka_iiwa14")
    path = tmp_path / "iiwa.urdf"
    path.write_text(text)
    q = np.linspace(-1, 1, 7)
    expected = casdyn.load_urdf(text).mass_matrix(q)
    for source in (path, str(path)):
        assert_close(casdyn.load_urdf(source).mass_matrix(q), expected)


NOISY = """<?xml version="1.0"?>
<robot>
  <material name="steel"><color rgba="0.5 0.5 0.5 1"/></material>
  <link name="base">
    <visual><geometry><mesh/></geometry><material name="m"><texture/></material></visual>
    <collision><geometry><box size="1 1"/></geometry></collision>
  </link>
  <link name="arm">
    <inertial><mass value="2"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>
      <origin xyz="0.5 0 0"/></inertial>
    <visual><geometry><cylinder/></geometry></visual>
    <sensor name="cam"/>
  </link>
  <joint name="hinge" type="continuous">
    <parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <dynamics damping="0.1"/><safety_controller k_velocity="1"/>
    <calibration rising="0"/><limit effort="5" velocity="2"/>
  </joint>
  <transmission name="t" type="pr2_mechanism_model/SimpleTransmission">
    <actuator name="motor"/><joint name="hinge"/><mechanicalReduction>1</mechanicalReduction>
  </transmission>
  <gazebo reference="arm"><material>Gazebo/Red</material></gazebo>
  <ros2_control name="x"/>
</robot>"""


def test_parts_other_than_dynamics_are_ignored_silently(capfd):
    robot = casdyn.load_urdf(NOISY)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert robot.name == "robot" and robot.joint_names == ("hinge",)
    # a 2 kg point-ish mass 0.5 m out on a joint about y, gravity along -z
    assert_close(robot.gravity_torque([0.0]), [-2 * 9.81 * 0.5])


def test_continuous_joints_have_infinite_limits_and_random_angles_within_pi():
    robot = casdyn.load_urdf(NOISY)
    lower, upper = robot.position_limits
    assert lower[0] == -math.inf and upper[0] == math.inf
    samples = np.array([robot.random_configuration(seed) for seed in range(50)])
    assert np.all(np.abs(samples) <= math.pi)


def test_missing_axis_defaults_to_x():
    text = ('<robot name="r"><link name="a"/><link name="b"><inertial><mass value="1"/>'
            '<origin xyz="0 0 1"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>'
            '</inertial></link><joint name="j" type="revolute"><parent link="a"/>'
            '<child link="b"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
            '</robot>')
    robot = casdyn.load_urdf(text, gravity=(0, -9.81, 0))
    # rotating about x a mass 1 m up z: gravity along -y pulls it with lever 1 m
    assert_close(robot.gravity_torque([0.0]), [-9.81])


def test_limits_home_and_random_configurations():
    robot = casdyn.load_robot("kuka_iiwa14")
    lower, upper = robot.position_limits
    assert_close(upper, np.radians([170, 120, 170, 120, 170, 120, 175]), rtol=1e-6)
    assert np.all(robot.home_configuration() == 0)
    q = robot.random_configuration(np.random.default_rng(0))
    assert np.all((lower <= q) & (q <= upper))
    assert np.array_equal(robot.random_configuration(7), robot.random_configuration(7))


def test_home_configuration_is_clamped_into_the_limits():
    text = ('<robot name="r"><link name="a"/><link name="b"><inertial><mass value="1"/>'
            '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
            '<joint name="j" type="prismatic"><parent link="a"/><child link="b"/>'
            '<limit lower="0.2" upper="0.4" effort="1" velocity="1"/></joint></robot>')
    assert casdyn.load_urdf(text).home_configuration().tolist() == [0.2]


def test_root_link_mass_is_not_a_body():
    text = ('<robot name="r"><link name="a"><inertial><mass value="50"/>'
            '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
            '<link name="b"><inertial><mass value="2"/><origin xyz="1 0 0"/>'
            '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
            '<joint name="j" type="continuous"><parent link="a"/><child link="b"/>'
            '<axis xyz="0 0 1"/></joint></robot>')
    robot = casdyn.load_urdf(text)
    assert robot.mass == 2.0 and robot.body_names == ("b",)
    assert_close(robot.center_of_mass([0.0])[0], [1, 0, 0])


def test_shipped_robots_are_installed_with_the_package():
    assert {"ur5e", "kuka_iiwa14"} <= set(casdyn.robot_names())
    import casdyn.robots as data
    assert Path(data.__file__).parent.joinpath("ur5e.urdf").is_file()


@pytest.mark.parametrize("name", ["ur5e", "kuka_iiwa14"])
def test_shipped_robot_masses_match_their_sources(name):
    masses = {"ur5e": 4 + 3.7 + 8.393 + 2.275 + 1.219 + 1.219 + 0.1879,
              "kuka_iiwa14": 5 + 4 + 4 + 3 + 2.7 + 1.7 + 1.8 + 0.3}
    assert casdyn.load_robot(name).mass == pytest.approx(masses[name])


def test_effort_and_velocity_limits_come_from_the_urdf():
    robot = casdyn.load_robot("ur5e")
    assert robot.effort_limits.tolist() == [150, 150, 150, 28, 28, 28]
    assert_close(robot.velocity_limits, np.full(6, np.pi))
    noisy = casdyn.load_urdf(NOISY)  # continuous joint with effort 5, velocity 2
    assert noisy.effort_limits.tolist() == [5] and noisy.velocity_limits.tolist() == [2]
    text = ('<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="continuous">'
            '<parent link="a"/><child link="b"/></joint></robot>')
    assert casdyn.load_urdf(text).effort_limits.tolist() == [math.inf]
