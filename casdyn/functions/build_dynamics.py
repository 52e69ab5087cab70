"""Builders of the joint-space dynamics Functions: inverse and forward dynamics, the mass
matrix and the bias terms, both dynamics' derivatives, the regressor, momentum and energy.

Each builder takes ``(model, s, options, stages)``: the reframed model, one SX symbol per
input name, the resolved options and the model's :class:`~casdyn.functions.stages.Stages`,
and returns the outputs in the order of its signature. :func:`~.registry.builds` puts the
Function's :class:`~.registry.Signature` in the builder's place (``inverse_dynamics.build``
is the builder); ``parametric_*`` are the ``parameters=True`` forms."""

from __future__ import annotations

from collections.abc import Callable

import casadi as ca

from ..algorithms import centroidal, configuration, derivatives, dynamics, identification
from ..math.factorization import TreeLDLT
from ..math.spatial import SX
from ..model.tree import Model
from .inputs import FEXT, QD, QDD, TAU, Q
from .registry import builds
from .size_policy import both_graphs_cheap, smallest
from .stages import Stages


def generalized_forces(model: Model, s: dict, fext: bool = True) -> SX:
    """``sum_b J_b^T fext_b - friction`` (nv x 1): the generalised forces on the joints
    besides the actuators' and the inertial and gravity terms — the one place where joint
    friction and external forces enter every dynamics function (``M qdd + h = tau + this``).
    """
    friction = dynamics.friction_torque(model, s["q"], s["qd"])
    if not fext:
        return -friction
    return dynamics.external_torque(model, s["q"], s["fext"]) - friction


def _driving_force(model: Model, s: dict) -> SX:
    """``tau + sum_b J_b^T fext_b - friction`` (nv x 1): what drives the motion besides
    ``M qdd + C qd + g``, for forward and contact dynamics."""
    return s["tau"] + generalized_forces(model, s)


def parametric_inverse_dynamics(m: Model, s: dict, stages: Stages) -> list[SX]:
    """On a model whose inertias are SX expressions of ``pi``; no grouping (it would need
    numbers)."""
    return [dynamics.rnea(m, s["q"], s["qd"], s["qdd"]) - generalized_forces(m, s)]


@builds("inverse_dynamics", (Q, QD, QDD, FEXT), ("tau",),
        parametric=parametric_inverse_dynamics, fext=True, parameters=False)
