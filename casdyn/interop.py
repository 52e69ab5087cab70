"""Bridge to Pinocchio: casdyn's ``q``, ``v`` to and from a Pinocchio model's, by joint name.

The two layouts differ in four ways, each handled here joint by joint:

* order: casdyn follows the URDF document, Pinocchio a depth-first walk of the tree;
* the free joint: casdyn ``q = [x y z qw qx qy qz]`` and ``v = [w; v]`` (body twist, root
  link frame), Pinocchio's free flyer ``q = [x y z qx qy qz qw]`` and ``v = [v; w]`` in the
  same (LOCAL) frame;
* continuous joints (and a planar joint's angle): casdyn one angle, Pinocchio ``(cos, sin)``;
* mimic joints: casdyn gives them no coordinate; Pinocchio built with ``mimic=True`` neither
  (a ``JointModelMimic`` with nq = nv = 0), and built without it they are independent joints,
  set here to ``multiplier * leader + offset`` (velocity ``multiplier * leader``).

Velocities, accelerations and generalised forces follow ``v``'s rules (a permutation, the free
flyer's halves swapped). For a Pinocchio model whose mimic joints are independent, a
generalised force maps back as ``tau = G^T tau_pin`` (the mimic's force adds, times the
multiplier, to its leader's): :func:`velocity_map` gives ``G``; :func:`from_pinocchio` reads
the leader's entry only.

Pinocchio (``pip install pin``) is imported only when these functions are called.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import arguments
from .errors import CasdynError, InputError
from .model.tree import Joint

__all__ = ["from_pinocchio", "to_pinocchio", "velocity_map"]

FREE_FLYER = "JointModelFreeFlyer"
MIMIC = "JointModelMimic"


def _pinocchio():
    try:
        import pinocchio
    except ImportError as error:
        raise CasdynError("casdyn.interop needs Pinocchio: pip install pin") from error
    return pinocchio


@dataclass(frozen=True)
class _Entry:
    """One casdyn joint with coordinates and where its values sit in both layouts; its
    joint type knows how they are written in each (``JointType.to_pinocchio`` ...)."""

    joint: Joint
    q: int  # casdyn's first coordinate
    v: int  # casdyn's first velocity
    q_pin: int
    v_pin: int


@dataclass(frozen=True)
class _Follower:
    """A casdyn mimic joint that is an independent joint of the Pinocchio model."""

    joint: Joint  # its joint type writes its value in Pinocchio's layout
    leader_q: int  # casdyn's coordinate (and velocity) of the leader
    leader_v: int
    multiplier: float
    offset: float
    q_pin: int
    v_pin: int


def _layout(robot, model) -> tuple[list[_Entry], list[_Follower]]:
    """Match ``robot``'s joints to ``model``'s by name; a clear error where they differ."""
    from .tree import RigidBodyTree

    if not isinstance(robot, RigidBodyTree):
        raise InputError(f"robot must be a casdyn RigidBodyTree, got {type(robot).__name__}")
    if not isinstance(model, _pinocchio().Model):
        raise InputError(f"model must be a pinocchio.Model, got {type(model).__name__}")
    pin_joints = {name: joint for name, joint in zip(model.names, model.joints, strict=True)}
    pin_joints.pop("universe", None)
    # the free flyer standing for the floating base: at the root, not one of the robot's own
    # free joints (a free body hanging from a fixed base has one there too)
    own = {joint.name for joint in robot.model.joints[int(robot.floating_base):]}
    roots = [name for name, joint in pin_joints.items()
             if joint.shortname() == FREE_FLYER and model.parents[model.getJointId(name)] == 0
             and name not in own]
    if robot.floating_base != bool(roots):
        has = f"a free flyer {roots[0]!r}" if roots else "no free flyer"
        raise InputError(
            f"model has {has} but the robot's base is "
            f"{'floating' if robot.floating_base else 'fixed'}: build the Pinocchio model "
            f"{'with' if robot.floating_base else 'without'} pin.JointModelFreeFlyer(), or "
            f"load the robot with floating_base={not robot.floating_base}")
    joints = robot.model.joints
    pin_names = [roots[0] if robot.floating_base and i == 0 else joint.name
                 for i, joint in enumerate(joints)]
    missing = sorted(set(pin_names) - set(pin_joints))
    extra = sorted(set(pin_joints) - set(pin_names))
    if missing or extra:
        raise InputError(
            f"model {model.name!r} is not a model of robot {robot.name!r}: "
            + "; ".join(part for part in (
                missing and f"joints missing from the model: {', '.join(missing)}",
                extra and f"joints the robot does not have: {', '.join(extra)}") if part))
    entries, followers = [], []
    for joint, pin_name in zip(joints, pin_names, strict=True):
        pj = pin_joints[pin_name]
        nq_pin = joint.type.pinocchio_nq(joint)
        if pj.shortname() == MIMIC:
            if joint.mimic is None:
                raise InputError(f"joint {joint.name!r} is a mimic joint in the model but "
                                 "independent in the robot")
            continue  # no coordinate on either side
        if pj.nq != nq_pin:
            kind = "continuous" if joint.continuous else joint.type.name
            raise InputError(f"joint {joint.name!r} has nq = {pj.nq} in the model, expected "
                             f"{nq_pin} for a {kind} joint")
        if joint.mimic is not None:
            leader = joints[joint.mimic.leader]
            followers.append(_Follower(joint, leader.idx_q, leader.idx_v,
                                       joint.mimic.multiplier, joint.mimic.offset,
                                       pj.idx_q, pj.idx_v))
        else:
            entries.append(_Entry(joint, joint.idx_q, joint.idx_v, pj.idx_q, pj.idx_v))
    return entries, followers


def _numbers(value, name: str, size: int) -> np.ndarray:
    array = arguments.vector(value, name, size)
    if not isinstance(array, np.ndarray):
        raise InputError(f"{name} must be numbers (a NumPy array), got {type(value).__name__}")
    return np.asarray(array, dtype=float)


def _unit(quaternion: np.ndarray, name: str) -> np.ndarray:
    scale = np.max(np.abs(quaternion), axis=-1, keepdims=True)
    if np.any(scale == 0) or not np.all(np.isfinite(scale)):
        raise InputError(f"{name}: the free joint's quaternion must be finite and nonzero")
    scaled = quaternion / scale  # no overflow in the norm
    return scaled / np.linalg.norm(scaled, axis=-1, keepdims=True)


def velocity_map(robot, model) -> np.ndarray:
    """``G`` (model.nv, robot.nv) with ``v_pin = G v`` and ``tau = G^T tau_pin``: a
    permutation with the free flyer's halves swapped, plus, for mimic joints that are
    independent in ``model``, their multipliers in the leaders' columns."""
    _pinocchio()
    entries, followers = _layout(robot, model)
    G = np.zeros((model.nv, robot.nv))
    for e in entries:
        for k, j in enumerate(e.joint.type.pinocchio_velocity_order()):
            G[e.v_pin + k, e.v + j] = 1.0
    for f in followers:
        G[f.v_pin, f.leader_v] += f.multiplier
    return G


