"""The shapes of ``casdyn.geometry``, each described in its own frame, and the records that
place them on a robot body (:class:`Geometry`) or in the world (:class:`Obstacle`).

Conventions (SPEC "Geometry and distances"): a capsule is the segment from
``(0, 0, -length/2)`` to ``(0, 0, length/2)`` swept by its radius (URDF 1.2), a cylinder is
centred with its axis along z, a box is centred with full edge lengths ``size``, a plane is the
half-space ``normal · x <= offset``. Shapes are immutable and hashable, so the distance
functions built for a pair of them can be cached.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError


def _positive(value, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a number, got {value!r}") from None
    if not (math.isfinite(number) and number > 0):
        raise InputError(f"{what} must be finite and > 0, got {value!r}")
    return number


def _nonnegative(value, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a number, got {value!r}") from None
    if not (math.isfinite(number) and number >= 0):
        raise InputError(f"{what} must be finite and >= 0, got {value!r}")
    return number


def _vector3(value, what: str) -> tuple[float, float, float]:
    array = np.asarray(value, dtype=float) if not isinstance(value, str) else None
    if array is None or array.shape != (3,) or not np.all(np.isfinite(array)):
        raise InputError(f"{what} must be 3 finite numbers, got {value!r}")
    return (float(array[0]), float(array[1]), float(array[2]))


@dataclass(frozen=True)
class Sphere:
    """A ball of ``radius`` (m) about the frame's origin."""

    radius: float

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive(self.radius, "Sphere radius"))


@dataclass(frozen=True)
class Capsule:
    """The segment from ``(0, 0, -length/2)`` to ``(0, 0, length/2)`` swept by ``radius``."""

    radius: float
    length: float

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive(self.radius, "Capsule radius"))
        object.__setattr__(self, "length", _nonnegative(self.length, "Capsule length"))


@dataclass(frozen=True)
class Cylinder:
    """A solid cylinder of ``radius`` and ``length`` (m), axis z, centred on the origin."""

    radius: float
    length: float

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive(self.radius, "Cylinder radius"))
        object.__setattr__(self, "length", _positive(self.length, "Cylinder length"))


@dataclass(frozen=True)
class Box:
    """A box centred on the origin with full edge lengths ``size = (x, y, z)`` (m)."""

    size: tuple[float, float, float]

    def __post_init__(self):
        size = _vector3(self.size, "Box size")
        if min(size) <= 0:
            raise InputError(f"Box size must be > 0 along every axis, got {self.size!r}")
        object.__setattr__(self, "size", size)


@dataclass(frozen=True)
class Plane:
    """The half-space ``normal · x <= offset`` (``normal`` is normalised on construction)."""

    normal: tuple[float, float, float] = (0.0, 0.0, 1.0)
    offset: float = 0.0

    def __post_init__(self):
        normal = np.array(_vector3(self.normal, "Plane normal"))
        length = float(np.linalg.norm(normal))
        if length < 1e-12:
            raise InputError(f"Plane normal must be nonzero, got {self.normal!r}")
        try:
            offset = float(self.offset)
        except (TypeError, ValueError):
            raise InputError(f"Plane offset must be a number, got {self.offset!r}") from None
        if not math.isfinite(offset):
            raise InputError(f"Plane offset must be finite, got {self.offset!r}")
        object.__setattr__(self, "normal", tuple(float(x) for x in normal / length))
        object.__setattr__(self, "offset", offset / length)


@dataclass(frozen=True, eq=False)
class ConvexMesh:
    """The convex hull of ``vertices`` (an ``(n, 3)`` array, m, in the shape's frame).

    The hull is computed on construction (:mod:`casdyn.geometry.hull`); ``hull`` holds its
    vertices, triangles, face planes and edges. Equality is identity.
    """

    vertices: np.ndarray
    hull: object = field(init=False, repr=False)

    def __post_init__(self):
        from .hull import convex_hull

        object.__setattr__(self, "hull", convex_hull(self.vertices))
        object.__setattr__(self, "vertices", self.hull.vertices)

    def __repr__(self) -> str:
        return f"ConvexMesh(<{len(self.vertices)} hull vertices>)"


@dataclass(frozen=True)
class Mesh:
    """A triangle mesh file for display (``scale`` per axis); not used for distances: use
    :meth:`convex` or ``ConvexMesh`` for those."""

    path: str
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)

    def __post_init__(self):
        if not isinstance(self.path, str | os.PathLike):
            raise InputError(f"Mesh path must be a path, got {self.path!r}")
        object.__setattr__(self, "path", str(Path(self.path)))
        object.__setattr__(self, "scale", _vector3(self.scale, "Mesh scale"))

    def vertices(self) -> np.ndarray:
        """The file's vertices, scaled, ``(n, 3)`` in the mesh frame (needs ``trimesh``)."""
        from .meshes import load_vertices

        return load_vertices(self.path) * np.asarray(self.scale)

    def convex(self) -> ConvexMesh:
        """The convex hull of the scaled mesh."""
        return ConvexMesh(self.vertices())


Shape = Sphere | Capsule | Cylinder | Box | Plane | ConvexMesh | Mesh
SHAPES = (Sphere, Capsule, Cylinder, Box, Plane, ConvexMesh, Mesh)


def _pose(value, what: str) -> np.ndarray:
    array = np.asarray(value, dtype=float) if not isinstance(value, str) else None
    if array is None or array.shape != (4, 4) or not np.all(np.isfinite(array)):
        raise InputError(f"{what} must be a finite 4x4 homogeneous transform, got {value!r}")
    array = array.copy()
    array.setflags(write=False)
    return array


def _shape(value, what: str):
    if not isinstance(value, SHAPES):
        raise InputError(
            f"{what} must be a casdyn.geometry shape (Sphere, Capsule, Cylinder, Box, Plane, "
            f"ConvexMesh, Mesh), got {type(value).__name__}"
        )
    return value


@dataclass(frozen=True, eq=False)
class Geometry:
    """A shape attached to robot body ``body``; ``pose`` (4x4) places the shape's frame in the
    body's frame."""

    name: str
    body: str
    shape: Shape
    pose: np.ndarray = field(default_factory=lambda: np.eye(4))

    def __post_init__(self):
        _shape(self.shape, f"Geometry {self.name!r} shape")
        object.__setattr__(self, "pose", _pose(self.pose, f"Geometry {self.name!r} pose"))


@dataclass(frozen=True, eq=False)
class Obstacle:
    """A shape fixed in the world (the robot's base frame); ``pose`` (4x4) places it there."""

    name: str
    shape: Shape
    pose: np.ndarray = field(default_factory=lambda: np.eye(4))

    def __post_init__(self):
        _shape(self.shape, f"Obstacle {self.name!r} shape")
        if isinstance(self.shape, Mesh):
            raise InputError(f"Obstacle {self.name!r}: a Mesh is visual only; use "
                             "ConvexMesh (e.g. Mesh(...).convex())")
        object.__setattr__(self, "pose", _pose(self.pose, f"Obstacle {self.name!r} pose"))
