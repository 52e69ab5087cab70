"""Builders of the contact Functions: forward dynamics with contacts held, and the
velocities after an impact (:mod:`casdyn.algorithms.contacts`). Signatures as in
:mod:`.build_dynamics`."""

from __future__ import annotations

import casadi as ca

from ..algorithms import configuration, contacts, dynamics
from ..math.spatial import SX
from ..model.tree import Model
from .build_dynamics import generalized_forces, inverse_dynamics_partials
from .inputs import DAMPING, FEXT, HELD, QD, QD_MINUS, RESTITUTION, TAU, Q
from .registry import builds
from .stages import Stages


def held(model: Model, s: dict, qd: SX, listed: tuple, stages: Stages,
         what: str, switched: bool = False) -> contacts.ContactSystem:
    """The KKT system of the ``listed`` contacts and the robot's closed loops at
    ``(q, qd)``, refused where ``M`` is singular or the constraints are redundant (their
    forces would not be unique). ``switched``: each contact held where its body's flag of
    the input ``held`` is 1, released where it is 0 (the check is of all of them held)."""
    stages.require_regular_mass_matrix(what)
    bodies = [model.body_index(contact.body) for contact in listed]
    M = dynamics.crba(stages.grouped, s["q"])
    flags = ca.vertcat(*[s[HELD.name][b] for b in bodies]) if switched else None
    system = contacts.ContactSystem(model, M, s["q"], qd, listed, bodies, model.loops, flags)
    K = system.K if flags is None else \
        ca.substitute(system.K, s[HELD.name], SX.ones(s[HELD.name].shape))
    stages.check_contacts_independent(system.constraints, s["q"], K)
    return system


def _contact_system(model: Model, s: dict, qd: SX, options: dict, stages: Stages,
                    what: str) -> contacts.ContactSystem:
    return held(model, s, qd, options["contacts"], stages, what,
                options.get("switched", False))


# switched=True: one graph for every subset of the contacts, the input held (one flag per
# body, as fext's rows) saying which are held (an optimal control problem's stance modes)
@builds("contact_dynamics", (Q, QD, TAU, FEXT, DAMPING), ("qdd", "forces"),
        contacts=None, fext=True, switched=False)
def contact_dynamics(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    system, qdd, forces = _held_motion(model, s, options, stages, "contact dynamics")
    return [qdd, system.per_contact(forces)]


def _held_motion(model: Model, s: dict, options: dict, stages: Stages,
                 what: str) -> tuple[contacts.ContactSystem, SX, SX]:
    """``(system, qdd, lam)``: the KKT system of the held contacts and its motion."""
    system = _contact_system(model, s, s["qd"], options, stages, what)
    h = stages.rnea(s["q"], s["qd"], SX.zeros(model.nv, 1), dynamics.gravity_acceleration(model))
    driving = s["tau"] + generalized_forces(model, s)
    qdd, lam = contacts.contact_dynamics(system, driving - h, s["qd"], s["damping"])
    return system, qdd, lam


@builds("contact_dynamics_derivatives", (Q, QD, TAU, FEXT, DAMPING),
        ("dqdd_dq", "dqdd_dqd", "dqdd_dtau", "dforces_dq", "dforces_dqd", "dforces_dtau"),
        contacts=None, fext=True, switched=False)
def contact_dynamics_derivatives(model: Model, s: dict, options: dict,
                                 stages: Stages) -> list[SX]:
    """The derivatives of :func:`contact_dynamics`' ``qdd`` (nv rows) and ``forces`` (one
    row per entry of ``forces`` read row by row: contact ``k``'s ``w`` components at rows
    ``k w`` to ``k w + w - 1``) by ``q`` (in the tangent space, nv columns), ``qd`` and
    ``tau`` (nv columns each).

    Analytical, as Carpentier and Mansard's constrained-dynamics derivatives (RSS 2018): the
    motion ``(qdd, lam)`` zeroes ``R1 = ID(q, qd, qdd) - tau - J^T lam`` and
    ``R2 = J qdd + Jdot qd + damping J qd``, so its derivatives solve the same KKT system
    with the partials of ``R`` on the right: ``M d(qdd) - J^T d(lam) = -dR1`` and
    ``J d(qdd) = -dR2``. Inverse dynamics' partials come from the analytical recursions of
    :func:`casdyn.functions.build_dynamics.inverse_dynamics_partials` (at the solved
    ``qdd``, external forces and joint friction included), the contact terms (``J^T lam``,
    the feet's accelerations) by AD of their kinematics, the solve through the tree-sparse
    factorisation already made for the motion."""
    system, qdd, lam = _held_motion(model, s, options, stages, "contact dynamics derivatives")
    # the partials at free (qdd, lam), then these set to the motion's
    at = {**s, "qdd": SX.sym("at_qdd", model.nv)}
    lam_at = SX.sym("at_lam", lam.numel())
    did_dq, did_dqd, _ = inverse_dynamics_partials(model, at, options, stages)
    q, qd = s["q"], s["qd"]
    pulled = ca.mtimes(system.J.T, lam_at)
    held = ca.mtimes(system.J, at["qdd"] + s["damping"] * qd) + system.drift
    dR1_dq = did_dq - configuration.in_tangent_space(model, ca.jacobian(pulled, q), q)
    dR2_dq = configuration.in_tangent_space(model, ca.jacobian(held, q), q)
    dR1, dR2 = ca.horzcat(dR1_dq, did_dqd), ca.horzcat(dR2_dq, ca.jacobian(held, qd))
    dR1, dR2 = ca.substitute([dR1, dR2], [at["qdd"], lam_at], [qdd, lam])
    d_qdd, d_lam = system.solve(-dR1, -dR2)
    # tau enters R1 as -tau: the same solve with the identity on the right
    dqdd_dtau, dlam_dtau = system.solve(SX.eye(model.nv), SX.zeros(lam.numel(), model.nv))
    nv = model.nv
    d_forces = [_per_contact_rows(system, d) for d in (d_lam[:, :nv], d_lam[:, nv:], dlam_dtau)]
    return [d_qdd[:, :nv], d_qdd[:, nv:], dqdd_dtau, *d_forces]


def _per_contact_rows(system: contacts.ContactSystem, d_lam: SX) -> SX:
    """The contacts' rows of stacked multiplier derivatives ``d_lam`` in the layout of
    ``forces`` read row by row (a point's three rows after three zero rows where another
    contact has six; the loops' rows dropped)."""
    width = max(c.size for c in system.contacts)
    rows, at = [], 0
    for contact in system.contacts:
        if contact.size < width:
            rows.append(SX.zeros(width - contact.size, d_lam.size2()))
        rows.append(d_lam[at : at + contact.size, :])
        at += contact.size
    return ca.vertcat(*rows)


@builds("impulse_dynamics", (Q, QD_MINUS, RESTITUTION), ("qd_plus", "impulses"),
        contacts=None)
def impulse_dynamics(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    system = _contact_system(model, s, s["qd_minus"], options, stages, "impulse dynamics")
    qd_plus, impulses = contacts.impulse_dynamics(system, s["qd_minus"], s["restitution"])
    return [qd_plus, system.per_contact(impulses)]
