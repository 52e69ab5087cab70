"""Building the :class:`~casdyn.model.tree.Model` from a robot description: links on fixed
joints merged into their moving ancestor, every joint frame turned so that its axis is z,
inertias gathered per joint, mimic joints resolved, and the joint-space terms (friction,
rotor inertia) attached."""

from __future__ import annotations

import math
import warnings
from dataclasses import replace

import numpy as np

from ..errors import InputError, ModelError, ModelWarning, URDFError, suggest, unknown_name
from ..math.inertia import Inertia
from .joints import JOINT_TYPES
from .tree import FLOATING_BASE, UNIVERSE, WORLD, Body, Joint, Mimic, Model
from .urdf import RobotDescription

# URDF joint type -> casdyn.model.joints type ("ball" is no URDF type: descriptions read from
# MJCF have it)
URDF_JOINT_KINDS = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic",
                    "planar": "planar", "floating": "free", "ball": "ball"}


# Entries of constant rotations this close to 0 or ±1 are trigonometric round-off
# (cos(pi/2) = 6e-17); snapping them lets CasADi drop the multiplications they would cost.
_SNAP = 1e-14


def build_model(description: RobotDescription, gravity=(0.0, 0.0, -9.81),
                floating_base: bool = False, joint_friction: bool = False,
                armature: dict | None = None, friction_smoothing: float = 1e-3) -> Model:
    """Turn a URDF description into a :class:`Model`, checking that it is a single tree.

    With ``floating_base`` a free joint named ``floating_base`` joins a fixed frame called
    ``world`` to the root link, which becomes the first body. With ``joint_friction`` the
    joints' ``<dynamics damping friction>`` act; ``armature`` maps joint names to rotor
    inertias added to ``M``'s diagonal."""
    model = _build(description, gravity, floating_base)
    return with_joint_terms(model, joint_friction, armature or {}, friction_smoothing)


def with_joint_terms(model: Model, joint_friction: bool, armature: dict,
                     friction_smoothing: float) -> Model:
    """``model`` with URDF friction switched on or off and ``armature`` (name -> value) on
    its joints (a multi-dof joint's on each of its rates)."""
    if not (isinstance(friction_smoothing, int | float) and math.isfinite(friction_smoothing)
            and friction_smoothing > 0):
        raise InputError(f"friction_smoothing must be a positive number, got "
                         f"{friction_smoothing!r}")
    names = {joint.name: joint for joint in model.joints if joint.mimic is None}
    for name, value in armature.items():
        if name not in names:
            raise _not_movable(model, name, "armature", list(names))
        if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
            raise InputError(f"armature of {name!r} must be a number >= 0, got {value!r}")
    specs = {spec.name: spec for spec in model.description.joints}
    joints = []
    for joint in model.joints:
        spec = specs.get(joint.name)
        damping, friction = (spec.damping, spec.friction) if spec and joint_friction \
            else (0.0, 0.0)
        joints.append(replace(joint, damping=damping, friction=friction,
                              armature=float(armature.get(joint.name, 0.0))))
    return replace(model, joints=tuple(joints), joint_friction=joint_friction,
                   friction_smoothing=float(friction_smoothing))


def _not_movable(model: Model, name, what: str, movable: list[str]) -> InputError:
    """The error for ``what`` (e.g. armature) given to joint ``name``, which is not one of
    the ``movable`` joints: fixed, a mimic joint, or not in the model."""
    mimic = {joint.name: model.joints[joint.mimic.leader].name
             for joint in model.joints if joint.mimic is not None}
    fixed = {spec.name for spec in model.description.joints if spec.type == "fixed"} \
        if model.description else set()
    if name in mimic:
        return InputError(f"{what}: joint {name!r} mimics {mimic[name]!r} and has no "
                          f"coordinate of its own; add it, times the multiplier squared, to "
                          f"{mimic[name]!r}'s")
    if name in fixed:
        return InputError(f"{what}: joint {name!r} is fixed; only movable joints take it")
    return unknown_name("joint", name, movable)


