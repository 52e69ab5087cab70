"""URDF text → :class:`RobotDescription`: what the file says, element by element.

Only what dynamics needs is read: each link's ``<inertial>``, and each joint's ``origin``,
``parent``, ``child``, ``axis`` and ``limit``. Everything else (``visual``, ``collision``,
``transmission``, ``gazebo``, unknown tags) is dropped before ``urdf_parser_py`` sees the
element, so a file that is valid for dynamics loads even where those parts are not, and the
parser has nothing to complain about on the terminal. Every error names the source, the line
and the element.
"""

from __future__ import annotations

import contextlib
import math
import os
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from xml.parsers import expat

import numpy as np
import urdf_parser_py.xml_reflection.core as _reflection
from urdf_parser_py import urdf as _urdf

from ..errors import ModelWarning, URDFError

SUPPORTED_JOINT_TYPES = ("revolute", "continuous", "prismatic", "planar", "floating", "fixed")
_KEEP = {"link": {"inertial"},
         "joint": {"origin", "parent", "child", "axis", "limit", "mimic", "dynamics"}}


@dataclass(frozen=True)
class LinkSpec:
    """A URDF link. ``inertia`` is about the centre of mass, in the link frame's axes."""

    name: str
    mass: float
    com: np.ndarray  # (3,) centre of mass in the link frame
    inertia: np.ndarray  # (3, 3)
    where: str  # "file, line N, <link name=...>" for later error messages


@dataclass(frozen=True)
class JointSpec:
    """A URDF joint; ``axis`` is a unit vector in the child link frame."""

    name: str
    type: str
    parent: str
    child: str
    xyz: np.ndarray  # (3,) child frame origin in the parent link frame
    rpy: np.ndarray  # (3,) fixed-axis roll, pitch, yaw of the child frame
    axis: np.ndarray  # (3,)
    lower: float
    upper: float
    effort: float  # |tau| limit, inf when the URDF gives none
    velocity: float  # |qd| limit, inf when the URDF gives none
    where: str  # "file, line N, <joint name=...>" for later error messages
    mimic: tuple[str, float, float] | None = None  # (leader, multiplier, offset)
    rotation: np.ndarray | None = None  # (3, 3) the origin's rotation, where not from rpy
    damping: float = 0.0  # <dynamics damping>: viscous friction, N m s/rad or N s/m
    friction: float = 0.0  # <dynamics friction>: Coulomb friction, N m or N

    @property
    def origin_rotation(self) -> np.ndarray:
        """The rotation of the child frame at zero motion, in the parent link frame."""
        return rpy_to_matrix(self.rpy) if self.rotation is None else self.rotation


@dataclass(frozen=True)
class RobotDescription:
    """Links and joints of a URDF, in document order."""

    name: str
    source: str
    links: tuple[LinkSpec, ...]
    joints: tuple[JointSpec, ...]


def read_urdf(source: str | os.PathLike) -> RobotDescription:
    """Read a URDF from a path or from a string holding the XML."""
    data, label = _read_source(source)
    root, lines = _parse_xml(data, label)
    if root.tag != "robot":
        raise URDFError(f"{label}: the root element is <{root.tag}>, expected <robot>")
    links, joints = [], []
    for element in root:
        if element.tag == "link":
            links.append(_read_link(element, f"{label}, line {lines[id(element)]}"))
        elif element.tag == "joint":
            joints.append(_read_joint(element, f"{label}, line {lines[id(element)]}"))
    if not links:
        raise URDFError(f"{label}: the robot has no <link>")
    name = root.get("name") or (Path(label).stem if label != "<string>" else "robot")
    return RobotDescription(name, label, tuple(links), tuple(joints))


_BOM = "\ufeff"


def _read_source(source: str | os.PathLike) -> tuple[str | bytes, str]:
    """(the XML, a label for messages): a string that starts with ``<`` (after a byte-order
    mark and white space) is XML; anything else names a file, read as bytes so that expat
    honours the file's own encoding declaration and byte-order mark."""
    if isinstance(source, str) and source.lstrip(_BOM + " \t\r\n").startswith("<"):
        return source, "<string>"
    if not isinstance(source, str | os.PathLike):
        raise URDFError(
            f"expected a path to a URDF file or a string of URDF XML, got {type(source).__name__}"
        )
    path = Path(source)
    shown = str(path) if len(str(path)) <= 200 else str(path)[:200] + "..."
    try:
        return path.read_bytes(), str(path)
    except FileNotFoundError:
        raise URDFError(f"URDF file not found: {shown!r}") from None
    except (OSError, ValueError) as exc:  # a directory, no permission, a name too long, NUL
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise URDFError(
            f"{shown!r} is neither URDF XML (it does not start with '<') nor a readable "
            f"URDF file: {reason}"
        ) from None


