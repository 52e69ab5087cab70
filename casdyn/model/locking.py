"""Locked joints: the same URDF with some joints fixed at given positions (as Pinocchio's
``buildReducedModel``). Each locked joint becomes a fixed joint whose origin holds the
joint's motion at that position (from its joint type, :mod:`casdyn.model.joints`); mimic joints
of a locked leader are locked with it. The bodies keep their names and inertias."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import casadi as ca
import numpy as np

from ..arguments import real_numbers
from ..errors import InputError, suggest
from .build import URDF_JOINT_KINDS, axis_alignment
from .joints import JOINT_TYPES
from .tree import FLOATING_BASE, Joint
from .urdf import JointSpec, RobotDescription


def locked_description(description: RobotDescription, positions: dict) -> RobotDescription:
    """``description`` with the joints named in ``positions`` (name -> coordinates: a number
    for a 1-dof joint, ``[x, y, theta]`` for a planar one, ``[x, y, z, qw, qx, qy, qz]`` for
    a floating one) made fixed at those coordinates."""
    if not isinstance(positions, Mapping):
        raise InputError("positions must be a dict of joint name -> position, got "
                         f"{type(positions).__name__} {positions!r}")
    specs = {joint.name: joint for joint in description.joints if joint.type != "fixed"}
    fixed = {joint.name for joint in description.joints if joint.type == "fixed"}
    positions = dict(positions)
    for name in list(positions):
        if name == FLOATING_BASE and name not in specs:
            raise InputError("the floating base cannot be locked; load the robot without "
                             "floating_base=True for a fixed base")
        if name in fixed:
            raise InputError(f"joint {name!r} is fixed already; only movable joints are locked")
        if name not in specs:
            raise InputError(f"cannot lock unknown joint {name!r}; "
                             f"{suggest(str(name), [n for n in specs if not specs[n].mimic])}")
        if specs[name].mimic is not None and specs[name].mimic[0] in specs:
            raise InputError(f"joint {name!r} mimics {specs[name].mimic[0]!r} and has no "
                             "coordinate of its own; lock its leader")
    for name, spec in specs.items():  # followers of a locked leader are locked with it
        if spec.mimic is not None and spec.mimic[0] in positions:
            leader, multiplier, offset = spec.mimic
            positions[name] = multiplier * np.asarray(positions[leader], dtype=float) + offset
    joints = tuple(_fixed(joint, positions[joint.name]) if joint.name in positions else joint
                   for joint in description.joints)
    return replace(description, joints=joints)


def _fixed(joint: JointSpec, position) -> JointSpec:
    """A fixed joint at ``joint``'s pose for ``position``: origin, then the joint's motion in
    its frame (axis as z, as casdyn.model.build builds it), back to the child link frame."""
    kind = JOINT_TYPES[URDF_JOINT_KINDS[joint.type]]
    q = np.atleast_1d(real_numbers(position, f"locked position of joint {joint.name!r}"))
    q = q.ravel()
    if q.shape != (kind.nq,) or not np.all(np.isfinite(q)):
        raise InputError(f"locked position of {joint.type} joint {joint.name!r} must be "
                         f"{kind.nq} finite number(s), got {np.asarray(position).tolist()}")
    at = kind.quaternion_at
    if at is not None:  # any nonzero norm, scaled first (1e-200 would underflow)
        largest = np.max(np.abs(q[at : at + 4]))
        if largest == 0:
            raise InputError(f"locked position of {joint.type} joint {joint.name!r}: its "
                             "quaternion [qw, qx, qy, qz] is zero; it may have any nonzero norm")
        q = np.concatenate([q[:at], q[at : at + 4] / largest])  # a copy: the caller keeps theirs
    plain = Joint(joint.name, kind, -1, np.eye(3), np.zeros(3), None, -np.inf, np.inf)
    XJ = kind.joint_transform(plain, ca.DM(q) if kind.nq > 1 else float(q[0]))
    rotation = np.array(ca.evalf(ca.SX(XJ.R)))
    translation = np.array(ca.evalf(ca.SX(XJ.p))).ravel()
    align = axis_alignment(joint.axis) if kind.has_axis else np.eye(3)
    origin = joint.origin_rotation @ align
    return replace(joint, type="fixed", xyz=joint.xyz + origin @ translation,
                   rotation=origin @ rotation @ align.T, mimic=None)
