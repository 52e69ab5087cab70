"""casdyn: rigid-body dynamics of URDF robots as CasADi functions.

The flow: URDF text → :class:`~casdyn.model.tree.Model` (plain data) → algorithms (SX graphs) →
cached ``casadi.Function`` objects → :class:`RigidBodyTree`, the user API.
"""

import os as _os
from dataclasses import replace as _replace

from . import integrators
from ._version import __version__
from .algorithms.contacts import Contact
from .arguments import flag as _flag
from .codegen import compile_function
from .errors import (
    CacheWarning,
    CasdynError,
    ConvergenceWarning,
    DeviceError,
    ExportError,
    InputError,
    ModelError,
    ModelWarning,
    URDFError,
)
from .functions import FUNCTION_NAMES
from .model.build import build_model
from .model.loops import Loop
from .model.loops import with_loops as _with_loops
from .model.shipped import robot_names, robot_srdf, robot_urdf
from .model.srdf import read_srdf as _read_srdf
from .model.srdf import warn_mismatches as _warn_srdf
from .model.tree import Model
from .model.urdf import read_urdf
from .tree import RigidBodyTree

__all__ = [
    "FUNCTION_NAMES",
    "CacheWarning",
    "CasdynError",
    "Contact",
    "ConvergenceWarning",
    "DeviceError",
    "ExportError",
    "InputError",
    "Loop",
    "Model",
    "ModelError",
    "ModelWarning",
    "RigidBodyTree",
    "URDFError",
    "__version__",
    "compile_function",
    "integrators",
    "load_mjcf",
    "load_robot",
    "load_urdf",
    "robot_names",
    "robot_srdf",
    "robot_urdf",
]


def load_urdf(source: str | _os.PathLike, *, gravity=(0.0, 0.0, -9.81),
              floating_base: bool = False, joint_friction: bool = False,
              armature: dict | None = None, friction_smoothing: float = 1e-3,
              srdf: str | _os.PathLike | None = None, loops=(),
              package_dirs=()) -> RigidBodyTree:
    """Load a robot from a URDF file path or a string holding URDF XML.

    ``gravity`` is the gravitational acceleration in the base frame: the root link's on a
    fixed base, the world's with ``floating_base=True``, where a free joint
    ``floating_base`` joins the world to the root link (see :class:`RigidBodyTree`).
    ``joint_friction=True`` adds the joints' ``<dynamics damping="d" friction="c">`` to
    every dynamics function as ``tau += d qd + c tanh(qd / friction_smoothing)``;
    ``armature`` (joint name -> rotor inertia, kg m^2 or kg) adds to ``M``'s diagonal.
    ``srdf`` (a path or SRDF XML): its ``group_state``s become ``robot.named_configurations``
    (see :mod:`casdyn.model.srdf`), its ``disable_collisions`` ``robot.disabled_collision_pairs``.
    ``loops``: closed kinematic loops (:class:`Loop`) the robot holds (``robot.loops``).
    ``package_dirs``: directories where ``package://`` mesh names are looked for.
    """
    def geometry(model: Model, disabled: tuple):
        from .model.geometry import RobotGeometry

        return RobotGeometry(model, source, package_dirs, disabled)

    return _urdf_robot(source, gravity, floating_base, joint_friction, armature,
                       friction_smoothing, srdf, loops, geometry)


def _urdf_robot(source, gravity, floating_base, joint_friction, armature, friction_smoothing,
                srdf, loops, geometry) -> RigidBodyTree:
    """:func:`load_urdf`'s robot, with the geometry ``geometry(model, disabled pairs)``
    (the robot's for life: its ``collision_distances`` are of it)."""
    floating_base = _flag(floating_base, "floating_base")
    joint_friction = _flag(joint_friction, "joint_friction")
    if armature is not None and not isinstance(armature, dict):
        raise InputError(f"armature must be a dict of joint name -> value, got {armature!r}")
    srdf_data = _read_srdf(srdf) if srdf is not None else None
    model = build_model(read_urdf(source), gravity, floating_base, joint_friction, armature,
                        friction_smoothing)
    held = _with_loops(model, loops) if loops else model
    disabled = srdf_data.disable_collisions if srdf_data else ()
    robot = RigidBodyTree(held, srdf_data, geometry(held, disabled))
    if srdf_data is not None:  # links it lacks, repeated states, poses past the limits
        _warn_srdf(srdf_data, model, stacklevel=3)  # at the caller of load_urdf, load_robot
    return robot


