"""The layer order of docs/architecture.md ("Package layout") on the import graph: every
import of every module under casdyn/ (at module level or inside a function) points to its own
room or one listed below it, and every module is in a room. The order is read from the
table, so the page cannot drift from the code."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "casdyn"


def _rooms() -> list[list[str]]:
    """The rows of the table, bottom up: each a list of ``"name/"`` folders and ``"name.py"``
    modules, relative to casdyn/."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("## Package layout", 1)[1]
    rows = []
    for line in section.splitlines():
        if not line.startswith("| `"):
            if rows and not line.strip():
                break
            continue
        first = line.split("|")[1]
        rows.append([name.removeprefix("casdyn/") for name in re.findall(r"`([^`]+)`", first)])
    return rows


def _module(path: Path) -> str:
    """The dotted name of a module under casdyn/, without the package's name ("" for its
    ``__init__.py``)."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _room(module: str, rooms: list[list[str]]) -> int | None:
    path = module.replace(".", "/")
    for index, row in enumerate(rooms):
        for name in row:
            if name.endswith("/") and f"{path}/".startswith(name):
                return index
            if name == f"{path}.py" or (name == "__init__.py" and not path):
                return index
    return None


def _imported(path: Path) -> set[str]:
    """The casdyn modules (dotted, as :func:`_module`) that the file at ``path`` imports."""
    module = _module(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name.removeprefix("casdyn").lstrip(".") for a in node.names
                      if a.name == "casdyn" or a.name.startswith("casdyn.")}
            continue
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".") if package else []
            base = base[:len(base) - node.level + 1] if node.level > 1 else base
            target = ".".join([*base, *([node.module] if node.module else [])])
        elif node.module == "casdyn" or (node.module or "").startswith("casdyn."):
            target = node.module.removeprefix("casdyn").lstrip(".")
        else:
            continue
        for alias in node.names:  # "from . import name": a submodule, or a name of target
            inner = f"{target}.{alias.name}" if target else alias.name
            where = PACKAGE / inner.replace(".", "/")
            found.add(inner if where.is_dir() or where.with_suffix(".py").is_file() else target)
    return found


def test_the_table_names_every_room_once():
    rooms = _rooms()
    names = [name for row in rooms for name in row]
    assert len(rooms) >= 10 and len(names) == len(set(names))
    for name in names:
        assert (PACKAGE / name).exists(), f"docs/architecture.md names {name}, which is gone"


def test_every_import_points_down_the_documented_order():
    rooms = _rooms()
    unplaced, upward = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module(path)
        own = _room(module, rooms)
        if own is None:
            unplaced.append(str(path.relative_to(ROOT)))
            continue
        for target in sorted(_imported(path)):
            room = _room(target, rooms)
            if room is None or room > own:
                upward.append(f"{module or 'casdyn'} imports {target or 'casdyn'} "
                              f"(room {own} -> {room})")
    assert not unplaced, f"modules in no room of docs/architecture.md: {unplaced}"
    assert not upward, "imports up the layer order:\n" + "\n".join(upward)


def test_no_private_name_is_imported_from_another_folder():
    """``from ..folder.module import _name`` reaches into another room's internals."""
    crossing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level > 1 and node.module:
                private = [a.name for a in node.names
                           if a.name.startswith("_") and not a.name.startswith("__")]
                if private and node.module != "_version":
                    crossing.append(f"{path.relative_to(ROOT)}: {node.module} {private}")
    assert not crossing, crossing


def test_the_parser_maps_imports_to_their_rooms():
    """The parser maps relative, absolute and function-level imports to their rooms."""
    rooms = _rooms()
    geometry = next(i for i, row in enumerate(rooms) if "geometry/" in row)
    model = next(i for i, row in enumerate(rooms) if "model/" in row)
    assert geometry < model
    assert _room("geometry.distance", rooms) == geometry
    assert _room("model.urdf_geometry", rooms) == model
    assert _room("", rooms) is not None and _room("errors", rooms) == 0
    assert "codegen.convex_routine" not in _imported(PACKAGE / "geometry" / "distance.py")
    assert "geometry.distance" in _imported(PACKAGE / "codegen" / "convex_routine.py")
