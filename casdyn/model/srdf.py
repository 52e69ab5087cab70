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
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError, ModelWarning, suggest

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


def check(srdf: SRDF, model) -> list[str]:
    """What ``srdf`` says that the robot ``model`` (a :class:`casdyn.model.tree.Model`)
    contradicts, as :class:`~casdyn.ModelWarning` messages: ``disable_collisions`` naming a
    link the robot lacks (the pair it meant stays enabled; close names suggested), a
    ``group_state`` name given twice (the later replaces the earlier), and a named
    configuration outside a joint's position limits (kept as written)."""
    where = f"srdf {srdf.label}"
    messages = []
    links = {model.base_name, *model.body_names}
    if model.description is not None:
        links |= {link.name for link in model.description.links}
    unknown: dict[str, list[tuple[str, str]]] = {}
    for pair in srdf.disable_collisions:
        for link in pair:
            if link not in links:
                unknown.setdefault(link, []).append(pair)
    if unknown:  # one message: an SRDF written for a fuller URDF lacks dozens of links
        named = [f"{link!r} (in {len(pairs)} pair(s); {suggest(link, sorted(links))})"
                 for link, pairs in list(unknown.items())[:10]]
        more = f"; and {len(unknown) - 10} more" if len(unknown) > 10 else ""
        idle = {pair for pairs in unknown.values() for pair in pairs}
        messages.append(f"{where}: disable_collisions names links robot {model.name!r} does "
                        f"not have: {'; '.join(named)}{more}; those {len(idle)} pair(s) "
                        "disable nothing")
    seen: dict[str, str] = {}
    for state in srdf.group_states:
        if state.name in seen:
            messages.append(f"{where}: group_state {state.name!r} is given twice (groups "
                            f"{seen[state.name]!r} and {state.group!r}); the later one is "
                            f"kept")
        seen[state.name] = state.group
        outside = _outside_limits(state, model)
        if outside:
            messages.append(f"{where}: group_state {state.name!r} is outside the position "
                            f"limits of {'; '.join(outside)}; kept as written")
    return messages


def warn_mismatches(srdf: SRDF, model, stacklevel: int = 1) -> None:
    """Each message of :func:`check` as a :class:`~casdyn.ModelWarning`, pointing
    ``stacklevel`` frames above the caller."""
    for message in check(srdf, model):
        warnings.warn(message, ModelWarning, stacklevel=stacklevel + 1)


def _outside_limits(state: GroupState, model) -> list[str]:
    """``"joint 'j' (value v, limits [lo, hi])"`` for each joint ``state`` sets outside its
    position limits (unknown and mimic joints, and values of a wrong size, are left to
    :func:`casdyn.algorithms.configuration.named`)."""
    joints = {joint.name: joint for joint in model.joints if joint.mimic is None}
    outside = []
    for name, values in state.values:
        joint = joints.get(name)
        if joint is None:
            continue
        q = joint.type.from_pinocchio(joint, np.asarray(values, dtype=float))
        if q is None:
            continue
        lower, upper = joint.type.limits(joint)
        # a value written with the limit's own digits is at the limit, not past it
        slack = 1e-9 * np.maximum(1.0, np.abs(np.where(q < lower, lower, upper)))
        if np.any(q < lower - slack) or np.any(q > upper + slack):
            shown = " ".join(f"{x:.6g}" for x in q)
            limits = ", ".join(f"{lo:.6g}..{hi:.6g}" for lo, hi in zip(lower, upper,
                                                                       strict=True))
            outside.append(f"joint {name!r} (value {shown}, limits {limits})")
    return outside


def _attribute(element: ET.Element, name: str, label: str) -> str:
    value = element.get(name)
    if value is None:
        raise InputError(f"srdf {label}: a <{element.tag}> has no {name!r} attribute")
    return value
