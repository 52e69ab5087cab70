"""Closed kinematic loops held as holonomic constraints (docs: "Floating base and joints").

A loop joins two bodies of the tree: ``kind="point"`` holds a point of body ``a`` on a point
of body ``b`` (3 constraints, MuJoCo's ``connect``, Pinocchio's bilateral ``CONTACT_3D``),
``"6d"`` also holds their frames' orientations together (6 constraints, MuJoCo's ``weld``,
Pinocchio's ``CONTACT_6D``). It is a contact between two bodies: its rows are the relative
Jacobian ``J_a - J_b`` of the two points (base-frame axes, ``[w; v]``, the point kind the
linear rows) and its drift the difference of their classical accelerations, so the same KKT
solve holds contacts and loops together (:class:`casdyn.algorithms.contacts.ContactSystem`).
Its force ``lambda`` (base-frame axes, a wrench ``[n; f]`` about the point for ``"6d"``)
acts on body ``a`` and, opposite, on body ``b``: ``M qdd + h = tau + (J_a - J_b)^T lambda``.
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from ..math.factorization import LDLT
from ..math.spatial import SX
from ..model.loops import Loop
from ..model.tree import Model
from .kinematics import geometric_jacobian, relative_transform
from .task_space import frame_acceleration


def _bodies(model: Model, loop: Loop) -> tuple[int, int]:
    return (model.body_index(loop.body_a, allow_base=True),
            model.body_index(loop.body_b, allow_base=True))


def loop_rows(model: Model, q: SX, qd: SX, loops: tuple[Loop, ...]) -> tuple[SX, SX]:
    """``(J, drift)``: the loops' stacked relative Jacobians (m x nv) and ``Jdot qd``
    (m x 1), the relative classical acceleration of the held points at ``qdd = 0``."""
    zero = SX.zeros(model.nv, 1)
    rows, drifts = [], []
    for loop in loops:
        a, b = _bodies(model, loop)
        J = geometric_jacobian(model, q, a, loop.point_a) \
            - geometric_jacobian(model, q, b, loop.point_b)
        drift = frame_acceleration(model, q, qd, zero, a, loop.point_a) \
            - frame_acceleration(model, q, qd, zero, b, loop.point_b)
        rows.append(loop.rows(J))
        drifts.append(loop.rows(drift))
    return ca.vertcat(*rows), ca.vertcat(*drifts)


# proximal least squares: the damping relative to the mean of diag(A^T A), and its passes
DAMPING = 1e-10
PASSES = 4


def minimum_norm_least_squares(A: SX, b: SX) -> SX:
    """``x`` (n x 1) minimising ``|A x - b|`` for ``A`` (m x n) and ``b`` (m x 1), and of
    those the one of least ``|x|``: the exact solution where ``A`` has full column rank,
    ``pinv(A) b`` where it is singular.

    Proximal (damped) least squares, as Pinocchio's constraint solver:
    ``x_(k+1) = (A^T A + mu I)^-1 (A^T b + mu x_k)`` from ``x_0 = 0``, ``mu`` = DAMPING times
    the mean of ``diag(A^T A)`` (about the square of ``A``'s typical singular value). Each
    pass multiplies the error along a singular value ``s`` of ``A`` by ``mu / (mu + s^2)``:
    for ``s`` above 1e-3 of the typical one the PASSES passes leave less than 1e-16 of it,
    at 1e-4 about 1e-8; along ``s = 0`` the iterate stays at 0 up to rounding (about 1e-6
    of ``|x|``: the rounding of ``A^T b`` over ``mu``, once per pass), which makes it the
    least-norm solution. Within about 1e-5 of a singular configuration (``s`` relative)
    the result is damped towards the least-norm one. Nothing is divided by a quantity
    that can vanish: ``A^T A + mu I`` is positive definite.
    """
    n = A.size2()
    N = ca.mtimes(A.T, A)
    mu = DAMPING * ca.fmax(ca.trace(N) / n, 1e-300)  # A = 0 leaves x = 0
    factor = LDLT(N + mu * SX.eye(n))
    Atb = ca.mtimes(A.T, b)
    x = factor.solve(Atb)
    for _ in range(PASSES - 1):
        x = factor.solve(Atb + mu * x)
    return x


def loop_residual(model: Model, q: SX, loops: tuple[Loop, ...]) -> SX:
    """The loops' closure errors (m x 1), zero where every loop is closed, base-frame
    axes: ``p_a - p_b`` for the held points, and for ``"6d"`` first ``R_a log(R_b^T R_a)``,
    the rotation vector between the held frames (its rate is ``w_a - w_b`` where the loop is
    closed, as the rows of :func:`loop_rows`)."""
    parts = []
    for loop in loops:
        a, b = _bodies(model, loop)
        pose_a = relative_transform(model, q, a, -1) if a >= 0 else None
        pose_b = relative_transform(model, q, b, -1) if b >= 0 else None
        p_a, R_a = _held(pose_a, loop.point_a, np.eye(3))
        p_b, R_b = _held(pose_b, loop.point_b, np.reshape(loop.rotation_b, (3, 3)))
        if loop.kind == "6d":
            parts.append(ca.mtimes(R_a, _rotation_vector(ca.mtimes(R_b.T, R_a))))
        parts.append(p_a - p_b)
    return ca.vertcat(*parts)


def _rotation_vector(E: SX) -> SX:
    """The rotation vector (axis times angle, the angle in [0, pi]) of the rotation matrix
    ``E``: ``theta / sin(theta) s`` with ``s`` the vector of ``(E - E^T) / 2`` (``sin(theta)``
    times the axis); near ``theta = 0`` the series ``1 + sin^2/6``, so that value and
    derivative are finite (at ``theta = pi`` exactly the axis is undetermined)."""
    s = ca.vertcat(E[2, 1] - E[1, 2], E[0, 2] - E[2, 0], E[1, 0] - E[0, 1]) / 2
    c = (E[0, 0] + E[1, 1] + E[2, 2] - 1) / 2
    s2 = ca.dot(s, s)
    small = ca.logic_and(s2 < 1e-8, c > 0)
    safe = ca.if_else(s2 < 1e-24, 1e-24, s2)
    factor = ca.if_else(small, 1 + s2 / 6 + 3 * s2 * s2 / 40,
                        ca.atan2(ca.sqrt(safe), c) / ca.sqrt(safe))
    return factor * s


def _held(pose, point, rotation: np.ndarray) -> tuple[SX, SX]:
    """(position, axes) in the base frame of the held frame: ``point`` with ``rotation``
    in the frame at ``pose`` (None: the base)."""
    point = SX(np.reshape(point, (3, 1)))
    if pose is None:
        return point, SX(rotation)
    return pose.p + ca.mtimes(pose.R, point), ca.mtimes(pose.R, SX(rotation))
