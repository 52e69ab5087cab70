"""``casdyn demo solo12``: the free quadruped standing on its four feet. Its forces and torques
are checked against Pinocchio's RNEA with those forces applied (the robot in equilibrium),
and its printout against Pinocchio's mass."""

from __future__ import annotations

import re

import numpy as np
import pinocchio as pin
from conftest import assert_close

import casdyn
from casdyn.cli import main
from casdyn.demo import standing
from casdyn.interop import from_pinocchio, to_pinocchio

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")


def _pinocchio_solo12():
    model = pin.buildModelFromXML(casdyn.robot_urdf("solo12"), pin.JointModelFreeFlyer())
    return model, model.createData()


def test_standing_forces_and_torques_hold_the_robot_still():
    robot = casdyn.load_robot("solo12", floating_base=True)
    q = robot.named_configurations["standing"]
    forces, tau = standing(robot, q, FEET)
    model, data = _pinocchio_solo12()
    mass = sum(inertia.mass for inertia in model.inertias)
    assert_close(forces.sum(axis=0), [0, 0, mass * 9.81], 1e-9)
    # Pinocchio's RNEA at rest with the foot forces applied: no force left on the free
    # flyer, the joint torques are the demo's
    q_pin = to_pinocchio(robot, model, q)[0]
    pin.framesForwardKinematics(model, data, q_pin)
    fext = [pin.Force.Zero() for _ in range(model.njoints)]
    for foot, force in zip(FEET, forces, strict=True):
        frame = model.frames[model.getFrameId(foot)]
        point = data.oMf[model.getFrameId(foot)].translation
        world = pin.Force(force, np.cross(point, force))  # about the world origin
        fext[frame.parentJoint] += data.oMi[frame.parentJoint].actInv(world)
    zero = np.zeros(model.nv)
    tau_pin = pin.rnea(model, data, q_pin, zero, zero, pin.StdVec_Force(fext))
    assert_close(from_pinocchio(robot, model, v=tau_pin)[1], np.r_[np.zeros(6), tau], 1e-9)
    assert np.all(np.abs(tau) < robot.effort_limits[6:])


def test_demo_solo12_prints_the_standing_numbers(capsys):
    assert main(["demo", "solo12"]) == 0
    out = capsys.readouterr().out
    assert "floating base" in out and "pose 'standing'" in out
    model, _ = _pinocchio_solo12()
    mass = sum(inertia.mass for inertia in model.inertias)
    assert f"{mass:.4f} kg, weight m g = {mass * 9.81:.6f} N" in out
    printed = {foot: np.array(re.search(rf"{foot}\s+f = \[(.*?)\] N", out).group(1).split(),
                              dtype=float) for foot in FEET}
    robot = casdyn.load_robot("solo12", floating_base=True)
    forces, _ = standing(robot, robot.named_configurations["standing"], FEET)
    for foot, force in zip(FEET, forces, strict=True):
        assert_close(printed[foot], force, 1e-6)  # printed to 6 decimals
    total = np.array(re.search(r"sum\s+f = \[(.*?)\] N", out).group(1).split(), dtype=float)
    assert_close(total, [0, 0, mass * 9.81], 1e-6)
    qdd = float(re.search(r"max \|qdd\| = (\S+),", out).group(1))
    assert qdd < 1e-9
