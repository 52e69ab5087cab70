"""State constraints ``c(x) >= 0`` of a :class:`casdyn.ocp.Problem`, held exactly at every
knot after the first (the first state is the measured one) and at the horizon's end, or
(``at="end"``) at the horizon's end only: a terminal set.

* :class:`CollisionDistance`: every signed distance of casdyn's collision geometry
  (:meth:`casdyn.RigidBodyTree.collision_distances`: the robot's collision pairs, then each
  obstacle against every collision geometry) at least ``margin``;
* :class:`StateInequality`: the rows of any ``casadi.Function`` of ``(q, v)`` at least zero
  (a terminal set, a keep-out plane, a joint coupling).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import casadi as ca

from casdyn.errors import InputError

from .checks import number


@dataclass(frozen=True, kw_only=True)
class Constraint:
    """Rows ``c(q, v) >= 0`` at every knot ``1..N`` (``at="all"``) or at knot ``N`` only
    (``at="end"``)."""

    at: str = "all"

    def __post_init__(self):
        if self.at not in ("all", "end"):
            raise InputError(f"{type(self).__name__}: at must be 'all' or 'end', got "
                             f"{self.at!r}")

    def size(self, model) -> int:  # pragma: no cover - every constraint defines it
        raise NotImplementedError

    def value(self, model, q, v):  # pragma: no cover
        raise NotImplementedError


@dataclass(frozen=True)
class CollisionDistance(Constraint):
    """Every signed distance (m) of the robot's collision geometry at least ``margin`` (m,
    ``>= 0``): its ``pairs`` (default its collision pairs; ``()`` for none) and each of
    ``obstacles`` (:class:`casdyn.geometry.Obstacle`) against every collision geometry."""

    obstacles: Sequence = ()
    margin: float = 0.0
    pairs: Sequence | None = None

    def __post_init__(self):
        super().__post_init__()
        number("margin", self.margin)

    def size(self, model) -> int:
        return distances(model.robot, self.obstacles, self.pairs).size1_out(0)

    def value(self, model, q, v):
        return distances(model.robot, self.obstacles, self.pairs)(q) - self.margin


def distances(robot, obstacles: Sequence, pairs: Sequence | None) -> ca.Function:
    """``robot``'s ``collision_distances`` Function for ``pairs`` (None: its collision
    pairs) and each of ``obstacles`` against every collision geometry."""
    options = {"obstacles": tuple(obstacles)}
    if pairs is not None:
        options["pairs"] = tuple(tuple(p) for p in pairs)
    return robot.function("collision_distances", **options)


@dataclass(frozen=True)
class StateInequality(Constraint):
    """The rows of ``function(q, v)`` (a ``casadi.Function`` of two inputs, ``nq`` and
    ``nv`` rows, and one output column) at least zero."""

    function: ca.Function

    def __post_init__(self):
        super().__post_init__()
        f = self.function
        if not isinstance(f, ca.Function) or f.n_in() != 2 or f.n_out() != 1 or \
                f.size2_out(0) != 1:
            raise InputError("StateInequality takes a casadi.Function (q, v) -> one column, "
                             f"got {f!r}")

    def size(self, model) -> int:
        f = self.function
        if f.size1_in(0) != model.nq or f.size1_in(1) != model.nv:
            raise InputError(f"StateInequality: {f.name()} takes {f.size1_in(0)} and "
                             f"{f.size1_in(1)} rows, the robot's q and v have {model.nq} and "
                             f"{model.nv}")
        return self.function.size1_out(0)

    def value(self, model, q, v):
        return self.function(q, v)
