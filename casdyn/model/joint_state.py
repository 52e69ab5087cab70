"""A joint evaluated at its coordinates: its type, constant tree transform and own motion.
The algorithms reach a joint's type only through its state."""

from __future__ import annotations

from dataclasses import dataclass

from ..math.spatial import SX, FrameMotion, RigidInertia, Transform
from .joint_type import Joint, JointType


@dataclass(frozen=True)
class JointState:
    """A joint evaluated at its coordinates: its type, its constant tree transform and its
    own motion. The algorithms reach the joint type only through it."""

    type: JointType
    Xtree: Transform  # constant pose of the joint frame at q = 0, in the parent frame
    XJ: Transform  # the joint's own motion (jcalc's XJ)
    v: int | slice  # where its velocities are in qd, qdd, tau (an index for one: a scalar)
    multiplier: float | None = None  # a mimic joint's: its rates are multiplier * v's

    @staticmethod
    def at(joint: Joint, q: SX) -> JointState:
        """The state of ``joint`` for the model's whole coordinate vector ``q``."""
        kind = joint.type
        qi = q[joint.idx_q] if kind.nq == 1 else q[joint.idx_q : joint.idx_q + kind.nq]
        v = joint.idx_v if kind.nv == 1 else slice(joint.idx_v, joint.idx_v + kind.nv)
        tree = Transform.constant(joint.rotation, joint.translation)
        if joint.mimic is None:
            return JointState(kind, tree, kind.joint_transform(joint, qi), v)
        k, b = joint.mimic.multiplier, joint.mimic.offset
        return JointState(kind, tree, kind.joint_transform(joint, k * qi + b), v, k)

    def rates(self, x: SX) -> SX:
        """The joint's entries of a velocity-sized vector (``qd``, ``qdd``)."""
        return x[self.v] if self.multiplier is None else self.multiplier * x[self.v]

    def put(self, target: SX, value: SX, rows=None) -> None:
        """Add the joint's part of a generalised force (or Jacobian columns, ``rows`` of
        them) to ``target``'s entries for its velocities; a mimic joint's, times its
        multiplier, to its leader's. (Added, not assigned, as a leader and its mimic joints
        share entries; where ``target`` holds structural zeros CasADi adds nothing.)"""
        where = self.v if rows is None else (rows, self.v)
        scaled = value if self.multiplier is None else self.multiplier * value
        target[where] = target[where] + scaled

    @property
    def factor(self) -> float:
        """What its rates are times its velocities' entries: 1, a mimic joint's multiplier
        (which may be 0: the joint is then held at its offset)."""
        return 1.0 if self.multiplier is None else self.multiplier

    @property
    def columns(self) -> range:
        """The indices of its velocities."""
        v = self.v
        return range(v, v + 1) if isinstance(v, int) else range(v.start, v.stop)

    # --- the type's parts, for this state ------------------------------------------------------
    def S(self, amount: SX) -> SX:
        return self.type.S(amount)

    def project(self, force: SX) -> SX:
        return self.type.project(force)

    def propagate(self, parent: FrameMotion, qd: SX, qdd: SX) -> FrameMotion:
        return self.type.propagate(parent, self, qd, qdd)

    # --- the joint's transform to its parent ---------------------------------------------
    def pose(self) -> Transform:
        """Pose of the moved frame in the parent frame."""
        return self.Xtree.then(self.XJ)

    def motion_to_child(self, m: SX) -> SX:
        return self.XJ.motion_to_child(self.Xtree.motion_to_child(m))

    def force_to_parent(self, f: SX) -> SX:
        return self.Xtree.force_to_parent(self.XJ.force_to_parent(f))

    def rigid_inertia_to_parent(self, inertia: RigidInertia) -> RigidInertia:
        return self.Xtree.rigid_inertia_to_parent(self.XJ.rigid_inertia_to_parent(inertia))

    def articulated_to_parent(self, inertia: SX) -> SX:
        return self.Xtree.articulated_to_parent(self.XJ.articulated_to_parent(inertia))
