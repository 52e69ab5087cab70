"""Identification (SPEC "Identification"): inertial parameters and the joint-torque regressor
against Pinocchio's ``dynamicParameters`` and ``computeJointTorqueRegressor``, parametric
dynamics against Pinocchio's with other inertias, and base parameters that are identifiable
and complete."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close, case_id, load_case, random_state
from pinocchio_reference import Reference

import casdyn

CASES = ([("shipped", name, fb) for name in casdyn.robot_names() for fb in (False, True)]
         + [("random", seed, fb) for seed in range(4) for fb in (False, True)]
         + [("corpus", "panda_description/urdf/panda.urdf", False)])  # a mimic finger
SINGULAR = ("torso_two_arms", "planar_2link")  # M singular on a floating base (FD refused)


@pytest.fixture(params=CASES, ids=case_id, scope="module")
def loaded(request):
    return (*load_case(request.param), request.param)


def _columns(reference, blocks) -> list[int]:
    return [10 * (j - 1) + k for j in blocks for k in range(10)]


def test_inertial_parameters_are_pinocchios_dynamic_parameters(loaded):
    robot, reference, _ = loaded
    expected = np.concatenate([reference.model.inertias[j].toDynamicParameters()
                               for j in reference.parameter_blocks(robot)])
    assert_close(robot.inertial_parameters(), expected)


def test_the_regressor_is_pinocchios_and_reproduces_inverse_dynamics(loaded):
    robot, reference, _ = loaded
    q, qd, qdd, _ = random_state(robot, 21)
    Y = robot.regressor(q, qd, qdd)
    assert Y.shape == (robot.nv, 10 * len(robot.model.joints))
    assert_close(Y @ robot.inertial_parameters(), robot.inverse_dynamics(q, qd, qdd))
    if reference.mimic:  # Pinocchio 4.1's regressor refuses mimic joints; Y pi == ID above
        return
    Y_pin = pin.computeJointTorqueRegressor(reference.model, reference.data, reference.q(q),
                                            reference.v(qd), reference.v(qdd))
    columns = _columns(reference, reference.parameter_blocks(robot))
    assert_close(Y, reference.from_v(Y_pin[:, columns]))


def test_parametric_functions_take_any_parameters(loaded):
    """At ``inertial_parameters()`` the parametric Functions equal the plain ones; at other
    (physical) parameters they equal Pinocchio's dynamics with those inertias."""
    robot, reference, (kind, key, floating_base) = loaded
    q, qd, x, fext = random_state(robot, 22)
    pi = robot.inertial_parameters()
    ID = robot.function("inverse_dynamics", parameters=True)
    M = robot.function("mass_matrix", parameters=True)
    assert ID.name_in() == ["q", "qd", "qdd", "fext", "pi"]
    assert_close(np.array(ID(q, qd, x, fext, pi)).ravel(), robot.inverse_dynamics(q, qd, x, fext))
    assert_close(np.array(M(q, pi)), robot.mass_matrix(q))
    # other bodies: each scaled and shifted, kept physical
    rng = np.random.default_rng(23)
    blocks = reference.parameter_blocks(robot)
    other = []
    for j in blocks:
        inertia = reference.model.inertias[j]
        moved = pin.Inertia(inertia.mass * rng.uniform(0.5, 2.0) + 0.1,
                            inertia.lever + rng.normal(scale=0.05, size=3),
                            inertia.inertia * rng.uniform(0.5, 2.0) + 0.01 * np.eye(3))
        reference.model.inertias[j] = moved
        other.append(moved.toDynamicParameters())
    try:
        other = np.concatenate(other)
        reference.data = reference.model.createData()
        assert_close(np.array(ID(q, qd, x, fext, other)).ravel(),
                     reference.inverse_dynamics(q, qd, x, fext))
        assert_close(np.array(M(q, other)), reference.mass_matrix(q))
        if not (floating_base and kind == "shipped" and key in SINGULAR):
            FD = robot.function("forward_dynamics", parameters=True)
            assert_close(np.array(FD(q, qd, x, fext, other)).ravel(),
                         reference.forward_dynamics(q, qd, x, fext))
    finally:
        for j, value in zip(blocks, np.split(robot.inertial_parameters(), len(blocks)),
                            strict=True):
            reference.model.inertias[j] = pin.Inertia.FromDynamicParameters(value)
        reference.data = reference.model.createData()


