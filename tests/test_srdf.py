"""SRDF named configurations and disabled collision pairs (SPEC "Exported names, interop,
named configurations"), checked against Pinocchio's own SRDF reader on example-robot-data's
solo12 and TALOS; the shipped solo12's limits and standing pose."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close
from test_corpus import ROOT

import casdyn
from casdyn.interop import from_pinocchio

ROBOTS = {
    "solo12": ("solo_description/robots/solo12.urdf", "solo_description/srdf/solo.srdf"),
    "talos": ("talos_data/robots/talos_reduced.urdf", "talos_data/srdf/talos.srdf"),
}


def _pinocchio_references(urdf: str, srdf: str, floating_base: bool) -> tuple:
    root = (pin.JointModelFreeFlyer(),) if floating_base else ()
    model = pin.buildModelFromUrdf(str(ROOT / urdf), *root)
    pin.loadReferenceConfigurations(model, str(ROOT / srdf), False)
    return model, {entry.key(): np.array(entry.data()) for entry in model.referenceConfigurations}


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("name", ROBOTS)
def test_group_states_are_pinocchios_reference_configurations(name, floating_base):
    urdf, srdf = ROBOTS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every joint these SRDFs name exists
        robot = casdyn.load_urdf(ROOT / urdf, floating_base=floating_base, srdf=ROOT / srdf)
    model, references = _pinocchio_references(urdf, srdf, floating_base)
    expected = {"solo12": {"standing", "straight_standing"}, "talos": {"half_sitting"}}[name]
    assert set(robot.named_configurations) == set(references) == expected
    for state, q in robot.named_configurations.items():
        assert_close(q, from_pinocchio(robot, model, references[state])[0], 1e-15)
    if floating_base:  # the SRDF's quaternion [0 0 0 1] (last) is casdyn's [1 0 0 0]
        assert_close(robot.named_configurations[min(expected)][3:7], [1, 0, 0, 0], 0)


def test_disable_collisions_pairs_are_read_as_written():
    urdf, srdf = ROBOTS["talos"]
    robot = casdyn.load_urdf(ROOT / urdf, srdf=ROOT / srdf)
    text = (ROOT / srdf).read_text()
    assert len(robot.disabled_collision_pairs) == text.count("<disable_collisions") == 459
    first = text[text.index("<disable_collisions"):].split(">")[0]
    link1, link2 = robot.disabled_collision_pairs[0]
    assert f'link1="{link1}"' in first and f'link2="{link2}"' in first
    assert casdyn.load_urdf(ROOT / urdf).disabled_collision_pairs == ()


def test_shipped_solo12_has_odri_limits_and_its_own_standing_pose():
    robot = casdyn.load_robot("solo12", floating_base=True)
    lower, upper = robot.position_limits
    # ODRI's Solo12 driver configuration: HAA +-0.9, HFE +-1.45, KFE +-2.8 rad, 80 rad/s
    assert_close(upper[7:], np.tile([0.9, 1.45, 2.8], 4), 0)
    assert_close(lower[7:], -np.tile([0.9, 1.45, 2.8], 4), 0)
    assert_close(robot.velocity_limits[6:], np.full(12, 80.0), 0)
    assert_close(robot.effort_limits[6:], np.full(12, 0.025 * 9 * 12), 1e-15)
    # the same poses as example-robot-data's SRDF, read by Pinocchio
    urdf, srdf = ROBOTS["solo12"]
    model, references = _pinocchio_references(urdf, srdf, True)
    for state in ("standing", "straight_standing"):
        q = robot.named_configurations[state]
        assert_close(q, from_pinocchio(robot, model, references[state])[0], 1e-15)
        assert np.all(q[7:] >= lower[7:]) and np.all(q[7:] <= upper[7:])
    fixed = casdyn.load_robot("solo12")
    assert_close(fixed.named_configurations["standing"], references["standing"][7:], 0)
    assert len(fixed.disabled_collision_pairs) == 12
    assert casdyn.load_robot("ur5e").named_configurations == {}


SMALL = """<robot name="small"><link name="a"/><link name="b"/><link name="c"/>
  <joint name="c" type="continuous"><parent link="a"/><child link="b"/></joint>
  <joint name="p" type="planar"><parent link="b"/><child link="c"/></joint></robot>"""


def test_continuous_and_planar_values_in_both_layouts_and_home_for_the_rest():
    srdf = """<robot name="small">
      <group_state name="angle" group="all"><joint name="c" value="0.5"/></group_state>
      <group_state name="cos_sin" group="all"><joint name="c" value="0 -2"/>
        <joint name="p" value="1 2 0 1"/></group_state>
      <group_state name="planar" group="all"><joint name="p" value="1 2 3"/></group_state>
    </robot>"""
    robot = casdyn.load_urdf(SMALL, srdf=srdf)
    named = robot.named_configurations
    assert_close(named["angle"], [0.5, 0, 0, 0], 0)
    assert_close(named["cos_sin"], [-np.pi / 2, 1, 2, np.pi / 2], 1e-15)
    assert_close(named["planar"], [0, 1, 2, 3], 0)
    named["angle"][0] = 9  # a copy
    assert robot.named_configurations["angle"][0] == 0.5
    again = pickle.loads(pickle.dumps(robot))
    assert_close(again.named_configurations["planar"], [0, 1, 2, 3], 0)


def test_unknown_joints_warn_and_bad_values_are_refused_by_name():
    unknown = """<robot name="x"><group_state name="s" group="g">
      <joint name="c" value="0.5"/><joint name="elbow" value="1"/></group_state></robot>"""
    with pytest.warns(casdyn.ModelWarning, match="group_state 's' .* ignored: elbow"):
        robot = casdyn.load_urdf(SMALL, srdf=unknown)
    assert_close(robot.named_configurations["s"], [0.5, 0, 0, 0], 0)
    for value, message in [("1 2", "joint 'p': expected 3 .* got 2"),
                           ("1 x 3", "joint 'p': value '1 x 3' is not numbers"),
                           ("1 nan 3", "must be finite")]:
        srdf = f"""<robot name="x"><group_state name="s" group="g">
          <joint name="p" value="{value}"/></group_state></robot>"""
        with pytest.raises(casdyn.InputError, match=message):
            casdyn.load_urdf(SMALL, srdf=srdf)
    with pytest.raises(casdyn.InputError, match=r"srdf .*malformed XML"):
        casdyn.load_urdf(SMALL, srdf="<robot>")
    with pytest.raises(casdyn.InputError, match=r"cannot read 'no/such\.srdf'"):
        casdyn.load_urdf(SMALL, srdf="no/such.srdf")


LIMITED = """<robot name="limited"><link name="base"/><link name="upper_arm"/><link name="hand"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper_arm"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1.5" effort="1" velocity="1"/></joint>
  <joint name="wrist" type="continuous"><parent link="upper_arm"/><child link="hand"/></joint>
