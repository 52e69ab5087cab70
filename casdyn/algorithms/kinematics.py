"""Forward kinematics, frame transforms, geometric Jacobians and the centre of mass.

Each function takes the model and SX symbols and returns SX expressions. Poses are chained
only along the joints that a result needs, and relative transforms start from the lowest
common ancestor of the two frames, so no work is spent on parts of the tree that cancel.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

import casadi as ca
import numpy as np

from ..errors import InputError
from ..math.spatial import SX, Transform
from ..model.joint_state import JointState
from ..model.tree import Model


class JointStates(Sequence[JointState]):
    """Every joint of a model evaluated at the coordinates ``q`` (nq x 1), each when first
    read: a result that needs one chain of a large tree builds that chain's joints only (the
    graphs are the same, as a Function keeps only what its outputs use)."""

    def __init__(self, model: Model, q: SX):
        self._joints, self._q = model.joints, q
        self._states: list[JointState | None] = [None] * len(model.joints)

    def __len__(self) -> int:
        return len(self._joints)

    @overload
    def __getitem__(self, index: int) -> JointState: ...

    @overload
    def __getitem__(self, index: slice) -> list[JointState]: ...

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[j] for j in range(len(self))[index]]
        j = range(len(self))[index]  # an IndexError past the end ends iteration
        state = self._states[j]
        if state is None:
            state = self._states[j] = JointState.at(self._joints[j], self._q)
        return state


def joint_states(model: Model, q: SX) -> JointStates:
    """Every joint evaluated at the coordinates ``q`` (nq x 1), when first read."""
    return JointStates(model, q)


def chain_poses(
    model: Model, states: Sequence[JointState], joint: int, ancestor: int = -1
) -> list[tuple[int, Transform]]:
    """``(j, pose of j's frame in ancestor's frame)`` for the joints below ``ancestor`` (-1:
    the base) down to ``joint``, top first; ``ancestor`` must lie on ``joint``'s path to the
    base."""
    path = model.support(joint)
    pose, chain = Transform.identity(), []
    for j in reversed(path[: path.index(ancestor)] if ancestor >= 0 else path):
        pose = pose.then(states[j].Xtree).then(states[j].XJ)
        chain.append((j, pose))
    return chain


def chain_pose(model: Model, states: Sequence[JointState], joint: int,
               ancestor: int = -1) -> Transform:
    """Pose of ``joint``'s frame in ``ancestor``'s frame (see :func:`chain_poses`)."""
    chain = chain_poses(model, states, joint, ancestor)
    return chain[-1][1] if chain else Transform.identity()


def base_poses(model: Model, states: Sequence[JointState]) -> list[Transform]:
    """Pose of every joint frame in the base frame."""
    poses: list[Transform | None] = [None] * len(model.joints)
    for i in model.order:
        parent = model.joints[i].parent
        start = states[i].Xtree if parent < 0 else poses[parent].then(states[i].Xtree)
        poses[i] = start.then(states[i].XJ)
    return poses


def body_frame(model: Model, body: int, point=None) -> tuple[int, Transform]:
    """The joint a body rides on and its constant pose there (-1 and identity: the base);
    with ``point`` (3, body frame) the pose of that point instead, with the body's axes."""
    if body < 0:
        joint, offset = -1, Transform.identity()
    else:
        frame = model.bodies[body]
        joint, offset = frame.joint, Transform.constant(frame.rotation, frame.translation)
    if point is not None and any(point):
        offset = offset.then(Transform.constant(np.eye(3), np.asarray(point, dtype=float)))
    return joint, offset


def common_ancestor(model: Model, a: int, b: int) -> int:
    """The deepest joint on both paths to the base (-1: the base)."""
    above_a = set(model.support(a))
    return next((j for j in model.support(b) if j in above_a), -1)


