"""Drawing casdyn shapes as viser scene nodes, each under its body's node at its pose in the
body frame (``Geometry.pose``)."""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import CasdynError, ModelWarning
from ..geometry.shapes import Box, Capsule, ConvexMesh, Cylinder, Mesh, Plane, Sphere
from .meshes import mesh_triangles

COLORS = {"visual": (186, 192, 204), "collision": (120, 160, 210)}


def wxyz(rotation) -> np.ndarray:
    """The unit quaternion ``[w, x, y, z]`` of a 3x3 rotation matrix (Shepperd's method:
    the largest of the four squared components is taken first, so no division by ~0)."""
    R = np.asarray(rotation, dtype=float)
    trace = R[0, 0] + R[1, 1] + R[2, 2]
    i = int(np.argmax([trace, R[0, 0], R[1, 1], R[2, 2]]))
    if i == 0:
        s = 2.0 * np.sqrt(max(1.0 + trace, 0.0))
        q = [0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    elif i == 1:
        s = 2.0 * np.sqrt(max(1.0 + R[0, 0] - R[1, 1] - R[2, 2], 0.0))
        q = [(R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s]
    elif i == 2:
        s = 2.0 * np.sqrt(max(1.0 + R[1, 1] - R[0, 0] - R[2, 2], 0.0))
        q = [(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s]
    else:
        s = 2.0 * np.sqrt(max(1.0 + R[2, 2] - R[0, 0] - R[1, 1], 0.0))
        q = [(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s]
    q = np.asarray(q)
    return q / np.linalg.norm(q)


def add_shape(scene, name: str, shape, pose, color, opacity: float | None = None) -> bool:
    """Add ``shape`` as node ``name`` (a child of its body's node) at ``pose`` (4x4, body
    frame). A mesh file that cannot be read is left out with a :class:`ModelWarning`;
    returns whether something was drawn."""
    pose = np.asarray(pose, dtype=float)
    where = {"position": pose[:3, 3], "wxyz": wxyz(pose[:3, :3])}
    style = {"color": color, "opacity": opacity}
    if isinstance(shape, Box):
        scene.add_box(name, dimensions=shape.size, **style, **where)
    elif isinstance(shape, Sphere):
        scene.add_icosphere(name, radius=shape.radius, **style, **where)
    elif isinstance(shape, Cylinder):  # viser's cylinder: axis z, centred, as casdyn's
        scene.add_cylinder(name, radius=shape.radius, height=shape.length, **style, **where)
    elif isinstance(shape, Capsule):
        scene.add_frame(name, show_axes=False, **where)
        if shape.length > 0:
            scene.add_cylinder(f"{name}/shaft", radius=shape.radius, height=shape.length,
                               **style)
        for end, z in (("top", 0.5), ("bottom", -0.5)):
            scene.add_icosphere(f"{name}/{end}", radius=shape.radius,
                                position=(0.0, 0.0, z * shape.length), **style)
    elif isinstance(shape, ConvexMesh):
        scene.add_mesh_simple(name, shape.hull.vertices, shape.hull.triangles,
                              flat_shading=True, **style, **where)
    elif isinstance(shape, Mesh):
        try:
            vertices, faces = mesh_triangles(shape.path, shape.scale)
        except CasdynError as error:
            warnings.warn(f"{name}: {error}; this mesh is left out", ModelWarning,
                          stacklevel=3)
            return False
        scene.add_mesh_simple(name, vertices, faces, side="double", **style, **where)
    elif isinstance(shape, Plane):  # an unbounded half-space: not drawn
        return False
    else:  # pragma: no cover - Geometry checks its shape
        raise CasdynError(f"{name}: cannot draw {type(shape).__name__}")
    return True


def reach(item) -> float:
    """How far (m) a geometry element extends from its body's origin, roughly: its offset
    plus the half-diagonal of its shape's bounds (a mesh file's read here, cached)."""
    from ..geometry.shapes import Box, Capsule, ConvexMesh, Cylinder, Mesh, Sphere

    shape = item.shape
    if isinstance(shape, Sphere):
        half = shape.radius
    elif isinstance(shape, Capsule | Cylinder):
        half = float(np.hypot(shape.radius, shape.length / 2 + shape.radius))
    elif isinstance(shape, Box):
        half = float(np.linalg.norm(shape.size)) / 2
    elif isinstance(shape, ConvexMesh | Mesh):
        try:
            points = (shape.vertices if isinstance(shape, ConvexMesh)
                      else mesh_triangles(shape.path, shape.scale)[0])
        except CasdynError:  # drawn without it (see scene.add_shape)
            return 0.0
        half = float(np.max(np.linalg.norm(points, axis=1)))
    else:
        return 0.0
    return float(np.linalg.norm(item.pose[:3, 3])) + half


def z_to(direction: np.ndarray) -> np.ndarray:
    """A rotation whose z axis is the unit vector ``direction``."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(direction[0]) < 0.9 else np.array([0, 1.0, 0])
    x = np.cross(helper, direction)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(direction, x), direction])


def chosen_geometry(robot, kind: str) -> tuple[str, tuple]:
    """What is drawn for ``geometry=kind``: (``"visual"``, ``"collision"`` or ``"frames"``,
    the geometry items)."""
    order = {"visual": ("visual", "collision"), "collision": ("collision",), "frames": ()}
    for candidate in order[kind]:
        try:
            items = tuple(getattr(robot, f"{candidate}_geometry"))
        except CasdynError:  # no URDF file to read it from (a model built from a string)
            items = ()
        if items:
            return candidate, items
    return "frames", ()