</robot>"""


def _srdf(body: str) -> str:
    return f'<robot name="limited">{body}</robot>'


def test_disable_collisions_naming_a_link_the_robot_lacks_warns_with_close_names():
    srdf = _srdf('<disable_collisions link1="base" link2="upper_arm" reason="Adjacent"/>'
                 '<disable_collisions link1="upper_arm" link2="hadn" reason="Adjacent"/>')
    with pytest.warns(casdyn.ModelWarning, match=r"disable_collisions names links robot "
                      r"'limited' does not have: 'hadn' \(in 1 pair\(s\); did you mean "
                      r"'hand'\?\); those 1 pair\(s\) disable nothing"):
        robot = casdyn.load_urdf(LIMITED, srdf=srdf)
    assert robot.disabled_collision_pairs == (("base", "upper_arm"), ("upper_arm", "hadn"))


def test_a_group_state_name_given_twice_warns_and_the_later_is_kept():
    srdf = _srdf('<group_state name="home" group="arm"><joint name="shoulder" value="0.5"/>'
                 '</group_state><group_state name="home" group="hand">'
                 '<joint name="wrist" value="2"/></group_state>')
    with pytest.warns(casdyn.ModelWarning, match="group_state 'home' is given twice "
                      r"\(groups 'arm' and 'hand'\); the later one is kept"):
        robot = casdyn.load_urdf(LIMITED, srdf=srdf)
    assert_close(robot.named_configurations["home"], [0, 2], 0)


def test_a_named_configuration_outside_the_limits_warns_naming_joint_value_and_limits():
    srdf = _srdf('<group_state name="reach" group="arm"><joint name="shoulder" value="2"/>'
                 '<joint name="wrist" value="7"/></group_state>')
    with pytest.warns(casdyn.ModelWarning, match=r"group_state 'reach' is outside the position "
                      r"limits of joint 'shoulder' \(value 2, limits -1\.\.1\.5\); kept as "
                      r"written") as record:
        robot = casdyn.load_urdf(LIMITED, srdf=srdf)
    assert "wrist" not in " ".join(str(w.message) for w in record)  # continuous: no limits
    assert_close(robot.named_configurations["reach"], [2, 7], 0)
    at_the_limits = _srdf('<group_state name="a" group="g"><joint name="shoulder" value="1.5"/>'
                          '</group_state><group_state name="b" group="g">'
                          '<joint name="shoulder" value="-1"/></group_state>')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        casdyn.load_urdf(LIMITED, srdf=at_the_limits)
