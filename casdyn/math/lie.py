"""Rotations and rigid motions on CasADi SX: quaternions, and the exponential and logarithm of
SO(3), SE(3) and SE(2), free of NaN (values and derivatives) at zero rotation.

Quaternions are ``[w, x, y, z]`` (scalar first) and need not have unit norm: the rotation of
``q`` is that of ``q / |q|``. Twists are body twists ``[w; v]`` (angular first), and
``exp(twist)`` is the motion that moving with that constant body twist for unit time gives
(as Pinocchio's ``exp6``; Murray, Li & Sastry 1994, ch. 2).

The coefficient functions of the exponential and the logarithm are ratios such as
``sin(t)/t`` and ``(t - sin t)/t^3`` that are 0/0 at ``t = 0`` and lose digits to cancellation
near it. Below a threshold each is its Taylor series (terms until the next one is below
1e-17 relative at the threshold); above, its closed form evaluated at an argument that the
selection keeps away from zero, so that neither branch nor its derivative is ever NaN.
"""

from __future__ import annotations

import casadi as ca

from .spatial import SX, skew


def _branch(t2: SX, threshold: float, series: list[float], closed) -> SX:
    """``f(t)`` from ``t2 = t^2``: ``sum_k series[k] t2^k`` when ``t2 < threshold``, else
    ``closed(t, t2)``, the closed form never seeing ``t2 < threshold``."""
    small = t2 < threshold
    safe = ca.if_else(small, threshold, t2)
    taylor = 0
    for coefficient in reversed(series):
        taylor = taylor * t2 + coefficient
    return ca.if_else(small, taylor, closed(ca.sqrt(safe), safe))


def sin_over(t2: SX) -> SX:
    """``sin(t)/t``."""
    return _branch(t2, 1e-4, [1.0, -1 / 6, 1 / 120, -1 / 5040],
                   lambda t, _: ca.sin(t) / t)


def one_minus_cos_over(t2: SX) -> SX:
    """``(1 - cos t)/t^2``, written ``2 sin^2(t/2)/t^2`` (no cancellation)."""
    return _branch(t2, 1e-4, [1 / 2, -1 / 24, 1 / 720, -1 / 40320],
                   lambda t, s: 2 * ca.sin(t / 2) ** 2 / s)


def minus_sin_over(t2: SX) -> SX:
    """``(t - sin t)/t^3``."""
    return _branch(t2, 1e-2, [1 / 6, -1 / 120, 1 / 5040, -1 / 362880, 1 / 39916800,
                              -1 / 6227020800],
                   lambda t, s: (t - ca.sin(t)) / (t * s))


def half_cot_term(t2: SX) -> SX:
    """``(1 - (t/2) cot(t/2)) / t^2``, the coefficient of ``[w]x^2`` in ``V(w)^-1``."""
    return _branch(t2, 1e-2, [1 / 12, 1 / 720, 1 / 30240, 1 / 1209600, 1 / 47900160],
                   lambda t, s: (1 - t / 2 * ca.cos(t / 2) / ca.sin(t / 2)) / s)


def quaternion_product(a: SX, b: SX) -> SX:
    """``a b`` for quaternions ``[w, x, y, z]`` (4 x 1)."""
    wa, va, wb, vb = a[0], a[1:], b[0], b[1:]
    return ca.vertcat(wa * wb - ca.dot(va, vb), wa * vb + wb * va + ca.cross(va, vb))


def quaternion_conjugate(q: SX) -> SX:
    return ca.vertcat(q[0], -q[1:])


def rotation_matrix(q: SX) -> SX:
    """The rotation of the quaternion ``q`` (any nonzero norm): ``R(q / |q|)`` from the
    homogeneous form divided by ``|q|^2``, without a square root."""
    w, x, y, z = ca.vertsplit(q)
    ww, xx, yy, zz = w * w, x * x, y * y, z * z
    xy, xz, yz, wx, wy, wz = x * y, x * z, y * z, w * x, w * y, w * z
    s = 1 / (ww + xx + yy + zz)
    t = 2 * s
    return ca.vertcat(
        ca.horzcat(s * (ww + xx - yy - zz), t * (xy - wz), t * (xz + wy)),
        ca.horzcat(t * (xy + wz), s * (ww - xx + yy - zz), t * (yz - wx)),
        ca.horzcat(t * (xz - wy), t * (yz + wx), s * (ww - xx - yy + zz)),
    )


def normalized(q: SX) -> SX:
    return q / ca.norm_2(q)


def exp_quaternion(w: SX) -> SX:
    """The unit quaternion of the rotation vector ``w`` (3 x 1): ``[cos(t/2), sin(t/2)/t w]``."""
    t2 = ca.dot(w, w)
    half = sin_over(t2 / 4) / 2  # sin(t/2)/t
    return ca.vertcat(_cos_half(t2), half * w)


def _cos_half(t2: SX) -> SX:
    """``cos(t/2)`` from ``t^2``, with a derivative that is finite at ``t = 0``."""
    return _branch(t2, 1e-4, [1.0, -1 / 8, 1 / 384, -1 / 46080],
                   lambda t, _: ca.cos(t / 2))


