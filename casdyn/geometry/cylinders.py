"""The signed distance of a cylinder core and a segment, a polytope or another cylinder.

A cylinder is a disk swept along its axis; its support function in a unit direction ``n`` is
``r |n - (n . a) a| + L |n . a| + n . c`` (radius r, half length L, unit axis a, centre c).
As for every convex pair (see :mod:`casdyn.geometry.distance`),

    sd(A, B) = max over unit n of g(n),   g(n) = -(h_A(n) + h_B(-n)),

in the apart and the overlapping case alike, and every direction gives a lower bound. Unlike
two polytopes, a cylinder's curved rim leaves no finite set of directions that always holds
the maximiser, but the maximiser is always of one of these kinds (the features of the
Minkowski difference whose normals it can be: a flat face, a curved patch, or, apart, a point
or curve of it):

* fixed directions: the cylinders' axes, the polytope's face normals, the cross products of
  an axis with the other's edge directions (cap, side and face contacts);
* a vertex of the polytope (a segment's ends) against the cylinder, in closed form: the
  radial direction from the axis to the vertex (against the side) and the directions from the
  closest points of the two rims to the vertex (against a rim, apart);
* a rim against an edge of direction e (or a rim against the other cylinder's side, e its
  axis): the directions perpendicular to e, a great circle;
* a rim against a rim (two cylinders): at a stationary pair of points of the two circles
  the line joining them is perpendicular to both tangents, and for a point ``p_b`` of one
  rim the stationary points of the other rim are its closest and farthest points from
  ``p_b`` (same tangent up to sign): a one-parameter family, the angle of ``p_b``, per pair
  of rims (see :func:`_rim_pairs` for a direction that is well conditioned along it).

Each one-parameter family is sampled (``PERPENDICULAR_SAMPLES`` per half turn,
``RIM_SAMPLES`` per turn), its best two local maxima (rim against rim: three) refined by
``GOLDEN_STEPS`` steps of golden-section search between the neighbouring samples and one
parabola step (the angle of a smooth maximum to about 1e-8 rad); the result is the largest
g found. All of it is a fixed graph of closed forms, comparisons and selections (no
iterations at run time, no callbacks), exportable to C. The chosen angles depend on the
poses through comparisons, and through the parabola step, whose effect on g vanishes to
first order at a maximum: reverse AD gives, in effect, g's derivative at the chosen
direction with the family's parametrisation held fixed, which by the envelope theorem is the
gradient of the maximum (tested against finite differences of the references). Each
direction is a unit vector built with a fallback where its defining vector vanishes (the
value stays a lower bound; value and gradient stay finite).
"""

from __future__ import annotations

from collections.abc import Callable

import casadi as ca
import numpy as np

from . import primitives as pr

# samples of a one-parameter family of directions: perpendicular to an edge or an axis (a
# half turn: g is taken at n and -n), a rim against a rim (a turn), and the local maxima of
# the samples refined. Measured against the references (tests/test_cylinders.py): against a
# polytope 12 samples per half turn missed a mesh's depth by 3e-4 (two peaks 0.28 rad apart,
# both next to one sample), one refined peak a capsule's by 6e-4 (two peaks 7e-4 apart); two
# cylinders need 24 per half turn and three peaks (16 samples missed a peak by 5e-4, two
# peaks by 4e-7)
PERPENDICULAR_SAMPLES = 24
PERPENDICULAR_PEAKS = 2  # local maxima of the samples refined
RIM_SAMPLES = 48
RIM_PEAKS = 3
GOLDEN_STEPS = 16  # golden-section steps: the interval of two samples shrinks to 3e-4 rad
_RHO = (np.sqrt(5.0) - 1.0) / 2.0

Gaps = Callable[[ca.SX], ca.SX]  # unit directions (3 x K) -> max(g(n), g(-n)), 1 x K


def _unit_or(v, fallback):
    """The columns of ``v`` (3 x K) normalised, ``fallback`` (3 x 1, unit) where a column is
    (nearly) zero: always a unit vector, so that g stays a lower bound."""
    length2 = pr.dot(v, v)
    unit = v / ca.repmat(ca.sqrt(ca.fmax(length2, pr.TINY)), 3, 1)
    usable = ca.repmat(length2 > 1e-24, 3, 1)
    return ca.if_else(usable, unit, ca.repmat(fallback, 1, v.shape[1]))


def _frame(e):
    """Two unit vectors (3 x 1 each) that with the unit ``e`` make an orthonormal frame: the
    first is ``e`` crossed with the world axis least aligned with it."""
    ax, ay, az = ca.fabs(e[0]), ca.fabs(e[1]), ca.fabs(e[2])
    least = ca.if_else(ca.logic_and(ax <= ay, ax <= az), ca.DM([1, 0, 0]),
                       ca.if_else(ay <= az, ca.DM([0, 1, 0]), ca.DM([0, 0, 1])))
    first = pr.cross(e, least)
    first = first / pr.norm(first)
    return first, pr.cross(e, first)


