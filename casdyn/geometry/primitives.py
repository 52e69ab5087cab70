"""Vectorised closest-distance kernels on CasADi matrices (SX, MX or DM alike).

A set of points or directions is a 3 x N matrix (one column each); results are 1 x N rows.
Every square root goes through :func:`norm`, whose argument is floored at ``TINY`` so that its
value and gradient stay finite at zero (CasADi's d sqrt(x)/dx at 0 is inf); every division by a
quantity that can vanish is floored the same way, also in branches ``if_else`` discards
(CasADi differentiates both).
"""

from __future__ import annotations

import casadi as ca
import numpy as np

TINY = 1e-30  # floor under squared lengths: a norm of a zero vector reads 1e-15
BIG = 1e10  # "no candidate here": larger than any distance, still finite


def dot(a, b):
    """Column-wise dot products of two 3 x N matrices: 1 x N."""
    return ca.sum1(a * b)


def cross(a, b):
    """Column-wise cross products of two 3 x N matrices: 3 x N."""
    return ca.vertcat(a[1, :] * b[2, :] - a[2, :] * b[1, :],
                      a[2, :] * b[0, :] - a[0, :] * b[2, :],
                      a[0, :] * b[1, :] - a[1, :] * b[0, :])


def norm(a):
    """Column-wise lengths of a 3 x N matrix, finite in value and gradient at zero."""
    return ca.sqrt(ca.fmax(dot(a, a), TINY))


def clamp01(x):
    return ca.fmin(ca.fmax(x, 0), 1)


def repeat_columns(a, times: int):
    """Each column of ``a`` repeated ``times`` times in a row: [a0 a0 .. a1 a1 ..]."""
    return ca.horzcat(*[ca.repmat(a[:, i], 1, times) for i in range(a.shape[1])])


def tile_columns(a, times: int):
    """The columns of ``a`` repeated as a block: [a0 a1 .. a0 a1 ..]."""
    return ca.repmat(a, 1, times)


def point_segment(p, q, d):
    """Distances from points ``p`` to segments ``q + t d, t in [0, 1]`` (3 x N each)."""
    return norm(p - segment_point(p, q, d))


def segment_point(p, q, d):
    """The points of segments ``q + t d`` closest to points ``p`` (3 x N each)."""
    t = clamp01(dot(p - q, d) / ca.fmax(dot(d, d), TINY))
    return q + d * ca.repmat(t, 3, 1)


def segment_segment(p, d1, q, d2):
    """Distances between segments ``p + s d1`` and ``q + t d2``, s, t in [0, 1] (3 x N each)."""
    a, b = segment_segment_points(p, d1, q, d2)
    return norm(a - b)


def segment_segment_points(p, d1, q, d2):
    """The closest points ``(p + s d1, q + t d2)`` of two segments, s, t in [0, 1].

    The closest parameters of the two lines, clamped to the segments and re-projected
    (Ericson, Real-Time Collision Detection, 2005, section 5.1.9); parallel segments take
    ``s = 0`` and the projection of that end, which gives the same distance.
    """
    r = p - q
    a, e, b = dot(d1, d1), dot(d2, d2), dot(d1, d2)
    c, f = dot(d1, r), dot(d2, r)
    denom = a * e - b * b
    a_safe, e_safe = ca.fmax(a, TINY), ca.fmax(e, TINY)
    s = ca.if_else(denom > 1e-12 * a * e,
                   clamp01((b * f - c * e) / ca.fmax(denom, TINY)), 0)
    t = (b * s + f) / e_safe
    s = ca.if_else(t < 0, clamp01(-c / a_safe), ca.if_else(t > 1, clamp01((b - c) / a_safe), s))
    t = clamp01(t)
    return p + d1 * ca.repmat(s, 3, 1), q + d2 * ca.repmat(t, 3, 1)


def point_box(p, half):
    """Signed distances of points ``p`` (3 x N, in the box frame) to the box of half extents
    ``half``: positive outside, minus the distance to the nearest face inside."""
    q = ca.fabs(p) - ca.repmat(ca.DM(half), 1, p.shape[1])
    outside = norm(ca.fmax(q, 0))
    inside = ca.fmin(ca.fmax(ca.fmax(q[0, :], q[1, :]), q[2, :]), 0)
    return outside + inside


