"""A robot's geometry: the collision and visual shapes its URDF says per link, read on first
use, and the default collision pairs.

Geometry stays on the link it was written on (``Geometry.body`` is the link's name): casdyn
keeps links welded by fixed joints addressable as bodies, so their pose is exact without
moving their geometry to the body they merge into. The distances between the shapes, as
CasADi Functions of ``q``, are built in :mod:`casdyn.functions.geometry_distances`.
"""

from __future__ import annotations

import os
from functools import cached_property

from ..errors import CasdynError, InputError
from .shipped import robot_file, robot_urdf
from .urdf_geometry import read_geometry


class RobotGeometry:
    """The geometry of one robot model, read lazily from its URDF source."""

    def __init__(self, model, source: str | os.PathLike | None = None, package_dirs=(),
                 disabled=(), extra: os.PathLike | None = None):
        self._model = model
        self._source = source
        self._extra = extra
        self._package_dirs = package_dirs
        self.disabled = disabled_pairs(disabled)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_read", None)  # read again: shapes hold CasADi data
        return state

    @cached_property
    def _read(self) -> tuple[tuple, tuple]:
        source = self._source
        if source is None:
            label = getattr(self._model.description, "source", None)
            if label is None or label == "<string>" or not os.path.isfile(label):
                raise CasdynError(
                    "this robot's URDF source is not known (a model built without a URDF "
                    "file): load it with casdyn.load_urdf to read its geometry"
                )
            source = label
        collision, visual = read_geometry(source, self._package_dirs, self._extra)
        known = set(self._model.body_names) | {self._model.base_name}
        root = root_link(self._model)
        for item in (*collision, *visual):
            if item.body not in known and item.body != root:
                raise CasdynError(f"geometry {item.name!r} is on link {item.body!r}, which "
                                  "is not a body of this model")
        return collision, visual

    def for_model(self, model) -> RobotGeometry:
        """The same geometry on another model of the same links (``robot.locked``: the
        bodies keep their names), read again from the same sources."""
        return RobotGeometry(model, self._source, self._package_dirs, self.disabled,
                             self._extra)

    @property
    def collision(self) -> tuple:
        return self._read[0]

    @property
    def visual(self) -> tuple:
        return self._read[1]

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        return collision_pairs(self._model, self.collision, self.disabled)


def shipped_geometry(model, name: str, disabled=()) -> RobotGeometry:
    """The geometry of the shipped robot ``name``: its URDF's and its ``.collision.xml``'s;
    ``disabled``: link-name pairs left out of the default collision pairs."""
    return RobotGeometry(model, robot_urdf(name), disabled=disabled,
                         extra=robot_file(name, ".collision.xml"))


def disabled_pairs(pairs) -> frozenset:
    """A set of unordered link-name pairs (e.g. an SRDF's ``disable_collisions``)."""
    result = set()
    for pair in pairs:
        if isinstance(pair, str) or len(pair) != 2:
            raise InputError(f"a disabled collision pair must be two link names, got {pair!r}")
        result.add(frozenset(pair))
    return frozenset(result)


def root_link(model) -> str | None:
    """The name of the model's root link (None: a model without a description)."""
    return model.description.links[0].name if model.description is not None else None


def moving_joint(model, body: str) -> int:
    """The moving joint a link rides on (-1: welded to the base). On a floating base the
    root link rides on the free joint; on a fixed base it is the base."""
    if body == root_link(model) and not model.floating_base:
        return -1
    index = model.body_index(body, allow_base=True)
    return -1 if index < 0 else model.bodies[index].joint


def collision_pairs(model, geometry, disabled=frozenset()) -> tuple[tuple[str, str], ...]:
    """Every pair of collision geometries whose links are not the same, not welded together
    (riding on the same moving joint, or both on the base), not adjacent (their moving
    joints are parent and child: the child's joint turns about a point of the parent) and not
    in ``disabled`` (unordered link-name pairs)."""
    disabled = disabled_pairs(disabled) if not isinstance(disabled, frozenset) else disabled
    groups = {item.body: moving_joint(model, item.body) for item in geometry}
    parent = {j: joint.parent for j, joint in enumerate(model.joints)}
    pairs = []
    for i, a in enumerate(geometry):
        for b in geometry[i + 1:]:
            ga, gb = groups[a.body], groups[b.body]
            if ga == gb or frozenset((a.body, b.body)) in disabled:
                continue
            if (gb >= 0 and parent[gb] == ga) or (ga >= 0 and parent[ga] == gb):
                continue
            pairs.append((a.name, b.name))
    return tuple(pairs)