def _largest(value: Callable, span: float, count: int, peaks: int) -> ca.SX:
    """The largest of ``value(t)`` (g along a family of directions: a 1 x K row of angles ->
    1 x K) over a period of length ``span``: the ``peaks`` best local maxima of ``count``
    samples, each refined by golden-section search between its neighbours."""
    angles = span * np.arange(count) / count
    values = value(ca.DM(angles).T)
    tops = [ca.if_else(ca.logic_and(values[k] >= values[k - 1],
                                    values[k] > values[(k + 1) % count]), values[k], -pr.BIG)
            for k in range(count)]
    best = ca.mmax(values)
    chosen: list[ca.SX] = []
    for _ in range(peaks):
        top, at = ca.SX(-2 * pr.BIG), ca.SX(angles[0])
        for k in range(count):
            candidate = tops[k]
            for earlier in chosen:  # each peak once
                candidate = ca.if_else(earlier == angles[k], -2 * pr.BIG, candidate)
            better = candidate > top
            at = ca.if_else(better, angles[k], at)
            top = ca.fmax(top, candidate)
        chosen.append(at)
        best = ca.fmax(best, _golden(value, at - span / count, at + span / count))
    return best


def _golden(gaps: Callable, low, high) -> ca.SX:
    """The largest g found over the angles in [low, high]: golden-section search, then one
    step to the vertex of the parabola through the best point and two neighbours (the angle
    of a smooth maximum to the square of the interval's width)."""
    x1, x2 = high - _RHO * (high - low), low + _RHO * (high - low)
    f1, f2 = gaps(x1), gaps(x2)
    for _ in range(GOLDEN_STEPS):
        left = f1 > f2  # the maximum is in [low, x2]
        low, high = ca.if_else(left, low, x1), ca.if_else(left, x2, high)
        new = ca.if_else(left, high - _RHO * (high - low), low + _RHO * (high - low))
        value = gaps(new)
        x1, x2 = ca.if_else(left, new, x2), ca.if_else(left, x1, new)
        f1, f2 = ca.if_else(left, value, f2), ca.if_else(left, f1, value)
    left = f1 > f2
    at, best = ca.if_else(left, x1, x2), ca.fmax(f1, f2)
    h = (high - low) / 4
    before, after = gaps(at - h), gaps(at + h)
    curvature = before - 2 * best + after  # < 0 at a smooth maximum
    step = ca.if_else(curvature < 0, h * (before - after) / (2 * ca.fmin(curvature, -pr.TINY)), 0)
    vertex = at + ca.fmin(ca.fmax(step, -h), h)
    return ca.fmax(ca.fmax(best, ca.fmax(before, after)), gaps(vertex))


def _perpendicular(gaps: Gaps, e, cylinder: tuple, other: tuple | None = None) -> ca.SX:
    """The largest g over the unit directions perpendicular to the unit ``e`` (3 x 1); with
    ``other`` (see :func:`_planar`) from dot products with the frame computed once."""
    first, second = _frame(e)
    if other is not None:
        value = _planar(first, second, cylinder, other)
    else:
        def value(t):
            return gaps(ca.mtimes(first, ca.cos(t)) + ca.mtimes(second, ca.sin(t)))

    return _largest(value, np.pi, PERPENDICULAR_SAMPLES, PERPENDICULAR_PEAKS)


def _planar(first, second, cylinder: tuple, other: tuple) -> Callable:
    """``t -> max(g(n), g(-n))``, ``n = cos t first + sin t second``, for the cylinder and
    ``other``: ``("symmetric", centre, terms)`` for a core symmetric about ``centre`` whose
    extent is ``sum_j |terms_j . n|`` (3 x J: a segment's or a box's scaled axes), or
    ``("polytope", vertices)`` (3 x m, world). Every dot product with n is a combination of
    two computed once per family (the same numbers as the pair's gaps, for less work)."""
    axis, centre, radius, half = cylinder
    basis = ca.horzcat(first, second)

    def project(x):
        return ca.mtimes(basis.T, x)  # 2 x K

    if other[0] == "symmetric":
        base, terms, corners = project(centre - other[1]), other[2], None
    else:
        base, terms, corners = project(centre), ca.DM(3, 0), project(other[1])
    scaled, along = project(ca.horzcat(half * axis, terms)), project(axis)

    def value(t):
        c, s = ca.cos(t), ca.sin(t)

        def dot(p):
            return p[0] * c + p[1] * s

        extent = radius * ca.sqrt(ca.fmax(1 - dot(along) ** 2, pr.TINY))
        for j in range(scaled.shape[1]):
            extent = extent + ca.fabs(dot(scaled[:, j]))
        if corners is None:
            return ca.fabs(dot(base)) - extent
        heights = ca.vertcat(*[dot(corners[:, i]) for i in range(corners.shape[1])])
        k = heights.shape[1]
        highest = ca.horzcat(*[ca.mmax(heights[:, i]) for i in range(k)])
        lowest = ca.horzcat(*[ca.mmin(heights[:, i]) for i in range(k)])
        return ca.fmax(dot(base) - extent - highest, lowest - dot(base) - extent)

    return value