def to_pinocchio(robot, model, q=None, v=None):
    """casdyn's ``q`` (nq,) and ``v`` (nv,) → Pinocchio ``model``'s ``(q_pin, v_pin)``.

    ``robot`` is a :class:`~casdyn.RigidBodyTree`, ``model`` a ``pinocchio.Model`` of the same
    robot (a free flyer at its root iff ``robot.floating_base``); joints are matched by name
    (casdyn's ``floating_base`` is the model's root free flyer, whatever its name). ``v`` may
    be a velocity, an acceleration or a generalised force. Either may be a batch (N, n); one
    left ``None`` gives ``None``. The quaternion is normalised.
    """
    _pinocchio()
    entries, followers = _layout(robot, model)
    q_pin = v_pin = None
    if q is not None:
        q = _numbers(q, "q", robot.nq)
        q_pin = np.zeros((*q.shape[:-1], model.nq))
        for e in entries:
            joint = e.joint
            mine = q[..., e.q : e.q + joint.type.nq]
            at = joint.type.quaternion_at
            if at is not None:  # normalised
                mine = mine.copy()
                mine[..., at : at + 4] = _unit(mine[..., at : at + 4], "q")
            q_pin[..., e.q_pin : e.q_pin + joint.type.pinocchio_nq(joint)] = \
                joint.type.to_pinocchio(joint, mine)
        for f in followers:
            value = f.multiplier * q[..., f.leader_q : f.leader_q + 1] + f.offset
            q_pin[..., f.q_pin : f.q_pin + f.joint.type.pinocchio_nq(f.joint)] = \
                f.joint.type.to_pinocchio(f.joint, value)
    if v is not None:
        v = _numbers(v, "v", robot.nv)
        v_pin = v @ velocity_map(robot, model).T
    return q_pin, v_pin


def from_pinocchio(robot, model, q=None, v=None):
    """Pinocchio ``model``'s ``q_pin`` (model.nq,) and ``v_pin`` (model.nv,) → casdyn's
    ``(q, v)``; the inverse of :func:`to_pinocchio` (same rules, batches and ``None``).

    A mimic joint that is independent in ``model`` is not read back (its leader's value is).
    The free flyer's quaternion comes back scalar first, as given (not normalised).
    """
    _pinocchio()
    entries, _ = _layout(robot, model)
    q_out = v_out = None
    if q is not None:
        q_pin = _numbers(q, "q", model.nq)
        q_out = np.zeros((*q_pin.shape[:-1], robot.nq))
        for e in entries:
            joint = e.joint
            theirs = q_pin[..., e.q_pin : e.q_pin + joint.type.pinocchio_nq(joint)]
            q_out[..., e.q : e.q + joint.type.nq] = joint.type.from_pinocchio(joint, theirs)
    if v is not None:
        v_pin = _numbers(v, "v", model.nv)
        v_out = np.zeros((*v_pin.shape[:-1], robot.nv))
        for e in entries:
            for k, j in enumerate(e.joint.type.pinocchio_velocity_order()):
                v_out[..., e.v + j] = v_pin[..., e.v_pin + k]
    return q_out, v_out
