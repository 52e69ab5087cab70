"""Builders of the loop Functions (:mod:`casdyn.algorithms.loops`): forward and inverse
dynamics with the robot's closed loops held, and the loop-closure residual with its
Jacobian. Signatures as in :mod:`.build_dynamics`; each needs a robot with loops."""

from __future__ import annotations

import casadi as ca

from ..algorithms import contacts, dynamics, loops
from ..algorithms.configuration import in_tangent_space
from ..errors import InputError, unknown_name
from ..math.spatial import SX
from ..model.tree import Model
from .build_contacts import held
from .build_dynamics import generalized_forces
from .registry import builds, needs_loops
from .stages import Stages


@needs_loops
@builds("loop_dynamics", ("q", "qd", "tau", "fext"), ("qdd", "forces"), fext=True)
def loop_dynamics(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    system = held(model, s, s["qd"], (), stages, "loop dynamics")
    h = stages.rnea(s["q"], s["qd"], SX.zeros(model.nv, 1), dynamics.gravity_acceleration(model))
    driving = s["tau"] + generalized_forces(model, s)
    qdd, forces = contacts.contact_dynamics(system, driving - h, s["qd"], 0)
    return [qdd, system.per_loop(forces)]


@needs_loops
@builds("loop_inverse_dynamics", ("q", "qd", "qdd", "fext"), ("tau", "forces"),
        actuated=None, fext=True)
def loop_inverse_dynamics(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    """``tau`` on the actuated joints (zero elsewhere) and the loop forces with
    ``ID(q, qd, qdd) = tau + J^T lambda``, solved in the least-squares sense (exact where
    ``qdd`` keeps the loops closed)."""
    columns = actuated_columns(model, options["actuated"])
    tau_id = stages.rnea(s["q"], s["qd"], s["qdd"], dynamics.gravity_acceleration(model)) \
        - generalized_forces(model, s)
    J, _ = loops.loop_rows(model, s["q"], s["qd"], model.loops)
    S = SX(model.nv, len(columns))
    for k, column in enumerate(columns):
        S[column, k] = 1
    A = ca.horzcat(S, J.T)
    x = ca.solve(ca.mtimes(A.T, A), ca.mtimes(A.T, tau_id))
    tau = ca.mtimes(S, x[: len(columns)])
    return [tau, contacts.constraint_rows(model.loops, x[len(columns) :])]


@needs_loops
@builds("loop_residual", ("q",), ("residual", "jacobian"))
def loop_residual(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    """The closure errors of every loop (stacked) and their derivative in the tangent
    space (m x nv)."""
    residual = loops.loop_residual(model, s["q"], model.loops)
    return [residual, in_tangent_space(model, ca.jacobian(residual, s["q"]), s["q"])]


def actuated_columns(model: Model, actuated) -> list[int]:
    """The velocity entries of the ``actuated`` joint names (every entry of a multi-dof
    joint)."""
    if actuated is None:
        raise InputError("loop_inverse_dynamics needs the option actuated=[joint names]")
    joints = {joint.name: joint for joint in model.coordinate_joints}
    columns = []
    for name in actuated:
        if name not in joints:
            raise unknown_name("joint", name, list(joints))
        joint = joints[name]
        columns += range(joint.idx_v, joint.idx_v + joint.type.nv)
    return columns
