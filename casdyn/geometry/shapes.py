"""The shapes of ``casdyn.geometry``, each described in its own frame, and the records that
place them on a robot body (:class:`Geometry`) or in the world (:class:`Obstacle`).

Conventions (docs: "Geometry and distances"): a capsule is the segment from
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


class ConvexMesh:
    """The convex hull of ``vertices`` (an ``(n, 3)`` array, m, in the shape's frame), or of
    the scaled vertices of a mesh file (``ConvexMesh(mesh=Mesh(path, scale))``, as
    :meth:`Mesh.convex` gives).

    ``hull`` (:class:`casdyn.geometry.hull.Hull`) holds its vertices, triangles, face planes
    and edges; ``vertices`` are the hull's. Given vertices, the hull is computed on
    construction; given a mesh file, on first use of ``hull`` or ``vertices`` (a distance),
    once per file and scale in a process. Immutable; equal when made from the same file and
    scale, otherwise equality is identity.
    """

    __slots__ = ("_hull", "_mesh")

    def __init__(self, vertices=None, *, mesh: Mesh | None = None):
        if (vertices is None) == (mesh is None):
            raise InputError("ConvexMesh takes either vertices (an (n, 3) array) or mesh= "
                             "(a casdyn.geometry.Mesh), one of them")
        if mesh is not None and not isinstance(mesh, Mesh):
            raise InputError(f"ConvexMesh mesh= must be a casdyn.geometry.Mesh, got {mesh!r}")
        from .hull import convex_hull

        object.__setattr__(self, "_mesh", mesh)
        object.__setattr__(self, "_hull", None if vertices is None else convex_hull(vertices))

    def __setattr__(self, name, value):
        raise AttributeError("ConvexMesh is immutable")

    def __getstate__(self):
        return (self._hull if self._mesh is None else None, self._mesh)

    def __setstate__(self, state):
        object.__setattr__(self, "_hull", state[0])
        object.__setattr__(self, "_mesh", state[1])

    @property
    def mesh(self) -> Mesh | None:
        """The mesh file this is the hull of (None: made from vertices)."""
        return self._mesh

    @property
    def hull(self):
        """The hull (:class:`casdyn.geometry.hull.Hull`), built on first use for a file."""
        if self._hull is None:
            from .hull import file_hull

            object.__setattr__(self, "_hull", file_hull(self._mesh.path, self._mesh.scale))
        return self._hull

    @property
    def vertices(self) -> np.ndarray:
        """The hull's vertices ``(n, 3)`` (m, shape frame)."""
        return self.hull.vertices

    def __eq__(self, other) -> bool:
        if self._mesh is None or not isinstance(other, ConvexMesh):
            return self is other
        return self._mesh == other._mesh

    def __hash__(self) -> int:
        return id(self) if self._mesh is None else hash((ConvexMesh, self._mesh))

    def __repr__(self) -> str:
        if self._mesh is not None:
            return f"ConvexMesh(mesh={self._mesh!r})"
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
        """The convex hull of the scaled mesh, built on first use (once per file and
        scale)."""
        return ConvexMesh(mesh=self)


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
    """A shape fixed in the world (the robot's base frame); ``pose`` (4x4) places it there.
    Immutable and hashable: obstacles with the same name, shape and pose are equal (and give
    the same cached Function)."""

    name: str
    shape: Shape
    pose: np.ndarray = field(default_factory=lambda: np.eye(4))

    def __post_init__(self):
        _shape(self.shape, f"Obstacle {self.name!r} shape")
        if isinstance(self.shape, Mesh):
            raise InputError(f"Obstacle {self.name!r}: a Mesh is visual only; use "
                             "ConvexMesh (e.g. Mesh(...).convex())")
        object.__setattr__(self, "pose", _pose(self.pose, f"Obstacle {self.name!r} pose"))

    def _key(self) -> tuple:
        return (self.name, self.shape, self.pose.tobytes())

    def __eq__(self, other) -> bool:
        return isinstance(other, Obstacle) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())
