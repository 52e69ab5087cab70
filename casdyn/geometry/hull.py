"""The convex hull of a 3-D point set (incremental construction), with what the distance
functions need: triangles, the distinct face planes, and the hull's edges.

Written here so that scipy (Qhull) is not a dependency; meshes of a few thousand vertices take
well under a second.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError


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


def convex_hull(points) -> Hull:
    """The convex hull of ``points`` (an (n, 3) array of finite numbers, not all coplanar)."""
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
    scale = float(np.max(np.ptp(points, axis=0)))
    eps = 1e-10 * max(scale, 1e-12)
    faces = _initial_tetrahedron(points, eps)
    normals, offsets = _planes(points, faces)
    centre = points[np.unique(faces)].mean(axis=0)
    order = np.argsort(-np.linalg.norm(points - centre, axis=1))  # far points first
    for index in order:
        p = points[index]
        visible = normals @ p - offsets > eps
        if not visible.any():
            continue
        seen = faces[visible]
        directed = {(int(a), int(b)) for f in seen for a, b in ((f[0], f[1]), (f[1], f[2]),
                                                                  (f[2], f[0]))}
        horizon = [(a, b) for a, b in directed if (b, a) not in directed]
        new = np.array([(a, b, index) for a, b in horizon], dtype=int)
        faces = np.vstack([faces[~visible], new])
        new_normals, new_offsets = _planes(points, new)
        normals = np.vstack([normals[~visible], new_normals])
        offsets = np.concatenate([offsets[~visible], new_offsets])
    return _tidy(points, faces, eps)


def _initial_tetrahedron(points: np.ndarray, eps: float) -> np.ndarray:
    a = int(np.argmin(points[:, 0]))
    b = int(np.argmax(np.linalg.norm(points - points[a], axis=1)))
    line = points[b] - points[a]
    c = int(np.argmax(np.linalg.norm(np.cross(points - points[a], line), axis=1)))
    normal = np.cross(line, points[c] - points[a])
    heights = (points - points[a]) @ normal
    d = int(np.argmax(np.abs(heights)))
    if np.linalg.norm(normal) < eps**2 or abs(heights[d]) < eps * np.linalg.norm(normal):
        raise InputError("ConvexMesh vertices are coplanar (or collinear): the hull has no "
                         "volume")
    if heights[d] > 0:  # d above (a, b, c): orient the faces so their normals point out
        b, c = c, b
    return np.array([(a, b, c), (a, d, b), (b, d, c), (c, d, a)], dtype=int)


def _planes(points: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p0, p1, p2 = points[faces[:, 0]], points[faces[:, 1]], points[faces[:, 2]]
    normals = np.cross(p1 - p0, p2 - p0)
    normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-300)
    return normals, np.einsum("ij,ij->i", normals, p0)


def _tidy(points: np.ndarray, faces: np.ndarray, eps: float) -> Hull:
    used, faces = np.unique(faces, return_inverse=True)
    faces = faces.reshape(-1, 3)
    vertices = points[used]
    normals, offsets = _planes(vertices, faces)
    plane_of = np.empty(len(faces), dtype=int)
    planes: list[int] = []
    for i in range(len(faces)):  # coplanar triangles share one plane
        for j in planes:
            if normals[i] @ normals[j] > 1 - 1e-9 and abs(offsets[i] - offsets[j]) < 10 * eps:
                plane_of[i] = j
                break
        else:
            planes.append(i)
            plane_of[i] = i
    owner: dict[tuple[int, int], int] = {}
    for i, f in enumerate(faces):
        for a, b in ((f[0], f[1]), (f[1], f[2]), (f[2], f[0])):
            owner[(int(a), int(b))] = plane_of[i]
    edges = sorted({(min(a, b), max(a, b)) for (a, b), plane in owner.items()
                    if owner[(b, a)] != plane})
    return Hull(vertices, faces, normals[planes], offsets[planes], np.array(edges, dtype=int))
