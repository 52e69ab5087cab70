"""Frame velocities, classical accelerations and Jacobian time derivatives (docs: "Task
space and contacts").

All are for a point fixed in a body (its frame origin unless a ``point`` in the body frame
is given), angular part first, with base-frame axes (Pinocchio's ``LOCAL_WORLD_ALIGNED``):
``[w; v] = J qd`` and the classical acceleration ``[dw/dt; dv/dt] = J qdd + Jdot qd``,
where ``v`` and ``dv/dt`` are the velocity and acceleration of the point itself. With
``local`` the same vectors have the body's axes (Pinocchio's ``LOCAL``), and ``Jdot`` is
the time derivative of the local ``J``; as the axes turn with the body, the classical
acceleration is then ``J qdd + Jdot qd + [0; w x v]``.
"""

from __future__ import annotations

import casadi as ca

from ..math.spatial import SX, FrameMotion, Transform
from ..model.joint_state import JointState
from ..model.tree import Model
from .kinematics import (
    body_frame,
    chain_pose,
    chain_poses,
    jacobian_columns,
    joint_states,
    poses_seen_from,
)


def _chain_velocities(model: Model, q: SX, qd: SX, joint: int) -> list:
    """``(state, pose, w, v)`` for each joint from the base down to ``joint``: the moved
    frame's pose in the base frame, its angular velocity and the velocity of its origin
    (base-frame axes)."""
    states = joint_states(model, q)
    w = v = SX.zeros(3, 1)
    origin = SX.zeros(3, 1)
    chain = []
    for j, pose in chain_poses(model, states, joint):
        v = v + ca.cross(w, pose.p - origin)
        w, v = _with_joint_motion(states[j], pose, qd, w, v)
        chain.append((states[j], pose, w, v))
        origin = pose.p
    return chain


def _with_joint_motion(state: JointState, pose: Transform, qd: SX, w: SX, v: SX
                       ) -> tuple[SX, SX]:
    """``(w, v)``, a motion given by its angular velocity and the velocity of the point at
    the origin of ``pose`` (the joint's moved frame), plus the joint's own motion."""
    return state.type.axes(pose).moved(state.rates(qd), w, v)


def _point(chain: list, offset: Transform) -> tuple[SX, SX, SX]:
    """``(p, w, v_p)``: the point's position, the body's angular velocity and the point's
    velocity, base frame, at the end of ``chain``."""
    if not chain:
        return offset.p, SX.zeros(3, 1), SX.zeros(3, 1)
    _, pose, w, v = chain[-1]
    p = pose.then(offset).p
    return p, w, v + ca.cross(w, p - pose.p)


def frame_velocity(model: Model, q: SX, qd: SX, body: int, point=None,
                   local: bool = False) -> SX:
    """``[w; v]`` (6 x 1): the body's angular velocity and its point's velocity, base frame
    (``local``: the body's frame)."""
    if local:  # J qd from the local columns, which never see a floating base's pose
        states = joint_states(model, q)
        velocity = SX.zeros(6, 1)
        for j, angular, linear in jacobian_columns(model, states, body, point, True):
            velocity += _column_motion(states[j].rates(qd), angular, linear)
        return velocity
    joint, offset = body_frame(model, body, point)
    _, w, v = _point(_chain_velocities(model, q, qd, joint), offset)
    return ca.vertcat(w, v)