def _build(description: RobotDescription, gravity, floating_base: bool) -> Model:
    gravity = np.asarray(gravity, dtype=float)
    if gravity.shape != (3,) or not np.all(np.isfinite(gravity)):
        raise InputError(f"gravity must be 3 finite numbers, got {gravity.tolist()}")
    source = description.source
    links = {}
    for link in description.links:
        if link.name in links:
            raise URDFError(f"{link.where}: a second link named {link.name!r}")
        links[link.name] = link
    children: dict[str, list] = {name: [] for name in links}
    parent_joint: dict[str, object] = {}
    joint_names = set()
    for joint in description.joints:
        if joint.name in joint_names:
            raise URDFError(f"{joint.where}: a second joint named {joint.name!r}")
        joint_names.add(joint.name)
        for role in ("parent", "child"):
            link = getattr(joint, role)
            if link not in links:
                raise URDFError(
                    f"{joint.where}: {role} link {link!r} is not defined; "
                    f"{suggest(link, links)}"
                )
        if joint.child in parent_joint:
            raise URDFError(
                f"{joint.where}: link {joint.child!r} already has parent joint "
                f"{parent_joint[joint.child].name!r}; a link can have only one"
            )
        parent_joint[joint.child] = joint
        children[joint.parent].append(joint)

    roots = [name for name in links if name not in parent_joint]
    if not roots:
        raise URDFError(f"{source}: every link has a parent joint, so the joints form a cycle")
    if len(roots) > 1:
        raise URDFError(
            f"{source}: the model has {len(roots)} root links ({', '.join(map(repr, roots))}); "
            "connect them with joints so that exactly one link has no parent"
        )
    movable = {joint.name for joint in description.joints if joint.type != "fixed"}
    if floating_base and FLOATING_BASE in movable:
        raise ModelError(
            f"{source}: a movable joint is already called {FLOATING_BASE!r}, the name "
            "floating_base=True gives the free joint; rename it in the file"
        )
    if floating_base:
        _check_fixed_frame_name(source, roots[0], links)
    return _Builder(description, links, children, parent_joint, roots[0], gravity,
                    floating_base).build()


def _check_fixed_frame_name(source, root: str, links) -> None:
    """On a floating base the fixed frame is ``world`` (``universe`` where the root link is
    called ``world``, as Pinocchio's): a link of that name would make one name mean two
    frames, so it is refused. (Pinocchio keeps both frames under one name and its name look-up
    finds the fixed one: the link's frame is not reachable by name.)"""
    fixed = UNIVERSE if root == WORLD else WORLD
    if fixed in links:
        where = (f"the root link is called {WORLD!r}, so the fixed frame is {UNIVERSE!r}"
                 if root == WORLD else f"the fixed frame is {WORLD!r}")
        raise ModelError(
            f"{source}: link {fixed!r} has the name floating_base=True gives the fixed frame "
            f"({where}), so the name would mean two frames; rename the link in the file"
        )


def _warn(message: str) -> None:
    """A :class:`ModelWarning` pointing at the caller of ``casdyn.load_urdf``."""
    warnings.warn(message, ModelWarning, stacklevel=6)


