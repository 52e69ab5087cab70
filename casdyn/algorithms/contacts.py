"""Dynamics with contacts held: forward dynamics under contact constraints and impacts
(docs: "Task space and contacts").

Both solve the KKT system of the constrained motion,

    [ M   J^T ] [  x   ]   [ r ]
    [ J    0  ] [ -lam ] = [ b ],

by the Schur complement through the tree-sparse factorisation ``M = L^T D L``
(:class:`casdyn.math.factorization.TreeLDLT`, RBDA sec. 6.5): with ``W = L^-T J^T`` and
``y = L^-T r``, the contact forces solve the small ``K lam = b - W^T D^-1 y`` with the
Delassus matrix ``K = J M^-1 J^T = W^T D^-1 W`` (factorised by a dense LDL^T), and
``x = L^-1 D^-1 (y + W lam)``. No inverse of ``M`` is formed, and a leg's rows of ``W`` are
zero outside the joints that carry it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import casadi as ca
import numpy as np

from .. import arguments
from ..errors import InputError
from ..math.factorization import LDLT, TreeLDLT
from ..math.spatial import SX
from ..model.tree import Model
from .dynamics import velocity_order
from .kinematics import geometric_jacobian
from .loops import loop_rows
from .task_space import frame_acceleration

KINDS = {"point": 3, "6d": 6}


@dataclass(frozen=True)
class Contact:
    """A contact that holds a point of a body still: ``kind="point"`` holds its position
    (3 constraints, a force ``[fx, fy, fz]``), ``"6d"`` also its orientation (6 constraints,
    a wrench ``[n; f]`` about the point). ``point`` is in the body's frame."""

    body: str
    kind: str = "point"
    point: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self):
        if not isinstance(self.body, str):
            raise InputError(f"a Contact's body must be a body name, got {self.body!r}")
        if self.kind not in KINDS:
            raise InputError(f"a Contact's kind must be 'point' or '6d', got {self.kind!r}")
        try:
            point = tuple(float(x) for x in np.asarray(self.point, dtype=float).reshape(-1))
        except (TypeError, ValueError):
            point = ()
        if len(point) != 3 or not all(math.isfinite(x) for x in point):
            raise InputError(
                f"a Contact's point must be 3 finite numbers (body frame), got {self.point!r}")
        object.__setattr__(self, "point", point)

    @property
    def size(self) -> int:
        """The number of constraints: 3 for a point, 6 for a 6-D contact."""
        return KINDS[self.kind]

    @property
    def label(self) -> str:
        """How messages name it."""
        return f"{self.kind} on {self.body!r} at {self.point}"

    def rows(self, J: SX) -> SX:
        """The constrained rows of a ``[w; v]`` quantity at the point."""
        return J[3:, :] if self.kind == "point" else J


def contact_list(contacts) -> tuple[Contact, ...]:
    """``contacts`` (a Contact, or a sequence of Contacts, body names or ``(body, kind)`` /
    ``(body, kind, point)`` tuples) as a tuple of Contacts, at least one."""
    items = arguments.items(contacts, isinstance(contacts, Contact | str),
                            "contacts must be a sequence of casdyn.Contact")
    if not items:
        raise InputError("contacts must name at least one contact")
    listed = []
    for item in items:
        if isinstance(item, Contact):
            listed.append(item)
        elif isinstance(item, str):
            listed.append(Contact(item))
        elif isinstance(item, tuple) and 1 <= len(item) <= 3:
            listed.append(Contact(*item))
        else:
            raise InputError(f"contacts must be casdyn.Contact values, got {item!r}")
    return tuple(listed)


