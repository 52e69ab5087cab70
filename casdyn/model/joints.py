"""The joint types (Featherstone's ``jcalc``, Pinocchio's ``JointModel``): with their base
class in :mod:`casdyn.model.joint_type`, the only place that knows joint types.

A joint type says how many coordinates (``nq``) and velocities (``nv``) it has, how it moves
its frame, its motion subspace ``S`` and how forces project on it, in the joint frame and in
the base frame, its step of the articulated-body algorithm, which part of a body's inertia it
cannot tell from its parent's (for :mod:`casdyn.model.grouping`), and its coordinates: neutral,
random, ``integrate``, ``difference`` and the tangent map. The model (:mod:`casdyn.model.tree`)
gives each joint its type object (as Pinocchio's ``model.joints[i]`` is its joint model); the
algorithms ask the type and never test which type it is.

Velocities are body twists: every type's ``S`` is constant in the moved frame, made of unit
columns, each a turn about or a slide along one axis of that frame (``dofs``). Every 1-dof
joint frame has the joint axis as z (see :mod:`casdyn.model.tree`), so a revolute joint's motion
subspace is ``S = [e_z; 0]`` and a prismatic joint's ``S = [0; e_z]``, which keeps the graphs
small. The types:

=========== ==== ==== ====================================== ===============================
type        nq   nv   q                                      qd (body twist of moved frame)
=========== ==== ==== ====================================== ===============================
revolute    1    1    angle about z (URDF continuous too)    dq/dt
prismatic   1    1    displacement along z                   dq/dt
planar      3    3    ``[x, y, theta]`` in the joint frame   ``[vx, vy, wz]``
ball        4    3    ``[qw, qx, qy, qz]``                   ``[wx, wy, wz]``
free        7    6    ``[x, y, z, qw, qx, qy, qz]``          ``[wx, wy, wz, vx, vy, vz]``
=========== ==== ==== ====================================== ===============================
"""

from __future__ import annotations

import math

import casadi as ca
import numpy as np

from ..errors import InputError
from ..math import lie
from ..math.inertia import Inertia
from ..math.spatial import SX, FrameMotion, Transform
from .articulation import Articulation, FreeArticulation, ScalarArticulation
from .joint_type import SLIDE, TURN, Joint, JointType, State


class OneDof(JointType):
    """A revolute or prismatic joint along z: the axial graphs, limits from the URDF."""

    axial = True

    def articulate(self, IA: SX, u: SX, armature=0.0) -> Articulation:
        k = self.rows[0]
        return ScalarArticulation(IA[:, k], u, k, armature)

    def limits(self, joint: Joint) -> tuple[np.ndarray, np.ndarray]:
        return np.array([joint.lower]), np.array([joint.upper])

    def neutral(self, joint: Joint) -> np.ndarray:
        """Zero clamped into the limits."""
        return np.clip(np.zeros(1), joint.lower, joint.upper)

    def sampling_box(self, joint: Joint) -> tuple[np.ndarray, np.ndarray]:
        """Angles without finite limits take [-pi, pi]."""
        lower, upper = joint.lower, joint.upper
        if not (math.isfinite(lower) and math.isfinite(upper)):
            lower, upper = max(lower, -math.pi), min(upper, math.pi)
        return np.array([lower]), np.array([upper])

    def pinocchio_nq(self, joint: Joint) -> int:
        """A continuous joint is ``(cos, sin)`` in Pinocchio."""
        return 2 if joint.continuous else 1

    def to_pinocchio(self, joint: Joint, q: np.ndarray) -> np.ndarray:
        if not joint.continuous:
            return q
        return np.concatenate([np.cos(q), np.sin(q)], axis=-1)

    def from_pinocchio(self, joint: Joint, q: np.ndarray) -> np.ndarray | None:
        if q.shape[-1] == 2 and joint.continuous:
            return np.arctan2(q[..., 1:], q[..., :1])
        return q if q.shape[-1] == 1 else None