def log_quaternion(q: SX) -> SX:
    """The rotation vector (3 x 1, angle in [0, pi]) of the quaternion ``q`` (any norm)."""
    q = normalized(q)
    q = ca.if_else(q[0] < 0, -q, q)  # the same rotation with w >= 0: the shorter way
    w, u = q[0], q[1:]
    s2 = ca.dot(u, u)
    # 2 atan2(s, w) / s; near s = 0 (w near 1): 2/w (1 - s^2/(3 w^2) + s^4/(5 w^4))
    small = s2 < 1e-8
    safe = ca.if_else(small, 1.0, s2)
    s = ca.sqrt(safe)
    r2 = s2 / (w * w)
    series = 2 / w * (1 - r2 / 3 + r2 * r2 / 5)
    return ca.if_else(small, series, 2 * ca.atan2(s, w) / s) * u


def log_rotation(R: SX) -> SX:
    """The rotation vector (3 x 1, angle in [0, pi)) of the rotation matrix ``R`` (3 x 3), as
    Pinocchio's ``log3``: ``atan2(|s|, c) / |s| s`` with ``s = vee(R - R^T) / 2`` (``sin t``
    times the axis) and ``c = (trace R - 1) / 2`` (``cos t``). Half a turn (``s = 0``,
    ``c = -1``) has no axis in ``s``: not for angles near pi."""
    s = 0.5 * ca.vertcat(R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1])
    c = 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1)
    s2 = ca.dot(s, s)
    # atan2(|s|, c) / |s|; near s = 0 (c near 1): 1/c (1 - r^2/3 + r^4/5), r = |s|/c
    small = s2 < 1e-8
    norm = ca.sqrt(ca.if_else(small, 1.0, s2))
    r2 = s2 / (c * c)
    series = (1 - r2 / 3 + r2 * r2 / 5) / c
    return ca.if_else(small, series, ca.atan2(norm, c) / norm) * s


def se3_log(R: SX, p: SX) -> SX:
    """Pinocchio's ``log6`` of the motion ``(R, p)`` (rotation 3 x 3, translation 3 x 1) in
    Pinocchio's order, linear first: ``[V(w)^-1 p; w]`` (6 x 1) with ``w`` its
    :func:`log_rotation`, the body twist that moves the identity to ``(R, p)`` in unit
    time."""
    w = log_rotation(R)
    return ca.vertcat(ca.mtimes(left_jacobian_inverse(w), p), w)


def left_jacobian(w: SX) -> SX:
    """``V(w) = I + (1 - cos t)/t^2 [w]x + (t - sin t)/t^3 [w]x^2``: the translation of
    ``exp([w; v]) = (exp(w), V(w) v)``."""
    t2 = ca.dot(w, w)
    W = skew(w)
    return SX.eye(3) + one_minus_cos_over(t2) * W + minus_sin_over(t2) * ca.mtimes(W, W)


def left_jacobian_inverse(w: SX) -> SX:
    """``V(w)^-1 = I - [w]x/2 + (1 - (t/2) cot(t/2))/t^2 [w]x^2`` (t up to pi)."""
    t2 = ca.dot(w, w)
    W = skew(w)
    return SX.eye(3) - W / 2 + half_cot_term(t2) * ca.mtimes(W, W)


def se3_integrate(p: SX, quaternion: SX, twist: SX) -> tuple[SX, SX]:
    """``(p', q')``: the pose ``(p, q)`` (origin and quaternion of a frame) moved by the
    body twist ``[w; v]`` for unit time; ``q'`` has unit norm."""
    q = normalized(quaternion)
    w, v = twist[:3], twist[3:]
    p_next = p + ca.mtimes(rotation_matrix(q), ca.mtimes(left_jacobian(w), v))
    return p_next, normalized(quaternion_product(q, exp_quaternion(w)))


def se3_difference(p0: SX, q0: SX, p1: SX, q1: SX) -> SX:
    """The body twist ``[w; v]`` (6 x 1) that moves ``(p0, q0)`` to ``(p1, q1)`` in unit time."""
    q0 = normalized(q0)
    relative = quaternion_product(quaternion_conjugate(q0), normalized(q1))
    w = log_quaternion(relative)
    p = ca.mtimes(rotation_matrix(q0).T, p1 - p0)
    return ca.vertcat(w, ca.mtimes(left_jacobian_inverse(w), p))


def se2_integrate(x: SX, y: SX, theta: SX, v: SX) -> SX:
    """``[x', y', theta']`` for the planar pose ``(x, y, theta)`` moved by the body twist
    ``v = [vx, vy, w]`` for unit time."""
    w = v[2]
    t2 = w * w
    a, b = sin_over(t2), one_minus_cos_over(t2) * w  # sin(w)/w, (1 - cos w)/w
    local = ca.vertcat(a * v[0] - b * v[1], b * v[0] + a * v[1])
    c, s = ca.cos(theta), ca.sin(theta)
    return ca.vertcat(x + c * local[0] - s * local[1], y + s * local[0] + c * local[1],
                      theta + w)


def se2_difference(q0: SX, q1: SX) -> SX:
    """The body twist ``[vx, vy, w]`` that moves the planar pose ``q0 = [x, y, theta]`` to
    ``q1`` in unit time (``w`` is the angle difference itself, not wrapped)."""
    c, s = ca.cos(q0[2]), ca.sin(q0[2])
    dx, dy = q1[0] - q0[0], q1[1] - q0[1]
    local = ca.vertcat(c * dx + s * dy, -s * dx + c * dy)
    w = q1[2] - q0[2]
    t2 = w * w
    a, b = sin_over(t2), one_minus_cos_over(t2) * w
    det = a * a + b * b  # the 2x2 [a -b; b a] inverted
    return ca.vertcat((a * local[0] + b * local[1]) / det, (-b * local[0] + a * local[1]) / det,
                      w)
