"""Loading URDF files: what is read, what is ignored, and the tree's names and limits."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings
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


# --- real files casdyn once refused or got wrong ---------------------------------------------
def _one_link(inertial: str, joint_extra: str = '<axis xyz="0 0 1"/>', kind="continuous"):
    return (f'<robot name="r"><link name="a"/><link name="b">{inertial}</link>'
            f'<joint name="j" type="{kind}"><parent link="a"/><child link="b"/>'
            f"{joint_extra}</joint></robot>")


def test_a_massless_link_keeps_its_rotational_inertia():
    """mass="0" with an inertia tensor (bolt, pybullet's panda): the tensor stays, as in
    Pinocchio; it used to be dropped with the mass."""
    from pinocchio_reference import Reference

    text = _one_link('<inertial><origin xyz="0.3 0 0" rpy="0.2 0.4 0.1"/><mass value="0"/>'
                     '<inertia ixx="0.2" ixy="0.01" ixz="0" iyy="0.3" iyz="0.02" izz="0.4"/>'
                     "</inertial>", '<axis xyz="0.3 0.4 0.5"/>')
    robot = casdyn.load_urdf(text)
    reference = Reference(text, robot.joint_names, robot.body_names)
    assert robot.mass_matrix([0.0])[0, 0] > 0.2
    assert_close(robot.mass_matrix([0.5]), reference.mass_matrix([0.5]))
    assert_close(robot.forward_dynamics([0.5], [1.0], [2.0]),
                 reference.forward_dynamics([0.5], [1.0], [2.0], np.zeros((1, 6))))


def test_an_inertia_that_is_not_positive_definite_loads_with_a_warning_naming_the_link():
    text = _one_link('<inertial><mass value="1"/>'
                     '<inertia ixx="0.1" ixy="0.5" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>'
                     "</inertial>")
    with pytest.warns(casdyn.ModelWarning, match=r"<link name='b'>.*not positive semi-definite"):
        robot = casdyn.load_urdf(text)
    assert robot.mass_matrix([0.0])[0, 0] == pytest.approx(0.1)  # used as given


def test_limits_with_lower_above_upper_mean_unlimited_with_a_warning():
    text = _one_link('<inertial><mass value="1"/><origin xyz="1 0 0"/>'
                     '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>',
                     '<axis xyz="0 0 1"/><limit lower="1" upper="-1" effort="5" velocity="2"/>',
                     kind="revolute")
    with pytest.warns(casdyn.ModelWarning, match=r"<joint name='j'>.*no position limit"):
        robot = casdyn.load_urdf(text)
    assert robot.position_limits[0][0] == -math.inf and robot.position_limits[1][0] == math.inf
    assert robot.effort_limits.tolist() == [5]


def test_a_mimic_of_an_unknown_joint_is_independent_with_a_warning():
    """As Pinocchio without mimic=True (alex_psyonic_hands in example-robot-data has one)."""
    with pytest.warns(casdyn.ModelWarning, match=r"<joint name='j'>: the joint it mimics, 'k', "
                                                 r"is not defined.*independent"):
        robot = casdyn.load_urdf(_one_link('<inertial><mass value="1"/><inertia ixx="1" '
                                           'ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>',
                                           '<axis xyz="0 0 1"/><mimic joint="k"/>'))
    assert robot.joint_names == ("j",) and robot.mimic_joints == ()


def test_a_fixed_joint_may_carry_a_mimic_tag():
    """TALOS's grippers: a mimic tag on a fixed joint changes nothing."""
    text = _one_link("", '<mimic joint="k"/>', kind="fixed")
    assert casdyn.load_urdf(text).nq == 0


def test_clean_files_load_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in casdyn.robot_names():
            casdyn.load_robot(name)


@pytest.mark.parametrize("before", ["\ufeff", "\n\n  ", "\ufeff\n"])
def test_a_byte_order_mark_or_white_space_before_the_declaration_loads(tmp_path, before):
    text = casdyn.robot_urdf("planar_2link")
    assert text.startswith("<?xml")
    expected = casdyn.load_urdf(text).mass_matrix([0.1, 0.2])
    assert_close(casdyn.load_urdf(before + text).mass_matrix([0.1, 0.2]), expected)
    path = tmp_path / "arm.urdf"
    path.write_bytes((before + text).encode("utf-8"))
    assert_close(casdyn.load_urdf(path).mass_matrix([0.1, 0.2]), expected)


def test_line_numbers_count_the_skipped_white_space():
    with pytest.raises(casdyn.URDFError, match="line 4"):
        casdyn.load_urdf('\n\n<?xml version="1.0"?>\n<robot name="r"><link name="a">'
                         '<inertial><mass value="heavy"/></inertial></link></robot>')


@pytest.mark.parametrize("source", ["x" * 5000, "robot.urdf\0", "not a file"])
def test_a_string_that_is_neither_xml_nor_a_file_is_a_urdf_error(source):
    with pytest.raises(casdyn.URDFError) as info:
        casdyn.load_urdf(source)
    assert len(str(info.value)) < 400


@pytest.mark.slow
def test_a_chain_of_two_thousand_links_loads():
    inertial = ('<inertial><mass value="1"/><origin xyz="0.05 0 0"/>'
                '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>')
    links = ['<link name="l0"/>'] + [f'<link name="l{i}">{inertial}</link>'
                                     for i in range(1, 2001)]
    joints = [f'<joint name="j{i}" type="continuous"><parent link="l{i - 1}"/>'
              f'<child link="l{i}"/><origin xyz="0.1 0 0"/><axis xyz="0 0 1"/></joint>'
              for i in range(1, 2001)]
    robot = casdyn.load_urdf('<robot name="long">' + "".join(links + joints) + "</robot>")
    assert robot.nq == 2000
    assert_close(robot.get_transform(robot.home_configuration(), "l2000")[:3, 3], [200, 0, 0])


def test_integrators_come_with_a_plain_import():
    """The README's ``casdyn.integrators.rk4_step`` after ``import casdyn`` only."""
    code = ("import casdyn; robot = casdyn.load_robot('planar_2link'); "
            "print(casdyn.integrators.rk4_step(robot, 0.01).name())")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "rk4_step", result.stderr
