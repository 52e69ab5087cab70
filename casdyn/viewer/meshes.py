"""Triangle meshes for the viewer: mesh files read with their faces (STL, OBJ, DAE through the
optional ``trimesh``; DAE also needs ``pycollada``) and the few solids viser does not draw
itself (a capsule's hemispheres come from viser's spheres; the friction cone is built here).

``casdyn.geometry`` reads a mesh file's vertices only (enough for distances); drawing it needs
its triangles too, hence :func:`mesh_triangles`.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..errors import CasdynError
from ..geometry.meshes import read_mesh


@lru_cache(maxsize=256)
def _triangles(path: str) -> tuple[np.ndarray, np.ndarray]:
    loaded = read_mesh(path, extra="viewer")
    vertices = np.asarray(loaded.vertices, dtype=np.float32)
    faces = np.asarray(loaded.faces, dtype=np.uint32)
    if vertices.ndim != 2 or len(vertices) == 0 or faces.ndim != 2 or len(faces) == 0:
        raise CasdynError(f"mesh file {path!r} holds no triangles")
    vertices.setflags(write=False)
    faces.setflags(write=False)
    return vertices, faces


def mesh_triangles(path: str, scale=(1.0, 1.0, 1.0)) -> tuple[np.ndarray, np.ndarray]:
    """``(vertices (n, 3), faces (m, 3))`` of the mesh file at ``path``, vertices multiplied by
    ``scale`` per axis, in the file's frame."""
    vertices, faces = _triangles(str(path))
    return vertices * np.asarray(scale, dtype=np.float32), faces


def cone(half_angle: float, height: float, segments: int = 24
         ) -> tuple[np.ndarray, np.ndarray]:
    """An open cone, apex at the origin, opening along +z up to ``height`` (m), of half-angle
    ``half_angle`` (rad): ``(vertices (segments + 1, 3), faces (segments, 3))``, the faces
    wound outwards."""
    radius = height * math.tan(half_angle)
    angles = np.linspace(0.0, 2.0 * math.pi, segments, endpoint=False)
    rim = np.stack([radius * np.cos(angles), radius * np.sin(angles),
                    np.full(segments, height)], axis=1)
    vertices = np.vstack([np.zeros((1, 3)), rim]).astype(np.float32)
    k = np.arange(segments)
    faces = np.stack([np.zeros(segments, dtype=int), (k + 1) % segments + 1, k + 1], axis=1)
    return vertices, faces.astype(np.uint32)