def test_base_parameters_are_identifiable_and_complete(loaded):
    """``Y = Y_b P`` at fresh states, and the base regressor's rank is the numerical rank of
    regressors stacked at 50 random states (a seed of its own)."""
    robot, _, _ = loaded
    P, beta = robot.base_parameters()
    assert P.shape == (len(beta), len(robot.inertial_parameters()))
    assert_close(beta, P @ robot.inertial_parameters())
    rng = np.random.default_rng(24)
    stacked, stacked_base = [], []
    for _ in range(50):
        q, qd, qdd, _ = random_state(robot, int(rng.integers(1 << 30)))
        Y, Y_b = robot.regressor(q, qd, qdd), robot.base_regressor(q, qd, qdd)
        assert_close(Y_b @ P, Y)
        assert_close(Y_b @ beta, robot.inverse_dynamics(q, qd, qdd))
        stacked.append(Y)
        stacked_base.append(Y_b)
    W, W_b = np.vstack(stacked), np.vstack(stacked_base)
    singular = np.linalg.svd(W, compute_uv=False)
    rank = int(np.sum(singular > 1e-8 * singular[0])) if singular.size else 0
    assert len(beta) == rank == np.linalg.matrix_rank(W_b)


def test_the_number_of_base_parameters_is_the_rank_of_pinocchios_regressors():
    """An independent count for the UR5e: the rank of Pinocchio's regressors stacked at 40
    random states."""
    robot = casdyn.load_robot("ur5e")
    reference = Reference(casdyn.robot_urdf("ur5e"), robot.joint_names, robot.body_names)
    rng = np.random.default_rng(25)
    rows = []
    for _ in range(40):
        q, qd, qdd, _ = random_state(robot, int(rng.integers(1 << 30)))
        rows.append(pin.computeJointTorqueRegressor(
            reference.model, reference.data, reference.q(q), reference.v(qd),
            reference.v(qdd)).copy())
    assert np.linalg.matrix_rank(np.vstack(rows), tol=1e-8) == len(robot.base_parameters()[1])


def _with_friction(text: str, damping: float = 0.4, friction: float = 1.3) -> str:
    """The URDF with ``<dynamics damping friction>`` on every revolute joint."""
    import re

    return re.sub(r'(<joint name="[^"]+" type="revolute">)',
                  rf'\1<dynamics damping="{damping}" friction="{friction}"/>', text)


ARMATURE = {"shoulder_lift_joint": 0.2, "wrist_2_joint": 0.05}


@pytest.fixture(scope="module")
def rubbing():
    """The UR5e with friction on every joint and rotor inertia on two, and without."""
    text = _with_friction(casdyn.robot_urdf("ur5e"))
    return (casdyn.load_urdf(text, joint_friction=True, armature=ARMATURE),
            casdyn.load_urdf(text))


def test_joint_friction_adds_viscous_and_smoothed_coulomb_torques(rubbing):
    robot, plain = rubbing
    q, qd, qdd, fext = random_state(robot, 31)
    qd[0] = 2e-4  # inside the smoothing width: tanh, not sign
    friction = 0.4 * qd + 1.3 * np.tanh(qd / 1e-3)
    armature = np.array([ARMATURE.get(name, 0.0) for name in robot.joint_names]) * qdd
    assert_close(robot.inverse_dynamics(q, qd, qdd, fext),
                 plain.inverse_dynamics(q, qd, qdd, fext) + friction + armature)
    assert_close(robot.bias_force(q, qd), plain.bias_force(q, qd) + friction)
    assert_close(robot.velocity_product(q, qd), plain.velocity_product(q, qd))
    tau = robot.inverse_dynamics(q, qd, qdd, fext)
    assert_close(robot.forward_dynamics(q, qd, tau, fext), qdd)
    # without joint_friction the URDF's <dynamics> changes nothing (SPEC: opt-in)
    assert_close(plain.inverse_dynamics(q, qd, qdd), casdyn.load_robot("ur5e").inverse_dynamics(
        q, qd, qdd))


def test_armature_is_pinocchios(rubbing):
    robot, _ = rubbing
    reference = Reference(casdyn.robot_urdf("ur5e"), robot.joint_names, robot.body_names)
    armature = np.zeros(reference.model.nv)
    for name, value in ARMATURE.items():
        armature[reference.model.joints[reference.model.getJointId(name)].idx_v] = value
    reference.model.armature = armature
    reference.data = reference.model.createData()
    plain = casdyn.load_robot("ur5e", armature=ARMATURE)
    q, qd, x, fext = random_state(plain, 32)
    assert_close(plain.mass_matrix(q), reference.mass_matrix(q))
    assert_close(plain.inverse_dynamics(q, qd, x, fext), reference.inverse_dynamics(q, qd, x, fext))
    assert_close(plain.forward_dynamics(q, qd, x, fext), reference.forward_dynamics(q, qd, x, fext))


