"""MJCF → :class:`~casdyn.model.urdf.RobotDescription`, through MuJoCo's own compiler.

MuJoCo (``pip install mujoco``, imported only here) compiles the file, so that includes,
defaults, ``childclass``, ``fromto``, angle units and inertias from geometry are exactly
MuJoCo's; the description is read from the compiled arrays (``body_*``, ``jnt_*``, ``dof_*``,
``site_*``, ``opt.gravity``) and built by :func:`casdyn.model.tree.build_model` as a URDF's.

How MuJoCo's kinematics (``mj_kinematics``) becomes a tree of joints:

* a body's frame sits at ``body_pos``, ``body_quat`` in its parent's; its joints then act
  one after the other, each in the frame the previous ones left: a ``hinge`` turns by
  ``q - ref`` about ``jnt_axis`` through the point ``jnt_pos``, a ``slide`` moves by
  ``q - ref`` along ``jnt_axis``, a ``ball`` turns by the quaternion ``q`` about ``jnt_pos``.
  Each becomes a joint whose frame is at ``jnt_pos`` (turned by ``-ref`` about the axis, or
  moved by ``-ref`` along it, so that ``q`` is MuJoCo's ``qpos``), its child a massless
  frame ``"<body>:<joint>"`` carrying the next joint; the last joint's child is the body
  (through a constant offset ``-jnt_pos`` where that is not zero): exact, and free at run
  time, as constant frames are folded into the joints' transforms.
* a ``free`` joint (top-level bodies only) sets the body's pose in the world to ``qpos``
  directly; on the root body it is casdyn's floating base.
* the body's inertia is ``body_mass`` at ``body_ipos`` with the principal moments
  ``body_inertia`` in the axes of ``body_iquat``.

Velocities are MuJoCo's ``qvel`` but for a free joint: casdyn's is the body twist
``[w; v]`` (angular first, both in the body's axes), MuJoCo's ``[v_world; w]`` (the world
velocity of the body's origin, then the body-axes angular velocity):
:func:`mujoco_velocity_map` converts.

Besides: :mod:`casdyn.model.mjcf_loops` (``connect`` and ``weld`` equalities as loops),
:mod:`casdyn.model.mjcf_unmodelled` (the warning of what casdyn does not model),
:mod:`casdyn.model.mjcf_geometry` (the geoms as collision geometry and their pairs).
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import CasdynError, InputError, ModelError, ModelWarning
from .mjcf_frames import axis_rotation, local_pose, quaternion_matrix
from .mjcf_geometry import placements, unsupported
from .mjcf_loops import mjcf_loops
from .mjcf_unmodelled import unmodelled
from .urdf import JointSpec, LinkSpec, RobotDescription

# mjtJoint
FREE, BALL, SLIDE, HINGE = 0, 1, 2, 3
_NAMES = {FREE: "free", BALL: "ball", SLIDE: "slide", HINGE: "hinge"}
WORLD = "world"  # MuJoCo's worldbody


def _mujoco():
    try:
        import mujoco
    except ImportError as error:
        raise CasdynError("load_mjcf needs MuJoCo's compiler: pip install mujoco "
                          "(or pip install casdyn[mujoco])") from error
    return mujoco


@dataclass
class MJCFModel:
    """What :func:`read_mjcf` found: the description, the floating base decision, the
    model's gravity, the rotor inertias (joint name -> armature), the closed loops (its
    ``connect`` and ``weld`` equalities) and the MuJoCo model."""

    description: RobotDescription
    floating_base: bool
    gravity: np.ndarray
    armature: dict[str, float] = field(default_factory=dict)
    loops: tuple = ()
    mj_model: object = None
    warnings: list[str] = field(default_factory=list)  # what casdyn reads differently
    base_damping: tuple[float, float] = (0.0, 0.0)  # the floating base's damping, friction
    # per MuJoCo body: (casdyn body, its pose there) and the names geoms are named after
    placement: list = field(default_factory=list)
    body_names: list[str] = field(default_factory=list)


def compile_mjcf(source):
    """A ``mujoco.MjModel`` from a path, an XML string or a ``mujoco.MjModel`` (as is)."""
    mujoco = _mujoco()
    if isinstance(source, mujoco.MjModel):
        return source, getattr(source, "name", "") or "<MjModel>"
    if isinstance(source, str) and source.lstrip("\ufeff \t\r\n").startswith("<"):
        label = "<string>"
        compile_ = mujoco.MjModel.from_xml_string
    elif isinstance(source, str | os.PathLike):
        label = str(source)
        if not Path(source).is_file():
            raise InputError(f"MJCF file not found: {label!r}")
        compile_, source = mujoco.MjModel.from_xml_path, str(source)
    else:
        raise InputError("source must be a path to an MJCF file, a string of MJCF XML or a "
                         f"mujoco.MjModel, got {type(source).__name__}")
    try:
        return compile_(source), label
    except ValueError as error:  # MuJoCo's compiler errors
        raise ModelError(f"{label}: MuJoCo could not compile the model: {error}") from None


def warn_all(messages: list[str], stacklevel: int) -> None:
    """Each message as a :class:`ModelWarning` pointing ``stacklevel`` frames up."""
    for message in messages:
        warnings.warn(message, ModelWarning, stacklevel=stacklevel + 1)


class _Reader:
    """Walks the compiled bodies (parents have smaller ids) and writes links and joints."""

    def __init__(self, m, label: str, floating_base: bool | None, joint_friction: bool = False):
        self.m, self.label = m, label
        self.joint_friction = joint_friction  # else damping and frictionloss are named, dropped
        mujoco = _mujoco()
        self.body_names = [m.body(i).name or f"body{i}" for i in range(m.nbody)]
        self.body_names[0] = WORLD
        self.joint_names = []
        for j in range(m.njnt):
            body = int(m.jnt_bodyid[j])
            k = j - int(m.body_jntadr[body])
            self.joint_names.append(m.joint(j).name or f"{self.body_names[body]}_joint{k}")
        self.site_names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_SITE, i)
                           for i in range(m.nsite)]
        self.links: list[LinkSpec] = []
        self.joints: list[JointSpec] = []
        self.armature: dict[str, float] = {}
        self.used = set(self.body_names) | set(self.joint_names)
        self.floating = self._floating(floating_base)
        self.weld_free = floating_base is False  # every free joint fixed at its qpos0
        self.renamed_sites: list[str] = []
        self.warnings: list[str] = []  # ModelWarning messages, given by the loader
        self.static: set[int] = set()  # bodies fixed to the world, left out of a floating robot
        self.base_damping = (0.0, 0.0)  # the floating base's (damping, frictionloss)

    # --- the floating base ----------------------------------------------------------------
    def _roots(self) -> list[int]:
        m = self.m
        return [b for b in range(1, m.nbody) if m.body_parentid[b] == 0]

    def _moving(self, root: int) -> bool:
        m = self.m
        return any(m.body_jntnum[b] > 0 for b in range(root, m.nbody)
                   if self._ancestor(b) == root)

    def _ancestor(self, body: int) -> int:
        """The world child that ``body`` hangs from."""
        m = self.m
        while m.body_parentid[body] != 0:
            body = int(m.body_parentid[body])
        return body

    def _first_joint(self, body: int) -> int | None:
        m = self.m
        return int(m.body_jntadr[body]) if m.body_jntnum[body] > 0 else None

    def _floating(self, floating_base: bool | None) -> int | None:
        """The root body that the floating base moves, or None for a fixed base."""
        m = self.m
        moving = [b for b in self._roots() if self._moving(b)]
        free_root = (moving[0] if len(moving) == 1 and self._first_joint(moving[0]) is not None
                     and m.jnt_type[self._first_joint(moving[0])] == FREE else None)
        if floating_base is None or floating_base is False:
            return free_root if floating_base is None else None
        if free_root is not None:
            return free_root
        roots = self._roots()
        if len(roots) == 1 and m.body_jntnum[roots[0]] == 0:
            return roots[0]
        raise ModelError(
            f"{self.label}: floating_base=True needs one body in the worldbody, with a free "
            f"joint or without joints (the floating base then moves it); the worldbody has "
            f"{', '.join(repr(self.body_names[b]) for b in roots) or 'no body'}")

    # --- the description -------------------------------------------------------------------
    def read(self) -> RobotDescription:
        m = self.m
        root = self.floating
        if root is None:
            self.links.append(self._link(0))
            self._sites(0, WORLD, np.eye(3), np.zeros(3))
        static = []
        for body in range(1, m.nbody):
            parent = int(m.body_parentid[body])
            if root is not None and self._ancestor(body) != root:
                static.append(self.body_names[body])
                self.static.add(body)
                continue
            self._body(body, None if body == root else self.body_names[parent])
        if static:
            self.warnings.append(
                f"{self.label}: bodies fixed to the world are not part of the floating robot "
                f"and are left out: {', '.join(map(repr, static))}")
        if self.renamed_sites:
            self.warnings.append(
                f"{self.label}: sites named as a body or joint are the frames "
                f"{', '.join(map(repr, self.renamed_sites))}")
        self.warnings += unmodelled(self.m, self.label, self.joint_names, self.body_names,
                                    *self._dropped_terms())
        name = m.names[: m.names.index(b"\0")].decode() if m.names else ""
        return RobotDescription(name or Path(self.label).stem, self.label, tuple(self.links),
                                tuple(self.joints))

    def _dropped_terms(self) -> tuple[list[str], list[str]]:
        """The joints (casdyn's names) whose damping, and whose frictionloss, the model
        leaves out: all that have them, unless ``joint_friction``."""
        if self.joint_friction:
            return [], []
        terms = [(spec.name, spec.damping, spec.friction) for spec in self.joints]
        if self.floating is not None:  # the floating base's, which has no spec
            terms.insert(0, ("floating_base", *self.base_damping))
        return ([name for name, damping, _ in terms if damping],
                [name for name, _, friction in terms if friction])

    def _link(self, body: int, name: str | None = None) -> LinkSpec:
        m = self.m
        R = quaternion_matrix(m.body_iquat[body])
        inertia = R @ np.diag(m.body_inertia[body]) @ R.T
        return LinkSpec(name or self.body_names[body], float(m.body_mass[body]),
                        np.array(m.body_ipos[body], dtype=float), inertia,
                        f"{self.label}, body {self.body_names[body]!r}")

    def _frame(self, name: str) -> LinkSpec:
        return LinkSpec(name, 0.0, np.zeros(3), np.zeros((3, 3)), f"{self.label}, {name!r}")

    def _fresh(self, name: str) -> str:
        """``name``, or with a number appended where a body, joint or frame has it."""
        candidate, k = name, 1
        while candidate in self.used:
            candidate, k = f"{name}{k}", k + 1
        self.used.add(candidate)
        return candidate

    def _body(self, body: int, parent: str | None) -> None:
        """The body's link, the joints that move it from ``parent`` (None: the floating
        base's root link) and its sites."""
        m = self.m
        name = self.body_names[body]
        rotation = quaternion_matrix(m.body_quat[body])
        translation = np.array(m.body_pos[body], dtype=float)
        joints = list(range(int(m.body_jntadr[body]),
                            int(m.body_jntadr[body]) + int(m.body_jntnum[body])))
        if joints and m.jnt_type[joints[0]] == FREE:
            if len(joints) > 1:
                raise ModelError(f"{self.label}: body {name!r} has joints besides its free "
                                 f"joint {self.joint_names[joints[0]]!r}")
            free, joints = joints[0], []
            if parent is None:  # the floating base: its rotor inertia and damping
                self.base_damping = self._dof_terms(free, "floating_base")
            if parent is not None and not self.weld_free:
                # the world pose is qpos itself: a free joint from the world frame
                self._spec(free, "floating", parent, name, np.eye(3), np.zeros(3))
                parent = name
            # else the floating base's (below) or welded at qpos0, which is body_pos, _quat
        if parent is None:  # the floating base's root link
            parent = name
        for k, j in enumerate(joints):
            kind = int(m.jnt_type[j])
            if kind == FREE:
                raise ModelError(f"{self.label}: joint {self.joint_names[j]!r} is free but "
                                 "not the first joint of a top-level body")
            axis = np.array(m.jnt_axis[j], dtype=float)
            anchor = np.array(m.jnt_pos[j], dtype=float)
            ref = float(m.qpos0[m.jnt_qposadr[j]])
            last = k == len(joints) - 1
            child = name if last and not np.any(anchor) else \
                self._fresh(f"{name}:{self.joint_names[j]}")
            origin_rotation, origin = rotation, translation + rotation @ anchor
            if kind == HINGE and ref:  # turned by q - ref
                origin_rotation = rotation @ axis_rotation(axis, -ref)
            elif kind == SLIDE and ref:  # moved by q - ref
                origin = origin - ref * (rotation @ axis)
            kinds = {HINGE: "revolute" if m.jnt_limited[j] else "continuous",
                     SLIDE: "prismatic", BALL: "ball"}
            self._spec(j, kinds[kind], parent, child, origin_rotation, origin, axis)
            if child != name:
                self.links.append(self._frame(child))
            parent, rotation, translation = child, np.eye(3), -anchor
        if parent != name:  # no joint, or an offset after the last one: a fixed joint
            self.joints.append(JointSpec(
                self._fresh(f"{name}_fixed"), "fixed", parent, name, translation, np.zeros(3),
                np.array([1.0, 0.0, 0.0]), -math.inf, math.inf, math.inf, math.inf,
                f"{self.label}, body {name!r}", rotation=rotation))
        self.links.append(self._link(body))
        self._sites(body, name, np.eye(3), np.zeros(3))

    def _spec(self, j: int, kind: str, parent: str, child: str, rotation: np.ndarray,
              origin: np.ndarray, axis: np.ndarray | None = None) -> None:
        m = self.m
        name = self.joint_names[j]
        lower, upper = -math.inf, math.inf
        if kind in ("revolute", "prismatic") and m.jnt_limited[j]:
            lower, upper = (float(x) for x in m.jnt_range[j])
        damping, friction = self._dof_terms(j, name)
        self.joints.append(JointSpec(
            name, kind, parent, child, np.asarray(origin, dtype=float), np.zeros(3),
            np.array([1.0, 0.0, 0.0]) if axis is None else axis, lower, upper, math.inf,
            math.inf, f"{self.label}, joint {name!r}", damping=damping, friction=friction,
            rotation=rotation))

    def _dof_terms(self, j: int, name: str) -> tuple[float, float]:
        """``(damping, frictionloss)`` of joint ``j`` (casdyn's joint ``name``), its armature
        noted. MJCF gives one value per joint, which MuJoCo copies to each of its dofs
        (``dof_*``): casdyn's are per joint, on each of its rates. A free joint's
        frictionloss is left out (MuJoCo's acts on the world-frame velocity)."""
        m = self.m
        dof = int(m.jnt_dofadr[j])
        armature, damping, friction = (float(values[dof]) for values in (
            m.dof_armature, m.dof_damping, m.dof_frictionloss))
        if armature:
            self.armature[name] = armature
        if friction and m.jnt_type[j] == FREE:
            self.warnings.append(
                f"{self.label}, joint {name!r}: casdyn does not model frictionloss on a free "
                "joint; left out")
            friction = 0.0
        return damping, friction

    def _sites(self, body: int, name: str, rotation: np.ndarray, translation: np.ndarray):
        """Each named site of ``body`` as a massless link on a fixed joint."""
        m = self.m
        for s in range(m.nsite):
            if int(m.site_bodyid[s]) != body or not self.site_names[s]:
                continue
            site = self.site_names[s]
            if site in self.used:  # MuJoCo's sites have names of their own
                site = self._fresh(f"{site}_site")
                self.renamed_sites.append(site)
            self.used.add(site)
            self.links.append(self._frame(site))
            local = local_pose(m, m.site_pos[s], m.site_quat[s], body, int(m.site_sameframe[s]))
            self.joints.append(JointSpec(
                self._fresh(f"{site}_fixed"), "fixed", name, site,
                translation + rotation @ local[:3, 3], np.zeros(3),
                np.array([1.0, 0.0, 0.0]), -math.inf, math.inf, math.inf, math.inf,
                f"{self.label}, site {site!r}", rotation=rotation @ local[:3, :3]))


def read_mjcf(source, floating_base: bool | None = None,
              joint_friction: bool = False) -> MJCFModel:
    """Compile ``source`` with MuJoCo and read it as a :class:`MJCFModel`; without
    ``joint_friction`` its warnings name the joints whose damping and frictionloss the
    model built from it leaves out."""
    m, label = compile_mjcf(source)
    reader = _Reader(m, label, floating_base, joint_friction)
    description = reader.read()
    gravity = np.array(m.opt.gravity, dtype=float)
    if m.opt.disableflags & _mujoco().mjtDisableBit.mjDSBL_GRAVITY:  # <flag gravity="disable"/>
        gravity = np.zeros(3)
    loops = mjcf_loops(m, reader)
    reader.warnings += unsupported(m, label, reader.body_names)
    return MJCFModel(description, reader.floating is not None, gravity, reader.armature, loops,
                     m, reader.warnings, reader.base_damping,
                     placements(m, reader.body_names, reader.static), reader.body_names)


def mujoco_velocity_map(robot, q) -> np.ndarray:
    """``T`` (nv, nv) with MuJoCo's ``qvel = T v`` for casdyn's ``v`` at ``q`` (a robot
    loaded by :func:`casdyn.load_mjcf`, free joints kept): the identity but for each free
    joint, whose block is ``[[0, R], [I, 0]]`` (``R`` the body's rotation in the world).
    Generalised forces map back as ``tau = T^T qfrc``; MuJoCo's ``qacc`` is ``T a + dT/dt v``,
    whose free-joint rows are ``R (w x v)`` for ``v``'s block ``[w; v]``."""
    q = np.asarray(q, dtype=float)
    T = np.eye(robot.nv)
    for joint in robot.model.coordinate_joints:
        if joint.type.nv == 6:
            i = joint.idx_v
            R = quaternion_matrix(q[joint.idx_q + 3 : joint.idx_q + 7])
            T[i : i + 6, i : i + 6] = np.block([[np.zeros((3, 3)), R],
                                                [np.eye(3), np.zeros((3, 3))]])
    return T