def load_mjcf(source, *, floating_base: bool | None = None, gravity=None,
              joint_friction: bool = False) -> RigidBodyTree:
    """Load a robot from MJCF (MuJoCo's XML): a file path, a string holding the XML or a
    ``mujoco.MjModel``, compiled by MuJoCo's own compiler (``pip install mujoco``).

    ``floating_base=None`` follows the file: a ``free`` joint on the one top-level body
    that moves makes the base floating (``q[0:7]`` its ``qpos``, ``qd[0:6]`` the body
    twist ``[w; v]``; see :func:`casdyn.model.mjcf.mujoco_velocity_map` for MuJoCo's
    ``qvel``); ``True`` also frees a top-level body without joints; ``False`` welds every
    free joint at its ``qpos0``. ``gravity=None`` takes the model's ``opt.gravity``.
    ``q`` is ``qpos`` joint by joint (hinge and slide joints at their ``ref`` pose when
    ``q = ref``), bodies and joints keep their MJCF names (an unnamed joint is
    ``"<body>_joint<k>"``), named sites are bodies too. ``armature`` is the joints' rotor
    inertia; with ``joint_friction=True`` ``damping`` and ``frictionloss`` act as
    ``tau += damping qd + frictionloss tanh(qd / 1e-3)``. Active ``connect`` and ``weld``
    equalities are closed loops held exactly (``robot.loops``, :meth:`RigidBodyTree.loop_dynamics`).
    The geoms MuJoCo collides are ``robot.collision_geometry`` (the worldbody's on
    ``"world"``), the others ``robot.visual_geometry``; ``robot.collision_pairs`` are the
    pairs MuJoCo tests (see :mod:`casdyn.model.mjcf_geometry`). What casdyn does not
    model (tendons, actuators, other equalities, their softness, springs, contact forces,
    geoms without a casdyn shape) is named in a :class:`ModelWarning`."""
    from .model.mjcf import read_mjcf, warn_all

    if floating_base is not None:
        floating_base = _flag(floating_base, "floating_base")
    joint_friction = _flag(joint_friction, "joint_friction")
    read = read_mjcf(source, floating_base, joint_friction)
    warn_all(read.warnings, stacklevel=2)  # at the caller
    model = build_model(read.description, read.gravity if gravity is None else gravity,
                        read.floating_base, joint_friction, read.armature)
    if joint_friction and any(read.base_damping):  # the floating base's, which has no spec
        model = _replace(model, joints=(_replace(model.joints[0], damping=read.base_damping[0],
                                                 friction=read.base_damping[1]),
                                        *model.joints[1:]))
    from .model.mjcf_geometry import MJCFGeometry

    held = _with_loops(model, read.loops) if read.loops else model
    return RigidBodyTree(held, geometry=MJCFGeometry(held, read.mj_model, read.placement,
                                                      read.body_names))


def load_robot(name: str, *, gravity=(0.0, 0.0, -9.81), floating_base: bool = False,
               joint_friction: bool = False, armature: dict | None = None,
               friction_smoothing: float = 1e-3,
               srdf: str | _os.PathLike | None = None) -> RigidBodyTree:
    """Load a robot shipped with casdyn; :func:`robot_names` lists them. ``srdf=None``
    takes the robot's own SRDF where it ships one (solo12: ``standing``)."""
    urdf = robot_urdf(name)  # an unknown name is refused before its SRDF is looked for

    def geometry(model: Model, disabled: tuple):
        from .model.geometry import shipped_geometry

        return shipped_geometry(model, name, disabled)

    return _urdf_robot(urdf, gravity, floating_base, joint_friction, armature,
                       friction_smoothing, robot_srdf(name) if srdf is None else srdf, (),
                       geometry)


def __dir__() -> list[str]:
    """The public names, ``__all__``: the modules casdyn imports for itself stay out of
    ``dir(casdyn)`` (they remain importable as ``casdyn.<module>``)."""
    return sorted(__all__)