def inverse_dynamics(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    tau = stages.rnea(s["q"], s["qd"], s["qdd"], dynamics.gravity_acceleration(model))
    return [tau - generalized_forces(model, s)]


def parametric_forward_dynamics(m: Model, s: dict, stages: Stages) -> list[SX]:
    return [dynamics.forward_dynamics(m, s["q"], s["qd"], _driving_force(m, s))]


@builds("forward_dynamics", (Q, QD, TAU, FEXT), ("qdd",),
        parametric=parametric_forward_dynamics, fext=True, parameters=False)
def forward_dynamics(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    stages.require_regular_mass_matrix("forward dynamics")
    tau = _driving_force(model, s)
    qdd = dynamics.forward_dynamics(stages.grouped, s["q"], s["qd"], tau)
    if model.floating_base and not model.has_mimic_joints:
        # ABA or the factorised M: whichever graph is smaller (on solo12 the factorised one,
        # by 2 %: the legs' articulated-inertia transfers cost about what their few M
        # entries do; on TALOS's long limbs ABA, by 28 %)
        factorized = dynamics.factorized_forward_dynamics(stages.grouped, s["q"], s["qd"], tau)
        return smallest([[qdd], [factorized]], [s[name] for name in ("q", "qd", "tau")], s)
    return [qdd]


def parametric_mass_matrix(m: Model, s: dict, stages: Stages) -> list[SX]:
    return [dynamics.crba(m, s["q"])]


@builds("mass_matrix", (Q,), ("M",), parametric=parametric_mass_matrix, parameters=False)
def mass_matrix(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    return [dynamics.crba(stages.grouped, s["q"])]


@builds("velocity_product", (Q, QD), ("c",))
def velocity_product(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    zero = SX.zeros(model.nv, 1)
    return [stages.rnea(s["q"], s["qd"], zero, SX.zeros(6, 1))]


@builds("gravity_torque", (Q,), ("g",))
def gravity_torque(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    zero = SX.zeros(model.nv, 1)
    return [stages.rnea(s["q"], zero, zero, dynamics.gravity_acceleration(model))]


@builds("bias_force", (Q, QD), ("h",))
def bias_force(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    zero = SX.zeros(model.nv, 1)
    return [stages.rnea(s["q"], s["qd"], zero, dynamics.gravity_acceleration(model))
            - generalized_forces(model, s, fext=False)]


def inverse_dynamics_partials(model: Model, s: dict, options: dict,
                              stages: Stages) -> list[SX]:
    """d tau / dq (in the tangent space, nv columns), d tau / dqd and d tau / dqdd (the mass
    matrix) of inverse dynamics: by the analytical recursions of
    :mod:`casdyn.algorithms.derivatives` (``M`` from their composite inertias) or by CasADi's
    AD on the SX graph of inverse dynamics and CRBA, whichever graph is smaller (AD only with
    mimic joints)."""
    (tau,) = inverse_dynamics.build(model, s, options, stages)

    def by_ad() -> list[SX]:
        return [configuration.tangent_jacobian(model, tau, s["q"]),
                ca.jacobian(tau, s["qd"]), dynamics.crba(stages.grouped, s["q"])]

    if model.has_mimic_joints:
        return by_ad()
    dq, dqd, M = derivatives.rnea_derivatives(stages.grouped, s["q"], s["qd"], s["qdd"],
                                              dynamics.gravity_acceleration(model), s["fext"])
    if model.joint_friction:
        dqd = dqd - ca.jacobian(generalized_forces(model, s, fext=False), s["qd"])
    if any(j.type.nv == 6 and dynamics.present(j.armature) for j in model.joints):
        dqd = dqd + ca.jacobian(dynamics.armature_bias(model, s["q"], s["qd"]), s["qd"])
    analytical = [dq, dqd, M]
    if not both_graphs_cheap(model):
        return analytical
    return smallest([by_ad(), analytical], [s[name] for name in ("q", "qd", "qdd")], s)


@builds("inverse_dynamics_derivatives", (Q, QD, QDD, FEXT),
        ("dtau_dq", "dtau_dqd", "dtau_dqdd"), fext=True)
def inverse_dynamics_derivatives(model: Model, s: dict, options: dict,
                                 stages: Stages) -> list[SX]:
    """d tau / d(q, qd, qdd), analytical or by AD (see :func:`inverse_dynamics_partials`)."""
    return inverse_dynamics_partials(model, s, options, stages)


@builds("forward_dynamics_derivatives", (Q, QD, TAU, FEXT),
        ("dqdd_dq", "dqdd_dqd", "dqdd_dtau"), fext=True)
def forward_dynamics_derivatives(model: Model, s: dict, options: dict,
                                 stages: Stages) -> list[SX]:
    """d qdd / d(q, qd, tau) (:func:`casdyn.algorithms.derivatives.forward_from_inverse`):
    ``M^-1`` times the partials solved through the tree-sparse ``M = L^T D L`` (RBDA 6.5),
    or ``M^-1`` formed by AD through that solve and multiplied out, whichever graph is
    smaller where both are cheap to build (the solve: 2-17 % smaller on the shipped and
    benchmark robots)."""
    if model.nv == 0:  # every joint locked: empty, as the other dynamics functions' results
        return [SX(0, 0)] * 3
    partials, ldlt, qdd, _ = forward_dynamics_pieces(model, s, options, stages)
    by_solve = derivatives.forward_from_inverse(partials, ldlt)
    if not both_graphs_cheap(model):
        return by_solve
    M_inv = ca.jacobian(qdd, s["tau"])
    by_product = [-ca.mtimes(M_inv, partials[0]), -ca.mtimes(M_inv, partials[1]), M_inv]
    return smallest([by_product, by_solve], [s[name] for name in ("q", "qd", "tau")], s)


def factorization_order(stages: Stages) -> list[int]:
    """The order in which the forward-dynamics derivatives factorise ``M = L^T D L``."""
    return dynamics.velocity_order(stages.grouped)


def forward_dynamics_pieces(model: Model, s: dict, options: dict, stages: Stages,
                            more: Callable[[dict, list[SX]], list[SX]] | None = None
                            ) -> tuple[list[SX], TreeLDLT, SX, list[SX]]:
    """What the forward-dynamics derivatives are made of: inverse dynamics' partials
    ``[d ID/dq, d ID/dqd]`` (nv x nv each) at ``qdd = FD(q, qd, tau)``, the factorisation
    ``M = L^T D L``, that ``qdd``, and ``more(at, [d ID/dq, d ID/dqd, M])`` at that ``qdd``
    too (``[]`` without ``more``): what else is built from inverse dynamics at a free
    ``at["qdd"]``."""
    stages.require_regular_mass_matrix("forward dynamics")
    at = {**s, "qdd": SX.sym("at_qdd", model.nv)}  # ID at a free qdd, then qdd = FD(...)
    partials = inverse_dynamics_partials(model, at, options, stages)
    extra = [] if more is None else more(at, partials)
    ldlt = TreeLDLT(partials[2], factorization_order(stages))
    # FD itself through the same factorisation: smaller than ABA next to it (3-12 % of the
    # whole on TALOS, chain24, chain12, UR5e)
    qdd = dynamics.factorized_forward_dynamics(stages.grouped, s["q"], s["qd"],
                                               _driving_force(model, s), ldlt)
    at_fd = ca.substitute([*partials[:2], *extra], [at["qdd"]], [qdd])
    return at_fd[:2], ldlt, qdd, at_fd[2:]


@builds("regressor", (Q, QD, QDD), ("Y",))
def regressor(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    """``Y = d tau / d pi`` of the parametric inverse dynamics (no external force): exact,
    as tau is linear in pi, and free of pi."""
    pi = SX.sym("pi", identification.parameter_count(model))
    no_force = {**s, "fext": SX.zeros(s["fext"].shape)}
    (tau,) = parametric_inverse_dynamics(identification.parametric(model, pi), no_force,
                                         stages)
    return [ca.jacobian(tau, pi)]


@builds("centroidal_momentum_matrix", (Q,), ("A_G",))
def centroidal_momentum_matrix(model: Model, s: dict, options: dict,
                               stages: Stages) -> list[SX]:
    return [centroidal.centroidal_momentum_matrix(model, s["q"])]


@builds("centroidal_momentum", (Q, QD), ("h_G",))
def centroidal_momentum(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    return [centroidal.centroidal_momentum(model, s["q"], s["qd"])]


@builds("centroidal_momentum_bias", (Q, QD), ("Adot_qd",))
def centroidal_momentum_bias(model: Model, s: dict, options: dict,
                             stages: Stages) -> list[SX]:
    return [centroidal.centroidal_momentum_bias(model, s["q"], s["qd"])]


@builds("kinetic_energy", (Q, QD), ("T",))
def kinetic_energy(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    return [centroidal.kinetic_energy(model, s["q"], s["qd"])]


@builds("potential_energy", (Q,), ("V",))
def potential_energy(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    return [centroidal.potential_energy(model, s["q"])]