class _Builder:
    """Depth-first walk from the root that assigns joints, merges fixed links and aligns axes."""

    def __init__(self, description, links, children, parent_joints, root, gravity,
                 floating_base):
        self.description = description
        self.floating_base = floating_base
        self.links = links
        self.children = children
        self.parent_joints = parent_joints
        self.root = root
        self.gravity = gravity
        self.specs = {j.name: j for j in description.joints if j.type != "fixed"}
        movable = list(self.specs)
        if floating_base:
            movable.insert(0, FLOATING_BASE)
        self.q_index = {name: i for i, name in enumerate(movable)}
        self.joints: list[Joint | None] = [None] * len(movable)
        self.inertias = [Inertia.zero() for _ in movable]
        self.base_inertia = Inertia.zero()
        self.link_frames: dict[str, tuple[int, np.ndarray, np.ndarray]] = {}
        self.order: list[int] = []

    def build(self) -> Model:
        if self.floating_base:
            self.joints[0] = Joint(FLOATING_BASE, JOINT_TYPES["free"], -1, np.eye(3), np.zeros(3),
                                   Inertia.zero(), -math.inf, math.inf)
            self.order.append(0)
            self._visit(self.root, 0, np.eye(3), np.zeros(3))
        else:
            self._visit(self.root, -1, np.eye(3), np.zeros(3))
        unreachable = [name for name in self.links if name not in self.link_frames]
        if unreachable:
            raise URDFError(
                f"{self.description.source}: links {', '.join(map(repr, unreachable))} "
                "are not reachable from the root; their joints form a cycle"
            )
        joints, idx_q, idx_v = [], 0, 0
        for i, joint in enumerate(self.joints):
            joint = replace(joint, inertia=self.inertias[i], idx_q=idx_q, idx_v=idx_v,
                            mimic=self._mimic(i))
            joints.append(joint)
            if joint.mimic is None:
                idx_q, idx_v = idx_q + joint.type.nq, idx_v + joint.type.nv
        for i, joint in enumerate(joints):  # a mimic joint reads its leader's entries
            if joint.mimic is not None:
                leader = joints[joint.mimic.leader]
                joints[i] = replace(joint, idx_q=leader.idx_q, idx_v=leader.idx_v)
        bodies = []
        for link in self.description.links:
            if link.name == self.root:
                if self.floating_base:
                    root = Body(link.name, self._fixed_frame(), 0, np.eye(3), np.zeros(3),
                                link.mass)
                    bodies.insert(0, root)
                continue
            joint, rotation, translation = self.link_frames[link.name]
            parent = self.parent_joints[link.name].parent
            bodies.append(Body(link.name, parent, joint, rotation, translation, link.mass))
        return Model(
            name=self.description.name,
            base_name=self._fixed_frame(),
            joints=tuple(joints),
            bodies=tuple(bodies),
            order=tuple(self.order),
            gravity=self.gravity,
            base_inertia=self.base_inertia,
            floating_base=self.floating_base,
            description=self.description,
            _body_index={body.name: i for i, body in enumerate(bodies)},
        )

    def _mimic(self, index: int) -> Mimic | None:
        spec = self.specs.get(self.joints[index].name)
        if spec is None or spec.mimic is None:
            return None
        leader, multiplier, offset = spec.mimic
        if leader == spec.name:
            raise URDFError(f"{spec.where}: it mimics itself; name the joint it follows")
        leader_spec = self.specs.get(leader)
        if leader_spec is None:  # as Pinocchio without mimic=True: an independent joint
            movable = [name for name, s in self.specs.items() if s.mimic is None]
            fixed = any(j.name == leader for j in self.description.joints)
            what = ("is fixed, with no coordinate to follow" if fixed else
                    f"is not defined ({suggest(leader, movable)})")
            _warn(f"{spec.where}: the joint it mimics, {leader!r}, {what}; casdyn treats the "
                  "joint as independent, with its own coordinate")
            return None
        if leader_spec.type not in ("revolute", "continuous", "prismatic"):
            raise URDFError(f"{spec.where}: the joint it mimics, {leader!r}, is not a movable "
                            "1-dof joint")
        if leader_spec.mimic is not None:
            raise URDFError(f"{spec.where}: it mimics {leader!r}, which mimics another joint; "
                            "make both mimic the same independent joint")
        return Mimic(self.q_index[leader], multiplier, offset)

    def _fixed_frame(self) -> str:
        """The base's name: the root link on a fixed base; ``world`` on a floating base, or
        Pinocchio's ``universe`` where the root link itself is called ``world``."""
        if not self.floating_base:
            return self.root
        return UNIVERSE if self.root == WORLD else WORLD

    def _visit(self, root_link, joint, rotation, translation):
        """Place ``root_link``, whose frame has pose (rotation, translation) in ``joint``'s
        frame, then its subtree: depth first, children in document order, with an explicit
        stack (of URDF joints still to place, with their parent link's frame) so that trees
        of any depth load."""
        self._place(root_link, joint, rotation, translation)
        stack = [(child, joint, rotation, translation)
                 for child in reversed(self.children[root_link])]
        while stack:
            link_name, joint, rotation, translation = self._child_frame(*stack.pop())
            self._place(link_name, joint, rotation, translation)
            stack.extend((child, joint, rotation, translation)
                         for child in reversed(self.children[link_name]))

    def _place(self, link_name, joint, rotation, translation):
        """Record a link's frame and add its inertia to the joint that carries it. A link
        with zero mass keeps its rotational inertia, as the file gives it (as Pinocchio)."""
        self.link_frames[link_name] = (joint, rotation, translation)
        link = self.links[link_name]
        carried = link_name != self.root or self.floating_base
        if carried and (link.mass > 0 or np.any(link.inertia)):
            inertia = Inertia.from_com(link.mass, link.com, link.inertia)
            moved = inertia.transformed(rotation, translation)
            if joint >= 0:
                self.inertias[joint] = self.inertias[joint] + moved
            else:
                self.base_inertia = self.base_inertia + moved

    def _child_frame(self, child, joint, rotation, translation):
        """(child link, its joint, its pose there): a fixed joint's child stays on ``joint``;
        a movable joint becomes a new model joint, its frame turned so that the axis is z."""
        origin_rotation = rotation @ child.origin_rotation
        origin_translation = rotation @ child.xyz + translation
        if child.type == "fixed":
            return child.child, joint, snap(origin_rotation), origin_translation
        index = self.q_index[child.name]
        kind = JOINT_TYPES[URDF_JOINT_KINDS[child.type]]
        # the joint frame has the axis as z; a free joint's frame is the child link's
        align = axis_alignment(child.axis) if kind.has_axis else np.eye(3)
        self.joints[index] = Joint(
            name=child.name,
            type=kind,
            parent=joint,
            rotation=snap(origin_rotation @ align),
            translation=origin_translation,
            inertia=Inertia.zero(),
            lower=child.lower,
            upper=child.upper,
            effort=child.effort,
            velocity=child.velocity,
            continuous=child.type == "continuous",
        )
        self.order.append(index)
        return child.child, index, align.T.copy(), np.zeros(3)


