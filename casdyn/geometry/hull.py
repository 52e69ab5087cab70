"""The convex hull of a 3-D point set (quickhull), with what the distance functions need:
triangles, the distinct face planes, and the hull's edges.

Written here so that scipy (Qhull) is not a dependency. Quickhull (Barber, Dobkin and
Huhdanpaa, "The Quickhull algorithm for convex hulls", ACM TOMS 22(4), 1996): each face keeps
the points outside it; the farthest of them is added, the faces it sees (a connected set found
from that face) are replaced by a cone of new faces on their horizon, and their outside points
are shared out among the new faces in one vectorised step. A point within ``eps`` of a face is
on it (real meshes are full of coplanar and repeated vertices); should rounding still make the
faces a point sees a region that is not a disc, the hull is built again with a larger ``eps``.
A mesh of thousands of vertices takes well under a second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..errors import CasdynError, InputError


@dataclass(frozen=True)
class Hull:
    """A convex polytope in its own frame.

    ``vertices`` (n, 3); ``triangles`` (m, 3) vertex indices, counter-clockwise seen from
    outside; ``normals`` (f, 3) and ``offsets`` (f,) the distinct face planes
    ``normals @ x <= offsets``; ``edges`` (e, 2) vertex index pairs of the hull's edges (no
    diagonals inside flat faces).
    """

    vertices: np.ndarray
    triangles: np.ndarray
    normals: np.ndarray
    offsets: np.ndarray
    edges: np.ndarray


class _NotADisc(Exception):
    """The faces a point sees do not form a disc (rounding): build again, coarser."""


def convex_hull(points) -> Hull:
    """The convex hull of ``points`` (an (n, 3) array of finite numbers, not all coplanar;
    repeated points are fine; any size a double holds). Points within ``1e-9`` of the hull's
    size of a face count as on it, so the hull may leave them out; so are points whose
    distances from each other are below about 1e-16 of their distance from the origin
    (rounding)."""
    try:
        points = np.array(points, dtype=float)
    except (TypeError, ValueError):
        raise InputError("ConvexMesh vertices must be an (n, 3) array of numbers") from None
    if points.ndim != 2 or points.shape[1] != 3 or len(points) < 4:
        raise InputError(
            f"ConvexMesh vertices must be an (n, 3) array with n >= 4, got shape {points.shape}"
        )
    if not np.all(np.isfinite(points)):
        raise InputError("ConvexMesh vertices must be finite")
    points = np.unique(points, axis=0)
    # the planes below square lengths and their tests cube them: at 1e77 m a normal's length
    # overflowed (a cube read as flat), at 1e300 eps**2 did. Built on the points scaled by a
    # power of two to at most 1 in magnitude, which is exact, the hull is the same at any size
    exponent = int(np.frexp(np.max(np.abs(points)))[1])
    points = np.ldexp(points, -exponent)
    scale = float(np.max(np.ptp(points, axis=0)))
    best = None  # (how far the surface folds, faces, eps)
    for factor in (1e-9, 1e-8, 1e-7, 1e-6):
        eps = factor * max(scale, 1e-12)
        try:
            faces = _quickhull(points, eps)
        except _NotADisc:
            continue
        fold = _fold(points, faces)
        if best is None or fold < best[0]:
            best = (fold, faces, eps)
        if fold <= 10 * eps:
            break
    if best is None or best[0] > FOLD_TOLERANCE * scale:
        raise CasdynError(f"the convex hull of these {len(points)} points could not be built "
                          "consistently (rounding); please report the points")
    hull = _tidy(points, best[1], best[2])
    return Hull(np.ldexp(hull.vertices, exponent), hull.triangles, hull.normals,
                np.ldexp(hull.offsets, exponent), hull.edges)


FOLD_TOLERANCE = 1e-5  # the largest fold of a hull's surface accepted, relative to its size


def _fold(points: np.ndarray, faces: np.ndarray, chunk: int = 256) -> float:
    """How far (m) a vertex of ``faces`` lies above the plane of one of them (0: convex)."""
    vertices = points[np.unique(faces)]
    worst = 0.0
    for start in range(0, len(faces), chunk):
        corners = points[faces[start:start + chunk]]
        normals = _cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
        normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-300)
        heights = vertices @ normals.T - np.einsum("ij,ij->i", normals, corners[:, 0])
        worst = max(worst, float(np.max(heights)))
    return worst


@lru_cache(maxsize=256)
def file_hull(path: str, scale: tuple[float, float, float]) -> Hull:
    """The hull of the mesh file at ``path`` scaled by ``scale`` (per axis), built once per
    file and scale (needs ``trimesh``)."""
    from .meshes import load_vertices

    return convex_hull(load_vertices(path) * np.asarray(scale))


def _quickhull(points: np.ndarray, eps: float) -> np.ndarray:
    """The hull's triangles (m, 3), indices into ``points``, outward counter-clockwise."""
    faces: list[tuple[int, int, int]] = []
    normals: list[np.ndarray] = []
    offsets: list[float] = []
    outside: list[np.ndarray] = []
    alive: list[bool] = []
    edge_face: dict[tuple[int, int], int] = {}

    def add(new: np.ndarray, candidates: np.ndarray) -> list[int]:
        """Add the faces ``new`` (k, 3) and share ``candidates`` (point indices) among them."""
        n, o = _planes(points, new)
        first = len(faces)
        ids = list(range(first, first + len(new)))
        for i, (a, b, c) in zip(ids, new.tolist(), strict=True):
            faces.append((a, b, c))
            alive.append(True)
            for edge in ((a, b), (b, c), (c, a)):
                if edge in edge_face:
                    raise _NotADisc
                edge_face[edge] = i
        normals.extend(n)
        offsets.extend(o.tolist())
        if len(candidates):
            heights = points[candidates] @ n.T - o
            best = np.argmax(heights, axis=1)
            out = heights[np.arange(len(candidates)), best] > eps
            candidates, best = candidates[out], best[out]
            order = np.argsort(best, kind="stable")
            candidates, best = candidates[order], best[order]
            cuts = np.searchsorted(best, np.arange(len(new) + 1))
            outside.extend(candidates[cuts[k]:cuts[k + 1]] for k in range(len(new)))
        else:
            outside.extend(np.zeros(0, dtype=int) for _ in range(len(new)))
        return ids

    stack = add(_initial_tetrahedron(points, eps), np.arange(len(points)))
    while stack:
        f = stack.pop()
        if not alive[f] or not len(outside[f]):
            continue
        candidates = outside[f]
        p = int(candidates[np.argmax(points[candidates] @ normals[f])])
        x = points[p]
        visible = {f}
        hidden: set[int] = set()
        queue = [f]
        while queue:  # the connected set of faces that see x
            g = queue.pop()
            a, b, c = faces[g]
            for u, v in ((a, b), (b, c), (c, a)):
                h = edge_face[(v, u)]
                if h in visible or h in hidden:
                    continue
                if normals[h] @ x - offsets[h] > eps:
                    visible.add(h)
                    queue.append(h)
                else:
                    hidden.add(h)
        while True:
            horizon = [(u, v) for g in visible for u, v in _edges_of(faces[g])
                       if edge_face[(v, u)] not in visible]
            # a face that x does not quite see (within eps) but whose far vertex would be
            # above the new face on their common edge joins the visible set: otherwise that
            # edge is concave, by eps times the ratio of the two faces' widths (unbounded
            # for a thin new face)
            grow = set()
            starts, ends = np.array(horizon).T
            normals_x = _cross(points[ends] - points[starts], x - points[starts])
            for (u, v), normal in zip(horizon, normals_x, strict=True):
                h = edge_face[(v, u)]
                w = next(k for k in faces[h] if k != u and k != v)
                length = math.sqrt(normal.dot(normal))  # np.linalg.norm's sum
                if length > 0 and normal @ (points[w] - points[u]) > eps * length:
                    grow.add(h)
            if not grow:
                break
            visible |= grow
        _check_loop(horizon)
        for g in visible:
            alive[g] = False
            a, b, c = faces[g]
            for edge in ((a, b), (b, c), (c, a)):
                del edge_face[edge]
        pending = np.concatenate([outside[g] for g in visible])
        pending = pending[pending != p]
        new = np.array([(u, v, p) for u, v in horizon], dtype=int)
        stack.extend(add(new, pending))
    return np.array([face for face, keep in zip(faces, alive, strict=True) if keep], dtype=int)


