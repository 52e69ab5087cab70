"""Joint models: the only place that knows joint types (Featherstone's ``jcalc``).

Every joint frame has the joint axis as z (see :mod:`casdyn.model`), so a revolute joint's
motion subspace is ``S = [e_z; 0]`` and a prismatic joint's ``S = [0; e_z]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca

from .model import Joint
from .spatial import SX, FrameMotion, RigidInertia, Transform


@dataclass(frozen=True)
class JointState:
    """A joint evaluated at one ``q_i``: its constant tree transform followed by its motion."""

    revolute: bool
    tree: Transform  # constant pose of the joint frame at q = 0, in the parent frame
    motion: Transform  # the joint's own motion about / along z

    @staticmethod
    def at(joint: Joint, qi: SX) -> JointState:
        tree = Transform.constant(joint.rotation, joint.translation)
        if joint.kind == "revolute":
            angle = qi + joint.offset if joint.offset else qi
            return JointState(True, tree, Transform.rotation_z(ca.cos(angle), ca.sin(angle)))
        return JointState(False, tree, Transform.translation_z(qi))

    # --- motion subspace S -------------------------------------------------------------
    def S(self, amount: SX) -> SX:
        """``S * amount``: the joint's spatial motion for a joint rate ``amount``."""
        zero = SX.zeros(5, 1)
        return ca.vertcat(zero[:2], amount, zero[2:]) if self.revolute else ca.vertcat(zero, amount)

    def project(self, force: SX) -> SX:
        """``S^T f``: the component of a force vector along the joint."""
        return force[2] if self.revolute else force[5]

    def column(self, inertia: SX) -> SX:
        """``I S`` for a 6x6 inertia: the column of the joint's coordinate."""
        return inertia[:, 2] if self.revolute else inertia[:, 5]

    @property
    def index(self) -> int:
        """The row of the joint's coordinate in a spatial vector."""
        return 2 if self.revolute else 5

    # --- classical motion (RNEA's forward pass) ------------------------------------------
    def propagate(self, parent: FrameMotion, qd: SX, qdd: SX) -> FrameMotion:
        """This joint frame's motion from its parent frame's, for joint rate ``qd`` and
        acceleration ``qdd`` (Luh, Walker & Paul 1980, in the child's axes)."""
        RT = self.tree.RT
        w, alpha = ca.mtimes(RT, parent.w), ca.mtimes(RT, parent.alpha)
        origin = ca.mtimes(RT, parent.point(self.tree.p))
        if self.revolute:
            RzT = self.motion.RT
            w, alpha, origin = ca.mtimes(RzT, w), ca.mtimes(RzT, alpha), ca.mtimes(RzT, origin)
            # alpha + w x (qd e_z) + qdd e_z
            return FrameMotion(w + ca.vertcat(0, 0, qd),
                               alpha + ca.vertcat(w[1] * qd, -w[0] * qd, qdd), origin)
        # the origin slides by q e_z: its acceleration gains U q e_z, 2 w x (qd e_z), qdd e_z
        slid = FrameMotion(w, alpha, origin).point(self.motion.p)
        twice = 2 * qd
        return FrameMotion(w, alpha, slid + ca.vertcat(w[1] * twice, -w[0] * twice, qdd))

    # --- the joint's transform to its parent ---------------------------------------------
    def pose(self) -> Transform:
        """Pose of the joint frame in the parent frame."""
        return self.tree.then(self.motion)

    def motion_to_child(self, m: SX) -> SX:
        return self.motion.motion_to_child(self.tree.motion_to_child(m))

    def force_to_parent(self, f: SX) -> SX:
        return self.tree.force_to_parent(self.motion.force_to_parent(f))

    def rigid_inertia_to_parent(self, inertia: RigidInertia) -> RigidInertia:
        return self.tree.rigid_inertia_to_parent(self.motion.rigid_inertia_to_parent(inertia))

    def articulated_to_parent(self, inertia: SX) -> SX:
        return self.tree.articulated_to_parent(self.motion.articulated_to_parent(inertia))