# Exact rotations taking e_z to each coordinate axis, so that axis-aligned joints keep
# their sparse constant transforms.
_AXIS_ALIGNMENTS = {
    (0, 0, 1): np.eye(3),
    (0, 0, -1): np.diag([1.0, -1.0, -1.0]),
    (1, 0, 0): np.array([[0.0, 0, 1], [1, 0, 0], [0, 1, 0]]),
    (-1, 0, 0): np.array([[0.0, 0, -1], [0, 1, 0], [1, 0, 0]]),
    (0, 1, 0): np.array([[0.0, 1, 0], [0, 0, 1], [1, 0, 0]]),
    (0, -1, 0): np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]]),
}


def axis_alignment(axis: np.ndarray) -> np.ndarray:
    """A rotation ``A`` with ``A @ e_z == axis`` (``axis`` a unit vector)."""
    key = tuple(float(a) for a in axis)
    if key in _AXIS_ALIGNMENTS:
        return _AXIS_ALIGNMENTS[key]
    helper = np.array([1.0, 0, 0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1, 0])
    x = np.cross(helper, axis)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(axis, x), axis])


def snap(values: np.ndarray) -> np.ndarray:
    """Entries within 1e-14 of 0 or +-1 set to exactly that (trigonometric round-off)."""
    snapped = np.array(values, dtype=float)
    for target in (0.0, 1.0, -1.0):
        snapped[np.abs(snapped - target) < _SNAP] = target
    return snapped
