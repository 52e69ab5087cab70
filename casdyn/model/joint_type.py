"""What every joint type provides (Featherstone's ``jcalc``, Pinocchio's ``JointModelBase``):
the base class :class:`JointType`, whose motion-subspace parts are written once from its
``dofs``, and what a joint type reads of a joint and of its state. The types themselves are
in :mod:`casdyn.model.joints`."""

from __future__ import annotations

import math
from typing import Any, Protocol

import casadi as ca
import numpy as np

from ..math.inertia import Inertia
from ..math.spatial import SX, FrameMotion, Transform
from .articulation import Articulation
from .dof_axes import DofAxes

TURN, SLIDE = "turn", "slide"

_TYPES: dict[str, JointType] = {}


def named(name: str) -> JointType:
    """The joint type called ``name``."""
    return _TYPES[name]


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

    def __init__(self) -> None:
        _TYPES[self.name] = self  # one object per type (casdyn.model.joints makes them)

    def __reduce__(self):
        return (named, (self.name,))  # the same object after unpickling

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

    # --- the dofs as axes of another frame ---------------------------------------------------
    def axes(self, pose: Transform) -> DofAxes:
        """The joint's dofs as axes of the frame in which its moved frame is at ``pose``
        (the base frame, or a body's): the motion subspace there, its projections and its
        Jacobian columns (:class:`casdyn.model.dof_axes.DofAxes`)."""
        return DofAxes.at(self.dofs, pose, TURN)

    def along(self, subspace: SX, force: SX) -> SX:
        """``subspace^T force`` for a :meth:`DofAxes.subspace` and a force in its frame."""
        return ca.dot(subspace, force) if self.nv == 1 else ca.mtimes(subspace.T, force)

    # --- articulated-body algorithm -----------------------------------------------------------
    def articulate(self, IA: SX, u: SX, armature=0.0) -> Articulation:
        """The joint's step of ABA (RBDA table 7.1) for the articulated inertia ``IA`` of its
        body and ``u = tau - S^T pA``: ``U = IA S``, ``D = S^T U``, solved by an LDL^T
        factorisation (``D`` is symmetric positive definite). A rotor inertia ``armature``
        adds to ``D``'s diagonal, one per dof."""
        U = self.column(IA)
        D = self.project(U)
        if isinstance(armature, SX) or armature != 0:
            D = D + armature * SX.eye(self.nv)
        return Articulation(U, D, u)

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
