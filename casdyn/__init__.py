"""casdyn: rigid-body dynamics of URDF robots as CasADi functions.

The flow: URDF text → :class:`~casdyn.model.Model` (plain data) → algorithms (SX graphs) →
cached ``casadi.Function`` objects → :class:`RigidBodyTree`, the user API.
"""

from __future__ import annotations

import os

from . import arguments, integrators
from ._version import __version__
from .contacts import Contact
from .errors import CasdynError, ExportError, InputError, ModelError, ModelWarning, URDFError
from .functions import FUNCTION_NAMES
from .model import Model, build_model
from .shipped import robot_names, robot_urdf
from .tree import RigidBodyTree
from .urdf import read_urdf

__all__ = [
    "FUNCTION_NAMES",
    "CasdynError",
    "Contact",
    "ExportError",
    "InputError",
    "Model",
    "ModelError",
    "ModelWarning",
    "RigidBodyTree",
    "URDFError",
    "__version__",
    "integrators",
    "load_robot",
    "load_urdf",
    "robot_names",
]


def load_urdf(source: str | os.PathLike, *, gravity=(0.0, 0.0, -9.81),
              floating_base: bool = False, joint_friction: bool = False,
              armature: dict | None = None, friction_smoothing: float = 1e-3,
              package_dirs=()) -> RigidBodyTree:
    """Load a robot from a URDF file path or a string holding URDF XML.

    ``gravity`` is the gravitational acceleration in the base frame: the root link's on a
    fixed base, the world's with ``floating_base=True``, where a free joint
    ``floating_base`` joins the world to the root link (see :class:`RigidBodyTree`).
    ``joint_friction=True`` adds the joints' ``<dynamics damping="d" friction="c">`` to
    every dynamics function as ``tau += d qd + c tanh(qd / friction_smoothing)``;
    ``armature`` (joint name -> rotor inertia, kg m^2 or kg) adds to ``M``'s diagonal.
    ``package_dirs``: directories where ``package://`` mesh names are looked for.
    """
    floating_base = arguments.flag(floating_base, "floating_base")
    joint_friction = arguments.flag(joint_friction, "joint_friction")
    if armature is not None and not isinstance(armature, dict):
        raise InputError(f"armature must be a dict of joint name -> value, got {armature!r}")
    robot = RigidBodyTree(build_model(read_urdf(source), gravity, floating_base, joint_friction,
                                      armature, friction_smoothing))
    from .geometry.robot import RobotGeometry

    robot._geometry = RobotGeometry(robot.model, source, package_dirs)
    return robot


def load_robot(name: str, *, gravity=(0.0, 0.0, -9.81), floating_base: bool = False,
               joint_friction: bool = False, armature: dict | None = None,
               friction_smoothing: float = 1e-3) -> RigidBodyTree:
    """Load a robot shipped with casdyn; :func:`robot_names` lists them."""
    robot = load_urdf(robot_urdf(name), gravity=gravity, floating_base=floating_base,
                      joint_friction=joint_friction, armature=armature,
                      friction_smoothing=friction_smoothing)
    from .geometry.robot import shipped_geometry

    robot._geometry = shipped_geometry(robot.model, name)
    return robot