def _vertex_axes(vertices, axis, centre, radius: float, half: float):
    """Per vertex (3 x m, world) three unit directions against the cylinder: radial from the
    axis, and from the closest point of each rim (3 x 3m)."""
    m = vertices.shape[1]
    offset = vertices - ca.repmat(centre, 1, m)
    across = offset - ca.mtimes(axis, ca.mtimes(axis.T, offset))
    radial = _unit_or(across, _frame(axis)[0])
    columns = [radial]
    for side in (-1.0, 1.0):
        rim = ca.repmat(centre + side * half * axis, 1, m) + radius * radial
        columns.append(_unit_or(vertices - rim, axis))
    return ca.horzcat(*columns)


def _masked_crosses(gaps: Gaps, u, w) -> ca.SX:
    """The largest g over the unit cross products of the columns of u with the columns of w,
    those of parallel columns left out (-BIG if all are)."""
    c = pr.cross(pr.repeat_columns(u, w.shape[1]), pr.tile_columns(w, u.shape[1]))
    length2 = pr.dot(c, c)
    axes = c / ca.repmat(ca.sqrt(ca.fmax(length2, 1e-12)), 3, 1)
    return ca.mmax(ca.if_else(length2 > 1e-12, gaps(axes), -pr.BIG))


def cylinder_polytope(gaps: Gaps, cylinder: tuple, vertices, edges, faces,
                      planar: list[tuple]) -> ca.SX:
    """Signed distance of a cylinder core ``(axis, centre, radius, half length)`` (world;
    axis and centre 3 x 1) and a polytope or segment given by its world ``vertices`` (3 x m),
    unit edge directions ``edges`` (3 x k) and unit face normals ``faces`` (3 x f, f may be
    0); ``gaps`` gives ``max(g(n), g(-n))`` of the pair, ``planar[k]`` the other core as
    :func:`_planar` takes it for the directions perpendicular to ``edges[:, k]``."""
    axis, centre, radius, half = cylinder
    candidates = [gaps(axis), _masked_crosses(gaps, axis, edges),
                  ca.mmax(gaps(_vertex_axes(vertices, axis, centre, radius, half)))]
    if faces.shape[1]:
        candidates.append(ca.mmax(gaps(faces)))
    candidates += [_perpendicular(gaps, edges[:, k], cylinder, planar[k])
                   for k in range(edges.shape[1])]
    return _maximum(candidates)


def _rim_pairs(gaps: Gaps, a: tuple, b: tuple) -> ca.SX:
    """The largest g over directions through the stationary pairs of points of a rim of b
    and a rim of a: for a point ``p_b`` of b's rim, ``p_a`` the point of a's rim (either)
    closest to it, the direction of ``x + s (r_a + r_b) t_a x t_b`` (``x = p_a - p_b``, ``t``
    the unit tangents, s the sign of ``x . t_a x t_b``). At a stationary pair x is parallel
    to ``t_a x t_b``, so this is x's direction; elsewhere the sum stays well conditioned
    when x is short (near contact) or the tangents nearly parallel, though not both."""
    axis_a, centre_a, radius_a, half_a = a
    axis_b, centre_b, radius_b, half_b = b
    first, second = _frame(axis_b)
    fallback = _frame(axis_a)[0]
    values = []
    for side_b in (-1.0, 1.0):
        for side_a in (-1.0, 1.0):
            def direction(t, side_a=side_a, side_b=side_b):
                k = t.shape[1]
                radial = ca.mtimes(first, ca.cos(t)) + ca.mtimes(second, ca.sin(t))
                p_b = ca.repmat(centre_b + side_b * half_b * axis_b, 1, k) + radius_b * radial
                rim_a = ca.repmat(centre_a + side_a * half_a * axis_a, 1, k)
                offset = p_b - rim_a
                across = _unit_or(offset - ca.mtimes(axis_a, ca.mtimes(axis_a.T, offset)),
                                  fallback)
                x = rim_a + radius_a * across - p_b
                normal = pr.cross(pr.cross(ca.repmat(axis_a, 1, k), across),
                                  pr.cross(ca.repmat(axis_b, 1, k), radial))
                sign = ca.sign(pr.dot(x, normal))
                return _unit_or(x + ca.repmat((radius_a + radius_b) * sign, 3, 1) * normal,
                                axis_a)

            values.append(_largest(lambda t, f=direction: gaps(f(t)), 2 * np.pi,
                                   RIM_SAMPLES, RIM_PEAKS))
    return _maximum(values)


def cylinder_cylinder(gaps: Gaps, a: tuple, b: tuple) -> ca.SX:
    """Signed distance of two cylinder cores ``(axis, centre, radius, half length)``."""
    axes = ca.horzcat(a[0], b[0])
    candidates = [ca.mmax(gaps(axes)), _masked_crosses(gaps, a[0], b[0]),
                  _perpendicular(gaps, a[0], a), _perpendicular(gaps, b[0], b),
                  _rim_pairs(gaps, a, b)]
    return _maximum(candidates)


def _maximum(values) -> ca.SX:
    result = values[0]
    for value in values[1:]:
        result = ca.fmax(result, value)
    return result
