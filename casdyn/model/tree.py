"""The kinematic tree: constant, immutable, plain NumPy data built once from a URDF.

Featherstone's model in flat form: each movable joint ``i`` owns the body it moves, has a
``parent`` (another joint index, or -1 for the fixed base), a type (:mod:`casdyn.model.joints`
knows what each type does), its first coordinate ``idx_q`` in ``q`` and first velocity
``idx_v`` in ``qd``, a constant pose ``rotation``, ``translation`` in the parent's joint
frame, and the spatial inertia of everything rigidly attached to it. Joints are indexed in
URDF document order (the order of ``q``); ``order`` lists them parents-first for the
algorithms to sweep.

Two things are folded into constants here so that the algorithms do no work for them:

* links on fixed joints are merged into their moving ancestor (their inertia added to it);
  they remain addressable as bodies through a constant pose relative to that ancestor;
* every joint frame is rotated so that the joint axis is its z axis. A URDF joint moves the
  child link by ``Rot(axis, q)``; with a constant ``A`` such that ``A e_z = axis``,
  ``Rot(axis, q) = A Rot(e_z, q) A^T``, so ``A`` goes into the joint's constant pose and
  ``A^T`` into the child link's pose in the joint frame.

The model keeps the URDF's frames otherwise; :mod:`casdyn.model.reframe` and
:mod:`casdyn.model.grouping` derive the sparser models that the algorithms run on (see
:mod:`casdyn.functions`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..errors import InputError, unknown_name
from ..math.inertia import Inertia
from .joint_type import JointType
from .urdf import RobotDescription

WORLD = "world"  # the fixed frame of a floating-base model
UNIVERSE = "universe"  # its name where the root link is called "world"
FLOATING_BASE = "floating_base"  # its free joint


@dataclass(frozen=True)
class Joint:
    """A movable joint and the body it moves; its frame has the joint axis as z."""

    name: str
    type: JointType  # what it does: revolute (URDF continuous too), prismatic, planar, ball,
    # free
    parent: int  # index of the parent joint, -1 for the base
    rotation: np.ndarray  # (3, 3) joint frame at q = 0, in the parent joint's frame
    translation: np.ndarray  # (3,)
    inertia: Inertia  # everything rigidly attached to this joint, in its frame
    lower: float
    upper: float
    effort: float = float("inf")
    velocity: float = float("inf")
    continuous: bool = False
    offset: float = 0.0  # revolute: the frame turns by q + offset (see casdyn.model.reframe)
    idx_q: int = 0  # first coordinate in q (a mimic joint: its leader's)
    idx_v: int = 0  # first velocity in qd (and qdd, tau) (a mimic joint: its leader's)
    mimic: Mimic | None = None
    # joint-space terms (docs: "Identification"): tau += armature qdd + damping qd
    # + friction tanh(qd / friction_smoothing); numbers, or SX in a parametric model
    damping: float = 0.0
    friction: float = 0.0
    armature: float = 0.0


@dataclass(frozen=True)
class Mimic:
    """A joint without a coordinate of its own: ``q = multiplier * q_leader + offset``."""

    leader: int  # the leader's joint index
    multiplier: float
    offset: float


@dataclass(frozen=True)
class Body:
    """A URDF link (other than the root): a frame rigidly attached to a joint or the base."""

    name: str
    parent: str  # the URDF link it hangs from
    joint: int  # the moving joint it rides on, -1 for the base
    rotation: np.ndarray  # (3, 3) link frame in that joint's frame (or in the base frame)
    translation: np.ndarray  # (3,)
    mass: float


@dataclass(frozen=True)
class Model:
    """A kinematic tree with its inertias and gravity, on a fixed base (the URDF root link,
    or ``world`` for a floating base)."""

    name: str
    base_name: str
    joints: tuple[Joint, ...]
    bodies: tuple[Body, ...]
    order: tuple[int, ...]  # joint indices, every parent before its children
    gravity: np.ndarray  # (3,) gravitational acceleration in the base frame
    base_inertia: Inertia  # bodies fixed to the base, in the base frame (for the COM)
    floating_base: bool = False  # joint 0 is the free joint "floating_base" from "world"
    # the URDF's <dynamics damping friction> act (load_urdf(joint_friction=True))
    joint_friction: bool = False
    friction_smoothing: float = 1e-3  # rad/s or m/s: the width of the smoothed sign
    # closed kinematic loops held as constraints (casdyn.algorithms.loops.Loop)
    loops: tuple = ()
    # what it was built from, for casdyn.model.locking
    description: RobotDescription | None = field(default=None, repr=False, compare=False)
    _body_index: dict[str, int] = field(repr=False, compare=False, default_factory=dict)

    @cached_property
    def coordinate_joints(self) -> tuple[Joint, ...]:
        """The joints with coordinates of their own (all but mimic joints), in ``q``'s order."""
        return tuple(joint for joint in self.joints if joint.mimic is None)

    @cached_property
    def nq(self) -> int:
        """The number of coordinates, the length of ``q``."""
        return sum(joint.type.nq for joint in self.coordinate_joints)

    @cached_property
    def nv(self) -> int:
        """The number of velocities, the length of ``qd``, ``qdd`` and ``tau``."""
        return sum(joint.type.nv for joint in self.coordinate_joints)

    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(joint.name for joint in self.coordinate_joints)

    @property
    def has_mimic_joints(self) -> bool:
        return any(joint.mimic is not None for joint in self.joints)

    @property
    def body_names(self) -> tuple[str, ...]:
        return tuple(body.name for body in self.bodies)

    def body_index(self, name: str, *, allow_base: bool = False) -> int:
        """Index of a body in ``bodies``; -1 for the base when ``allow_base``."""
        if allow_base and name == self.base_name:
            return -1
        index = self._body_index.get(name) if isinstance(name, str) else None
        if index is None:
            if name == self.base_name:
                raise InputError(f"{name!r} is the base of the tree, not a body")
            names = ([self.base_name] if allow_base else []) + list(self._body_index)
            raise unknown_name("body", name, names)
        return index

    def subtree_sums(self, values: list, move=None) -> list:
        """For each joint, its value plus those of every joint below it: leaves first, each
        joint's total added to its parent's, through ``move(i, total_i)`` if given (e.g. a
        transform into the parent's frame)."""
        totals = list(values)
        for i in reversed(self.order):
            parent = self.joints[i].parent
            if parent >= 0:
                totals[parent] = totals[parent] + (move(i, totals[i]) if move else totals[i])
        return totals

    def leaf_bodies(self) -> tuple[str, ...]:
        """Bodies that no other body hangs from: the tool and sensor frames."""
        parents = {body.parent for body in self.bodies}
        return tuple(body.name for body in self.bodies if body.name not in parents)

    def support(self, joint: int) -> list[int]:
        """The joints from ``joint`` up to the base, ``joint`` first."""
        chain = []
        while joint >= 0:
            chain.append(joint)
            joint = self.joints[joint].parent
        return chain


