"""Joint models: the only place that knows joint types (Featherstone's ``jcalc``, Pinocchio's
``JointModel``).

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
from typing import Any, Protocol

import casadi as ca
import numpy as np

from ..errors import InputError
from ..math import lie
from ..math.inertia import Inertia
from ..math.spatial import SX, FrameMotion, Transform
from .articulation import Articulation, FreeArticulation, ScalarArticulation

TURN, SLIDE = "turn", "slide"


class State(Protocol):
    """What a joint type reads of a joint's state (:class:`casdyn.model.joint_state.JointState`)."""

    Xtree: Transform  # constant pose of the joint frame at q = 0, in the parent frame
    XJ: Transform  # the joint's own motion (jcalc's XJ)

    @property
    def pose(self) -> Transform: ...


class Joint(Protocol):
    """What a joint type reads of a joint of the model (:class:`casdyn.model.tree.Joint`)."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> JointType: ...
    @property
    def lower(self) -> float: ...
    @property
    def upper(self) -> float: ...
    @property
    def continuous(self) -> bool: ...
    @property
    def offset(self) -> float: ...
    @property
    def idx_q(self) -> int: ...
    @property
    def idx_v(self) -> int: ...
    @property
    def rotation(self) -> np.ndarray: ...
    @property
    def translation(self) -> np.ndarray: ...
    @property
    def mimic(self) -> Any: ...


class JointType:
    """What every joint type provides. The motion subspace parts are written once, from
    ``dofs``: the generic forms reduce, for one dof, to the 1-dof graphs."""

    name: str  # "revolute" (URDF continuous too), "prismatic", "planar", "ball", "free"
    nq: int = 1
    nv: int = 1
    dofs: tuple[tuple[str, int], ...]  # S's columns: (TURN or SLIDE, axis 0..2)
    # the joint frame may be turned about and slid along z (casdyn.model.reframe) without changing
    # what q means; a joint that turns about z may also take a constant turn into its angle
    axial: bool = False
    turns_about_z: bool = False
    # integrate is plain addition (and the tangent map the identity)
    vector_space: bool = True
    # the URDF <axis> orients the joint (its frame is turned so that the axis is z)
    has_axis: bool = True
    # where q holds a quaternion [qw, qx, qy, qz] within the joint's coordinates, if it does
    quaternion_at: int | None = None
    # the first three coordinates are the moved frame's origin in the joint frame
    origin_in_q: bool = False

    def __reduce__(self):
        return (joint_type, (self.name,))  # one object per type, also after unpickling

    def __repr__(self) -> str:
        return f"<joint type {self.name}>"

    @property
    def one_dof(self) -> bool:
        """Whether the joint has one coordinate and one velocity (scalar limits, friction,
        rotor inertia and identifiable parameters)."""
        return self.nv == 1

    @property
    def rows(self) -> tuple[int, ...]:
        """The row of each column's unit entry in a spatial vector ``[w; v]``."""
        return tuple(axis + (3 if kind == SLIDE else 0) for kind, axis in self.dofs)

    # --- the joint's own motion ------------------------------------------------------------
    def joint_transform(self, joint: Joint, q: SX) -> Transform:
        """The pose of the moved frame in the joint frame for coordinates ``q`` (nq x 1)."""
        raise NotImplementedError

    def propagate(self, parent: FrameMotion, state: State, qd: SX, qdd: SX) -> FrameMotion:
        """The moved frame's classical motion from its parent frame's, for joint rates ``qd``
        and accelerations ``qdd`` (Luh, Walker & Paul 1980, in the moved frame's axes): with
        the relative twist ``(w_j, v_j) = S qd`` and ``S`` constant,
        ``w = w_p + w_j``, ``alpha = alpha_p + w_p x w_j + dw_j``,
        ``a = a_p + 2 w_p x v_j + dv_j + w_j x v_j`` (parent terms in the moved axes)."""
        pose = state.pose()
        RT = pose.RT
        w_p, alpha_p = ca.mtimes(RT, parent.w), ca.mtimes(RT, parent.alpha)
        a_p = ca.mtimes(RT, parent.point(pose.p))
        rate, acceleration = self.S(qd), self.S(qdd)
        w_j, v_j = rate[:3], rate[3:]
        return FrameMotion(
            w_p + w_j,
            alpha_p + ca.cross(w_p, w_j) + acceleration[:3],
            a_p + 2 * ca.cross(w_p, v_j) + acceleration[3:] + ca.cross(w_j, v_j),
        )

    # --- motion subspace in the moved frame -------------------------------------------------
    def S(self, amount: SX) -> SX:
        """``S * amount``: the joint's spatial motion (6 x 1) for joint rates ``amount``."""
        entries = [SX(0)] * 6
        rows = self.rows
        for k, row in enumerate(rows):
            entries[row] = amount if len(rows) == 1 else amount[k]
        return ca.vertcat(*entries)

    def project(self, force: SX) -> SX:
        """``S^T f`` (nv x 1; nv x k for k force columns): the components along the joint."""
        rows = self.rows
        if len(rows) == 1:
            return force[rows[0], :]
        return ca.vertcat(*[force[r, :] for r in rows])

    def column(self, inertia: SX) -> SX:
        """``I S`` (6 x nv) for a 6x6 inertia."""
        rows = self.rows
        return inertia[:, rows[0]] if len(rows) == 1 else ca.horzcat(*[inertia[:, r]
                                                                        for r in rows])

    # --- motion subspace in the base frame ----------------------------------------------------
    def base_subspace(self, pose: Transform) -> SX:
        """``S`` in the base frame at the base origin (6 x nv), the moved frame at ``pose``."""
        columns = []
        for kind, axis in self.dofs:
            a = pose.R[:, axis]
            columns.append(ca.vertcat(a, ca.cross(pose.p, a)) if kind == TURN
                           else ca.vertcat(SX.zeros(3, 1), a))
        return ca.horzcat(*columns)

    def along(self, subspace: SX, force: SX) -> SX:
        """``subspace^T force`` for a :meth:`base_subspace` and a base-frame force."""
        return ca.dot(subspace, force) if self.nv == 1 else ca.mtimes(subspace.T, force)

    def project_base(self, pose: Transform, force: SX) -> SX:
        """``S^T F`` (nv x 1) for a base-frame force ``F`` about the base origin (6 x 1)."""
        moment = None
        parts = []
        for kind, axis in self.dofs:
            a = pose.R[:, axis]
            if kind == TURN:
                if moment is None:
                    moment = force[:3] - ca.cross(pose.p, force[3:])
                parts.append(ca.dot(a, moment))
            else:
                parts.append(ca.dot(a, force[3:]))
        return ca.vertcat(*parts)

    def point_columns(self, pose: Transform, moment: SX, mass: float,
                      per: float = 1.0) -> tuple[SX, SX]:
        """``(J_w, J_v)`` (3 x nv each): the angular velocity and ``d(moment)/dt / per`` per
        unit rate, for a first moment ``moment = mass * point`` (base frame) carried by the
        joint; with ``mass = 1`` the geometric Jacobian columns of ``point``, with ``per``
        the total mass the centre-of-mass Jacobian's."""
        arm = None
        angular, linear = [], []
        for kind, axis in self.dofs:
            a = pose.R[:, axis]
            if kind == TURN:
                if arm is None:
                    arm = moment - mass * pose.p
                angular.append(a)
                linear.append(ca.cross(a, arm) if per == 1.0 else ca.cross(a, arm) / per)
            else:
                angular.append(SX(3, 1))
                linear.append(a * (mass / per))
        return ca.horzcat(*angular), ca.horzcat(*linear)

    # --- articulated-body algorithm -----------------------------------------------------------
    def articulate(self, IA: SX, u: SX, armature=0.0) -> Articulation:
        """The joint's step of ABA (RBDA table 7.1) for the articulated inertia ``IA`` of its
        body and ``u = tau - S^T pA``: ``U = IA S``, ``D = S^T U``, solved by an LDL^T
        factorisation (``D`` is symmetric positive definite). A rotor inertia ``armature``
        (1-dof joints) adds to ``D``."""
        U = self.column(IA)
        return Articulation(U, self.project(U), u)

    # --- inertial parameters ------------------------------------------------------------------
    def split(self, inertia: Inertia) -> tuple[Inertia, Inertia]:
        """``(unobservable, kept)``, summing to a body's inertia (joint frame): the part the
        joint cannot tell from the same part on its parent body, which may move there without
        changing the dynamics (Khalil & Kleinfinger 1987, see :mod:`casdyn.model.grouping`), and
        the rest. Nothing moves by default."""
        return Inertia.zero(), inertia

    # --- coordinates ---------------------------------------------------------------------------
    def limits(self, joint: Joint) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)`` position limits, (nq,) each; infinite where there are none."""
        return np.full(self.nq, -math.inf), np.full(self.nq, math.inf)

    def neutral(self, joint: Joint) -> np.ndarray:
        """The home coordinates (nq,)."""
        return np.zeros(self.nq)

    def sampling_box(self, joint: Joint) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)``: a random configuration draws uniformly in this box, then
        :meth:`from_box` turns the draw into coordinates."""
        raise NotImplementedError

    def from_box(self, sample: np.ndarray) -> np.ndarray:
        """Coordinates (nq,) for a draw from :meth:`sampling_box` (n of them: (n, nq))."""
        return sample

    def integrate(self, q: SX, v: SX) -> SX:
        """``q ⊕ v`` (nq x 1): the coordinates after moving with the rates ``v`` for unit time."""
        return q + v

    def difference(self, q0: SX, q1: SX) -> SX:
        """``q1 ⊖ q0`` (nv x 1): the ``v`` with ``integrate(q0, v) == q1``."""
        return q1 - q0

    def tangent(self, q: SX) -> SX | None:
        """``d integrate(q, v) / dv`` at ``v = 0`` (nq x nv), with the unit quaternions of
        ``q`` not normalised (so that chained with the derivative of a function that
        normalises them, it gives the tangent-space derivative); None for the identity."""
        return None

    # --- Pinocchio's layout of the same joint (casdyn.interop, SRDF group states) --------------
    def pinocchio_nq(self, joint: Joint) -> int:
        """The number of coordinates Pinocchio's joint model has."""
        return self.nq

    def to_pinocchio(self, joint: Joint, q: np.ndarray) -> np.ndarray:
        """Coordinates ``q`` (..., nq) in Pinocchio's layout (..., :meth:`pinocchio_nq`)."""
        return q

    def from_pinocchio(self, joint: Joint, q: np.ndarray) -> np.ndarray | None:
        """Pinocchio's coordinates (..., n) in casdyn's (..., nq); None where ``n`` is not a
        size this joint's coordinates are written in."""
        return q if q.shape[-1] == self.nq else None

    def pinocchio_velocity_order(self) -> tuple[int, ...]:
        """Pinocchio's velocity entries as indices of casdyn's (the same for accelerations
        and forces)."""
        return tuple(range(self.nv))


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


def joint_type(name: str) -> JointType:
    """The joint type called ``name`` (a key of :data:`JOINT_TYPES`)."""
    return JOINT_TYPES[name]
