"""Mesh files (STL, OBJ, DAE, ...) read through the optional ``trimesh`` package."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import CasdynError


def _trimesh(extra: str = "geometry"):
    try:
        import trimesh
    except ImportError:
        raise CasdynError(
            f"reading mesh files needs trimesh: pip install 'casdyn[{extra}]' "
            "(or pip install trimesh)"
        ) from None
    return trimesh


# the formats of trimesh's loaders that give triangles (DAE through pycollada)
MESH_FORMATS = ("stl", "obj", "ply", "off", "glb", "gltf", "dae")
DAE_INSTALL = "DAE (COLLADA) files need pycollada: pip install pycollada"


def format_problem(path: str | os.PathLike) -> str | None:
    """Why the mesh reader cannot read the file at ``path``, judged by its extension: a
    sentence naming the formats it reads (for a DAE without ``pycollada``, the install
    command); None when it can, or when ``trimesh`` is missing (reading the file then says
    what to install)."""
    try:
        import trimesh
    except ImportError:
        return None
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix == "dae":
        try:
            import collada  # noqa: F401  (trimesh reads DAE through it)
        except ImportError:
            return DAE_INSTALL
        return None
    readable = [f for f in MESH_FORMATS if f in trimesh.available_formats() or f == "dae"]
    if suffix in readable:
        return None
    what = f".{suffix} files" if suffix else "files without an extension"
    return f"the mesh reader does not read {what} (it reads {', '.join(readable)})"


def read_mesh(path: str, extra: str = "geometry"):
    """The triangle mesh (``trimesh.Trimesh``, unprocessed) of the file at ``path``; a
    format the reader does not read, or a file it cannot parse, is a :class:`CasdynError`
    naming the file (``extra``: the casdyn extra that installs trimesh, for the message)."""
    trimesh = _trimesh(extra)
    problem = format_problem(path)
    if problem:
        raise CasdynError(f"mesh file {path!r} cannot be read: {problem}")
    try:
        return trimesh.load(path, force="mesh", process=False)
    except Exception as error:  # trimesh raises many types, for files it cannot parse
        raise CasdynError(f"mesh file {path!r} could not be read: {error}") from None


@lru_cache(maxsize=128)
def _vertices(path: str) -> np.ndarray:
    loaded = read_mesh(path)
    vertices = np.asarray(loaded.vertices, dtype=float)
    if vertices.ndim != 2 or len(vertices) == 0:
        raise CasdynError(f"mesh file {path!r} holds no vertices")
    vertices.setflags(write=False)
    return vertices


def load_vertices(path: str) -> np.ndarray:
    """The vertices (n, 3) of the mesh file at ``path``, in the file's units and frame."""
    return _vertices(str(path))