def relative_transform(model: Model, q: SX, body: int, relative_to: int) -> Transform:
    """Pose of ``body``'s frame in ``relative_to``'s frame (body indices; -1 the base)."""
    states = joint_states(model, q)
    joint_b, offset_b = body_frame(model, body)
    joint_a, offset_a = body_frame(model, relative_to)
    top = common_ancestor(model, joint_a, joint_b)
    pose_b = chain_pose(model, states, joint_b, top).then(offset_b)
    if relative_to < 0:
        return pose_b
    pose_a = chain_pose(model, states, joint_a, top).then(offset_a)
    return pose_a.inverse().then(pose_b)


def jacobian_columns(model: Model, states: Sequence[JointState], body: int, point=None,
                     local: bool = False) -> list[tuple[int, SX, SX]]:
    """``(j, J_w, J_v)`` for each joint ``j`` from the base down to ``body``: its columns of
    the Jacobian of ``body``'s frame origin (or of ``point``, 3, in its frame), base-frame
    axes, or with ``local`` the body's own axes. Local columns come from the poses of the
    joint frames seen from the body, chained upwards from it: no rotation is applied to them
    afterwards, and the pose of the chain's top (a floating base's) never enters."""
    joint, offset = body_frame(model, body, point)
    if joint < 0:
        return []
    if local:
        chain, end = poses_seen_from(model, states, joint, offset), SX.zeros(3, 1)
    else:
        chain = chain_poses(model, states, joint)
        end = chain[-1][1].then(offset).p
    return [(j, *states[j].type.axes(frame).point_columns(end, 1)) for j, frame in chain]


def poses_seen_from(model: Model, states: Sequence[JointState], joint: int,
                     offset: Transform) -> list[tuple[int, Transform]]:
    """``(j, pose of j's frame in the frame offset by ``offset`` from joint's)`` for the
    joints from the base down to ``joint``, top first."""
    pose = offset.inverse()
    chain = []
    for j in model.support(joint):
        chain.append((j, pose))
        pose = pose.then(states[j].XJ.inverse()).then(states[j].Xtree.inverse())
    return chain[::-1]


def geometric_jacobian(model: Model, q: SX, body: int, point=None, local: bool = False) -> SX:
    """``6 x nv`` Jacobian ``[w; v] = J qd`` of ``body``'s frame origin (or of ``point``, 3,
    in its frame), in the base frame; with ``local`` in the body's frame (Pinocchio's
    ``LOCAL``)."""
    states = joint_states(model, q)
    J = SX(6, model.nv)
    for j, angular, linear in jacobian_columns(model, states, body, point, local):
        states[j].put(J, angular, slice(0, 3))
        states[j].put(J, linear, slice(3, 6))
    return J


def total_mass(model: Model) -> float:
    """The mass of every body (those fixed to the base included); an error if none."""
    total = model.base_inertia.mass + sum(joint.inertia.mass for joint in model.joints)
    if total <= 0:
        raise InputError(f"robot {model.name!r} has no mass, so no centre of mass")
    return total


def center_of_mass(model: Model, q: SX) -> tuple[SX, SX]:
    """Centre of mass of all bodies (those fixed to the base included) in the base frame,
    ``3 x 1``, and its ``3 x nv`` Jacobian."""
    total = total_mass(model)
    states = joint_states(model, q)
    poses = base_poses(model, states)
    # first moments m*c (base frame) and masses of each joint's subtree
    moment = model.subtree_sums([
        ca.mtimes(poses[i].R, joint.inertia.first_moment) + joint.inertia.mass * poses[i].p
        for i, joint in enumerate(model.joints)
    ])
    mass = model.subtree_sums([joint.inertia.mass for joint in model.joints])
    com = SX(model.base_inertia.first_moment)
    J = SX.zeros(3, model.nv)
    for i, joint in enumerate(model.joints):
        if joint.parent < 0:
            com = com + moment[i]
        _, J_v = states[i].type.axes(poses[i]).point_columns(moment[i], mass[i], total)
        states[i].put(J, J_v, slice(0, 3))
    return com / total, J