class Revolute(OneDof):
    """A rotation about z by ``q + offset`` (:mod:`casdyn.model.reframe` may fold a constant turn
    about the axis into ``offset``). URDF ``continuous`` joints are revolute joints without
    limits."""

    name = "revolute"
    dofs = ((TURN, 2),)
    turns_about_z = True

    def joint_transform(self, joint: Joint, q: SX) -> Transform:
        angle = q + joint.offset if joint.offset else q
        return Transform.rotation_z(ca.cos(angle), ca.sin(angle))

    def propagate(self, parent: FrameMotion, state: State, qd: SX, qdd: SX) -> FrameMotion:
        RT, RzT = state.Xtree.RT, state.XJ.RT
        w = ca.mtimes(RzT, ca.mtimes(RT, parent.w))
        alpha = ca.mtimes(RzT, ca.mtimes(RT, parent.alpha))
        origin = ca.mtimes(RzT, ca.mtimes(RT, parent.point(state.Xtree.p)))
        # alpha + w x (qd e_z) + qdd e_z
        return FrameMotion(w + ca.vertcat(0, 0, qd),
                           alpha + ca.vertcat(w[1] * qd, -w[0] * qd, qdd), origin)

    def split(self, inertia: Inertia) -> tuple[Inertia, Inertia]:
        """The axial part moves: the whole mass on the axis, the z first moment and
        ``diag(a, a, 0)`` with ``a = I_yy``, so that the body keeps no mass, ``h_z = 0`` and
        ``I_yy = 0`` (entries the split zeroes come out exactly zero)."""
        a = inertia.rotational[1, 1]
        axial = Inertia(inertia.mass, np.array([0.0, 0.0, inertia.first_moment[2]]),
                        np.diag([a, a, 0.0]))
        return axial, inertia - axial


class Prismatic(OneDof):
    """A translation along z by ``q``."""

    name = "prismatic"
    dofs = ((SLIDE, 2),)

    def joint_transform(self, joint: Joint, q: SX) -> Transform:
        return Transform.translation_z(q)

    def propagate(self, parent: FrameMotion, state: State, qd: SX, qdd: SX) -> FrameMotion:
        RT = state.Xtree.RT
        w, alpha = ca.mtimes(RT, parent.w), ca.mtimes(RT, parent.alpha)
        origin = ca.mtimes(RT, parent.point(state.Xtree.p))
        # the origin slides by q e_z: its acceleration gains U q e_z, 2 w x (qd e_z), qdd e_z
        slid = FrameMotion(w, alpha, origin).point(state.XJ.p)
        twice = 2 * qd
        return FrameMotion(w, alpha, slid + ca.vertcat(w[1] * twice, -w[0] * twice, qdd))

    def split(self, inertia: Inertia) -> tuple[Inertia, Inertia]:
        """The rotational inertia about the centre of mass moves (the body does not turn
        relative to its parent); the body keeps a point mass, built so that its own
        ``about_com`` is exactly zero."""
        point = Inertia(inertia.mass, inertia.first_moment, np.zeros((3, 3)))
        point = Inertia(point.mass, point.first_moment, -point.about_com)
        return inertia - point, point

    def sampling_box(self, joint: Joint) -> tuple[np.ndarray, np.ndarray]:
        if not (math.isfinite(joint.lower) and math.isfinite(joint.upper)):
            raise InputError(
                f"prismatic joint {joint.name!r} has no finite limits to sample within")
        return np.array([joint.lower]), np.array([joint.upper])


class Planar(JointType):
    """URDF ``planar``: a translation ``(x, y)`` in the plane normal to the axis (z of the
    joint frame), then a turn by ``theta`` about the normal. Velocities ``[vx, vy, wz]`` are
    the moved frame's body twist (as Pinocchio's ``JointModelPlanar``), so ``d(x, y)/dt`` is
    ``Rz(theta) [vx, vy]`` and :meth:`integrate` is SE(2)'s exponential. The joint frame's x
    and y are those of the URDF joint frame when the axis is z; otherwise see
    :func:`casdyn.model.build.axis_alignment`."""

    name = "planar"
    nq = nv = 3
    vector_space = False
    dofs = ((SLIDE, 0), (SLIDE, 1), (TURN, 2))

    def joint_transform(self, joint: Joint, q: SX) -> Transform:
        turn = Transform.rotation_z(ca.cos(q[2]), ca.sin(q[2]))
        return Transform(turn.R, ca.vertcat(q[0], q[1], 0))

    def sampling_box(self, joint: Joint) -> tuple[np.ndarray, np.ndarray]:
        """``x, y`` in [-1, 1], ``theta`` in [-pi, pi]."""
        return np.array([-1.0, -1.0, -math.pi]), np.array([1.0, 1.0, math.pi])

    def integrate(self, q: SX, v: SX) -> SX:
        return lie.se2_integrate(q[0], q[1], q[2], v)

    def difference(self, q0: SX, q1: SX) -> SX:
        return lie.se2_difference(q0, q1)

    def tangent(self, q: SX) -> SX:
        c, s = ca.cos(q[2]), ca.sin(q[2])
        return ca.vertcat(ca.horzcat(c, -s, 0), ca.horzcat(s, c, 0), ca.horzcat(0, 0, 1))

    def pinocchio_nq(self, joint: Joint) -> int:
        """``[x, y, cos theta, sin theta]`` in Pinocchio; the velocities are the same."""
        return 4

    def to_pinocchio(self, joint: Joint, q: np.ndarray) -> np.ndarray:
        theta = q[..., 2:3]
        return np.concatenate([q[..., :2], np.cos(theta), np.sin(theta)], axis=-1)

    def from_pinocchio(self, joint: Joint, q: np.ndarray) -> np.ndarray | None:
        if q.shape[-1] == 4:
            return np.concatenate([q[..., :2], np.arctan2(q[..., 3:], q[..., 2:3])], axis=-1)
        return q if q.shape[-1] == 3 else None