def point_cylinder(p, radius: float, half_length: float):
    """Signed distances of points ``p`` (3 x N, in the cylinder frame, axis z)."""
    radial = ca.sqrt(ca.fmax(p[0, :] ** 2 + p[1, :] ** 2, TINY)) - radius
    axial = ca.fabs(p[2, :]) - half_length
    outside = ca.sqrt(ca.fmax(ca.fmax(radial, 0) ** 2 + ca.fmax(axial, 0) ** 2, TINY))
    return outside + ca.fmin(ca.fmax(radial, axial), 0)


def crossing_segments(p, d1, q, d2):
    """Distances between segments ``p + s d1`` and ``q + t d2`` (3 x N each) where their
    lines' closest points lie inside both (0 < s, t < 1), else ``BIG``: the edge-edge part of
    a polytope distance, whose other cases a vertex's distance covers. About half the work of
    :func:`segment_segment`."""
    r = p - q
    a, e, b = dot(d1, d1), dot(d2, d2), dot(d1, d2)
    c, f = dot(d1, r), dot(d2, r)
    denom = a * e - b * b
    safe = ca.fmax(denom, TINY)
    s_num, t_num = b * f - c * e, a * f - b * c  # s = s_num / denom, t = t_num / denom
    inside = ca.logic_and(ca.logic_and(s_num > 0, s_num < denom),
                          ca.logic_and(ca.logic_and(t_num > 0, t_num < denom),
                                       denom > 1e-12 * a * e))
    normal = cross(d1, d2)
    return ca.if_else(inside, ca.fabs(dot(r, normal)) / ca.sqrt(safe), BIG)


_CORNERS = [(sx, sy, sz) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]


def segment_box(start, vector, half):
    """Signed distance of the segment ``start + t vector`` (3 x 1 each, in the box frame) to
    the box of half extents ``half``: minus the penetration depth when it enters the box.

    Overlapping: the largest gap over the separating axes of a segment and a box (the three
    face normals and the three ``e_k x vector``). Apart: the smallest of the ends' distances
    to the box, the box corners' distances to the segment, and the distances to the edges
    whose closest points are inside both the edge and the segment, all in the box's axes
    (about a quarter of the work of the general polytope form)."""
    h = [float(x) for x in half]
    centre, reach = start + vector / 2, vector / 2
    gaps = [ca.fabs(centre[i]) - h[i] - ca.fabs(reach[i]) for i in range(3)]
    for k in range(3):
        i, j = (k + 1) % 3, (k + 2) % 3  # e_k x v = (.., -v_j at i .., v_i at j) up to sign
        length2 = vector[i] ** 2 + vector[j] ** 2
        projected = ca.fabs(centre[i] * vector[j] - centre[j] * vector[i])
        extent = h[i] * ca.fabs(vector[j]) + h[j] * ca.fabs(vector[i])
        usable = length2 > 1e-12 * ca.fmax(dot(vector, vector), TINY)
        gaps.append(ca.if_else(usable, (projected - extent) / ca.sqrt(ca.fmax(length2, TINY)),
                               -BIG))
    gap = gaps[0]
    for value in gaps[1:]:
        gap = ca.fmax(gap, value)
    corners = ca.DM(np.array(_CORNERS, dtype=float).T * np.array(h)[:, None])
    candidates = [point_box(ca.horzcat(start, start + vector), h),
                  point_segment(corners, ca.repmat(start, 1, 8), ca.repmat(vector, 1, 8))]
    for k in range(3):  # the four edges along axis k
        i, j = (k + 1) % 3, (k + 2) % 3
        length2 = ca.fmax(vector[i] ** 2 + vector[j] ** 2, TINY)
        for si in (-1, 1):
            for sj in (-1, 1):
                di, dj = start[i] - si * h[i], start[j] - sj * h[j]
                t = -(di * vector[i] + dj * vector[j]) / length2
                along = start[k] + t * vector[k]
                inside = ca.logic_and(ca.logic_and(t > 0, t < 1),
                                      ca.logic_and(ca.fabs(along) < h[k],
                                                   length2 > 1e-12 * dot(vector, vector)))
                across = ca.fabs(di * vector[j] - dj * vector[i]) / ca.sqrt(length2)
                candidates.append(ca.if_else(inside, across, BIG))
    apart = ca.mmin(ca.vertcat(*[ca.vec(c) for c in candidates]))
    return ca.if_else(gap > 0, apart, gap)