def _parse_xml(data: str | bytes, label: str) -> tuple[ET.Element, dict[int, int]]:
    """Parse XML with expat, recording the line of each element (ElementTree forgets it).

    A byte-order mark and white space before the XML declaration (which expat refuses)
    are skipped; line numbers still count from the start of the text.
    """
    as_bytes = isinstance(data, bytes)
    data = data.removeprefix(_BOM.encode() if as_bytes else _BOM)
    stripped = data.lstrip()
    skipped = data[: len(data) - len(stripped)].count(b"\n" if as_bytes else "\n")
    data = stripped
    parser = expat.ParserCreate()
    builder = ET.TreeBuilder()
    lines: dict[int, int] = {}

    def start(tag, attrib):
        lines[id(builder.start(tag, attrib))] = parser.CurrentLineNumber + skipped

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise URDFError(
            f"{label}: malformed XML at line {exc.lineno + skipped}, column {exc.offset + 1}: "
            f"{expat.ErrorString(exc.code)}"
        ) from exc
    return builder.close(), lines


def _warn(message: str) -> None:
    """A :class:`ModelWarning` pointing at the caller of ``casdyn.load_urdf``."""
    warnings.warn(message, ModelWarning, stacklevel=6)


@contextlib.contextmanager
def _quiet_parser():
    """urdf_parser_py prints warnings to stderr through a module-level hook; mute it."""
    saved = _reflection.on_error
    _reflection.on_error = lambda message: None
    try:
        yield
    finally:
        _reflection.on_error = saved


def _parse_element(element: ET.Element, cls, where: str):
    kept = ET.Element(element.tag, element.attrib)
    kept.extend(child for child in element if child.tag in _KEEP[element.tag])
    try:
        with _quiet_parser():
            return cls.from_xml_string(ET.tostring(kept))
    except Exception as exc:  # urdf_parser_py raises bare Exception/ValueError/ParseError
        message = " ".join(str(exc).split())
        raise URDFError(f"{where}, {_describe(element)}: {message}") from exc


def _describe(element: ET.Element) -> str:
    name = element.get("name")
    return f"<{element.tag} name={name!r}>" if name is not None else f"<{element.tag}>"


def _finite(values, what: str, where: str) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(array)):
        raise URDFError(f"{where}: {what} must be finite, got {array.tolist()}")
    return array


def _read_link(element: ET.Element, where: str) -> LinkSpec:
    link = _parse_element(element, _urdf.Link, where)
    where = f"{where}, {_describe(element)}"
    inertial = link.inertial
    if inertial is None:
        return LinkSpec(link.name, 0.0, np.zeros(3), np.zeros((3, 3)), where)
    mass = float(_finite(inertial.mass if inertial.mass is not None else 0.0, "mass", where))
    if mass < 0:
        raise URDFError(f"{where}: mass must not be negative, got {mass}")
    inertia = np.zeros((3, 3))
    if inertial.inertia is not None:
        inertia = _finite(inertial.inertia.to_matrix(), "inertia", where)
    com, rpy = np.zeros(3), np.zeros(3)
    if inertial.origin is not None:
        com = _finite(inertial.origin.xyz, "inertial origin xyz", where)
        rpy = _finite(inertial.origin.rpy, "inertial origin rpy", where)
    _check_inertia(inertia, where)
    rotation = rpy_to_matrix(rpy)
    # URDF gives the tensor in the inertial frame; the model wants it in the link frame.
    return LinkSpec(link.name, mass, com, rotation @ inertia @ rotation.T, where)


