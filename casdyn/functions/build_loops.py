"""Builders of the loop Functions (:mod:`casdyn.algorithms.loops`): forward and inverse
dynamics with the robot's closed loops held, and the loop-closure residual with its
Jacobian. Signatures as in :mod:`.build_dynamics`; each needs a robot with loops."""

from __future__ import annotations

import casadi as ca

from ..algorithms import contacts, dynamics, loops
from ..algorithms.configuration import in_tangent_space
from ..errors import InputError, ModelError, unknown_name
from ..math.spatial import SX
from ..model.tree import Model
from .build_contacts import held
from .build_dynamics import generalized_forces
from .inputs import FEXT, QD, QDD, TAU, Q
from .registry import builds
from .stages import Stages, _NotFinite, null_vector


@builds("loop_dynamics", (Q, QD, TAU, FEXT), ("qdd", "forces"), loops=True, fext=True)
def loop_dynamics(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    system = held(model, s, s["qd"], (), stages, "loop dynamics")
    h = stages.rnea(s["q"], s["qd"], SX.zeros(model.nv, 1), dynamics.gravity_acceleration(model))
    driving = s["tau"] + generalized_forces(model, s)
    qdd, forces = contacts.contact_dynamics(system, driving - h, s["qd"], 0)
    return [qdd, system.per_loop(forces)]


@builds("loop_inverse_dynamics", (Q, QD, QDD, FEXT), ("tau", "forces"), loops=True,
        actuated=None, fext=True)
def loop_inverse_dynamics(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    """``tau`` on the actuated joints (zero elsewhere) and the loop forces with
    ``ID(q, qd, qdd) = S tau_a + J^T lambda``: the least-squares solution of
    ``A = [S, J^T]``, exact where ``qdd`` is reachable (it keeps the loops closed and the
    actuation drives every motion the loops leave free). Refused where the unknowns are
    undetermined at every configuration (:func:`check_determined`); at a singular
    configuration the solution of least norm (:func:`loops.minimum_norm_least_squares`)."""
    columns = actuated_columns(model, options["actuated"])
    tau_id = stages.rnea(s["q"], s["qd"], s["qdd"], dynamics.gravity_acceleration(model)) \
        - generalized_forces(model, s)
    J, _ = loops.loop_rows(model, s["q"], s["qd"], model.loops)
    S = SX(model.nv, len(columns))
    for k, column in enumerate(columns):
        S[column, k] = 1
    A = ca.horzcat(S, J.T)
    check_determined(model, s["q"], A, columns)
    x = loops.minimum_norm_least_squares(A, tau_id)
    tau = ca.mtimes(S, x[: len(columns)])
    return [tau, contacts.constraint_rows(model.loops, x[len(columns) :])]


def check_determined(model: Model, q: SX, A: SX, columns: list[int]) -> None:
    """Refuse an inverse problem ``A x = ID`` (``A = [S, J^T]``, ``x = [tau_a; lambda]``)
    whose unknowns are not unique at two random configurations: the loops' rows dependent
    (redundant loops, which :func:`loop_dynamics` refuses too: a point loop that closes a
    planar linkage, whose out-of-plane row is zero), or the actuated joints' forces able
    to trade off against the loop forces (more actuated joints than free motions, or a
    joint the loops hold still)."""
    k, listed = len(columns), model.loops
    try:
        J = A[:, k:].T
        redundant = null_vector(model, q, ca.mtimes(J, J.T), 1e-10)
        traded = None if redundant is not None else \
            null_vector(model, q, ca.mtimes(A.T, A), 1e-10)
    except _NotFinite:
        raise ModelError(
            "loop inverse dynamics: the loops' Jacobian overflows at a random configuration: "
            f"a loop point is too far from its body's origin ({_labels(listed)})") from None
    if redundant is not None:
        raise ModelError(
            f"loop inverse dynamics of {model.name!r} is undefined: redundant loops: "
            f"{_labels(listed, redundant)} constrain some motion more than once (the rows of "
            "the loops' Jacobian J are dependent at every configuration, e.g. a point loop "
            "that closes a planar linkage, whose out-of-plane row is zero), so their forces "
            "are not unique; loop_dynamics refuses them for the same reason")
    if traded is not None:
        names = _joint_names(model, columns, traded[:k])
        free = model.nv - (A.size2() - k)  # J has full row rank here
        raise InputError(
            f"loop_inverse_dynamics: actuated={_actuated_names(model, columns)} leaves the "
            f"forces undetermined: the torques of {names} can trade off against the loop "
            "forces (S tau = J^T lambda has a solution other than zero at every "
            f"configuration); the loops leave {free} free motion(s) of {model.nv}: actuate "
            "at most one joint per free motion, and none that the loops hold still")


def _labels(listed: tuple, null=None) -> str:
    """The loops (those with a share of the null vector ``null`` of their stacked rows)."""
    involved, at = [], 0
    for loop in listed:
        if null is None or null[at : at + loop.size].max() > 0.01 * null.max():
            involved.append(loop.label)
        at += loop.size
    return "; ".join(involved)


def _joint_names(model: Model, columns: list[int], null) -> str:
    """The joints of the actuated ``columns`` with a share of the null vector ``null``."""
    top = null.max() if len(null) else 0.0
    picked = [c for c, v in zip(columns, null, strict=True) if top > 0 and v > 0.01 * top]
    return _actuated_names(model, picked)


def _actuated_names(model: Model, columns: list[int]) -> str:
    names = [j.name for j in model.coordinate_joints
             if any(j.idx_v <= c < j.idx_v + j.type.nv for c in columns)]
    return "[" + ", ".join(map(repr, names)) + "]"


@builds("loop_residual", (Q,), ("residual", "jacobian"), loops=True)
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
