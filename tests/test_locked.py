"""robot.locked({...}) against Pinocchio's buildReducedModel, and a floating robot with every
joint locked against the Newton-Euler equations of one rigid body."""

from __future__ import annotations

import warnings

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close, random_state
from pinocchio_reference import Reference, assert_agrees
from random_trees import random_urdf
from test_corpus import ROOT

import casdyn
from casdyn.functions.stages import singular_joints

PANDA = ROOT / "panda_description/urdf/panda.urdf"


def reduced_reference(text: str, robot, locked: casdyn.RigidBodyTree, positions: dict,
                      floating_base: bool) -> Reference:
    """Pinocchio's model of ``text`` with the joints of ``positions`` (and mimic joints of
    locked leaders) locked, by buildReducedModel."""
    root = (pin.JointModelFreeFlyer(),) if floating_base else ()
    full = pin.buildModelFromXML(text, *root)
    reference = Reference(text, robot.joint_names + tuple(m[0] for m in robot.mimic_joints),
                          robot.body_names, floating_base=floating_base, model=full)
    q = np.array(robot.home_configuration(), dtype=float)
    names = list(positions)
    for joint in robot.model.coordinate_joints:
        if joint.name in positions:
            q[joint.idx_q] = positions[joint.name]
    index = {joint.name: joint.idx_q for joint in robot.model.coordinate_joints}
    q_full = np.r_[q, [k * q[index[leader]] + b for _, leader, k, b in robot.mimic_joints]]
    names += [m[0] for m in robot.mimic_joints if m[1] in positions]
    ids = [full.getJointId(name) for name in names]
    reduced = pin.buildReducedModel(full, ids, reference.q(q_full))
    return Reference(None, locked.joint_names, locked.body_names, floating_base=floating_base,
                     model=reduced)


def check(locked: casdyn.RigidBodyTree, reference: Reference, seed: int = 0):
    assert_agrees(locked, reference, random_state(locked, seed))


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
def test_panda_with_fingers_and_an_elbow_locked(floating_base):
    robot = casdyn.load_urdf(PANDA, floating_base=floating_base)
    positions = {"panda_finger_joint1": 0.02, "panda_joint4": -1.2}
    locked = robot.locked(positions)
    assert locked.nv == robot.nv - 2 and locked.mimic_joints == ()
    assert locked.body_names == robot.body_names
    assert "panda_joint4" not in locked.joint_names
    check(locked, reduced_reference(PANDA.read_text(), robot, locked, positions,
                                    floating_base))


