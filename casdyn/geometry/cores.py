"""The *cores* of shapes for :mod:`casdyn.geometry.distance`: each shape is a core swept by a
radius (a sphere a point, a capsule a segment, a box and a convex mesh polytopes of radius 0,
a cylinder, a plane), with the constant data its distances use, in the shape's own frame."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

import casadi as ca
import numpy as np

from ..errors import InputError
from .hull import Hull, convex_hull
from .shapes import Box, Capsule, ConvexMesh, Cylinder, Plane, Sphere


@dataclass(frozen=True, eq=False)
class _Polytope:
    """The constant data of a polytope core in its own frame (3 x k DM matrices).

    Only the vertices are made up front: the compiled routine needs nothing else. The rest is
    the fixed graph's (:mod:`casdyn.geometry.distance`), made on first use: the distinct edge
    directions alone compare each edge with the directions kept before it, quadratic in the
    hull's size (a 5,000-vertex hull's first routine distance took over four minutes when
    they were made for it)."""

    hull: Hull
    vertices: ca.DM  # 3 x n

    @cached_property
    def edge_start(self) -> ca.DM:  # 3 x e
        return ca.DM(self.hull.vertices[self.hull.edges[:, 0]].T)

    @cached_property
    def edge_vector(self) -> ca.DM:  # 3 x e
        v, edges = self.hull.vertices, self.hull.edges
        return ca.DM((v[edges[:, 1]] - v[edges[:, 0]]).T)

    @cached_property
    def directions(self) -> ca.DM:  # 3 x k, the distinct edge directions (up to sign)
        return ca.DM(edge_directions(self.hull).T)

    @cached_property
    def normals(self) -> ca.DM:  # 3 x f, the distinct face normals
        return ca.DM(self.hull.normals.T)

    @cached_property
    def offsets(self) -> ca.DM:  # 1 x f, normals' x <= offsets inside
        return ca.DM(self.hull.offsets[None, :])

    @cached_property
    def _triangles(self) -> tuple:
        v = self.hull.vertices
        a, b, c = (v[self.hull.triangles[:, i]] for i in range(3))
        normal = np.cross(b - a, c - a)
        normal /= np.linalg.norm(normal, axis=1, keepdims=True)
        sides = []
        for p, q in ((a, b), (b, c), (c, a)):
            outward = np.cross(q - p, normal)  # in the triangle's plane, away from its inside
            outward /= np.linalg.norm(outward, axis=1, keepdims=True)
            sides.append((ca.DM(outward.T), ca.DM(np.einsum("ij,ij->i", outward, p)[None, :])))
        return ca.DM(a.T), ca.DM(normal.T), tuple(sides)

    @property
    def tri_point(self) -> ca.DM:  # 3 x t, a vertex of each triangle
        return self._triangles[0]

    @property
    def tri_normal(self) -> ca.DM:  # 3 x t
        return self._triangles[1]

    @property
    def tri_sides(self) -> tuple:  # three (3 x t normals, 1 x t offsets): in-plane sides
        return self._triangles[2]


def edge_directions(hull: Hull) -> np.ndarray:
    """The distinct unit edge directions of ``hull`` up to sign, (k, 3): each edge's unless it
    is parallel (``|cos| >= 1 - 1e-9``) to one kept before it. Quadratic in the hull's size:
    only the fixed graph needs them."""
    v = hull.vertices
    kept = np.empty((len(hull.edges), 3))
    count = 0
    for d in v[hull.edges[:, 1]] - v[hull.edges[:, 0]]:
        d = d / np.linalg.norm(d)
        if np.all(np.abs(kept[:count] @ d) < 1 - 1e-9):
            kept[count] = d
            count += 1
    return kept[:count]


def _polytope(hull: Hull) -> _Polytope:
    return _Polytope(hull, ca.DM(hull.vertices.T))


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
