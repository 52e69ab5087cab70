"""Analytical derivatives of inverse dynamics with respect to ``q`` and ``qd``.

The recursions of Carpentier & Mansard ("Analytical derivatives of rigid body dynamics
algorithms", RSS 2018), derived here in the base frame for joints whose motion-subspace
columns are fixed in their child body (revolute, prismatic, planar and free joints; a
derivative along ``q`` is the tangent-space one, ``q ⊕ dv``).

Moving a coordinate ``d`` of joint ``j`` (base-frame column ``s``) moves j's subtree
rigidly with the twist ``s``. With ``λ`` the body j hangs from, every body ``i`` below gets

* ``d v_i = s x v_i - w``, ``w = s x v_λ``;
* ``d a_i = s x a_i - s x a_λ - w x (v_i - v_λ)``;
* ``d f_i = s x* f_i - I_i α - B_i w``, ``α = s x a_λ + v_λ x w``, with the body force
  ``f_i = I_i a_i + v_i x* I_i v_i`` and ``B_i w = I_i (w x v_i) + w x* (I_i v_i) +
  v_i x* (I_i w)``.

The rigid part ``s x* f`` cancels against the turn of the subspace columns of the joints
below j, so with composite (subtree) sums ``Ic``, ``Bc``, ``Fc`` and the external forces'
``Fext``:

* for a column ``S_c`` of a joint ``i`` at or below j:
  ``dtau_c/dq_d = -(Ic_i S_c) . α - (Bc_i^T S_c) . w - s . (S_c x* Fext_i)``;
* for a column of a joint above j: ``dtau_c/dq_d = S_c . (s x* Fc_j - Ic_j α - Bc_j w)``.

The rates move ``v_i`` by ``s`` and ``a_i`` by ``s x v_i + β``, ``β = (v_j + v_λ) x s``, so
``d f_i = B_i s + I_i β``, and the same two cases give ``dtau/dqd`` from
``(Ic_i S_c) . β + (Bc_i^T S_c) . s`` and ``S_c . (Bc_j s + Ic_j β)``. Each pair of
columns costs a few dot products of 6-vectors, instead of AD's pass through the subtree.

``d tau / d qdd`` is the mass matrix, ``M_ab = S_a . (Ic_i S_b)`` for a column ``a`` of a
joint at or above the joint ``i`` of column ``b``: one more dot product per pair from the
same composite inertias (RBDA eq. 6.26 in the base frame), cheaper than a separate CRBA.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import casadi as ca

from ..math.factorization import TreeLDLT
from ..math.spatial import SX, RigidInertia, cross_motion, skew
from ..model.tree import Model
from .dynamics import subtree_external_forces
from .kinematics import base_poses, joint_states


def cross_force(v: SX, f: SX) -> SX:
    """``v x* f`` for a motion ``v`` and a force ``f`` (RBDA eq. 2.32)."""
    w, u = v[:3], v[3:]
    return ca.vertcat(ca.cross(w, f[:3]) + ca.cross(u, f[3:]), ca.cross(w, f[3:]))


def _coriolis_block(inertia: RigidInertia, v: SX, momentum: SX) -> SX:
    """``P``: a body's operator ``B w = I (w x v) + w x* (I v) + v x* (I w)`` sees only the
    angular part ``w_a`` of ``w``, ``B w = [P w_a; 2 w_a x l]`` with ``l`` the linear part of
    the momentum ``[n; l] = I v`` (for ``w = [0; u]`` the three terms cancel). With
    ``v = [ω; u]`` and ``I = [I_o, h x; (h x)^T, m]``:
    ``P = ω x I_o - I_o ω x - u x h x - h x u x - n x``."""
    w, u = v[:3], v[3:]
    K = ca.mtimes(skew(w), inertia.I)
    uh = ca.mtimes(inertia.h, u.T)
    return K + K.T - uh - uh.T + 2 * ca.dot(u, inertia.h) * SX.eye(3) - skew(momentum[:3])


class Partials(NamedTuple):
    """The partial derivatives of inverse dynamics (nv x nv each)."""

    dq: SX  # in the tangent space
    dqd: SX
    dqdd: SX  # the mass matrix, rotor inertias (armature) included


def rnea_derivatives(model: Model, q: SX, qd: SX, qdd: SX, a_base: SX,
                     fext: SX | None = None) -> Partials:
    """``d/d(q, qd, qdd)`` of ``rnea(model, q, qd, qdd, a_base)`` minus
    ``external_torque(model, q, fext)`` (``fext`` n_bodies x 6 or None), for a model
    without mimic joints."""
    states = joint_states(model, q)
    poses = base_poses(model, states)
    n = len(model.joints)
    S = [states[i].type.axes(poses[i]).subspace() for i in range(n)]  # 6 x nv_i, base frame
    v: list = [None] * n  # body velocities, base frame
    a: list = [None] * n  # spatial accelerations (not classical), base frame
    inertia: list = [None] * n  # body inertias about the base origin, base axes
    f: list = [None] * n  # body forces, base frame
    P: list = [None] * n  # angular blocks of the bodies' B (see _coriolis_block)
    momentum: list = [None] * n  # linear momenta, base frame
    for i in model.order:
        parent = model.joints[i].parent
        vJ = ca.mtimes(S[i], states[i].rates(qd))
        v[i] = vJ if parent < 0 else v[parent] + vJ
        a_parent = a_base if parent < 0 else a[parent]
        a[i] = a_parent + ca.mtimes(S[i], states[i].rates(qdd)) + cross_motion(v[i], vJ)
        inertia[i] = poses[i].rigid_inertia_to_parent(
            RigidInertia.constant(model.joints[i].inertia))
        h = inertia[i].apply(v[i])
        P[i], momentum[i] = _coriolis_block(inertia[i], v[i], h), h[3:]
        f[i] = inertia[i].apply(a[i]) + cross_force(v[i], h)
    Ic = model.subtree_sums(inertia)
    Pc = model.subtree_sums(P)
    Lc = model.subtree_sums(momentum)
    Fc = model.subtree_sums(f)

    def coriolis(i: int, m: SX) -> SX:
        """``Bc_i m`` (6 x 1) for the subtree of joint i."""
        return ca.vertcat(ca.mtimes(Pc[i], m[:3]), 2 * ca.cross(m[:3], Lc[i]))

    Fext = None if fext is None else subtree_external_forces(model, fext)

    below: list[list[int]] = [[] for _ in range(n)]  # each joint and the joints under it
    for i in range(n):
        for j in model.support(i):
            below[j].append(i)
    # per column c of joint i: Ic_i S_c, Bc_i^T S_c and S_c x* Fext_i
    rows = {}
    for i in range(n):
        for k, c in enumerate(states[i].columns):
            s_c = S[i][:, k]
            # Bc_i^T S_c: only its angular part is not zero
            rows[c] = (Ic[i].apply(s_c),
                       ca.mtimes(Pc[i].T, s_c[:3]) + 2 * ca.cross(Lc[i], s_c[3:]),
                       None if Fext is None else cross_force(s_c, Fext[i]))

    dq = SX(model.nv, model.nv)
    dqd = SX(model.nv, model.nv)
    for j in range(n):
        parent = model.joints[j].parent
        v_parent = SX.zeros(6, 1) if parent < 0 else v[parent]
        a_parent = a_base if parent < 0 else a[parent]
        above = model.support(j)[1:]
        for k, d in enumerate(states[j].columns):
            s = S[j][:, k]
            w = cross_motion(s, v_parent)
            alpha = cross_motion(s, a_parent) + cross_motion(v_parent, w)
            beta = cross_motion(v[j] + v_parent, s)
            for i in below[j]:
                for c in states[i].columns:
                    r_inertia, r_coriolis, r_fext = rows[c]
                    dq[c, d] = -(ca.dot(r_inertia, alpha) + ca.dot(r_coriolis, w[:3]))
                    if r_fext is not None:
                        dq[c, d] = dq[c, d] - ca.dot(s, r_fext)
                    dqd[c, d] = ca.dot(r_inertia, beta) + ca.dot(r_coriolis, s[:3])
            if not above:
                continue
            phi = cross_force(s, Fc[j]) - Ic[j].apply(alpha) - coriolis(j, w)
            phi_rate = coriolis(j, s) + Ic[j].apply(beta)
            for i in above:
                for kk, c in enumerate(states[i].columns):
                    dq[c, d] = ca.dot(S[i][:, kk], phi)
                    dqd[c, d] = ca.dot(S[i][:, kk], phi_rate)
    return Partials(dq, dqd, _mass_matrix(model, states, S, rows))


def _mass_matrix(model: Model, states: Sequence, S: list[SX], rows: dict) -> SX:
    """``M`` from each column's ``Ic_i S_c`` (``rows[c][0]``) and the base-frame columns
    ``S`` of the joints at and above its own."""
    M = SX(model.nv, model.nv)
    for i, joint in enumerate(model.joints):
        columns = states[i].columns
        for k, c in enumerate(columns):
            momentum = rows[c][0]
            M[c, c] = ca.dot(S[i][:, k], momentum) + joint.armature
            pairs = [(i, kk, a) for kk, a in enumerate(columns[:k])]
            pairs += [(j, kk, a) for j in model.support(i)[1:]
                      for kk, a in enumerate(states[j].columns)]
            for j, kk, a in pairs:
                M[a, c] = M[c, a] = ca.dot(S[j][:, kk], momentum)
    return M


def forward_from_inverse(partials: list[SX], ldlt: TreeLDLT) -> list[SX]:
    """``[d qdd/dq, d qdd/dqd, d qdd/dtau]`` (nv x nv each) from inverse dynamics' partials
    ``[d ID/dq, d ID/dqd]`` taken at ``qdd = FD(q, qd, tau)`` and the factorisation
    ``M = L^T D L``: differentiating ``ID(q, qd, FD(q, qd, tau)) = tau`` gives
    ``d qdd/dq = -M^-1 d ID/dq``, ``d qdd/dqd = -M^-1 d ID/dqd`` and ``d qdd/dtau = M^-1``
    (Carpentier & Mansard, "Analytical derivatives of rigid body dynamics algorithms",
    RSS 2018). ``M^-1`` is solved for its upper triangle only and mirrored (6-8 % of the
    whole on chain24 and the floating TALOS)."""
    nv = partials[0].shape[0]
    solved = ldlt.solve(ca.horzcat(*partials))
    M_inv = ca.triu(ldlt.solve(SX.eye(nv)))  # symmetric: the lower half mirrors the upper
    return [-solved[:, :nv], -solved[:, nv:], M_inv + ca.triu(M_inv, False).T]
