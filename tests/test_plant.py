"""casdyn.plant.MujocoPlant: MuJoCo's simulation of a casdyn robot agrees with casdyn's own
model (states both ways, kinetic energy, accelerations under torques), on a floating and a
fixed base."""

from __future__ import annotations

import re

import mujoco
import numpy as np
import pytest

import casdyn
from casdyn.errors import InputError
from casdyn.plant import MujocoPlant, to_casdyn, to_mujoco

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")


@pytest.fixture(scope="module", params=["solo12", "ur5e"])
def case(request):
    floating = request.param == "solo12"
    robot = casdyn.load_robot(request.param, floating_base=floating)
    return robot, MujocoPlant(robot, feet=FEET if floating else (), floor=floating)


def random_state(robot, seed):
    rng = np.random.default_rng(seed)
    q = robot.random_configuration(rng)
    if robot.floating_base:
        q[2] = 2.0  # in the air: no contact
    return np.r_[q, rng.normal(size=robot.nv)]


def test_states_round_trip(case):
    robot, plant = case
    for seed in range(5):
        x = random_state(robot, seed)
        plant.set_state(x)
        assert np.allclose(plant.state(), x, rtol=0, atol=1e-14)
        qpos, qvel = to_mujoco(robot, x)
        assert np.allclose(to_casdyn(robot, qpos, qvel), x, atol=1e-14)


def test_kinetic_energy_agrees(case):
    """Same inertias and the same meaning of the velocities."""
    robot, plant = case
    plant.model.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    for seed in range(5):
        x = random_state(robot, seed)
        plant.set_state(x)
        mujoco.mj_energyVel(plant.model, plant.data)
        q, v = x[: robot.nq], x[robot.nq :]
        expected = 0.5 * v @ robot.mass_matrix(q) @ v
        assert plant.data.energy[1] == pytest.approx(expected, rel=1e-12)


def test_joint_accelerations_under_torques_agree(case):
    """MuJoCo's forward dynamics against casdyn's, in the air, for random motor torques."""
    robot, plant = case
    rng = np.random.default_rng(7)
    for seed in range(5):
        x = random_state(robot, seed)
        plant.set_state(x)
        tau = rng.uniform(-1, 1, len(plant.actuated))
        plant.data.ctrl[:] = tau
        mujoco.mj_forward(plant.model, plant.data)
        q, v = x[: robot.nq], x[robot.nq :]
        full = np.zeros(robot.nv)
        full[robot.nv - len(tau) :] = tau
        qdd = np.asarray(robot.forward_dynamics(q, v, full)).ravel()
        joints = slice(6, None) if robot.floating_base else slice(None)
        assert np.allclose(plant.data.qacc[joints], qdd[joints], rtol=1e-9, atol=1e-9)


def test_step_and_errors():
    robot = casdyn.load_robot("solo12", floating_base=True)
    plant = MujocoPlant(robot, feet={"FL_FOOT": (0.02, 0.01)})
    plant.set_state(np.r_[robot.home_configuration(), np.zeros(robot.nv)])
    plant.step(np.zeros(12), steps=3)
    assert plant.time == pytest.approx(0.003)
    with pytest.raises(InputError, match=re.escape("step: expected 12 torques")):
        plant.step(np.zeros(11))
    with pytest.raises(InputError, match=re.escape("set_state: expected 37 finite numbers")):
        plant.set_state(np.zeros(36))
    with pytest.raises(InputError, match="feet: unknown body 'FL_FOT'; did you mean 'FL_FOOT'"):
        MujocoPlant(robot, feet=["FL_FOT"])
    with pytest.raises(InputError, match="actuated: unknown joint 'FL_HA'"):
        MujocoPlant(robot, actuated=["FL_HA"])
    text = casdyn.robot_urdf("ur5e").replace('name="ur5e"', 'name="my_arm"')
    mine = casdyn.load_urdf(text)
    with pytest.raises(InputError, match="MujocoPlant: give the URDF of 'my_arm'"):
        MujocoPlant(mine)
    assert MujocoPlant(mine, text, floor=False).model.nu == 6


def test_a_robot_with_locked_joints():
    """Joints locked at zero are fixed in the plant; locked elsewhere, the plant's bodies
    would be elsewhere than casdyn's, which it refuses."""
    from casdyn.errors import CasdynError

    robot = casdyn.load_robot("ur5e")
    locked = robot.locked({"wrist_3_joint": 0.0, "elbow_joint": 0.0})
    plant = MujocoPlant(locked, casdyn.robot_urdf("ur5e"), floor=False)
    assert plant.model.njnt == 4 and plant.model.nu == 4
    with pytest.raises(CasdynError, match=r"is .* m from where casdyn puts it"):
        MujocoPlant(robot.locked({"elbow_joint": 0.5}), casdyn.robot_urdf("ur5e"), floor=False)