def _edges_of(face: tuple[int, int, int]) -> tuple[tuple[int, int], ...]:
    a, b, c = face
    return ((a, b), (b, c), (c, a))


def _check_loop(horizon: list[tuple[int, int]]) -> None:
    """Refuse a horizon that is not one simple closed loop of edges."""
    following = dict(horizon)
    if len(following) != len(horizon) or len(set(following.values())) != len(horizon):
        raise _NotADisc
    start = horizon[0][0]
    at, steps = following[start], 1
    while at != start:
        at = following.get(at, start if steps > len(horizon) else None)
        if at is None:
            raise _NotADisc
        steps += 1
    if steps != len(horizon):
        raise _NotADisc


def _initial_tetrahedron(points: np.ndarray, eps: float) -> np.ndarray:
    a = int(np.argmin(points[:, 0]))
    b = int(np.argmax(np.linalg.norm(points - points[a], axis=1)))
    line = points[b] - points[a]
    c = int(np.argmax(np.linalg.norm(_cross(points - points[a], line), axis=1)))
    normal = _cross(line, points[c] - points[a])
    heights = (points - points[a]) @ normal
    d = int(np.argmax(np.abs(heights)))
    if np.linalg.norm(normal) < eps**2 or abs(heights[d]) < eps * np.linalg.norm(normal):
        raise InputError("ConvexMesh vertices are coplanar (or collinear) within 1e-9 of the "
                         "hull's size: the hull has no volume")
    if heights[d] > 0:  # d above (a, b, c): orient the faces so their normals point out
        b, c = c, b
    return np.array([(a, b, c), (a, d, b), (b, d, c), (c, d, a)], dtype=int)


