"""The fixed graphs of signed distances between cores (:mod:`casdyn.geometry.distance`):
closed forms, separating axes and closest features, the cylinders' searches.

For convex sets A, B with Minkowski difference D = A - B and support function
h_D(n) = h_A(n) + h_B(-n), ``sd(A, B) = max over unit n of g(n)``, ``g(n) = -h_D(n)``, so every
direction gives a lower bound. Pair by pair:

* plane and anything: g at the plane's normal (the whole formula, closed form);
* point, segment: their Euclidean distances (point-point, point-segment, segment-segment);
  a point against a box or a cylinder: the closed-form signed distance of the point; a
  segment against a box: separating axes and closest features in the box's axes;
* a point, a segment or a polytope against a polytope (:func:`polytope_distance`): D is a
  polytope whose face normals are the faces of each and the cross products of their edge
  directions. When they overlap, the largest g over those normals is exact (the separating
  axis theorem with depths); when that largest g is positive they are apart, and the
  distance is the smallest over the closest-feature pairs, which is exact there: each
  vertex's distance to the other shape (closed form for a box, its faces and edges for a
  mesh), and the edge pairs whose lines' closest points lie inside both edges (a segment: its
  distance to every edge). Both are 0 on contact, so the switch is continuous.
* a cylinder against a segment, a polytope or another cylinder (:func:`cylinder_distance`):
  no finite set of directions always holds the maximiser (the rims are curved), but it is
  one of a few kinds: fixed directions (axes, face normals, their cross products with
  edges), closed forms from each vertex, and one-parameter families (perpendicular to an
  edge or an axis; the normals of two rims' tangents), each sampled and refined by
  golden-section search (:mod:`casdyn.geometry.cylinders`). Every direction is a lower
  bound, so the largest g found is exact once the search reaches the maximiser: measured
  within 5e-9 m of coal and of an independent reference over 2,000 random poses per pair.

Each is a graph of min, max, comparisons and closed forms: no iterations at run time,
differentiable almost everywhere, exportable to C; the gradient is that of the active feature
pair (the cylinders': of g at the chosen direction, by the envelope theorem). The polytopes'
graphs grow with the hulls (a point against a Panda link's hull: 299k instructions), so the
pair table of :mod:`casdyn.geometry.distance` sends those pairs to the compiled routine and
keeps :func:`polytope_distance` as the tests' independent reference (``routine=False``).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import casadi as ca
import numpy as np

from ..errors import InputError
from . import cylinders
from . import primitives as pr
from .cores import _Core

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


def segment(core: _Core, R, p):
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


def _placed(Ta, Tb):
    return Ta[:3, :3], Ta[:3, 3], Tb[:3, :3], Tb[:3, 3]


def plane_distance(a: _Core, Ta, b: _Core, Tb):
    """A plane ``a`` and any core ``b`` but a plane: g at the plane's normal (exact)."""
    if b.kind == "plane":
        raise InputError("no signed distance between two planes (half-spaces)")
    Ra, pa, Rb, pb = _placed(Ta, Tb)
    normal = ca.mtimes(Ra, ca.DM(a.plane[0]))
    offset = a.plane[1] + ca.mtimes(normal.T, pa)
    return -_support(b, Rb, pb, -normal) - offset


def point_point(a: _Core, Ta, b: _Core, Tb):
    return pr.norm(Ta[:3, 3] - Tb[:3, 3])


def point_segment(a: _Core, Ta, b: _Core, Tb):
    return pr.point_segment(Ta[:3, 3], *segment(b, Tb[:3, :3], Tb[:3, 3]))


def segment_segment(a: _Core, Ta, b: _Core, Tb):
    Ra, pa, Rb, pb = _placed(Ta, Tb)
    return pr.segment_segment(*segment(a, Ra, pa), *segment(b, Rb, pb))


def point_box(a: _Core, Ta, b: _Core, Tb):
    pa, Rb, pb = Ta[:3, 3], Tb[:3, :3], Tb[:3, 3]
    return pr.point_box(ca.mtimes(Rb.T, pa - pb), b.half)


def segment_box(a: _Core, Ta, b: _Core, Tb):
    """Separating axes and closest features in the box's axes."""
    Ra, pa, Rb, pb = _placed(Ta, Tb)
    start, vector = segment(a, Ra, pa)
    return pr.segment_box(ca.mtimes(Rb.T, start - pb), ca.mtimes(Rb.T, vector), b.half)


def point_cylinder(a: _Core, Ta, b: _Core, Tb):
    pa, Rb, pb = Ta[:3, 3], Tb[:3, :3], Tb[:3, 3]
    return pr.point_cylinder(ca.mtimes(Rb.T, pa - pb), *b.half)


def polytope_distance(a: _Core, Ta, b: _Core, Tb):
    """A point, segment or polytope ``a`` against a polytope ``b``: the largest gap over the
    face normals and the edges' cross products where they overlap, the closest features
    where they are apart (see the module)."""
    Ra, pa, Rb, pb = _placed(Ta, Tb)
    if a.kind == "point":
        gap = _axes_gap(a, Ra, pa, b, Rb, pb, _face_axes(b, Rb))
        apart = _points_to_polytope(pa, b, Rb, pb)
    elif a.kind == "segment":
        start, vector = segment(a, Ra, pa)
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


def cylinder_distance(a: _Core, Ta, b: _Core, Tb):
    """A segment, box, polytope or cylinder ``a`` against a cylinder ``b``: the searches of
    :mod:`casdyn.geometry.cylinders`."""
    Ra, pa, Rb, pb = _placed(Ta, Tb)
    return _with_cylinder(a, Ra, pa, b, Rb, pb)


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
        start, vector = segment(a, Ra, pa)
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
