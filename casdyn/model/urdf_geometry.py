"""The ``<collision>`` and ``<visual>`` elements of a URDF's links, as :class:`Geometry`.

casdyn.model.urdf reads only what dynamics needs; this module reads the same source again for the
geometry: ``box``, ``cylinder``, ``sphere``, ``capsule`` (URDF 1.2) and ``mesh`` (``filename``,
``scale``), each with its ``origin``. Mesh file names ``package://pkg/rest``, ``file://path``,
absolute and relative paths are resolved as Pinocchio does: ``package://`` against each of
``package_dirs`` (``dir/pkg/rest``), then against the URDF's directory and its ancestors;
relative paths against the URDF's directory. A ``package://`` name stays inside its package
(``..`` climbing above it is a :class:`URDFError`); ``file://`` and plain paths are read as
written. Next to a URDF file ``x.urdf``, a file
``x.collision.xml`` in the same syntax (``<robot><link name><collision>...``) adds collision
shapes that other URDF parsers reject (URDF 1.2 capsules: urdfdom refuses the whole file);
casdyn's shipped arms keep their capsules there. A mesh that cannot be found is left out with a
:class:`ModelWarning` naming it: geometry is optional for dynamics; so is one in a format the
mesh reader does not read (one warning per reason, naming the formats it reads, or for DAE
without ``pycollada`` the install command). Collision meshes become
the convex hull of their vertices (:class:`ConvexMesh`, needs ``trimesh``; built when a
distance first needs it, once per file and scale), visual meshes stay :class:`Mesh` files.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import CasdynError, ModelWarning, URDFError
from ..geometry.meshes import format_problem
from ..geometry.shapes import Box, Capsule, Cylinder, Geometry, Mesh, Sphere
from .urdf import _parse_xml, _read_source, rpy_to_matrix


def read_geometry(source: str | os.PathLike, package_dirs=(),
                  extra: os.PathLike | None = None) -> tuple[tuple, tuple]:
    """``(collision, visual)``: tuples of :class:`Geometry`, named ``"<link>_<index>"`` (the
    index counts that link's elements of the kind, from 0), ``body`` the link's name and
    ``pose`` the element's origin in the link frame. ``extra``: a ``.collision.xml`` file to
    read as well (found next to a URDF file without being named)."""
    data, label = _read_source(source)
    base = Path(label).resolve().parent if label != "<string>" else Path.cwd()
    dirs = [Path(d) for d in ([package_dirs] if isinstance(package_dirs, str | os.PathLike)
                              else package_dirs)]
    found: dict[str, list[Geometry]] = {"collision": [], "visual": []}
    counts: dict[tuple[str, str], int] = {}
    sources = [(data, label)]
    side = Path(label).with_suffix(".collision.xml") if label != "<string>" else None
    side = Path(extra) if extra is not None else side
    if side is not None and side.is_file():
        sources.append((side.read_bytes(), str(side)))
    for text, where_from in sources:
        unread: dict[str, list[str]] = {}  # why -> the mesh elements left out for it
        _read_links(text, where_from, base, dirs, found, counts, unread)
        for problem, elements in unread.items():  # one warning each: a DAE robot has dozens
            warnings.warn(f"{where_from}: {problem}; left out {len(elements)} mesh "
                          f"element(s): {'; '.join(elements)}", ModelWarning, stacklevel=2)
    return tuple(found["collision"]), tuple(found["visual"])


def _read_links(data, label: str, base: Path, dirs: list[Path], found: dict,
                counts: dict, unread: dict) -> None:
    root, lines = _parse_xml(data, label)
    for link in root.iter("link"):
        name = link.get("name", "")
        for kind, kept in found.items():
            for element in link.findall(kind):
                index = counts.get((name, kind), 0)
                counts[(name, kind)] = index + 1
                place = f"line {lines.get(id(element), '?')}, <{kind}> of link {name!r}"
                where = f"{label}, {place}"
                shape = _shape(element.find("geometry"), where, base, dirs, kind == "collision")
                if isinstance(shape, _Unread):
                    unread.setdefault(shape.problem, []).append(f"{shape.filename!r} ({place})")
                    shape = None
                if shape is not None:
                    kept.append(Geometry(f"{name}_{index}", name, shape, _origin(element, where)))


def _numbers(text: str | None, count: int, what: str, where: str, default=None) -> np.ndarray:
    if text is None:
        if default is None:
            raise URDFError(f"{where}: {what} is missing")
        return np.asarray(default, dtype=float)
    try:
        values = np.array([float(x) for x in text.split()])
    except ValueError:
        raise URDFError(f"{where}: {what}={text!r} is not {count} numbers") from None
    if values.shape != (count,) or not np.all(np.isfinite(values)):
        raise URDFError(f"{where}: {what}={text!r} is not {count} finite numbers")
    return values


def _origin(element, where: str) -> np.ndarray:
    origin = element.find("origin")
    pose = np.eye(4)
    if origin is not None:
        pose[:3, :3] = rpy_to_matrix(_numbers(origin.get("rpy"), 3, "rpy", where, (0, 0, 0)))
        pose[:3, 3] = _numbers(origin.get("xyz"), 3, "xyz", where, (0, 0, 0))
    return pose


@dataclass(frozen=True)
class _Unread:
    """A mesh file the mesh reader cannot read, and why (the formats it reads)."""

    filename: str
    problem: str


def _shape(geometry, where: str, base: Path, dirs: list[Path], collision: bool):
    if geometry is None or len(geometry) == 0:
        raise URDFError(f"{where}: no <geometry> shape")
    element = geometry[0]
    tag, get = element.tag, element.get
    try:
        if tag == "box":
            return Box(tuple(_numbers(get("size"), 3, "box size", where)))
        if tag == "sphere":
            return Sphere(_numbers(get("radius"), 1, "sphere radius", where)[0])
        if tag in ("cylinder", "capsule"):
            radius = _numbers(get("radius"), 1, f"{tag} radius", where)[0]
            length = _numbers(get("length"), 1, f"{tag} length", where)[0]
            return (Cylinder if tag == "cylinder" else Capsule)(radius, length)
    except CasdynError as exc:
        raise URDFError(f"{where}: {exc}") from None
    if tag == "mesh":
        filename = get("filename")
        if not filename:
            raise URDFError(f"{where}: <mesh> has no filename")
        try:
            path = resolve_mesh(filename, base, dirs)
        except URDFError as exc:
            raise URDFError(f"{where}: {exc}") from None
        if path is None:
            warnings.warn(f"{where}: mesh file {filename!r} not found (searched the URDF's "
                          "directory and package_dirs); this geometry is left out",
                          ModelWarning, stacklevel=4)
            return None
        problem = format_problem(path)
        if problem:
            return _Unread(filename, problem)
        scale = _numbers(get("scale"), 3, "mesh scale", where, (1, 1, 1))
        mesh = Mesh(str(path), tuple(scale))
        return mesh.convex() if collision else mesh
    warnings.warn(f"{where}: unknown geometry <{tag}> left out", ModelWarning, stacklevel=4)
    return None


def resolve_mesh(filename: str, base: Path, dirs: list[Path]) -> Path | None:
    """The file a URDF mesh ``filename`` names, or None when it is nowhere to be found. A
    ``package://`` name that leaves its package (``..`` above it, or no package name) is a
    :class:`URDFError`: a URDF from elsewhere must not read files outside its packages."""
    if filename.startswith("package://"):
        rest = filename[len("package://"):]
        package, _, inside = rest.partition("/")
        inside = _inside_package(filename, package, inside)
        rest = f"{package}/{inside}"
        candidates = [d / rest for d in dirs]
        candidates += [parent / rest for parent in (base, *base.parents)]
        # a package that is the directory holding the URDF's own folder (pkg/urdf/x.urdf)
        candidates += [parent / inside for parent in (base, *base.parents)
                       if parent.name == package]
    else:
        path = Path(filename[len("file://"):] if filename.startswith("file://") else filename)
        candidates = [path] if path.is_absolute() else [base / path, *(d / path for d in dirs)]
    return next((c for c in candidates if c.is_file()), None)


def _inside_package(filename: str, package: str, inside: str) -> str:
    """``inside`` (the path after ``package://package/``) with empty and ``.`` parts dropped;
    a name that leaves the package folder is a :class:`URDFError`."""
    kept: list[str] = []
    climbs = False
    for part in inside.replace("\\", "/").split("/"):
        if part == "..":
            climbs = climbs or not kept
            kept = kept[:-1]
        elif part not in ("", "."):
            kept.append(part)
    if climbs or package in ("", ".", "..") or any(c in package for c in "\\:"):
        raise URDFError(f"mesh {filename!r} leaves its package folder (package:// names a "
                        "file inside a package: package://<package>/<path>, no '..' above "
                        "the package); not read")
    return "/".join(kept)