def _check_inertia(inertia: np.ndarray, where: str) -> None:
    """Warn about a rotational inertia with a negative principal moment. Such tensors occur
    in real files (round-off, CAD exports) and Pinocchio uses them as given, so casdyn does
    too; only non-finite numbers and negative masses are refused."""
    moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    if moments.min() < -1e-12 * max(1.0, float(np.abs(moments).max())):
        _warn(f"{where}: the inertia tensor is not positive semi-definite (principal moment "
              f"{moments.min():.3g}); casdyn uses it as the file gives it, as Pinocchio does")


def _read_joint(element: ET.Element, where: str) -> JointSpec:
    joint = _parse_element(element, _urdf.Joint, where)
    where_joint = f"{where}, {_describe(element)}"
    if joint.type not in SUPPORTED_JOINT_TYPES:
        raise URDFError(
            f"{where_joint}: joint type {joint.type!r} is not supported yet "
            f"(supported: {', '.join(SUPPORTED_JOINT_TYPES)})"
        )
    xyz, rpy = np.zeros(3), np.zeros(3)
    if joint.origin is not None:
        xyz = _finite(joint.origin.xyz, "origin xyz", where_joint)
        rpy = _finite(joint.origin.rpy, "origin rpy", where_joint)
    axis = np.array([1.0, 0.0, 0.0])  # the URDF default
    if joint.axis is not None:
        axis = _finite(joint.axis, "axis", where_joint)
    largest = float(np.max(np.abs(axis)))
    if largest > 1e100:  # scaled first, so that the norm does not overflow
        axis = axis / largest
    norm = float(np.linalg.norm(axis))
    if joint.type != "fixed" and norm < 1e-12:
        raise URDFError(f"{where_joint}: the joint axis is zero")
    lower, upper = -math.inf, math.inf
    effort = velocity = math.inf
    if joint.limit is not None:
        effort = _positive_or_inf(joint.limit.effort)
        velocity = _positive_or_inf(joint.limit.velocity)
    if joint.type in ("revolute", "prismatic") and joint.limit is not None:
        lower = float(joint.limit.lower if joint.limit.lower is not None else 0.0)
        upper = float(joint.limit.upper if joint.limit.upper is not None else 0.0)
        if math.isnan(lower) or math.isnan(upper):
            raise URDFError(f"{where_joint}: limits lower={lower}, upper={upper}")
        if lower > upper:  # Bullet's and Gazebo's way of writing "no position limit"
            _warn(f"{where_joint}: limits lower={lower} > upper={upper}; casdyn reads them "
                  "as no position limit")
            lower, upper = -math.inf, math.inf
    mimic = None
    if joint.mimic is not None and joint.type != "fixed":  # a fixed joint has no motion
        if joint.type not in ("revolute", "continuous", "prismatic"):
            raise URDFError(f"{where_joint}: a {joint.type} joint cannot mimic another")
        multiplier = 1.0 if joint.mimic.multiplier is None else joint.mimic.multiplier
        offset = 0.0 if joint.mimic.offset is None else joint.mimic.offset
        k, b = _finite([multiplier, offset], "mimic multiplier and offset", where_joint)
        mimic = (str(joint.mimic.joint), float(k), float(b))
    damping = friction = 0.0
    if joint.dynamics is not None:
        damping, friction = _finite([joint.dynamics.damping or 0.0, joint.dynamics.friction or 0.0],
                                    "dynamics damping and friction", where_joint)
        if damping < 0 or friction < 0:
            raise URDFError(f"{where_joint}: dynamics damping={damping} and friction="
                            f"{friction} must not be negative")
    return JointSpec(
        joint.name, joint.type, joint.parent, joint.child, xyz, rpy,
        axis / norm if norm > 0 else axis, lower, upper, effort, velocity, where_joint, mimic,
        damping=float(damping), friction=float(friction),
    )


def _positive_or_inf(value) -> float:
    """URDF writes 0 (or nothing) for 'no limit given'."""
    value = float(value) if value is not None else 0.0
    return value if value > 0 and math.isfinite(value) else math.inf


def rpy_to_matrix(rpy) -> np.ndarray:
    """URDF fixed-axis roll-pitch-yaw: R = Rz(yaw) @ Ry(pitch) @ Rx(roll)."""
    r, p, y = (float(a) for a in rpy)
    cr, sr, cp, sp, cy, sy = (math.cos(r), math.sin(r), math.cos(p), math.sin(p),
                              math.cos(y), math.sin(y))
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])
