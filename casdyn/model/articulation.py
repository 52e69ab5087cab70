"""A joint's step of the articulated-body algorithm (RBDA table 7.1): ``U = IA S``,
``D = S^T IA S`` and ``u = tau - S^T pA``, in the forms the joint types give it — general
(factorised ``D``), scalar for 1-dof joints, and the free joint's, whose ``S`` is the
identity."""

from __future__ import annotations

from functools import cached_property

import casadi as ca

from ..math.factorization import LDLT
from ..math.spatial import SX, articulated_update, reciprocal, symmetrized


class Articulation:
    """A joint's step of ABA: ``U = IA S``, ``D = S^T IA S`` (factorised) and
    ``u = tau - S^T pA``."""

    def __init__(self, U: SX, D: SX, u: SX):
        self.U, self.D, self.u = U, LDLT(D), u

    def handed_on(self, IA: SX, pA: SX, c: SX) -> tuple[SX, SX]:
        """``(Ia, pa)``: what the parent body sees, ``IA - U D^-1 U^T`` and
        ``pA + Ia c + U D^-1 u`` (RBDA eq. 7.41-7.42), in this body's frame."""
        Ia = symmetrized(IA - ca.mtimes(self.U, self.D.solve(self.U.T)))
        return Ia, pA + ca.mtimes(Ia, c) + ca.mtimes(self.U, self.D.solve(self.u))

    def acceleration(self, a_prime: SX) -> SX:
        """``qdd = D^-1 (u - U^T a')`` for the body's acceleration ``a'`` before the joint's."""
        return self.D.solve(self.u - ca.mtimes(self.U.T, a_prime))

    def body_acceleration(self, a_prime: SX, S_qdd: SX) -> SX:
        """The body's spatial acceleration ``a' + S qdd``."""
        return a_prime + S_qdd


class ScalarArticulation(Articulation):
    """One dof along row ``k``: ``D = U[k]`` is a number and ``Ia`` has row and column k
    exactly zero; with a rotor inertia ``armature``, ``D = U[k] + armature`` and they are
    not."""

    def __init__(self, U: SX, u: SX, k: int, armature=0.0):
        self.U, self.u, self.k = U, u, k
        self.armature = armature if isinstance(armature, SX) or armature != 0 else None
        self.D = U[k] if self.armature is None else U[k] + armature
        self.D_inv = reciprocal(self.D)

    def handed_on(self, IA: SX, pA: SX, c: SX) -> tuple[SX, SX]:
        Ud = self.U * self.D_inv
        if self.armature is None:
            Ia = articulated_update(IA, self.U, Ud, self.k)
        else:
            Ia = symmetrized(IA - ca.mtimes(self.U, Ud.T))
        return Ia, pA + ca.mtimes(Ia, c) + Ud * self.u

    def acceleration(self, a_prime: SX) -> SX:
        return (self.u - ca.dot(self.U, a_prime)) * self.D_inv


class FreeArticulation(Articulation):
    """Six dofs, ``S = 1``: ``U = D = IA``, so the parent sees no inertia (``Ia = 0``) but
    the joint's own force ``pA + u``, and ``qdd = IA^-1 u - a'``."""

    def __init__(self, IA: SX, u: SX):
        super().__init__(IA, IA, u)

    def handed_on(self, IA: SX, pA: SX, c: SX) -> tuple[SX, SX]:
        return SX.zeros(6, 6), pA + self.u

    @cached_property
    def _solved(self) -> SX:
        return self.D.solve(self.u)

    def acceleration(self, a_prime: SX) -> SX:
        return self._solved - a_prime

    def body_acceleration(self, a_prime: SX, S_qdd: SX) -> SX:
        """``IA^-1 u`` itself, not ``a' + (IA^-1 u - a')``."""
        return self._solved
