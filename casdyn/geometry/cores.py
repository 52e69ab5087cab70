"""The *cores* of shapes for :mod:`casdyn.geometry.distance`: each shape is a core swept by a
radius (a sphere a point, a capsule a segment, a box and a convex mesh polytopes of radius 0,
a cylinder, a plane), with the constant data its distances use, in the shape's own frame."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import casadi as ca
import numpy as np

from ..errors import InputError
from .hull import Hull, convex_hull
from .shapes import Box, Capsule, ConvexMesh, Cylinder, Plane, Sphere


@dataclass(frozen=True, eq=False)
class _Polytope:
    """The constant data of a polytope core in its own frame (3 x k DM matrices)."""

    vertices: ca.DM  # 3 x n
    edge_start: ca.DM  # 3 x e
    edge_vector: ca.DM  # 3 x e
    directions: ca.DM  # 3 x k, the distinct edge directions (up to sign)
    normals: ca.DM  # 3 x f, the distinct face normals
    offsets: ca.DM  # 1 x f, normals' x <= offsets inside
    tri_point: ca.DM  # 3 x t, a vertex of each triangle
    tri_normal: ca.DM  # 3 x t
    tri_sides: tuple  # three (3 x t normals, 1 x t offsets): the triangle's in-plane sides


def _polytope(hull: Hull) -> _Polytope:
    v = hull.vertices
    start, end = v[hull.edges[:, 0]], v[hull.edges[:, 1]]
    directions: list[np.ndarray] = []
    for d in end - start:
        d = d / np.linalg.norm(d)
        if all(abs(d @ k) < 1 - 1e-9 for k in directions):
            directions.append(d)
    a, b, c = (v[hull.triangles[:, i]] for i in range(3))
    normal = np.cross(b - a, c - a)
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    sides = []
    for p, q in ((a, b), (b, c), (c, a)):
        outward = np.cross(q - p, normal)  # in the triangle's plane, away from its inside
        outward /= np.linalg.norm(outward, axis=1, keepdims=True)
        sides.append((ca.DM(outward.T), ca.DM(np.einsum("ij,ij->i", outward, p)[None, :])))
    return _Polytope(ca.DM(v.T), ca.DM(start.T), ca.DM((end - start).T),
                     ca.DM(np.array(directions).T), ca.DM(hull.normals.T),
                     ca.DM(hull.offsets[None, :]), ca.DM(a.T), ca.DM(normal.T), tuple(sides))


@dataclass(frozen=True, eq=False)
class _Core:
    kind: str
    radius: float = 0.0
    half: tuple = ()  # box half extents; (half length,) of a segment; (r, half length) cylinder
    poly: _Polytope | None = None
    plane: tuple = ()  # (normal (3,), offset)


@lru_cache(maxsize=256)
def _core(shape) -> _Core:
    if isinstance(shape, Sphere):
        return _Core("point", shape.radius)
    if isinstance(shape, Capsule):
        return _Core("segment", shape.radius, (shape.length / 2,))
    if isinstance(shape, Box):
        half = tuple(s / 2 for s in shape.size)
        corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
        return _Core("box", 0.0, half, _polytope(convex_hull(corners * half)))
    if isinstance(shape, ConvexMesh):
        return _Core("polytope", 0.0, (), _polytope(shape.hull))
    if isinstance(shape, Cylinder):
        return _Core("cylinder", 0.0, (shape.radius, shape.length / 2))
    if isinstance(shape, Plane):
        return _Core("plane", 0.0, (), None, (np.array(shape.normal), shape.offset))
    raise InputError(f"no signed distance for a {type(shape).__name__}")
