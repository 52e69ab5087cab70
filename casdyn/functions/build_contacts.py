"""Builders of the contact Functions: forward dynamics with contacts held, and the
velocities after an impact (:mod:`casdyn.algorithms.contacts`). Signatures as in
:mod:`.build_dynamics`."""

from __future__ import annotations

from ..algorithms import contacts, dynamics
from ..math.spatial import SX
from ..model.tree import Model
from .build_dynamics import generalized_forces
from .inputs import DAMPING, FEXT, QD, QD_MINUS, RESTITUTION, TAU, Q
from .registry import builds
from .stages import Stages


def held(model: Model, s: dict, qd: SX, listed: tuple, stages: Stages,
         what: str) -> contacts.ContactSystem:
    """The KKT system of the ``listed`` contacts and the robot's closed loops at
    ``(q, qd)``, refused where ``M`` is singular or the constraints are redundant (their
    forces would not be unique)."""
    stages.require_regular_mass_matrix(what)
    bodies = [model.body_index(contact.body) for contact in listed]
    M = dynamics.crba(stages.grouped, s["q"])
    system = contacts.ContactSystem(model, M, s["q"], qd, listed, bodies, model.loops)
    stages.check_contacts_independent(system.constraints, s["q"], system.K)
    return system


def _contact_system(model: Model, s: dict, qd: SX, options: dict, stages: Stages,
                    what: str) -> contacts.ContactSystem:
    return held(model, s, qd, options["contacts"], stages, what)


@builds("contact_dynamics", (Q, QD, TAU, FEXT, DAMPING), ("qdd", "forces"),
        contacts=None, fext=True)
def contact_dynamics(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    system = _contact_system(model, s, s["qd"], options, stages, "contact dynamics")
    h = stages.rnea(s["q"], s["qd"], SX.zeros(model.nv, 1), dynamics.gravity_acceleration(model))
    driving = s["tau"] + generalized_forces(model, s)
    qdd, forces = contacts.contact_dynamics(system, driving - h, s["qd"], s["damping"])
    return [qdd, system.per_contact(forces)]


@builds("impulse_dynamics", (Q, QD_MINUS, RESTITUTION), ("qd_plus", "impulses"),
        contacts=None)
def impulse_dynamics(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    system = _contact_system(model, s, s["qd_minus"], options, stages, "impulse dynamics")
    qd_plus, impulses = contacts.impulse_dynamics(system, s["qd_minus"], s["restitution"])
    return [qd_plus, system.per_contact(impulses)]
