"""Drawing casdyn shapes as viser scene nodes, each under its body's node at its pose in the
body frame (``Geometry.pose``)."""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import CasdynError, ModelWarning
from ..geometry.shapes import Box, Capsule, ConvexMesh, Cylinder, Mesh, Plane, Sphere

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
        from .meshes import mesh_triangles

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
