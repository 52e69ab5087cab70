"""Closed kinematic loops as the model describes them: :class:`Loop` (a point or a frame of
one body held on another, MuJoCo's ``connect`` and ``weld``) and a model holding them. What
the algorithms make of them is in :mod:`casdyn.algorithms.loops`."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..errors import InputError
from .tree import Model

KINDS = {"point": 3, "6d": 6}


def _point(value, what: str) -> tuple[float, float, float]:
    try:
        point = tuple(float(x) for x in np.asarray(value, dtype=float).reshape(-1))
    except (TypeError, ValueError):
        point = ()
    if len(point) != 3 or not all(math.isfinite(x) for x in point):
        raise InputError(f"a Loop's {what} must be 3 finite numbers (body frame), got {value!r}")
    return point


@dataclass(frozen=True)
class Loop:
    """A loop closure: ``point_a`` of ``body_a`` held on ``point_b`` of ``body_b`` (points
    in their bodies' frames; ``body_b`` may be the base); with ``kind="6d"`` also the frame
    at ``point_a`` with ``body_a``'s axes held on the frame at ``point_b`` whose axes are
    ``rotation_b`` (row-major 3x3, in ``body_b``'s axes; default ``body_b``'s own)."""

    body_a: str
    body_b: str
    kind: str = "point"
    point_a: tuple[float, float, float] = (0.0, 0.0, 0.0)
    point_b: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rotation_b: tuple[float, ...] = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    name: str = ""

    def __post_init__(self):
        for role in ("body_a", "body_b"):
            if not isinstance(getattr(self, role), str):
                raise InputError(f"a Loop's {role} must be a body name, got "
                                 f"{getattr(self, role)!r}")
        if self.kind not in KINDS:
            raise InputError(f"a Loop's kind must be 'point' or '6d', got {self.kind!r}")
        object.__setattr__(self, "point_a", _point(self.point_a, "point_a"))
        object.__setattr__(self, "point_b", _point(self.point_b, "point_b"))
        object.__setattr__(self, "rotation_b", self._rotation(self.rotation_b))

    def _rotation(self, value) -> tuple[float, ...]:
        """``value`` as 9 numbers (row-major) of a proper rotation: orthonormal and of
        determinant +1 (to 1e-9), since a reflection would hold ``body_a``'s frame on a
        mirrored frame that no motion reaches."""
        try:
            rotation = np.asarray(value, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            rotation = np.zeros(0)
        if rotation.shape != (9,) or not np.all(np.isfinite(rotation)):
            raise InputError(f"{self.label}: rotation_b must be a 3x3 rotation (9 finite "
                             f"numbers, row-major), got {value!r}")
        R = rotation.reshape(3, 3)
        if not np.allclose(R @ R.T, np.eye(3), atol=1e-9):
            raise InputError(f"{self.label}: rotation_b must be a rotation (orthonormal: "
                             f"R R^T = I to 1e-9), got {value!r}")
        if np.linalg.det(R) < 0:
            raise InputError(f"{self.label}: rotation_b must be a proper rotation "
                             f"(determinant +1), got a reflection (determinant -1): {value!r}")
        return tuple(float(x) for x in rotation)

    @property
    def size(self) -> int:
        """The number of constraints: 3 for a point, 6 for a frame."""
        return KINDS[self.kind]

    @property
    def label(self) -> str:
        """How messages name it."""
        named = f"loop {self.name!r}: " if self.name else "loop "
        return (f"{named}{self.kind} {self.point_a} on {self.body_a!r} to {self.point_b} on "
                f"{self.body_b!r}")

    def rows(self, X):
        """The constrained rows of a ``[w; v]`` quantity."""
        return X[3:, :] if self.kind == "point" else X


def loop_list(loops) -> tuple[Loop, ...]:
    """``loops`` (a Loop or a sequence of them) as a tuple of Loops."""
    if isinstance(loops, Loop):
        return (loops,)
    try:
        items = tuple(loops)
    except TypeError:
        raise InputError(f"loops must be a sequence of casdyn.Loop, got {loops!r}") from None
    for item in items:
        if not isinstance(item, Loop):
            raise InputError(f"loops must be casdyn.Loop values, got {item!r}")
    return items


def check_loops(model: Model, loops: tuple[Loop, ...]) -> None:
    """Every loop's bodies exist (``body_b`` may be the base) and differ."""
    for loop in loops:
        a = model.body_index(loop.body_a, allow_base=True)
        b = model.body_index(loop.body_b, allow_base=True)
        if a == b:
            raise InputError(f"{loop.label} joins a body to itself")


def with_loops(model: Model, loops) -> Model:
    """``model`` holding ``loops`` (a Loop or a sequence of them), checked against it."""
    listed = loop_list(loops)
    check_loops(model, listed)
    return replace(model, loops=listed)