def frame_acceleration(model: Model, q: SX, qd: SX, qdd: SX, body: int, point=None,
                       local: bool = False) -> SX:
    """``[dw/dt; dv/dt]`` (6 x 1): the classical accelerations of the body and its point, base
    frame (``local``: the body's frame). Propagated in the joint frames as the forward pass
    of RNEA (Luh, Walker & Paul 1980), from a base at rest (no gravity), then turned into
    the wanted axes."""
    states = joint_states(model, q)
    joint, offset = body_frame(model, body, point)
    if joint < 0:
        return SX.zeros(6, 1)
    frame = FrameMotion(SX.zeros(3, 1), SX.zeros(3, 1), SX.zeros(3, 1))
    for j in reversed(model.support(joint)):
        frame = states[j].propagate(frame, states[j].rates(qd), states[j].rates(qdd))
    # in local axes the chain's poses are not needed at all
    R = offset.R.T if local else chain_pose(model, states, joint).R
    return ca.vertcat(ca.mtimes(R, frame.alpha), ca.mtimes(R, frame.point(offset.p)))


def jacobian_time_derivative(model: Model, q: SX, qd: SX, body: int, point=None,
                             local: bool = False) -> SX:
    """``Jdot`` (6 x nv), the time derivative of
    :func:`casdyn.algorithms.kinematics.geometric_jacobian` (``local``: of the local one, see
    :func:`_local_jacobian_time_derivative`).

    A column of joint j is a unit turn about (or slide along) an axis ``a`` of j's moved
    frame, which rotates with that frame's angular velocity ``w_j``, so ``da/dt = w_j x a``.
    A turn's column ``[a; a x (p - o_j)]`` then changes at
    ``[w_j x a; (w_j x a) x (p - o_j) + a x (v_p - v_j)]``, a slide's ``[0; a]`` at
    ``[0; w_j x a]``, with ``o_j``, ``v_j`` the moved frame's origin and its velocity and
    ``p``, ``v_p`` the point's.
    """
    if local:
        return _local_jacobian_time_derivative(model, q, qd, body, point)
    joint, offset = body_frame(model, body, point)
    chain = _chain_velocities(model, q, qd, joint)
    p, _, v_p = _point(chain, offset)
    Jdot = SX(6, model.nv)
    for state, pose, w, v in chain:
        angular, linear = state.type.axes(pose).rate_of_change(w, p, v_p, v)
        state.put(Jdot, angular, slice(0, 3))
        state.put(Jdot, linear, slice(3, 6))
    return Jdot


def _local_jacobian_time_derivative(model: Model, q: SX, qd: SX, body: int, point=None) -> SX:
    """``Jdot`` of the local Jacobian. A joint's local columns ``J_j`` are its motion
    ``S_j`` seen from the body, ``X S_j``; ``S_j`` moves with the frame it turns, ``X``
    with the body, so ``dJ_j/dt = -u_j x J_j`` (spatial cross product), ``u_j`` the body's
    motion relative to j's moved frame, which the joints below ``j`` give it. With ``u_j``
    as ``w`` and the velocity ``v`` of the body's point at j's origin ``o`` (body axes), a
    turn about ``a``, ``J = [a; o x a]``, changes at ``[a x w; o x (a x w) + a x v]`` (the
    Jacobi identity), a slide along ``a`` at ``[0; a x w]``: no ``o x a`` is needed. The
    body's own joint has nothing below it: its columns stay structural zeros."""
    states = joint_states(model, q)
    joint, offset = body_frame(model, body, point)
    Jdot = SX(6, model.nv)
    if joint < 0:
        return Jdot
    w = v = SX.zeros(3, 1)
    origin = None
    for j, pose in reversed(poses_seen_from(model, states, joint, offset)):
        if origin is not None:
            v = v + ca.cross(w, pose.p - origin)
            angular, linear = states[j].type.axes(pose).local_rate_of_change(w, v)
            states[j].put(Jdot, angular, slice(0, 3))
            states[j].put(Jdot, linear, slice(3, 6))
        w, v = _with_joint_motion(states[j], pose, qd, w, v)
        origin = pose.p
    return Jdot


def _column_motion(rates: SX, angular: SX, linear: SX) -> SX:
    """``J_j qd_j`` (6 x 1): the motion a joint's Jacobian columns give its rates."""
    return ca.vertcat(ca.mtimes(angular, rates), ca.mtimes(linear, rates))
