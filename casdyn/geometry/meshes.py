"""Mesh files (STL, OBJ, DAE, ...) read through the optional ``trimesh`` package."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..errors import CasdynError


def _trimesh():
    try:
        import trimesh
    except ImportError:
        raise CasdynError(
            "reading mesh files needs trimesh: pip install 'casdyn[geometry]' "
            "(or pip install trimesh)"
        ) from None
    return trimesh


@lru_cache(maxsize=128)
def _vertices(path: str) -> np.ndarray:
    loaded = _trimesh().load(path, force="mesh", process=False)
    vertices = np.asarray(loaded.vertices, dtype=float)
    if vertices.ndim != 2 or len(vertices) == 0:
        raise CasdynError(f"mesh file {path!r} holds no vertices")
    vertices.setflags(write=False)
    return vertices


def load_vertices(path: str) -> np.ndarray:
    """The vertices (n, 3) of the mesh file at ``path``, in the file's units and frame."""
    return _vertices(str(path))