@pytest.mark.parametrize("seed", range(4))
def test_random_trees_with_joints_locked(seed):
    text = random_urdf(seed, n_links=6 + 2 * seed)
    robot = casdyn.load_urdf(text)
    rng = np.random.default_rng(seed)
    q = robot.random_configuration(rng)
    chosen = rng.choice(robot.nq, size=max(1, robot.nq // 3), replace=False)
    positions = {robot.joint_names[i]: q[i] for i in chosen}
    locked = robot.locked(positions)
    assert locked.nq == robot.nq - len(chosen)
    check(locked, reduced_reference(text, robot, locked, positions, False), seed)


def test_romeo_with_its_massless_hand_joints_locked_has_forward_dynamics():
    path = ROOT / "romeo_description/urdf/romeo.urdf"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", casdyn.ModelWarning)  # see test_loading.py
        robot = casdyn.load_urdf(path, floating_base=True)
    massless = singular_joints(robot.model)
    assert massless
    with pytest.raises(casdyn.ModelError):
        robot.forward_dynamics()
    locked = robot.locked({name: 0.0 for name in massless if name in robot.joint_names})
    q, qd, tau, fext = random_state(locked, 1)
    qdd = locked.forward_dynamics(q, qd, tau, fext)
    assert_close(locked.inverse_dynamics(q, qd, qdd, fext), tau, rtol=1e-8)


def test_every_joint_locked_is_one_rigid_body():
    """Newton-Euler in the root frame, with the mass, centre of mass and inertia summed
    from the URDF's links at their (locked) poses: f = m (dv + dw x c + w x (v + w x c)
    - R^T g), n = Ic dw + w x Ic w + c x f."""
    robot = casdyn.load_robot("ur5e", floating_base=True)
    home = robot.home_configuration()
    rng = np.random.default_rng(4)
    angles = rng.uniform(-2, 2, size=robot.nv - 6)
    body = robot.locked(dict(zip(robot.joint_names[1:], angles, strict=True)))
    assert body.nq == 7 and body.nv == 6
    q, v, a = body.random_configuration(rng), rng.normal(size=6), rng.normal(size=6)
    q[3:] *= 0.8
    # the rigid body's inertia in the root frame, from the unlocked robot's link poses
    full_q = np.r_[home[:7], angles]
    links = {link.name: link for link in robot.model.description.links}
    m, moment, rotational = 0.0, np.zeros(3), np.zeros((3, 3))
    for name in robot.body_names:
        link = links[name]
        if link.mass == 0 and not np.any(link.inertia):
            continue
        T = robot.get_transform(full_q, name)  # the root is at the world origin here
        c = T[:3, :3] @ link.com + T[:3, 3]
        m += link.mass
        moment += link.mass * c
        rotational += (T[:3, :3] @ link.inertia @ T[:3, :3].T
                       + link.mass * (c @ c * np.eye(3) - np.outer(c, c)))
    c = moment / m
    Ic = rotational - m * (c @ c * np.eye(3) - np.outer(c, c))
    R = body.get_transform(q, robot.body_names[0])[:3, :3]
    w, u, dw, du = v[:3], v[3:], a[:3], a[3:]
    f = m * (du + np.cross(dw, c) + np.cross(w, u + np.cross(w, c)) - R.T @ robot.gravity)
    n = Ic @ dw + np.cross(w, Ic @ w) + np.cross(c, f)
    assert_close(body.inverse_dynamics(q, v, a), np.r_[n, f])
    assert_close(body.forward_dynamics(q, v, np.r_[n, f]), a)


def test_locking_errors_name_the_problem():
    robot = casdyn.load_urdf(PANDA, floating_base=True)
    with pytest.raises(casdyn.InputError, match=r"unknown joint 'panda_joint44'.*'panda_joint4'"):
        robot.locked({"panda_joint44": 0.0})
    with pytest.raises(casdyn.InputError, match=r"mimics 'panda_finger_joint1'.*lock its leader"):
        robot.locked({"panda_finger_joint2": 0.0})
    with pytest.raises(casdyn.InputError, match="floating base cannot be locked"):
        robot.locked({"floating_base": [0, 0, 0, 1, 0, 0, 0]})
    with pytest.raises(casdyn.InputError, match="must be 1 finite number"):
        robot.locked({"panda_joint1": [0.0, 1.0]})


def test_every_joint_of_a_fixed_robot_locked_gives_empty_results():
    """No velocity left: every dynamics function, the FD derivatives included, returns
    empty arrays of the right shapes, as ID, FD and M do."""
    robot = casdyn.load_robot("ur5e")
    rigid = robot.locked({name: 0.3 for name in robot.joint_names})
    assert rigid.nq == rigid.nv == 0
    assert rigid.inverse_dynamics().shape == rigid.forward_dynamics().shape == (0,)
    for result in (rigid.inverse_dynamics_derivatives(), rigid.forward_dynamics_derivatives()):
        assert [r.shape for r in result] == [(0, 0)] * 3
    assert rigid.forward_dynamics_derivatives(np.zeros((2, 0)))[2].shape == (2, 0, 0)


def test_a_locked_robot_keeps_its_geometry():
    """The iiwa14 with its second joint locked: the same collision geometry, and each
    distance of a pair it still checks equal to the unlocked robot's at the locked value
    (pairs made adjacent by the lock, link 0 with link 2 and link 1 with link 3, drop out)."""
    robot = casdyn.load_robot("kuka_iiwa14")
    q = robot.home_configuration()
    q[1], q[3] = 0.5, -1.2
    locked = robot.locked({"iiwa_joint_2": 0.5})
    assert [g.name for g in locked.collision_geometry] == \
        [g.name for g in robot.collision_geometry]
    assert [g.name for g in locked.visual_geometry] == [g.name for g in robot.visual_geometry]
    full = dict(zip(robot.collision_pairs, robot.collision_distances(q), strict=True))
    reduced = dict(zip(locked.collision_pairs, locked.collision_distances(np.delete(q, 1)),
                       strict=True))
    assert set(full) - set(reduced) == {("iiwa_link_0_0", "iiwa_link_2_0"),
                                        ("iiwa_link_1_0", "iiwa_link_3_0")}
    for pair, distance in reduced.items():
        assert distance == pytest.approx(full[pair], abs=1e-12)