class ContactSystem:
    """The contact Jacobian ``J_c`` (m x nv), drift ``Jdot_c qd`` (m x 1) and the Schur
    complement of a set of contacts at ``(q, qd)``, for a mass matrix ``M``."""

    def __init__(self, model: Model, M: SX, q: SX, qd: SX, contacts: tuple[Contact, ...],
                 bodies: list[int], loops: tuple = (), held: SX | None = None):
        """``loops`` (:class:`casdyn.model.loops.Loop`) are held too: their rows follow
        the contacts' in ``J``, ``drift`` and the multipliers.

        ``held``: one flag per contact (0 or 1, symbols of one graph for every subset of
        the contacts): a contact flagged 0 is released, its rows of ``J`` and ``drift`` zero
        and its diagonal of ``K`` one, so that its multipliers solve ``lam = 0`` and the
        motion is that of the contacts flagged 1 alone (exactly, for flags 0 and 1)."""
        zero = SX.zeros(model.nv, 1)
        self.contacts, self.loops = contacts, loops
        self.J = ca.vertcat(*[c.rows(geometric_jacobian(model, q, b, c.point))
                              for c, b in zip(contacts, bodies, strict=True)])
        self.drift = ca.vertcat(*[c.rows(frame_acceleration(model, q, qd, zero, b, c.point))
                                  for c, b in zip(contacts, bodies, strict=True)])
        if held is not None:
            rows = ca.vertcat(*[ca.repmat(held[k], c.size, 1) for k, c in enumerate(contacts)])
            self.J = self.J * ca.repmat(rows, 1, model.nv)
            self.drift = self.drift * rows
        if loops:
            J, drift = loop_rows(model, q, qd, loops)
            self.J = ca.vertcat(self.J, J) if contacts else J
            self.drift = ca.vertcat(self.drift, drift) if contacts else drift
        self.factor = TreeLDLT(M, velocity_order(model))
        W = self.factor.solve_transposed(self.J.T)  # rows of L^-T J^T
        self.Z = _matrix(self.factor.scaled(W))  # D^-1 W
        self.K = ca.mtimes(_matrix(W).T, self.Z)  # the Delassus matrix J M^-1 J^T
        if held is not None:
            released = ca.vertcat(1 - rows, SX.zeros(self.K.size1() - rows.numel(), 1))
            self.K = self.K + ca.diag(released)
        self.K_factor = LDLT(self.K)

    def solve(self, r: SX, b: SX) -> tuple[SX, SX]:
        """``(x, lam)`` with ``M x = r + J^T lam`` and ``J x = b``."""
        y = self.factor.solve_transposed(r)
        z = self.factor.scaled(y)
        lam = self.K_factor.solve(b - ca.mtimes(self.Z.T, _matrix(y)))
        step = ca.mtimes(self.Z, lam)
        combined = [z_k + step[k, :] for k, z_k in enumerate(z)]
        return self.factor.finish(combined), lam

    @property
    def constraints(self) -> tuple:
        """The contacts, then the loops, in the order of the multipliers."""
        return (*self.contacts, *self.loops)

    def per_loop(self, lam: SX) -> SX:
        """The loops' multipliers (after the contacts') as one row per loop, as
        :meth:`per_contact` (``n x 3`` if every loop holds a point, else ``n x 6``)."""
        at = sum(c.size for c in self.contacts)
        return constraint_rows(self.loops, lam[at:])

    def per_contact(self, lam: SX) -> SX:
        """The stacked multipliers as one row per contact: ``n x 3`` if every contact is a
        point, else ``n x 6`` (a point contact's row ``[0, 0, 0, fx, fy, fz]``: it transmits
        no moment about its point)."""
        return constraint_rows(self.contacts, lam)


def constraint_rows(constraints: tuple, lam: SX) -> SX:
    """The first multipliers of ``lam`` as one row per constraint (a point's padded to
    ``[0, 0, 0, fx, fy, fz]`` where another has 6)."""
    width = max(c.size for c in constraints)
    rows, at = [], 0
    for constraint in constraints:
        part = lam[at : at + constraint.size]
        at += constraint.size
        if constraint.size < width:
            part = ca.vertcat(SX.zeros(3, 1), part)
        rows.append(part.T)
    return ca.vertcat(*rows)


def _matrix(rows: list[SX]) -> SX:
    """Rows (1 x m, as :class:`casdyn.math.factorization.TreeLDLT` returns them) as one matrix."""
    return ca.vertcat(*rows)


def contact_dynamics(system: ContactSystem, tau_minus_h: SX, qd: SX, damping: SX) -> tuple:
    """``(qdd, lam)`` with ``M qdd + h = tau + J^T lam`` and
    ``J qdd + Jdot qd = -damping J qd``, for ``tau_minus_h = tau - h``."""
    b = -system.drift - damping * ca.mtimes(system.J, qd)
    return system.solve(tau_minus_h, b)


def impulse_dynamics(system: ContactSystem, qd_minus: SX, restitution: SX) -> tuple:
    """``(qd_plus, Lambda)`` with ``M (qd_plus - qd_minus) = J^T Lambda`` and
    ``J qd_plus = -restitution J qd_minus``."""
    b = -(1 + restitution) * ca.mtimes(system.J, qd_minus)
    jump, impulses = system.solve(SX.zeros(qd_minus.size1(), 1), b)
    return qd_minus + jump, impulses
