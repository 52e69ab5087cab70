"""Spatial algebra on CasADi SX in rotation + translation form (Featherstone, RBDA 2008, ch. 2).

Motion vectors are 6x1 ``[w; v]`` (angular, then linear velocity of the frame origin) and
force vectors ``[n; f]`` (moment about the frame origin, then force), matching MATLAB's
wrench ordering. A :class:`Transform` is the pose ``(R, p)`` of a child frame in its parent:
``R`` maps child coordinates to parent coordinates, ``p`` is the child origin in the parent.
Transforms are applied with 3x3 products instead of dense 6x6 ones, and symmetric results are
built from their upper triangles, which keeps the graphs small.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import casadi as ca
import numpy as np

from .inertia import Inertia

SX = ca.SX


def sym(value) -> SX:
    """A NumPy constant or SX expression as SX (exact zeros stay simplifiable)."""
    return value if isinstance(value, SX) else SX(np.asarray(value, dtype=float))


def cross_motion(v: SX, m: SX) -> SX:
    """``v x m`` for motion vectors (RBDA eq. 2.31)."""
    w, u = v[:3], v[3:]
    return ca.vertcat(ca.cross(w, m[:3]), ca.cross(w, m[3:]) + ca.cross(u, m[:3]))


def symmetrized(x: SX) -> SX:
    """The symmetric matrix with ``x``'s upper triangle: the lower entries are the same
    graph nodes, and whatever ``x`` computed below the diagonal drops out of the graph."""
    return ca.triu2symm(ca.triu(x))


def reciprocal(d: SX) -> SX:
    """``1 / d``, to multiply by: several quotients by one ``d`` then cost one division.
    CasADi rewrites ``x * (1 / d)`` back into ``x / d``, not ``x * ((2 / d) * 0.5)``, which
    is the same number (scaling by a power of two is exact)."""
    return (2 / d) * 0.5


def congruence(m: SX, s: SX) -> SX:
    """``m s m^T`` for symmetric ``s``, each distinct entry computed once."""
    return symmetrized(ca.mtimes(ca.mtimes(m, s), m.T))


def articulated_update(IA: SX, U: SX, U_over_d: SX, k: int) -> SX:
    """``IA - U U^T / d`` with ``U = IA e_k`` and ``d = U[k]`` (RBDA eq. 7.41 with a single
    axis). Row and column k of the result are exactly zero; they are built as zeros."""
    keep = np.ones((6, 6))
    keep[k, :] = keep[:, k] = 0.0
    return symmetrized(ca.times(IA - ca.mtimes(U, U_over_d.T), SX(keep)))


def skew(p: SX) -> SX:
    """The matrix ``p x`` with ``(p x) a == cross(p, a)``."""
    return ca.vertcat(
        ca.horzcat(0, -p[2], p[1]),
        ca.horzcat(p[2], 0, -p[0]),
        ca.horzcat(-p[1], p[0], 0),
    )


@dataclass(frozen=True)
class FrameMotion:
    """The classical (not spatial) motion of a frame, in its own axes: angular velocity
    ``w``, angular acceleration ``alpha`` and the acceleration ``origin`` of its origin
    (3x1 each), as in the Newton-Euler recursion of Luh, Walker & Paul (1980). Unlike the
    spatial form it needs no linear velocities: a point fixed in the frame at ``r``
    accelerates with ``origin + U r``, ``U = (alpha x) + (w x)(w x)``."""

    w: SX
    alpha: SX
    origin: SX

    @cached_property
    def U(self) -> SX:
        """``(alpha x) + (w x)^2``, entry by entry; entries nobody uses drop out of the graph."""
        (wx, wy, wz), (ax, ay, az) = ca.vertsplit(self.w), ca.vertsplit(self.alpha)
        xx, yy, zz, xy, xz, yz = wx * wx, wy * wy, wz * wz, wx * wy, wx * wz, wy * wz
        return ca.vertcat(
            ca.horzcat(-(yy + zz), xy - az, xz + ay),
            ca.horzcat(xy + az, -(xx + zz), yz - ax),
            ca.horzcat(xz - ay, yz + ax, -(xx + yy)),
        )

    def point(self, r: SX) -> SX:
        """The acceleration of the point ``r`` (3x1, frame axes) fixed in the frame."""
        return self.origin + ca.mtimes(self.U, r)


@dataclass(frozen=True)
class BodyInertia:
    """The body forces of RNEA and ABA for a body's constant inertia (a
    :class:`casdyn.model.tree.Inertia` about the frame origin). The mass may be zero with a
    nonzero first moment: the remainders of :mod:`casdyn.model.grouping`.

    With mass the force is formed about the centre of mass, where the bias force loses its
    ``v_c x m v_c = 0`` term (which a graph built at the origin would compute and cancel only
    numerically) and a diagonal ``Ic`` gives ``w x Ic w`` in 6 products instead of 12.
    """

    inertia: Inertia

    @staticmethod
    def _w_cross_Iw(inertia: np.ndarray, w: SX) -> SX:
        """``w x (inertia w)``; 6 products for a diagonal ``inertia``."""
        if np.count_nonzero(inertia - np.diag(np.diag(inertia))) == 0:
            i0, i1, i2 = np.diag(inertia)
            return ca.vertcat((i2 - i1) * (w[1] * w[2]), (i0 - i2) * (w[2] * w[0]),
                              (i1 - i0) * (w[0] * w[1]))
        return ca.cross(w, ca.mtimes(SX(inertia), w))

    def force(self, motion: FrameMotion) -> SX:
        """The force ``[n; f]`` (about the frame origin, frame axes) that gives the body
        ``motion``: ``f = m a_o + U h``, ``n = I alpha + w x I w + h x a_o``."""
        body, w, alpha = self.inertia, motion.w, motion.alpha
        if isinstance(body.mass, SX):  # symbolic parameters: the general form at the origin
            h, I = body.first_moment, body.rotational  # noqa: E741
            angular = ca.mtimes(I, alpha) + ca.cross(w, ca.mtimes(I, w))
            return ca.vertcat(angular + ca.cross(h, motion.origin),
                              body.mass * motion.origin + ca.mtimes(motion.U, h))
        if body.mass > 0:
            c, Ic = SX(body.com.reshape(3, 1)), body.about_com
            linear = body.mass * motion.point(c)
            angular = ca.mtimes(SX(Ic), alpha) + self._w_cross_Iw(Ic, w)
            return ca.vertcat(angular + ca.cross(c, linear), linear)
        h = SX(body.first_moment.reshape(3, 1))
        angular = ca.mtimes(SX(body.rotational), alpha) + self._w_cross_Iw(body.rotational, w)
        return ca.vertcat(angular + ca.cross(h, motion.origin), ca.mtimes(motion.U, h))


@dataclass(frozen=True)
class RigidInertia:
    """Spatial inertia of a rigid body about a frame origin, in that frame: mass ``m``,
    first moment ``h = m c`` (3x1) and rotational inertia ``I`` about the origin (3x3)."""

    m: float
    h: SX
    I: SX  # noqa: E741  (Featherstone's symbol)

    @staticmethod
    def constant(inertia) -> RigidInertia:
        """From a :class:`casdyn.model.tree.Inertia` of NumPy constants."""
        return RigidInertia(inertia.mass, sym(inertia.first_moment), sym(inertia.rotational))

    def __add__(self, other: RigidInertia) -> RigidInertia:
        return RigidInertia(self.m + other.m, self.h + other.h, self.I + other.I)

    def apply(self, motion: SX) -> SX:
        """The momentum ``I v`` (a force vector) of the body moving with ``motion``."""
        w, v = motion[:3], motion[3:]
        return ca.vertcat(
            ca.mtimes(self.I, w) + ca.cross(self.h, v), self.m * v - ca.cross(self.h, w)
        )

    def articulated(self) -> SX:
        """The same inertia as a dense symmetric 6x6 matrix ``[I, h x; (h x)^T, m 1]``."""
        hx = skew(self.h)
        return ca.blockcat([[self.I, hx], [hx.T, self.m * SX.eye(3)]])


@dataclass(frozen=True)
class Transform:
    """Pose ``(R, p)`` of a child frame in its parent frame (3x3 and 3x1 SX)."""

    R: SX
    p: SX

    @staticmethod
    def identity() -> Transform:
        return Transform(SX.eye(3), SX.zeros(3, 1))

    @staticmethod
    def constant(rotation, translation) -> Transform:
        return Transform(sym(rotation), sym(np.reshape(translation, (3, 1))))

    @staticmethod
    def rotation_z(c: SX, s: SX) -> ZRotation:
        """A rotation by the angle with cosine ``c`` and sine ``s`` about z."""
        R = ca.vertcat(ca.horzcat(c, -s, 0), ca.horzcat(s, c, 0), ca.horzcat(0, 0, 1))
        return ZRotation(R, SX.zeros(3, 1), c, s)

    @staticmethod
    def translation_z(d: SX) -> Transform:
        return Transform(SX.eye(3), ca.vertcat(0, 0, d))

    @cached_property
    def RT(self) -> SX:
        """``R^T``, made once per transform."""
        return self.R.T

    def then(self, child: Transform) -> Transform:
        """The pose of ``child``'s frame in this transform's parent frame."""
        return Transform(ca.mtimes(self.R, child.R), ca.mtimes(self.R, child.p) + self.p)

    def inverse(self) -> Transform:
        return Transform(self.RT, -ca.mtimes(self.RT, self.p))

    def matrix(self) -> SX:
        """The 4x4 homogeneous matrix."""
        return ca.vertcat(ca.horzcat(self.R, self.p), ca.horzcat(0, 0, 0, 1))

    def motion_to_child(self, m: SX) -> SX:
        """A motion vector in parent coordinates → child coordinates (RBDA ``X m``)."""
        w, v = m[:3], m[3:]
        return ca.vertcat(ca.mtimes(self.RT, w), ca.mtimes(self.RT, v - ca.cross(self.p, w)))

    def force_to_parent(self, f: SX) -> SX:
        """A force vector in child coordinates → parent coordinates (RBDA ``X^T f``)."""
        f_parent = ca.mtimes(self.R, f[3:])
        return ca.vertcat(ca.mtimes(self.R, f[:3]) + ca.cross(self.p, f_parent), f_parent)

    def rigid_inertia_to_parent(self, inertia: RigidInertia) -> RigidInertia:
        """``X^T I X`` for a rigid-body inertia, kept in (m, h, I) form.

        With ``u = R h``: ``h' = u + m p`` and
        ``I' = R I R^T - (p u^T + u p^T) + 2 (u.p) 1 - m p p^T + m (p.p) 1``.
        """
        m, p = inertia.m, self.p
        u = ca.mtimes(self.R, inertia.h)
        h = u + m * p
        diagonal = (2 * ca.dot(u, p) + m * ca.dot(p, p)) * SX.eye(3)
        outer = ca.mtimes(p, h.T) + ca.mtimes(u, p.T)  # p u^T + m p p^T + u p^T
        rotated = ca.mtimes(ca.mtimes(self.R, inertia.I), self.RT)
        return RigidInertia(m, h, symmetrized(rotated - outer + diagonal))

    def articulated_to_parent(self, inertia: SX) -> SX:
        """``X^T I X`` for a symmetric 6x6 articulated inertia ``[A B; B^T C]``."""
        A, B, C = inertia[:3, :3], inertia[:3, 3:], inertia[3:, 3:]
        A1, C1 = congruence(self.R, A), congruence(self.R, C)
        B1 = ca.mtimes(ca.mtimes(self.R, B), self.RT)
        px = skew(self.p)
        K = ca.mtimes(px, B1.T)
        A2 = symmetrized(A1 + K + K.T + ca.mtimes(ca.mtimes(px, C1), px.T))
        B2 = B1 + ca.mtimes(px, C1)
        return ca.blockcat([[A2, B2], [B2.T, C1]])


@dataclass(frozen=True)
class ZRotation(Transform):
    """A pure rotation about z (a revolute joint's motion), whose inertia transforms use the
    double-angle form: a symmetric 2x2 block ``[a b; b d]`` turns into
    ``a' = m + t``, ``d' = m - t``, ``b' = h sin2 + b cos2`` with ``m = (a + d)/2``,
    ``h = (a - d)/2``, ``t = h cos2 - b sin2``: 12 operations instead of 21."""

    c: SX = None
    s: SX = None

    @staticmethod
    def _turned(a: SX, b: SX, d: SX, cos2: SX, sin2: SX) -> tuple[SX, SX, SX]:
        """``(a', b', d')`` of the symmetric 2x2 block ``[a b; b d]`` turned about z."""
        mean, half = (a + d) / 2, (a - d) / 2
        turn = half * cos2 - b * sin2
        return mean + turn, half * sin2 + b * cos2, mean - turn

    def _symmetric(self, S: SX, cos2: SX, sin2: SX) -> SX:
        """``R S R^T`` for a symmetric 3x3 ``S``."""
        a, b, d = self._turned(S[0, 0], S[0, 1], S[1, 1], cos2, sin2)
        column = ca.mtimes(self.R[:2, :2], S[:2, 2])  # (xz, yz) rotate as a vector
        return ca.blockcat([[a, b, column[0]], [b, d, column[1]], [column[0], column[1], S[2, 2]]])

    def _general(self, M: SX, cos2: SX, sin2: SX) -> SX:
        """``R M R^T`` for any 3x3 ``M``: the symmetric part of its xy block by the double
        angle, the antisymmetric part unchanged, the rest rotated as vectors (30 operations
        instead of 36)."""
        k = (M[0, 1] - M[1, 0]) / 2
        a, b, d = self._turned(M[0, 0], (M[0, 1] + M[1, 0]) / 2, M[1, 1], cos2, sin2)
        column = ca.mtimes(self.R[:2, :2], M[:2, 2])
        row = ca.mtimes(M[2, :2], self.RT[:2, :2])
        return ca.blockcat([[a, b + k, column[0]], [b - k, d, column[1]],
                            [row[0], row[1], M[2, 2]]])

    def _double_angle(self) -> tuple[SX, SX]:
        return (self.c - self.s) * (self.c + self.s), 2 * self.c * self.s

    def rigid_inertia_to_parent(self, inertia: RigidInertia) -> RigidInertia:
        cos2, sin2 = self._double_angle()
        return RigidInertia(inertia.m, ca.mtimes(self.R, inertia.h),
                            self._symmetric(inertia.I, cos2, sin2))

    def articulated_to_parent(self, inertia: SX) -> SX:
        cos2, sin2 = self._double_angle()
        A, B, C = inertia[:3, :3], inertia[:3, 3:], inertia[3:, 3:]
        B1 = self._general(B, cos2, sin2)
        return ca.blockcat([[self._symmetric(A, cos2, sin2), B1],
                            [B1.T, self._symmetric(C, cos2, sin2)]])