def _quaternion_rate(q: SX) -> SX:
    """``Q(q) / 2`` (4 x 3): ``dq/dt = Q(q) w / 2`` for a quaternion ``q = [w, x, y, z]``
    turning with the body angular velocity ``w`` (``q [0; w] / 2``)."""
    w, x, y, z = ca.vertsplit(q)
    return ca.vertcat(ca.horzcat(-x, -y, -z), ca.horzcat(w, -z, y),
                      ca.horzcat(z, w, -x), ca.horzcat(-y, x, w)) / 2


def _uniform_rotations(u: np.ndarray) -> np.ndarray:
    """Unit quaternions ``[w, x, y, z]`` (..., 4), uniformly distributed over the rotations,
    from three uniforms in [0, 1] (..., 3): K. Shoemake, "Uniform random rotations",
    Graphics Gems III (1992)."""
    u1, u2, u3 = u[..., 0], u[..., 1], u[..., 2]
    a, b = np.sqrt(1 - u1), np.sqrt(u1)
    return np.stack([b * np.cos(2 * math.pi * u3), a * np.sin(2 * math.pi * u2),
                     a * np.cos(2 * math.pi * u2), b * np.sin(2 * math.pi * u3)], axis=-1)


class Ball(JointType):
    """A ball (spherical) joint: ``q = [qw, qx, qy, qz]``, the moved frame's orientation in
    the joint frame (a quaternion of any nonzero norm, scalar first, the origins coincide),
    ``qd = w`` the moved frame's angular velocity in its own axes, :meth:`integrate` SO(3)'s
    exponential (as Pinocchio's ``JointModelSpherical``, whose ``q`` has the scalar last, and
    MuJoCo's ``ball``)."""

    name = "ball"
    nq, nv = 4, 3
    vector_space = False
    has_axis = False
    quaternion_at = 0
    dofs = ((TURN, 0), (TURN, 1), (TURN, 2))

    def joint_transform(self, joint: Joint, q: SX) -> Transform:
        return Transform(lie.rotation_matrix(q), SX.zeros(3, 1))

    def split(self, inertia: Inertia) -> tuple[Inertia, Inertia]:
        """The mass moves, as a point mass at the joint's centre (which does not move
        relative to the parent); the body keeps its first moment and rotational inertia."""
        point = Inertia(inertia.mass, np.zeros(3), np.zeros((3, 3)))
        return point, inertia - point

    def neutral(self, joint: Joint) -> np.ndarray:
        return np.array([1.0, 0.0, 0.0, 0.0])

    def sampling_box(self, joint: Joint) -> tuple[np.ndarray, np.ndarray]:
        """Three uniforms for a uniformly random rotation (:meth:`from_box`)."""
        return np.zeros(3), np.ones(3)

    def from_box(self, sample: np.ndarray) -> np.ndarray:
        return _uniform_rotations(sample)

    def integrate(self, q: SX, v: SX) -> SX:
        return lie.normalized(lie.quaternion_product(lie.normalized(q), lie.exp_quaternion(v)))

    def difference(self, q0: SX, q1: SX) -> SX:
        relative = lie.quaternion_product(lie.quaternion_conjugate(lie.normalized(q0)),
                                          lie.normalized(q1))
        return lie.log_quaternion(relative)

    def tangent(self, q: SX) -> SX:
        """``Q(q) / 2``: the quaternion moves with ``q [0; w] / 2``."""
        return _quaternion_rate(q)

    def to_pinocchio(self, joint: Joint, q: np.ndarray) -> np.ndarray:
        """Pinocchio's spherical joint has the quaternion scalar last."""
        return np.concatenate([q[..., 1:4], q[..., 0:1]], axis=-1)

    def from_pinocchio(self, joint: Joint, q: np.ndarray) -> np.ndarray | None:
        if q.shape[-1] != 4:
            return None
        return np.concatenate([q[..., 3:4], q[..., 0:3]], axis=-1)


