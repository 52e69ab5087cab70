"""Builders of the kinematic and task-space Functions: poses, Jacobians, frame velocities
and accelerations, the centre of mass, external-force rows, and moving on the configuration
space (``integrate``, ``difference``). Signatures as in :mod:`.build_dynamics`."""

from __future__ import annotations

import casadi as ca

from ..algorithms import configuration, kinematics, task_space
from ..math.spatial import SX
from ..model.tree import Model
from .inputs import Q0, Q1, QD, QDD, WRENCH, Q, V
from .registry import builds
from .stages import Stages

_TASK = {"body": None, "point": None, "reference_frame": "base"}  # a task-space function's


def _at_the_origin(model: Model, q: SX) -> SX:
    """``q`` with the positions of free root joints set to zero. A body's Jacobian, its time
    derivative and its frame velocity and acceleration (base-frame axes) use the positions
    along its chain only through differences, which a common shift leaves unchanged:
    without the root's position the graph does not add it to every position and subtract it
    again."""
    for joint in model.joints:
        if joint.parent < 0 and joint.type.origin_in_q:
            q = ca.vertcat(q[: joint.idx_q], SX.zeros(3, 1), q[joint.idx_q + 3 :])
    return q


def _local(options: dict) -> bool:
    """Whether a task-space function's vectors have the body's axes."""
    return options["reference_frame"] == "local"


@builds("geometric_jacobian", (Q,), ("J",), **_TASK)
def geometric_jacobian(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    body = model.body_index(options["body"], allow_base=True)
    q = _at_the_origin(model, s["q"])
    return [kinematics.geometric_jacobian(model, q, body, options["point"],
                                          _local(options))]


@builds("get_transform", (Q,), ("T",), body=None, relative_to=None)
def get_transform(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    body = model.body_index(options["body"], allow_base=True)
    reference = options["relative_to"]
    reference = -1 if reference is None else model.body_index(reference, allow_base=True)
    return [kinematics.relative_transform(model, s["q"], body, reference).matrix()]


@builds("center_of_mass", (Q,), ("com", "com_jacobian"))
def center_of_mass(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    return list(kinematics.center_of_mass(model, s["q"]))


@builds("external_force", (WRENCH, Q), ("fext",), body=None)
def external_force(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    """Row = [R n + p x (R f); R f]: a body-frame wrench as a base-frame spatial force."""
    body = model.body_index(options["body"])
    pose = kinematics.relative_transform(model, s["q"], body, -1)
    wrench = s["wrench"]
    force = ca.mtimes(pose.R, wrench[3:])
    moment = ca.mtimes(pose.R, wrench[:3]) + ca.cross(pose.p, force)
    fext = SX.zeros(len(model.bodies), 6)
    fext[body, :] = ca.vertcat(moment, force).T
    return [fext]


@builds("integrate", (Q, V), ("q_next",), dt=1.0)
def integrate(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    return [configuration.integrate(model, s["q"], s["v"] * options["dt"])]


@builds("difference", (Q0, Q1), ("v",))
def difference(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    return [configuration.difference(model, s["q0"], s["q1"])]


@builds("frame_velocity", (Q, QD), ("velocity",), **_TASK)
def frame_velocity(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    body = model.body_index(options["body"], allow_base=True)
    q = _at_the_origin(model, s["q"])
    return [task_space.frame_velocity(model, q, s["qd"], body, options["point"],
                                      _local(options))]


@builds("frame_acceleration", (Q, QD, QDD), ("acceleration",), **_TASK)
def frame_acceleration(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    body = model.body_index(options["body"], allow_base=True)
    q = _at_the_origin(model, s["q"])
    return [task_space.frame_acceleration(model, q, s["qd"], s["qdd"], body, options["point"],
                                          _local(options))]


@builds("jacobian_time_derivative", (Q, QD), ("Jdot",), **_TASK)
def jacobian_time_derivative(model: Model, s: dict, options: dict,
                             stages: Stages) -> list[SX]:
    body = model.body_index(options["body"], allow_base=True)
    q = _at_the_origin(model, s["q"])
    return [task_space.jacobian_time_derivative(model, q, s["qd"], body, options["point"],
                                                _local(options))]