def test_the_regressor_has_friction_and_armature_columns(rubbing):
    """After the 10 per joint: (qd, tanh(qd / eps)) per joint, then qdd per joint."""
    robot, _ = rubbing
    q, qd, qdd, _ = random_state(robot, 33)
    Y, pi = robot.regressor(q, qd, qdd), robot.inertial_parameters()
    n = robot.nv
    assert Y.shape == (n, 60 + 3 * n) and pi.shape == (60 + 3 * n,)
    assert_close(pi[60:], np.r_[np.tile([0.4, 1.3], n),
                                [ARMATURE.get(name, 0.0) for name in robot.joint_names]])
    assert_close(Y[:, 60 : 60 + 2 * n : 2], np.diag(qd))
    assert_close(Y[:, 61 : 60 + 2 * n : 2], np.diag(np.tanh(qd / 1e-3)))
    assert_close(Y[:, 60 + 2 * n :], np.diag(qdd))
    assert_close(Y @ pi, robot.inverse_dynamics(q, qd, qdd))
    ID = robot.function("inverse_dynamics", parameters=True)
    other = pi * np.random.default_rng(34).uniform(0.5, 1.5, size=pi.shape)
    assert_close(np.array(ID(q=q, qd=qd, qdd=qdd, pi=other)["tau"]).ravel(), Y @ other)
    FD = robot.function("forward_dynamics", parameters=True)
    tau = Y @ other
    assert_close(np.array(FD(q=q, qd=qd, tau=tau, pi=other)["qdd"]).ravel(), qdd)
    Y_b, P = robot.base_regressor(q, qd, qdd), robot.base_parameters()[0]
    assert_close(Y_b @ P, Y)


def test_locked_robots_keep_their_friction_and_armature(rubbing):
    robot, _ = rubbing
    locked = robot.locked({"wrist_3_joint": 0.4})
    q, qd, qdd, _ = random_state(robot, 35)
    q[5], qd[5], qdd[5] = 0.4, 0.0, 0.0
    assert_close(locked.inverse_dynamics(q[:5], qd[:5], qdd[:5]),
                 robot.inverse_dynamics(q, qd, qdd)[:5])


@pytest.mark.parametrize("options, message", [
    ({"armature": {"shoulder_lift": 0.1}}, "shoulder_lift_joint"),
    ({"armature": {"elbow_joint": -1.0}}, ">= 0"),
    ({"armature": [0.1] * 6}, "dict"),
    ({"joint_friction": "yes"}, "True or False"),
    ({"friction_smoothing": 0.0}, "positive"),
])
def test_bad_friction_or_armature_options_are_input_errors(options, message):
    with pytest.raises(casdyn.InputError, match=message):
        casdyn.load_robot("ur5e", **options)


def test_a_negative_urdf_damping_is_a_urdf_error():
    text = _with_friction(casdyn.robot_urdf("ur5e"), damping=-0.1)
    with pytest.raises(casdyn.URDFError, match="must not be negative"):
        casdyn.load_urdf(text, joint_friction=True)


def test_casdyn_info_shows_friction_and_armature(tmp_path):
    from casdyn.cli import info

    path = tmp_path / "rubbing.urdf"
    path.write_text(_with_friction(casdyn.robot_urdf("ur5e")))
    shown = info(casdyn.load_urdf(str(path), joint_friction=True, armature=ARMATURE))
    assert "damping  friction  armature" in shown and "joint friction on" in shown
    assert "not used" in info(casdyn.load_urdf(str(path)))


def test_a_robot_without_joints_has_no_parameters_and_a_free_body_ten():
    body = ('<robot name="a"><link name="b"><inertial><mass value="2"/><inertia ixx="1" '
            'iyy="2" izz="3" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>')
    welded = casdyn.load_urdf(body)
    assert welded.inertial_parameters().shape == (0,)
    assert welded.base_parameters()[0].shape == (0, 0)
    free = casdyn.load_urdf(body, floating_base=True)
    assert_close(free.inertial_parameters(), [2, 0, 0, 0, 1, 0, 2, 0, 0, 3])
    assert len(free.base_parameters()[1]) == 10  # a free body shows every parameter
