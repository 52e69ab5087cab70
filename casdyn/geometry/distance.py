"""``signed_distance(a, pose_a, b, pose_b)``: exact signed distances between two shapes, as a
CasADi expression of the poses.

Each shape is a *core* swept by a radius: a sphere is a point, a capsule a segment, a box and a
convex mesh are polytopes (radius 0). The signed distance of the shapes is that of the cores
minus both radii (sweeping by a ball adds the radius to every support value, in the separated
and the overlapping case alike). For convex sets A, B with Minkowski difference D = A - B and
support function h_D(n) = h_A(n) + h_B(-n),

    sd(A, B) = max over unit n of g(n),   g(n) = -h_D(n),

so every direction gives a lower bound. The cores' distances are, pair by pair:

* plane and anything: g at the plane's normal (the whole formula, closed form);
* point, segment: their Euclidean distances (point-point, point-segment, segment-segment);
  a point against a box or a cylinder: the closed-form signed distance of the point; a
  segment against a box: separating axes and closest features in the box's axes;
* a point, a segment, a box or a convex mesh against a convex mesh, and two boxes: the
  compiled routine of :mod:`casdyn.geometry.convex_routine` (GJK apart, EPA overlapping),
  whose normal and witness points give ``d = n . (x_b - x_a)`` in the graph;
* the pairs above as a fixed graph (the tests' independent reference, and what stands in
  where no C compiler is found and the graph stays small): D is a polytope whose face
  normals are the faces of each and the cross products of their edge directions. When they
  overlap, the largest g over those normals is exact (the separating axis theorem with
  depths); when that largest g is positive they are apart, and the distance is the smallest
  over the closest-feature pairs, which is exact there: each vertex's distance to the other
  shape (closed form for a box, its faces and edges for a mesh), and the edge pairs whose
  lines' closest points lie inside both edges (a segment: its distance to every edge).
  Both are 0 on contact, so the switch is continuous.

* a cylinder against a segment, a polytope or another cylinder: no finite set of directions
  always holds the maximiser (the rims are curved), but it is one of a few kinds: fixed
  directions (axes, face normals, their cross products with edges), closed forms from each
  vertex, and one-parameter families (perpendicular to an edge or an axis; the normals of
  two rims' tangents), each sampled and refined by golden-section search
  (:mod:`casdyn.geometry.cylinders`). Every direction is a lower bound, so the largest g
  found is exact once the search reaches the maximiser: measured within 5e-9 m of coal and
  of an independent reference over 2,000 random poses per pair.

Everything but the routine's pairs is a fixed graph of min, max, comparisons and closed
forms: no iterations at run time, differentiable almost everywhere, exportable to C; the
gradient is that of the active feature pair (the cylinders': of g at the chosen direction, by
the envelope theorem). The routine's pairs call it (its C goes into every exported or
compiled library); their gradient is that of the witness points.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from functools import lru_cache

import casadi as ca
import numpy as np

from ..errors import ConvergenceWarning, InputError
from . import convex_routine, cylinders
from . import primitives as pr
from .cores import _Core, _core
from .shapes import Box, Capsule, ConvexMesh, Cylinder, Mesh, Plane, Sphere, _pose, _shape

_RANK = {"plane": 0, "point": 1, "segment": 2, "box": 3, "polytope": 4, "cylinder": 5}


# --- the cores placed in the world: R (3x3), p (3x1) of the pose -----------------------------

def _transform(points, R, p):
    return ca.mtimes(R, points) + ca.repmat(p, 1, points.shape[1])


_SYMMETRIC = ("point", "segment", "box", "cylinder")  # symmetric about the frame's origin


def _extent(core: _Core, R, n):
    """max over the core of n . (x - centre) for a symmetric core (the same for -n): 1 x K."""
    if core.kind == "point":
        return ca.DM.zeros(1, n.shape[1])
    if core.kind == "segment":
        return core.half[0] * ca.fabs(ca.mtimes(R[:, 2].T, n))
    if core.kind == "box":
        return ca.mtimes(ca.DM(core.half).T, ca.fabs(ca.mtimes(R.T, n)))
    axial = ca.mtimes(R[:, 2].T, n)  # cylinder
    radial = ca.sqrt(ca.fmax(pr.dot(n, n) - axial**2, pr.TINY))
    return core.half[0] * radial + core.half[1] * ca.fabs(axial)


def _support(core: _Core, R, p, n):
    """max over the core of n . x, for each column of n (3 x K): 1 x K."""
    base = ca.mtimes(p.T, n)
    if core.kind in _SYMMETRIC:
        return base + _extent(core, R, n)
    heights = ca.mtimes(core.poly.vertices.T, ca.mtimes(R.T, n))  # vertices x K
    return base + ca.horzcat(*[ca.mmax(heights[:, k]) for k in range(n.shape[1])])


def _segment(core: _Core, R, p):
    """(start, vector) of a segment core, 3 x 1 each."""
    axis = R[:, 2] * core.half[0]
    return p - axis, 2 * axis


def _gaps(a: _Core, Ra, pa, b: _Core, Rb, pb, axes):
    """max(g(n), g(-n)), g(n) = -(h_a(n) + h_b(-n)), for each column n of ``axes``: 1 x K.
    For two symmetric cores ``g(+-n) = +-(p_b - p_a) . n - e_a(n) - e_b(n)``: half the work."""
    if a.kind in _SYMMETRIC and b.kind in _SYMMETRIC:
        return (ca.fabs(ca.mtimes((pb - pa).T, axes)) - _extent(a, Ra, axes)
                - _extent(b, Rb, axes))
    both = ca.horzcat(axes, -axes)
    g = -(_support(a, Ra, pa, both) + _support(b, Rb, pb, -both))
    k = axes.shape[1]
    return ca.fmax(g[:, :k], g[:, k:])


def _axes_gap(a: _Core, Ra, pa, b: _Core, Rb, pb, axes):
    """The largest lower bound g over the columns of ``axes`` and their opposites."""
    return ca.mmax(_gaps(a, Ra, pa, b, Rb, pb, axes))


def _cross_axes(u, w):
    """Unit cross products of every column of u with every column of w (3 x |u||w|), and a
    1 x |u||w| mask that is 0 where the two are parallel (no axis there)."""
    c = pr.cross(pr.repeat_columns(u, w.shape[1]), pr.tile_columns(w, u.shape[1]))
    length2 = pr.dot(c, c)
    usable = length2 > 1e-12
    return c / ca.repmat(ca.sqrt(ca.fmax(length2, 1e-12)), 3, 1), usable


def _gap_with_mask(a, Ra, pa, b, Rb, pb, axes, usable):
    return ca.mmax(ca.if_else(usable, _gaps(a, Ra, pa, b, Rb, pb, axes), -pr.BIG))


def _points_to_polytope(x, core: _Core, R, p):
    """Smallest distance from points x (3 x N, world) to a polytope core they lie outside."""
    local = ca.mtimes(R.T, x - ca.repmat(p, 1, x.shape[1]))
    if core.kind == "box":
        return ca.mmin(pr.point_box(local, core.half))
    poly = core.poly
    n, t = local.shape[1], poly.tri_point.shape[1]
    xs = pr.repeat_columns(local, t)
    inside = None
    for side_normal, side_offset in poly.tri_sides:
        over = pr.dot(pr.tile_columns(side_normal, n), xs) - pr.tile_columns(side_offset, n)
        inside = over <= 0 if inside is None else ca.logic_and(inside, over <= 0)
    height = ca.fabs(pr.dot(pr.tile_columns(poly.tri_normal, n),
                            xs - pr.tile_columns(poly.tri_point, n)))
    to_faces = ca.mmin(ca.if_else(inside, height, pr.BIG))
    e = poly.edge_start.shape[1]
    to_edges = pr.point_segment(pr.repeat_columns(local, e), pr.tile_columns(poly.edge_start, n),
                                pr.tile_columns(poly.edge_vector, n))
    return ca.fmin(to_faces, ca.mmin(to_edges))


def _face_axes(core: _Core, R):
    return ca.mtimes(R, core.poly.normals)


def _edges(core: _Core, R, p):
    return _transform(core.poly.edge_start, R, p), ca.mtimes(R, core.poly.edge_vector)


def _segments_to_edges(start, vector, core: _Core, R, p, whole: bool = False):
    """The smallest distance between segments and a polytope's edges: whole segments
    (``whole``), or only where both closest points are inside (the other cases are a
    vertex's, which the caller covers)."""
    es, ev = _edges(core, R, p)
    m, e = start.shape[1], es.shape[1]
    distance = pr.segment_segment if whole else pr.crossing_segments
    return ca.mmin(distance(pr.repeat_columns(start, e), pr.repeat_columns(vector, e),
                            pr.tile_columns(es, m), pr.tile_columns(ev, m)))


def _core_distance(a: _Core, Ta, b: _Core, Tb):
    """Signed distance of two cores, ``_RANK[a.kind] <= _RANK[b.kind]``."""
    Ra, pa, Rb, pb = Ta[:3, :3], Ta[:3, 3], Tb[:3, :3], Tb[:3, 3]
    kinds = (a.kind, b.kind)
    if a.kind == "plane":
        if b.kind == "plane":
            raise InputError("no signed distance between two planes (half-spaces)")
        normal = ca.mtimes(Ra, ca.DM(a.plane[0]))
        offset = a.plane[1] + ca.mtimes(normal.T, pa)
        return -_support(b, Rb, pb, -normal) - offset
    if kinds == ("point", "point"):
        return pr.norm(pa - pb)
    if kinds == ("point", "segment"):
        return pr.point_segment(pa, *_segment(b, Rb, pb))
    if kinds == ("segment", "segment"):
        return pr.segment_segment(*_segment(a, Ra, pa), *_segment(b, Rb, pb))
    if kinds == ("point", "box"):
        return pr.point_box(ca.mtimes(Rb.T, pa - pb), b.half)
    if kinds == ("segment", "box"):
        start, vector = _segment(a, Ra, pa)
        return pr.segment_box(ca.mtimes(Rb.T, start - pb), ca.mtimes(Rb.T, vector), b.half)
    if kinds == ("point", "cylinder"):
        return pr.point_cylinder(ca.mtimes(Rb.T, pa - pb), *b.half)
    if b.kind == "cylinder":
        return _with_cylinder(a, Ra, pa, b, Rb, pb)
    # a point, segment or polytope against a polytope: separating axes, then features
    if a.kind == "point":
        gap = _axes_gap(a, Ra, pa, b, Rb, pb, _face_axes(b, Rb))
        apart = _points_to_polytope(pa, b, Rb, pb)
    elif a.kind == "segment":
        start, vector = _segment(a, Ra, pa)
        axes, usable = _cross_axes(Ra[:, 2], ca.mtimes(Rb, b.poly.directions))
        gap = ca.fmax(_axes_gap(a, Ra, pa, b, Rb, pb, _face_axes(b, Rb)),
                      _gap_with_mask(a, Ra, pa, b, Rb, pb, axes, usable))
        apart = ca.fmin(_points_to_polytope(ca.horzcat(start, start + vector), b, Rb, pb),
                        _segments_to_edges(start, vector, b, Rb, pb, whole=True))
    else:
        axes, usable = _cross_axes(ca.mtimes(Ra, a.poly.directions),
                                   ca.mtimes(Rb, b.poly.directions))
        faces = ca.horzcat(_face_axes(a, Ra), _face_axes(b, Rb))
        gap = ca.fmax(_axes_gap(a, Ra, pa, b, Rb, pb, faces),
                      _gap_with_mask(a, Ra, pa, b, Rb, pb, axes, usable))
        start, vector = _edges(a, Ra, pa)
        apart = ca.fmin(ca.fmin(_points_to_polytope(_transform(a.poly.vertices, Ra, pa),
                                                    b, Rb, pb),
                                _points_to_polytope(_transform(b.poly.vertices, Rb, pb),
                                                    a, Ra, pa)),
                        _segments_to_edges(start, vector, b, Rb, pb))
    return ca.if_else(gap > 0, apart, gap)


def _cylinder(core: _Core, R, p) -> tuple:
    """(axis, centre, radius, half length) of a cylinder core placed in the world."""
    return R[:, 2], p, core.half[0], core.half[1]


# A convex mesh against a cylinder searches one family of directions per edge direction of
# the hull, about 5,500 instructions each: a 60-point random hull (48 directions) gives 300k
# instructions, built in 5 s; a Panda link's hull (about 200) would give over a million
MAX_CYLINDER_DIRECTIONS = 64


def _with_cylinder(a: _Core, Ra, pa, b: _Core, Rb, pb):
    """Signed distance of a segment, box, polytope or cylinder core ``a`` and a cylinder
    core ``b`` (:mod:`casdyn.geometry.cylinders`)."""
    def gaps(axes):
        return _gaps(a, Ra, pa, b, Rb, pb, axes)

    if a.kind == "cylinder":
        return cylinders.cylinder_cylinder(gaps, _cylinder(a, Ra, pa), _cylinder(b, Rb, pb))
    if a.kind == "segment":
        start, vector = _segment(a, Ra, pa)
        vertices, edges, faces = ca.horzcat(start, start + vector), Ra[:, 2], ca.DM(3, 0)
        planar = [("symmetric", pa, a.half[0] * Ra[:, 2])]
    elif a.kind == "box":
        corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
        vertices = _transform(ca.DM((corners * np.array(a.half)).T), Ra, pa)
        edges = faces = Ra
        planar = [("symmetric", pa, ca.mtimes(Ra, ca.diag(ca.DM(a.half))))] * 3
    else:
        if a.poly.directions.shape[1] > MAX_CYLINDER_DIRECTIONS:
            raise InputError(
                f"the distance between this convex mesh and a cylinder would search "
                f"{a.poly.directions.shape[1]} families of directions, one per edge "
                f"direction (at most {MAX_CYLINDER_DIRECTIONS}): simplify the hull, use "
                "casdyn.geometry.with_fitted_capsules(...) for the robot's meshes, or a "
                "casdyn.geometry.Capsule of the cylinder's radius and length (it holds the "
                "cylinder)")
        vertices = _transform(a.poly.vertices, Ra, pa)
        edges, faces = ca.mtimes(Ra, a.poly.directions), _face_axes(a, Ra)
        planar = [("polytope", _transform(c.poly.vertices, Ra, pa)) for c in _silhouettes(a)]
    return cylinders.cylinder_polytope(gaps, _cylinder(b, Rb, pb), vertices, edges, faces,
                                       planar)


@lru_cache(maxsize=256)
def _silhouettes(core: _Core) -> tuple:
    """Per edge direction d of a polytope core, the core reduced to the vertices whose
    projections along d are the corners of the projected polygon: the same support in
    every direction perpendicular to d, for less work."""
    v = np.array(core.poly.vertices)
    cores = []
    for d in np.array(core.poly.directions).T:
        u = np.cross(d, [1.0, 0, 0] if abs(d[0]) < 0.9 else [0, 1.0, 0])
        u /= np.linalg.norm(u)
        plane = np.stack([v.T @ u, v.T @ np.cross(d, u)], axis=1)
        corners = _polygon_corners(plane)
        poly = replace(core.poly, vertices=ca.DM(v[:, corners]))
        cores.append(replace(core, poly=poly))
    return tuple(cores)


def _polygon_corners(points: np.ndarray) -> list[int]:
    """Indices of the corners of the convex hull of 2-D ``points`` (n, 2) (Andrew's monotone
    chain); points on the hull's sides or repeated are left out."""
    order = sorted(range(len(points)), key=lambda i: (points[i, 0], points[i, 1]))
    scale = float(np.max(np.ptp(points, axis=0))) or 1.0

    def turn(o, a, b):
        return ((points[a, 0] - points[o, 0]) * (points[b, 1] - points[o, 1])
                - (points[a, 1] - points[o, 1]) * (points[b, 0] - points[o, 0]))

    chains = []
    for sequence in (order, order[::-1]):
        chain: list[int] = []
        for i in sequence:
            while len(chain) >= 2 and turn(chain[-2], chain[-1], i) <= 1e-12 * scale**2:
                chain.pop()
            chain.append(i)
        chains.append(chain[:-1])
    return sorted(set(chains[0] + chains[1]))


# A convex mesh costs the fixed graph dearly: a point against a Panda link's hull (102
# vertices) takes 299k instructions, two 8-point hulls 124k, two 20-point hulls 434k (it tests
# every pair of edge directions, every vertex against every face). Every pair with a convex
# mesh (a sphere's or capsule's core, a box or a mesh against it) is therefore computed by the
# compiled routine of casdyn.geometry.convex_routine: exact as well, a few microseconds. So
# are two boxes (13k instructions as a graph): the Panda's 78 distances with a box obstacle
# took 302 us with their Jacobian, 109 us with the routine. A point or a segment against a box
# keeps its closed form (a capsule against a box: 924 instructions, faster than the routine's
# call). The fixed graph serves as the independent reference in the tests (``routine=False``)
# and stands in without a C compiler (below).


# Without a C compiler the fixed graph stands in where it stays buildable: two polytopes with
# at most this many pairs of edge directions (81 x 114 directions, 9,234 pairs, build in
# 5.7 s; a Panda link pair, 102 and 152 hull vertices, took over 2 minutes), and a point or a
# segment against any polytope.
MAX_DIRECTION_PAIRS = 10_000


def _by_routine(a: _Core, b: _Core) -> bool:
    """Whether the pair ``_RANK[a.kind] <= _RANK[b.kind]`` goes to the compiled routine."""
    if not ((b.kind == "polytope" and a.kind in ("point", "segment", "box", "polytope"))
            or (a.kind == "box" and b.kind == "box")):
        return False
    if convex_routine.compiler_available():
        return True
    return a.kind in ("box", "polytope") and \
        a.poly.directions.shape[1] * b.poly.directions.shape[1] > MAX_DIRECTION_PAIRS


def _points(core: _Core) -> np.ndarray:
    """The points whose hull is the core, (n, 3) in its own frame."""
    if core.kind == "point":
        return np.zeros((1, 3))
    if core.kind == "segment":
        return np.array([[0.0, 0.0, -core.half[0]], [0.0, 0.0, core.half[0]]])
    return np.array(core.poly.vertices).T


def _ordered(a, b) -> tuple[_Core, _Core, bool]:
    ca_, cb = _core(a), _core(b)
    swap = _RANK[ca_.kind] > _RANK[cb.kind]
    return (cb, ca_, True) if swap else (ca_, cb, False)


def routine_symbol(a, b) -> str | None:
    """The C symbol of the compiled routine that computes the distance of shapes ``a`` and
    ``b`` (a pair with a convex mesh, or two boxes), or None."""
    ca_, cb, _ = _ordered(a, b)
    return convex_routine.symbol(_points(ca_), _points(cb)) if _by_routine(ca_, cb) else None


def routine_report(a, pose_a: np.ndarray, b, pose_b: np.ndarray) -> tuple[int, float] | None:
    """``(limits, bound)`` of the compiled routine's search for shapes ``a`` and ``b`` at
    numeric 4x4 poses: the capacities or limits it reached (bits of
    :data:`casdyn.geometry.convex_routine.LIMITS`, 0 when it converged) and the width (m) of
    the interval known to hold the distance; None for a pair the routine does not compute."""
    ca_, cb, swap = _ordered(a, b)
    if not _by_routine(ca_, cb):
        return None
    if swap:
        pose_a, pose_b = pose_b, pose_a
    out = np.asarray(convex_routine.routine(_points(ca_), _points(cb))(pose_a, pose_b)).ravel()
    return int(out[9]), float(out[10])


def warn_if_stopped(what: str, a, pose_a: np.ndarray, b, pose_b: np.ndarray, d: float,
                    stacklevel: int = 3) -> None:
    """A :class:`ConvergenceWarning` naming ``what`` where the routine stopped at a capacity
    for shapes ``a``, ``b`` at numeric poses (see :func:`routine_report`): its value ``d``
    is then a bound, not the distance."""
    report = routine_report(a, pose_a, b, pose_b)
    if not report or not report[0]:
        return
    limits, bound = report
    reached = " and ".join(text for bit, text in convex_routine.LIMITS.items() if limits & bit)
    warnings.warn(ConvergenceWarning(
        f"{what}: the convex distance routine stopped at {reached}; the distance {d:.9g} m "
        f"is known only to within {bound:.3g} m (overlapping, the depth returned is an upper "
        "bound). Hulls of fewer vertices avoid it (a coarser mesh, or "
        "casdyn.geometry.with_fitted_capsules)"), stacklevel=stacklevel)


def witness_points(a, pose_a, b, pose_b):
    """``(p_a, p_b)``: the closest points (3 x 1, the poses' frame) of the cores of two
    spheres or capsules, or None for other shapes. The shapes' signed distance is
    ``|p_a - p_b| - r_a - r_b``; its rate is ``n . (v(p_a) - v(p_b))``, ``n`` the unit vector
    from ``p_b`` to ``p_a`` (closest points are stationary: the envelope theorem)."""
    ca_, cb = _core(a), _core(b)
    if {ca_.kind, cb.kind} - {"point", "segment"}:
        return None
    Ra, pa, Rb, pb = pose_a[:3, :3], pose_a[:3, 3], pose_b[:3, :3], pose_b[:3, 3]
    if ca_.kind == "point" and cb.kind == "point":
        return pa, pb
    if ca_.kind == "point":
        return pa, pr.segment_point(pa, *_segment(cb, Rb, pb))
    if cb.kind == "point":
        return pr.segment_point(pb, *_segment(ca_, Ra, pa)), pb
    return pr.segment_segment_points(*_segment(ca_, Ra, pa), *_segment(cb, Rb, pb))


# The closed forms, the cylinders' searches and the fixed graph square lengths in metres (and
# segments' fourth powers), and take 1e10 m for "no candidate here" (primitives.BIG): measured
# exact from 1e-6 m to 1e9 m; above 1e10 m a capsule against a box was off by 70%, above
# 1e154 m squares overflow. Their pairs refuse larger shapes. The hull and the compiled
# routine scale lengths by a power of two and hold at any size (docs: "Sizes").
MAX_CLOSED_FORM_SIZE = 1e9


def _size(shape) -> float:
    """The largest length of a shape (m): a radius, a length, an edge, or a hull vertex's
    distance from its frame's origin along an axis."""
    if isinstance(shape, Sphere):
        return shape.radius
    if isinstance(shape, Capsule | Cylinder):
        return max(shape.radius, shape.length)
    if isinstance(shape, Box):
        return max(shape.size)
    if isinstance(shape, ConvexMesh):
        return float(np.max(np.abs(shape.vertices)))
    return 0.0


def _check_closed_form_size(a, b) -> None:
    if isinstance(a, Plane) or isinstance(b, Plane):
        return  # linear in the lengths: any size
    for shape in (a, b):
        if _size(shape) > MAX_CLOSED_FORM_SIZE:
            raise InputError(
                f"signed_distance of {a!r} and {b!r}: {shape!r} has a length of "
                f"{_size(shape):.3g} m, beyond the {MAX_CLOSED_FORM_SIZE:.0e} m up to which "
                "this pair's closed-form distance is exact (it squares lengths in metres); "
                "the compiled routine's pairs (a ConvexMesh with a sphere, capsule, box or "
                "ConvexMesh, and two boxes) hold at any size")


def distance_expression(a, pose_a, b, pose_b, routine: bool = True):
    """The signed distance of shapes ``a`` and ``b`` as an expression of the 4x4 poses (SX or
    MX matrices, or numbers as DM). ``routine=False`` builds the fixed graph also for pairs
    with a convex mesh (the tests' independent reference; large, see above). Pairs not
    computed by the routine refuse shapes larger than :data:`MAX_CLOSED_FORM_SIZE`."""
    ca_, cb, swap = _ordered(a, b)
    if swap:
        pose_a, pose_b = pose_b, pose_a
    if routine and _by_routine(ca_, cb):
        d = convex_routine.distance(_points(ca_), pose_a, _points(cb), pose_b)
    else:
        _check_closed_form_size(a, b)
        d = _core_distance(ca_, pose_a, cb, pose_b)
    return d - ca_.radius - cb.radius


@lru_cache(maxsize=512)
def distance_function(a, b) -> ca.Function:
    """``sd(pose_a, pose_b)`` as a CasADi Function of two 4x4 poses."""
    Ta, Tb = ca.SX.sym("pose_a", 4, 4), ca.SX.sym("pose_b", 4, 4)
    return ca.Function("signed_distance", [Ta, Tb], [distance_expression(a, Ta, b, Tb)],
                       ["pose_a", "pose_b"], ["distance"])


@lru_cache(maxsize=512)
def distance_gradient_function(a, b) -> ca.Function:
    """``(pose_a, pose_b) -> (sd, dsd/dpose_a, dsd/dpose_b)`` (4x4 gradients, reverse AD of
    the pair's graph)."""
    Ta, Tb = ca.SX.sym("pose_a", 4, 4), ca.SX.sym("pose_b", 4, 4)
    d = distance_expression(a, Ta, b, Tb)
    return ca.Function("signed_distance_gradient", [Ta, Tb],
                       [d, ca.reshape(ca.gradient(d, ca.vec(Ta)), 4, 4),
                        ca.reshape(ca.gradient(d, ca.vec(Tb)), 4, 4)])


def signed_distance(a, pose_a, b, pose_b):
    """Signed distance between shape ``a`` at ``pose_a`` and shape ``b`` at ``pose_b``.

    ``pose_*``: 4x4 homogeneous transforms of the shapes' frames in one common frame, numbers
    or CasADi SX/MX symbols. Returns the distance (m) when the shapes are apart and minus the
    penetration depth (the length of the smallest translation that separates them) when they
    overlap: a float for numeric poses, an expression of the poses' kind otherwise. Value and
    gradient are finite for every input. Numeric poses of a pair whose compiled routine stops
    at a capacity before its tolerance (EPA on detailed round hulls deep in each other) give a
    :class:`casdyn.errors.ConvergenceWarning` with the value's error bound.
    """
    _shape(a, "signed_distance: a")
    _shape(b, "signed_distance: b")
    for shape, what in ((a, "a"), (b, "b")):
        if isinstance(shape, Mesh):
            raise InputError(f"signed_distance: {what} is a Mesh (visual only); use "
                             "ConvexMesh (e.g. Mesh(...).convex())")
    symbolic = [isinstance(x, ca.SX | ca.MX) for x in (pose_a, pose_b)]
    if not any(symbolic):
        pose_a, pose_b = _pose(pose_a, "pose_a"), _pose(pose_b, "pose_b")
        d = float(distance_function(a, b)(pose_a, pose_b))
        warn_if_stopped(f"signed_distance({a!r}, {b!r})", a, pose_a, b, pose_b, d)
        return d
    kind = type(pose_a) if symbolic[0] else type(pose_b)
    poses = []
    for pose, what, sym in ((pose_a, "pose_a", symbolic[0]), (pose_b, "pose_b", symbolic[1])):
        if sym:
            if not isinstance(pose, kind):
                raise InputError("signed_distance: pose_a and pose_b mix SX and MX")
            if pose.shape != (4, 4):
                raise InputError(f"signed_distance: {what} must be 4x4, got {pose.shape}")
            poses.append(pose)
        else:
            poses.append(kind(ca.DM(_pose(pose, what))))
    return distance_function(a, b)(*poses)
