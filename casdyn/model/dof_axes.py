"""A joint's dofs as axes of a frame, once per pose (MuJoCo's ``cdof``, Featherstone's ``S``
expressed in another frame).

Every column of a joint's motion subspace turns about, or slides along, an axis of its moved
frame through that frame's origin. Placed at a pose (the moved frame seen from the base, or
from a body), the columns are two 3 x nv matrices: the unit axes of the turns
(``angular``) and of the slides (``linear``), each with the other kind's columns as
structural zeros. Every algorithm that needs a joint's columns in another frame uses the
operations below, written once for every joint type; the structural zeros make them the
same graphs as a per-dof case analysis (a turn's column has no ``linear`` part, so nothing
is computed for it there, and vice versa).
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca

from ..math.spatial import SX, Transform


@dataclass(frozen=True)
class DofAxes:
    """The dofs of one joint at the pose ``origin``, ``angular``, ``linear`` of its moved
    frame in some frame F (F's axes, origin ``origin``).

    ``angular``: 3 x nv, column k the unit axis of dof k if it turns, else structurally
    zero; ``linear``: 3 x nv, column k the unit axis of dof k if it slides, else
    structurally zero.
    """

    origin: SX  # 3 x 1, the moved frame's origin in F
    angular: SX  # 3 x nv
    linear: SX  # 3 x nv

    @staticmethod
    def at(dofs: tuple[tuple[str, int], ...], pose: Transform, turn: str) -> DofAxes:
        """The axes of ``dofs`` ((kind, axis of the moved frame) per column; ``turn`` the
        kind that turns) for the moved frame at ``pose`` in F."""
        angular, linear = SX(3, len(dofs)), SX(3, len(dofs))
        for k, (kind, axis) in enumerate(dofs):
            if kind == turn:
                angular[:, k] = pose.R[:, axis]
            else:
                linear[:, k] = pose.R[:, axis]
        return DofAxes(pose.p, angular, linear)

    @property
    def nv(self) -> int:
        return self.angular.size2()

    def _arm(self, point: SX) -> SX:
        """``point`` repeated for each column (3 x nv): the cross products below are
        column-wise."""
        return ca.repmat(point, 1, self.nv)

    def subspace(self) -> SX:
        """``S`` in F about F's origin (6 x nv): ``[a; origin x a]`` for a turn, ``[0; a]``
        for a slide."""
        return ca.vertcat(self.angular, self.linear + ca.cross(self._arm(self.origin),
                                                               self.angular))

    def project(self, force: SX) -> SX:
        """``S^T F`` (nv x 1) for a force ``F = [n; f]`` (6 x 1) in F about F's origin: a
        turn takes the moment about the moved frame's origin, a slide the force."""
        moment = force[:3] - ca.cross(self.origin, force[3:])
        return ca.mtimes(self.angular.T, moment) + ca.mtimes(self.linear.T, force[3:])

    def point_columns(self, moment: SX, mass, per: float = 1.0) -> tuple[SX, SX]:
        """``(J_w, J_v)`` (3 x nv each): the angular velocity and ``d(moment)/dt / per`` per
        unit rate, for a first moment ``moment = mass * point`` (in F) carried by the joint;
        with ``mass = 1`` the geometric Jacobian columns of ``point``, with ``per`` the
        total mass the centre-of-mass Jacobian's."""
        turning = ca.cross(self.angular, self._arm(moment - mass * self.origin))
        if per != 1.0:
            turning = turning / per
        return self.angular, turning + self.linear * (mass / per)

    def moved(self, rates: SX, w: SX, v: SX) -> tuple[SX, SX]:
        """``(w, v)``, a motion given by its angular velocity and the velocity of the point
        at ``origin``, plus the joint's own motion at ``rates`` (nv x 1): its turns add to
        ``w``, its slides to ``v``."""
        return w + ca.mtimes(self.angular, rates), v + ca.mtimes(self.linear, rates)

    def rate_of_change(self, w: SX, p: SX, v_p: SX, v: SX) -> tuple[SX, SX]:
        """The time derivatives (3 x nv each) of the Jacobian columns ``(J_w, J_v)`` of a
        point ``p`` moving at ``v_p``, for the moved frame turning at ``w`` with its origin
        moving at ``v`` (F the base frame): each axis turns, ``da/dt = w x a``, so a turn's
        column ``[a; a x (p - origin)]`` changes at
        ``[w x a; (w x a) x (p - origin) + a x (v_p - v)]`` and a slide's ``[0; a]`` at
        ``[0; w x a]``."""
        turning = ca.cross(self._arm(w), self.angular)
        linear = (ca.cross(turning, self._arm(p - self.origin))
                  + ca.cross(self.angular, self._arm(v_p - v))
                  + ca.cross(self._arm(w), self.linear))
        return turning, linear

    def local_rate_of_change(self, w: SX, v: SX) -> tuple[SX, SX]:
        """The time derivatives (3 x nv each) of a joint's local Jacobian columns (F a
        body's frame, which moves relative to the joint's moved frame with angular velocity
        ``w``, its point at ``origin`` at ``v``): a turn's ``[a; origin x a]`` changes at
        ``[a x w; origin x (a x w) + a x v]``, a slide's ``[0; a]`` at ``[0; a x w]``."""
        turning = ca.cross(self.angular, self._arm(w))
        linear = (ca.cross(self._arm(self.origin), turning)
                  + ca.cross(self.angular, self._arm(v))
                  + ca.cross(self.linear, self._arm(w)))
        return turning, linear
