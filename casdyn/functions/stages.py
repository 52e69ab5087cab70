"""The forms of one model that its Functions are built on, and the checks they share."""

from __future__ import annotations

from functools import cached_property

import casadi as ca
import numpy as np

from ..algorithms import configuration, dynamics
from ..errors import ModelError
from ..math.spatial import SX
from ..model.grouping import grouped
from ..model.loops import Loop
from ..model.reframe import sparsify_frames
from ..model.tree import Model


class Stages:
    """The models the algorithms run on, derived from the URDF model, and what the
    joint-space dynamics functions share:

    * ``reframed`` (:mod:`casdyn.model.reframe`): joint frames turned and slid along their
      axes (DH-like or centre-of-mass-aligned) where that makes constants sparser; bodies
      keep their URDF frames, so every result is unchanged. All Functions run on it.
    * ``grouped`` (:mod:`casdyn.model.grouping`): inertias grouped towards the base; the
      same joint-space dynamics (``M``, ``C qd``, ``g``) from sparser constants, the body
      forces inside differ. The joint-space dynamics run on it.
    * ``geometry``: the robot's shapes, which ``collision_distances`` is built from.
    * ``rnea``: RNEA on ``grouped`` as an SX Function of (q, qd, qdd, base acceleration),
      built once and inlined (by calling it on SX arguments, where CasADi drops whatever
      constant zeros make vanish) into inverse dynamics, velocity product and gravity
      torque.
    """

    def __init__(self, model: Model, geometry=None):
        self.reframed = sparsify_frames(model)
        self.grouped = grouped(self.reframed)
        self._model = model
        self._given_geometry = self._geometry = geometry
        self._singular: tuple[str, ...] | None = None
        self._independent: set[tuple] = set()  # contact sets found independent

    @property
    def given_geometry(self):
        """The geometry the robot was made with; None: its URDF's (read on first use)."""
        return self._given_geometry

    @property
    def geometry(self):
        """The robot's collision and visual geometry
        (:class:`casdyn.model.geometry.RobotGeometry`, or MJCF's): the one it was made with,
        else its URDF's, read on first use. Read-only: a robot's geometry is fixed for its
        life, so a cached ``collision_distances`` is always of this geometry."""
        if self._geometry is None:
            from ..model.geometry import RobotGeometry  # imported on first use

            self._geometry = RobotGeometry(self._model)
        return self._geometry

    def require_regular_mass_matrix(self, what: str) -> None:
        """Refuse ``what`` (forward, contact or impulse dynamics, FD derivatives) where ``M``
        is singular: a motion that moves no mass, e.g. a joint whose subtree is massless, or
        a massless root link on a floating base with a single joint below it, whose axis
        the free joint repeats. Checked once per model."""
        if self._singular is None:
            self._singular = singular_joints(self.grouped)
        if self._singular:
            raise ModelError(
                f"{what} of {self.grouped.name!r} is undefined: the mass matrix is singular; "
                f"a motion of joints {', '.join(map(repr, self._singular))} together moves no "
                "mass (e.g. a massless link, or one whose only joint repeats a motion of the "
                "joint above it)"
            )

    def check_contacts_independent(self, listed: tuple, q: SX, K: SX) -> None:
        """Refuse contacts whose constraints are redundant: the Delassus matrix
        ``K = J M^-1 J^T`` singular at two random configurations (e.g. two 6-D contacts,
        or two points, of one rigid body). Their forces would not be unique, and
        the solve would return NaN or huge numbers."""
        if listed in self._independent:
            return
        try:
            null = null_vector(self.grouped, q, K, 1e-10)
        except _NotFinite:
            points = ", ".join(c.label for c in listed)
            raise ModelError(
                f"the contacts' J M^-1 J^T overflows at a random configuration: a contact point "
                f"is too far from its body's origin ({points}; body frames, m)") from None
        if null is None:
            self._independent.add(listed)
            return
        # the contacts whose forces can trade off against each other: the null vector's
        at, involved = 0, []
        for contact in listed:
            if null[at : at + contact.size].max() > 0.01 * null.max():
                involved.append(contact)
            at += contact.size
        labels = "; ".join(c.label for c in involved)
        if any(isinstance(c, Loop) for c in involved):
            raise ModelError(
                f"redundant constraints: {labels} constrain some motion more than once "
                "(J M^-1 J^T is singular), so their forces are not unique; a loop that closes "
                "a planar linkage holds the out-of-plane motion twice (its row of J is zero "
                "or repeats another): close it with a joint that also turns out of the plane "
                "(e.g. a universal joint), or with fewer rows")
        raise ModelError(
            f"redundant contacts: {labels} constrain some motion more than once "
            "(J M^-1 J^T is singular), so their forces are not unique; a rigid body takes "
            "one 6-D contact or one point contact (two points of it are already redundant: "
            "their velocities along the line through them are equal)"
        )

    @cached_property
    def rnea(self) -> ca.Function:
        """(q, qd, qdd, base_acceleration[6]) -> tau, without external forces."""
        model = self.grouped
        q, qd, qdd = SX.sym("q", model.nq), SX.sym("qd", model.nv), SX.sym("qdd", model.nv)
        a_base = SX.sym("a_base", 6)
        return ca.Function("rnea", [q, qd, qdd, a_base],
                           [dynamics.rnea(model, q, qd, qdd, a_base)])


def null_vector(model: Model, q: SX, matrix: SX, tolerance: float) -> np.ndarray | None:
    """Where the null space of the symmetric ``matrix(q)`` lives, if its smallest eigenvalue
    is at most ``tolerance`` times the largest at both of two random configurations (seeded,
    bounded), so that the matrix is singular whatever ``q``: per row, the largest ``|v|`` of
    the eigenvectors of those small eigenvalues (several null motions, e.g. two massless
    hands, all show). None where it is regular."""
    evaluate = ca.Function("matrix", [q], [matrix])
    rng = np.random.default_rng(0)
    for _ in range(2):
        value = np.array(evaluate(configuration.random(model, rng, bounded=True)))
        if not np.all(np.isfinite(value)):
            raise _NotFinite
        # scaled to a unit diagonal (same rank; no overflow in the eigen-solver, and rows of
        # very different sizes, e.g. a contact point far from its body, do not read as null)
        diagonal = np.sqrt(np.diag(value))
        scale = np.where(diagonal > 0, 1 / np.where(diagonal > 0, diagonal, 1), 1.0)
        values, vectors = np.linalg.eigh(value * scale[:, None] * scale[None, :])
        if values[0] > tolerance * max(values[-1], 1e-300):
            return None
    null = values <= tolerance * max(values[-1], 1e-300)
    return np.abs(vectors[:, null]).max(axis=1)


class _NotFinite(Exception):
    """A matrix :func:`null_vector` was to check has a non-finite entry."""


def singular_joints(model: Model) -> tuple[str, ...]:
    """The joints of a motion that moves no mass, where ``M`` is singular at two random
    configurations (empty where it is regular): the one singularity check of casdyn."""
    if model.nv == 0:
        return ()
    q = SX.sym("q", model.nq)
    null = null_vector(model, q, dynamics.crba(model, q), 1e-12)
    if null is None:
        return ()
    return tuple(j.name for j in model.joints if np.any(
        null[j.idx_v : j.idx_v + j.type.nv] > 0.1 * null.max()))
