"""casdyn.interop: q, v to and from a Pinocchio model by joint name (SPEC "Exported names,
interop, named configurations"). The layout facts are written out by hand on a small robot;
on TALOS (whose joint order is not Pinocchio's), random trees and the shipped robots the
mapped state gives Pinocchio's own M, ID and FD."""

from __future__ import annotations

import sys

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close, random_state
from pinocchio_reference import Reference
from random_trees import random_urdf
from test_corpus import ROOT
from test_mimic import with_mimics

import casdyn
from casdyn.interop import from_pinocchio, to_pinocchio, velocity_map

# base -(c, continuous, z)- a -(r, revolute, y)- b -(m, mimic of r: 2 r + 0.1)- c
SMALL = """<robot name="small">
  <link name="base"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0"
    ixz="0" iyz="0"/></inertial></link>
  <link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0"
    ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0"
    ixz="0" iyz="0"/></inertial></link>
  <link name="c"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0"
    ixz="0" iyz="0"/></inertial></link>
  <joint name="c" type="continuous"><parent link="base"/><child link="a"/>
    <axis xyz="0 0 1"/></joint>
  <joint name="r" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0 1"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="m" type="revolute"><parent link="b"/><child link="c"/><origin xyz="0 0 1"/>
    <axis xyz="0 1 0"/><limit lower="-9" upper="9" effort="1" velocity="1"/>
    <mimic joint="r" multiplier="2" offset="0.1"/></joint>
</robot>"""


def _pin_model(text: str, floating_base: bool, mimic: bool = True) -> pin.Model:
    root = (pin.JointModelFreeFlyer(),) if floating_base else ()
    return pin.buildModelFromXML(text, *root, mimic=mimic)


def test_layout_facts_on_a_small_floating_robot():
    robot = casdyn.load_urdf(SMALL, floating_base=True)
    q = np.array([1.0, 2.0, 3.0, 0.5, -0.5, 0.5, 0.5, 0.3, -0.7])  # [x y z qw qx qy qz, c, r]
    v = np.arange(1.0, 9.0)  # [w (3), v (3), c, r]
    # Pinocchio: quaternion last, (cos, sin) for c, the mimic without a coordinate, [v; w]
    expected_q = [1, 2, 3, -0.5, 0.5, 0.5, 0.5, np.cos(0.3), np.sin(0.3), -0.7]
    expected_v = [4, 5, 6, 1, 2, 3, 7, 8]
    q_pin, v_pin = to_pinocchio(robot, _pin_model(SMALL, True), q, v)
    assert_close(q_pin, expected_q, 1e-15)
    assert_close(v_pin, expected_v, 1e-15)
    # the mimic as an independent joint of Pinocchio's model: 2 r + 0.1, velocity 2 r'
    expanded = _pin_model(SMALL, True, mimic=False)
    q_pin, v_pin = to_pinocchio(robot, expanded, q, v)
    assert_close(q_pin, [*expected_q, 2 * -0.7 + 0.1], 1e-15)
    assert_close(v_pin, [*expected_v, 16], 1e-15)
    assert_close(from_pinocchio(robot, expanded, q_pin, v_pin)[0], q, 1e-15)
    assert_close(from_pinocchio(robot, expanded, q_pin, v_pin)[1], v, 1e-15)
    tau_pin = np.arange(1.0, 10.0)  # the mimic's force adds, times 2, to its leader's
    assert_close(velocity_map(robot, expanded).T @ tau_pin, [4, 5, 6, 1, 2, 3, 7, 8 + 18])


def test_the_quaternion_is_normalised_and_batches_map_row_by_row():
    robot = casdyn.load_urdf(SMALL, floating_base=True)
    model = _pin_model(SMALL, True)
    q = robot.random_configuration(0, n=5)
    q[:, 3:7] *= np.array([[1e-3], [1], [7], [1e200], [1e-200]])
    v = np.random.default_rng(1).normal(size=(5, robot.nv))
    q_pin, v_pin = to_pinocchio(robot, model, q, v)
    assert q_pin.shape == (5, model.nq) and v_pin.shape == (5, model.nv)
    assert_close(np.linalg.norm(q_pin[:, 3:7], axis=1), np.ones(5), 1e-15)
    for row in range(5):
        one = to_pinocchio(robot, model, q[row], v[row])
        assert_close(q_pin[row], one[0], 0)
        assert_close(v_pin[row], one[1], 0)
    back_q, back_v = from_pinocchio(robot, model, q_pin, v_pin)
    assert_close(back_v, v, 0)
    quaternion = q[:, 3:7] / np.max(np.abs(q[:, 3:7]), axis=1, keepdims=True)
    quaternion /= np.linalg.norm(quaternion, axis=1, keepdims=True)
    assert_close(back_q, np.c_[q[:, :3], quaternion, q[:, 7:]], 1e-15)


