"""SRDF (the Semantic Robot Description Format of MoveIt and Pinocchio): named configurations
(``<group_state>``) and the link pairs whose collisions are disabled (``<disable_collisions>``).

Only these two elements are read; groups, end effectors and the rest are skipped. A
``group_state`` lists joint values in Pinocchio's layout: a free flyer's 7 numbers are
``[x y z qx qy qz qw]`` (quaternion last), a continuous joint takes its angle (or Pinocchio's
``cos sin``), a planar joint ``x y theta`` (or ``x y cos sin``).
:func:`casdyn.algorithms.configuration.named` turns them into ``q`` in casdyn's layout.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError

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
