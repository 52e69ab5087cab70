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
