"""SRDF (the Semantic Robot Description Format of MoveIt and Pinocchio): named configurations
(``<group_state>``) and the link pairs whose collisions are disabled (``<disable_collisions>``).

Only these two elements are read; groups, end effectors and the rest are skipped. A
``group_state`` lists joint values in Pinocchio's layout: a free flyer's 7 numbers are
``[x y z qx qy qz qw]`` (quaternion last), a continuous joint takes its angle (or Pinocchio's
``cos sin``), a planar joint ``x y theta`` (or ``x y cos sin``). :func:`configurations` turns
them into ``q`` in casdyn's layout.
"""

from __future__ import annotations

import os
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import configuration
from .errors import InputError, ModelWarning

# names a group_state may give the free joint (Pinocchio's default, and casdyn's own)
FREE_FLYER_NAMES = ("root_joint", "floating_base")


@dataclass(frozen=True)
class GroupState:
    """One ``<group_state>``: its name, its group and the values it gives, joint name ->
    numbers as written."""

    name: str
    group: str
    values: tuple[tuple[str, tuple[float, ...]], ...]


@dataclass(frozen=True)
class SRDF:
    """What casdyn reads from an SRDF."""

    label: str  # the file, or "<string>"
    group_states: tuple[GroupState, ...]
    disable_collisions: tuple[tuple[str, str], ...]  # (link1, link2) as written


def read_srdf(source: str | os.PathLike) -> SRDF:
    """Read an SRDF from a path or from a string holding the XML."""
    if isinstance(source, str) and source.lstrip().startswith("<"):
        text, label = source, "<string>"
    elif isinstance(source, str | os.PathLike):
        label = str(source)
        try:
            text = Path(source).read_text(encoding="utf-8")
        except (OSError, ValueError) as exc:
            raise InputError(f"srdf: cannot read {label!r}: {exc}") from None
    else:
        raise InputError(f"srdf must be a path or a string of SRDF XML, got "
                         f"{type(source).__name__}")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise InputError(f"srdf {label}: malformed XML: {exc}") from None
    if root.tag != "robot":
        raise InputError(f"srdf {label}: the root element is <{root.tag}>, expected <robot>")
    states = []
    for element in root.iter("group_state"):
        name = _attribute(element, "name", label)
        values = []
        for joint in element.iter("joint"):
            joint_name = _attribute(joint, "name", label)
            try:
                numbers = tuple(float(x) for x in _attribute(joint, "value", label).split())
            except ValueError:
                raise InputError(f"srdf {label}: group_state {name!r}, joint {joint_name!r}: "
                                 f"value {joint.get('value')!r} is not numbers") from None
            if not numbers or not np.all(np.isfinite(numbers)):
                raise InputError(f"srdf {label}: group_state {name!r}, joint {joint_name!r}: "
                                 f"value {joint.get('value')!r} must be finite numbers")
            values.append((joint_name, numbers))
        states.append(GroupState(name, element.get("group", ""), tuple(values)))
    pairs = tuple((_attribute(e, "link1", label), _attribute(e, "link2", label))
                  for e in root.iter("disable_collisions"))
    return SRDF(label, tuple(states), pairs)


def _attribute(element: ET.Element, name: str, label: str) -> str:
    value = element.get(name)
    if value is None:
        raise InputError(f"srdf {label}: a <{element.tag}> has no {name!r} attribute")
    return value


def configurations(srdf: SRDF, model) -> dict[str, np.ndarray]:
    """Each group_state of ``srdf`` as ``q`` (nq,) of ``model`` in casdyn's layout.

    Joints a state does not name keep their home value (:func:`casdyn.configuration.neutral`);
    mimic joints are skipped (they follow their leaders); the free flyer is ``root_joint``
    or ``floating_base``, ignored on a fixed base. A joint the model does not have is named
    in a :class:`~casdyn.ModelWarning` and skipped (SRDFs often cover joints a reduced URDF
    lacks); a value of the wrong size is an :class:`~casdyn.InputError`. A later state of
    the same name replaces an earlier one.
    """
    joints = {joint.name: joint for joint in model.joints}
    if model.floating_base:
        free = model.joints[0]
        joints.update({name: free for name in FREE_FLYER_NAMES})
    named = {}
    for state in srdf.group_states:
        q = configuration.neutral(model)
        unknown = []
        for name, values in state.values:
            joint = joints.get(name)
            if joint is None:
                if name not in FREE_FLYER_NAMES:
                    unknown.append(name)
                continue
            if joint.mimic is not None:
                continue
            where = f"srdf {srdf.label}: group_state {state.name!r}, joint {name!r}"
            q[joint.idx_q : joint.idx_q + _size(joint)] = _coordinates(joint, values, where)
        if unknown:
            warnings.warn(f"srdf {srdf.label}: group_state {state.name!r} names joints the "
                          f"robot {model.name!r} does not have, ignored: {', '.join(unknown)}",
                          ModelWarning, stacklevel=3)
        named[state.name] = q
    return named


def _size(joint) -> int:
    return {"free": 7, "planar": 3}.get(joint.kind, 1)


def _coordinates(joint, values: tuple[float, ...], where: str) -> np.ndarray:
    """A joint's SRDF value (Pinocchio's layout) as casdyn coordinates."""
    v = np.asarray(values)
    if joint.kind == "free" and v.size == 7:
        if not np.any(v[3:]):
            raise InputError(f"{where}: the quaternion is zero")
        return np.r_[v[:3], v[6], v[3:6]]  # quaternion last -> scalar first
    if joint.kind == "planar" and v.size in (3, 4):
        return v if v.size == 3 else np.r_[v[:2], np.arctan2(v[3], v[2])]
    if joint.kind in ("revolute", "prismatic") and (
            v.size == 1 or (v.size == 2 and joint.continuous)):
        return v if v.size == 1 else np.arctan2(v[1:], v[:1])
    expected = {"free": "7 (x y z qx qy qz qw)", "planar": "3 (x y theta) or 4 (x y cos sin)"}
    wanted = expected.get(joint.kind, "1 (or cos sin for a continuous joint)"
                          if joint.continuous else "1")
    raise InputError(f"{where}: expected {wanted} values, got {v.size}")
