"""The robot models shipped in ``robots/`` (installed as the package ``casdyn.robots``)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ..errors import unknown_name


def _robots_dir():
    try:
        return resources.files("casdyn.robots")
    except ModuleNotFoundError:  # running from a source checkout that is not installed
        return Path(__file__).resolve().parents[2] / "robots"


def robot_names() -> tuple[str, ...]:
    """The names :func:`casdyn.load_robot` accepts, sorted."""
    return tuple(sorted(p.name[:-5] for p in _robots_dir().iterdir() if p.name.endswith(".urdf")))


def _known(name: str) -> str:
    names = robot_names()
    if name not in names:
        raise unknown_name("robot", name, names)
    return name


def robot_urdf(name: str) -> str:
    """The URDF text of the shipped robot ``name``."""
    return (_robots_dir() / f"{_known(name)}.urdf").read_text(encoding="utf-8")


def robot_srdf(name: str) -> str | None:
    """The SRDF text shipped with robot ``name``, or None where it has none."""
    path = _robots_dir() / f"{_known(name)}.srdf"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def robot_file(name: str, suffix: str):
    """The file ``robots/<name><suffix>`` shipped beside robot ``name`` (such as its
    ``.collision.xml``), or None where there is none."""
    path = _robots_dir() / f"{_known(name)}{suffix}"
    return path if path.is_file() else None


def mjcf_names() -> tuple[str, ...]:
    """The MJCF models shipped (``robots/<name>.xml``), sorted."""
    return tuple(sorted(p.name[:-4] for p in _robots_dir().iterdir() if p.name.endswith(".xml")))


def robot_mjcf(name: str) -> str:
    """The MJCF text of the shipped model ``name`` (for :func:`casdyn.load_mjcf`)."""
    names = mjcf_names()
    if name not in names:
        raise unknown_name("MJCF model", name, names)
    return (_robots_dir() / f"{name}.xml").read_text(encoding="utf-8")