class Free(JointType):
    """A free (6-dof) joint, the floating base: ``q = [x, y, z, qw, qx, qy, qz]`` (origin of
    the moved frame and its orientation, a quaternion of any nonzero norm, in the joint
    frame), ``qd = [w; v]`` the moved frame's body twist, :meth:`integrate` SE(3)'s
    exponential (as Pinocchio's ``JointModelFreeFlyer``, whose ``q`` has the quaternion
    scalar last and whose ``v`` is linear first)."""

    name = "free"
    nq, nv = 7, 6
    vector_space = False
    has_axis = False
    quaternion_at = 3
    origin_in_q = True
    dofs = ((TURN, 0), (TURN, 1), (TURN, 2), (SLIDE, 0), (SLIDE, 1), (SLIDE, 2))

    def joint_transform(self, joint: Joint, q: SX) -> Transform:
        return Transform(lie.rotation_matrix(q[3:]), q[:3])

    def articulate(self, IA: SX, u: SX, armature=0.0) -> Articulation:
        """``S = 1``: :class:`FreeArticulation`, or with a rotor inertia (``D = IA +
        armature 1``) the general step, ``U = IA``."""
        if isinstance(armature, SX) or armature != 0:
            return Articulation(IA, IA + armature * SX.eye(6), u)
        return FreeArticulation(IA, u)

    def neutral(self, joint: Joint) -> np.ndarray:
        return np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])

    def sampling_box(self, joint: Joint) -> tuple[np.ndarray, np.ndarray]:
        """Position in [-1, 1]^3, then three uniforms for Shoemake's uniform rotation."""
        return np.array([-1.0, -1.0, -1.0, 0.0, 0.0, 0.0]), np.ones(6)

    def from_box(self, sample: np.ndarray) -> np.ndarray:
        """K. Shoemake, "Uniform random rotations", Graphics Gems III (1992); ``sample``
        (6,) or (n, 6)."""
        return np.concatenate([sample[..., :3], _uniform_rotations(sample[..., 3:6])], axis=-1)

    def integrate(self, q: SX, v: SX) -> SX:
        return ca.vertcat(*lie.se3_integrate(q[:3], q[3:], v))

    def difference(self, q0: SX, q1: SX) -> SX:
        return lie.se3_difference(q0[:3], q0[3:], q1[:3], q1[3:])

    def tangent(self, q: SX) -> SX:
        """``[0 R; Q/2 0]``: the position moves with ``R v``, the quaternion with
        ``q [0; w] / 2``."""
        R = lie.rotation_matrix(q[3:])
        return ca.blockcat([[SX.zeros(3, 3), R], [_quaternion_rate(q[3:]), SX.zeros(4, 3)]])

    def to_pinocchio(self, joint: Joint, q: np.ndarray) -> np.ndarray:
        """Pinocchio's free flyer has the quaternion scalar last."""
        return np.concatenate([q[..., :3], q[..., 4:7], q[..., 3:4]], axis=-1)

    def from_pinocchio(self, joint: Joint, q: np.ndarray) -> np.ndarray | None:
        if q.shape[-1] != 7:
            return None
        return np.concatenate([q[..., :3], q[..., 6:7], q[..., 3:6]], axis=-1)

    def pinocchio_velocity_order(self) -> tuple[int, ...]:
        """Pinocchio's free-flyer velocity is ``[v; w]``, casdyn's ``[w; v]``."""
        return (3, 4, 5, 0, 1, 2)


JOINT_TYPES: dict[str, JointType] = {
    t.name: t for t in (Revolute(), Prismatic(), Planar(), Ball(), Free())
}