def _assert_dynamics_agree(robot, model, seeds=range(2), aba=True):
    for seed in seeds:
        q, qd, qdd, _ = random_state(robot, seed)
        q_pin, v_pin = to_pinocchio(robot, model, q, qd)
        a_pin = to_pinocchio(robot, model, v=qdd)[1]
        data = model.createData()
        M_pin = pin.crba(model, data, q_pin)
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
        M = from_pinocchio(robot, model, v=from_pinocchio(robot, model, v=M_pin)[1].T)[1]
        assert_close(robot.mass_matrix(q), M, 1e-9)
        tau = from_pinocchio(robot, model, v=pin.rnea(model, data, q_pin, v_pin, a_pin))[1]
        assert_close(robot.inverse_dynamics(q, qd, qdd), tau, 1e-9)
        if aba and np.linalg.cond(M) < 1e10:  # a massless root link floats singular
            tau_pin = to_pinocchio(robot, model, v=tau)[1]
            back = from_pinocchio(robot, model, v=pin.aba(model, data, q_pin, v_pin, tau_pin))
            assert_close(robot.forward_dynamics(q, qd, tau), back[1], 1e-9)


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
def test_talos_whose_joint_order_is_not_pinocchios(floating_base):
    text = (ROOT / "talos_data/robots/talos_reduced.urdf").read_text()
    robot = casdyn.load_urdf(text, floating_base=floating_base)
    model = _pin_model(text, floating_base)
    pin_order = [n for n in model.names[1:] if n != "root_joint"]
    assert pin_order != [n for n in robot.joint_names if n != "floating_base"]
    _assert_dynamics_agree(robot, model, seeds=[0])


CASES = [(f"random-{seed}", random_urdf(seed, multi_dof=seed % 2 == 1)) for seed in range(4)]
CASES += [(f"mimic-{seed}", with_mimics(seed)) for seed in range(2)]
CASES += [(name, casdyn.robot_urdf(name)) for name in casdyn.robot_names()]


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("name, text", CASES, ids=[name for name, _ in CASES])
def test_mapped_state_gives_pinocchios_dynamics(name, text, floating_base):
    robot = casdyn.load_urdf(text, floating_base=floating_base)
    model = _pin_model(text, floating_base)
    # Pinocchio's ABA does not take mimic joints
    _assert_dynamics_agree(robot, model, aba=not robot.mimic_joints)


def test_a_model_of_another_robot_is_refused_naming_the_joints():
    robot = casdyn.load_robot("ur5e")
    model = _pin_model(casdyn.robot_urdf("kuka_iiwa14"), False)
    with pytest.raises(casdyn.InputError, match=r"missing from the model: .*elbow_joint"):
        to_pinocchio(robot, model, robot.home_configuration())
    with pytest.raises(casdyn.InputError, match="floating_base=True"):
        to_pinocchio(robot, _pin_model(casdyn.robot_urdf("ur5e"), True))
    with pytest.raises(casdyn.InputError, match=r"model must be a pinocchio\.Model, got Data"):
        to_pinocchio(robot, model.createData())
    with pytest.raises(casdyn.InputError, match="q must have 6 elements"):
        to_pinocchio(robot, _pin_model(casdyn.robot_urdf("ur5e"), False), np.zeros(7))


def test_without_pinocchio_the_error_says_how_to_install_it(monkeypatch):
    robot = casdyn.load_robot("ur5e")
    monkeypatch.setitem(sys.modules, "pinocchio", None)
    with pytest.raises(casdyn.CasdynError, match="pip install pin"):
        from_pinocchio(robot, None, np.zeros(6))


@pytest.mark.parametrize("seed", range(2))
def test_mimic_joints_independent_in_pinocchio_follow_their_leaders(seed):
    """A model built without mimic=True: the followers' q are set from their leaders, and
    the reduced dynamics is G^T M_pin G and G^T rnea(q_pin, G v, G a)."""
    text = with_mimics(seed)
    robot = casdyn.load_urdf(text, floating_base=True)
    model = _pin_model(text, True, mimic=False)
    assert model.nv == robot.nv + len(robot.mimic_joints)
    G = velocity_map(robot, model)
    q, qd, qdd, _ = random_state(robot, seed)
    q_pin, v_pin = to_pinocchio(robot, model, q, qd)
    data = model.createData()
    M_pin = pin.crba(model, data, q_pin)
    assert_close(robot.mass_matrix(q), G.T @ (np.triu(M_pin) + np.triu(M_pin, 1).T) @ G, 1e-9)
    tau_pin = pin.rnea(model, data, q_pin, v_pin, to_pinocchio(robot, model, v=qdd)[1])
    assert_close(robot.inverse_dynamics(q, qd, qdd), G.T @ tau_pin, 1e-9)


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("name, text", CASES, ids=[name for name, _ in CASES])
def test_the_bridge_agrees_with_the_test_oracles_own_conversion(name, text, floating_base):
    """tests/pinocchio_reference.py converts on its own (the cross-checks' oracle stays
    independent of the code under test); the two must agree."""
    robot = casdyn.load_urdf(text, floating_base=floating_base)
    reference = Reference(text, robot.joint_names, robot.body_names,
                          floating_base=floating_base, mimic_joints=robot.mimic_joints)
    assert_close(velocity_map(robot, reference.model), reference.G, 0)
    q = robot.random_configuration(7)
    assert_close(to_pinocchio(robot, reference.model, q)[0], reference.q(q), 1e-15)