def _planes(points: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p0, p1, p2 = points[faces[:, 0]], points[faces[:, 1]], points[faces[:, 2]]
    normals = _cross(p1 - p0, p2 - p0)
    normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-300)
    return normals, np.einsum("ij,ij->i", normals, p0)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.cross`` of 3-vectors (rows, broadcast): the same products and differences in the
    same order, so the same bits, without its overhead (most of a hull's time, called once
    per step of :func:`_quickhull`)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def _tidy(points: np.ndarray, faces: np.ndarray, eps: float) -> Hull:
    used, faces = np.unique(faces, return_inverse=True)
    faces = faces.reshape(-1, 3)
    vertices = points[used]
    p0, p1, p2 = vertices[faces[:, 0]], vertices[faces[:, 1]], vertices[faces[:, 2]]
    areas = _cross(p1 - p0, p2 - p0)  # twice the area, along the normal
    normals, offsets = _planes(vertices, faces)
    plane_of = np.full(len(faces), -1)
    by_offset = np.argsort(offsets, kind="stable")
    sorted_offsets = offsets[by_offset]
    for i in np.argsort(-np.linalg.norm(areas, axis=1)):  # coplanar triangles: one plane
        if plane_of[i] >= 0:
            continue
        # the triangles whose offsets are near (a wider window than the test below): the
        # only ones that can pass it, so each step looks at a few instead of all
        near = by_offset[np.searchsorted(sorted_offsets, offsets[i] - 20 * eps):
                         np.searchsorted(sorted_offsets, offsets[i] + 20 * eps, "right")]
        same = near[(normals[near] @ normals[i] > 1 - 1e-9)
                    & (np.abs(offsets[near] - offsets[i]) < 10 * eps) & (plane_of[near] < 0)]
        plane_of[same] = i
        plane_of[i] = i
    # each plane's normal from its triangles' areas (a sliver's own normal is inaccurate),
    # placed to touch the hull: a supporting plane, whatever the rounding
    planes, group = np.unique(plane_of, return_inverse=True)
    summed = np.zeros((len(planes), 3))
    np.add.at(summed, group, areas)
    length = np.linalg.norm(summed, axis=1)
    keep = length > 1e-12 * max(float(np.max(np.ptp(vertices, axis=0))), 1e-12) ** 2
    plane_normals = summed[keep] / length[keep, None]
    plane_offsets = np.max(vertices @ plane_normals.T, axis=0)
    n = len(vertices)
    starts, ends = faces.ravel(), np.roll(faces, -1, axis=1).ravel()
    owner = np.repeat(plane_of, 3)
    keys = starts * n + ends
    order = np.argsort(keys)
    twin = np.minimum(np.searchsorted(keys[order], ends * n + starts), len(keys) - 1)
    if np.any(keys[order][twin] != ends * n + starts):
        raise CasdynError("internal error: the convex hull's surface is not closed")
    apart = (owner != owner[order][twin]) & (starts < ends)
    edges = np.stack([starts[apart], ends[apart]], axis=1)
    edges = edges[np.lexsort((edges[:, 1], edges[:, 0]))]
    return Hull(vertices, faces, plane_normals, plane_offsets, edges.astype(int))
