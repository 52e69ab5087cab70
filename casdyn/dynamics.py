"""Dynamics algorithms over a :class:`casdyn.model.Model`, as CasADi SX expressions.

Each works in body coordinates: RNEA (Featherstone, RBDA 2008, table 5.1, with the classical
accelerations of Luh, Walker & Paul 1980 in its forward pass), ABA (RBDA table 7.1) and CRBA
(RBDA table 6.2). Gravity enters as a fictitious base acceleration ``-g``. They are exact for
any model; :mod:`casdyn.functions` runs them on the grouped model of :mod:`casdyn.grouping`.
External forces are base-frame spatial forces about the base origin (MATLAB's convention);
:func:`external_torque` maps them to joint space, and the two dynamics functions use it.
"""

from __future__ import annotations

import casadi as ca

from .kinematics import base_poses, joint_states
from .model import Model
from .spatial import (
    SX,
    BodyInertia,
    FrameMotion,
    RigidInertia,
    articulated_update,
    cross_motion,
)


def gravity_acceleration(model: Model) -> SX:
    """The fictitious base acceleration ``[0; -g]`` that stands for gravity (RBDA sec. 5.3)."""
    return ca.vertcat(SX.zeros(3, 1), SX(-model.gravity.reshape(3, 1)))


def rnea(model: Model, q: SX, qd: SX, qdd: SX, base_acceleration: SX | None = None) -> SX:
    """Inverse dynamics ``M qdd + C qd + g`` (nv x 1), without external forces.

    ``base_acceleration`` (6 x 1, base frame) defaults to gravity's ``[0; -g]``. The forward
    pass carries classical accelerations (:class:`casdyn.spatial.FrameMotion`), which need no
    linear velocities; the body forces and the backward pass are as in the spatial form.
    """
    states = joint_states(model, q)
    a_base = gravity_acceleration(model) if base_acceleration is None else base_acceleration
    base = FrameMotion(SX.zeros(3, 1), a_base[:3], a_base[3:])
    n = model.nq
    motion: list = [None] * n  # body motions, body frames
    f: list = [None] * n  # body forces, body frames
    for i in model.order:
        parent = model.joints[i].parent
        motion[i] = states[i].propagate(base if parent < 0 else motion[parent], qd[i], qdd[i])
        f[i] = BodyInertia(model.joints[i].inertia).force(motion[i])
    tau = SX.zeros(n, 1)
    for i in reversed(model.order):
        parent = model.joints[i].parent
        tau[i] = states[i].project(f[i])
        if parent >= 0:
            f[parent] = f[parent] + states[i].force_to_parent(f[i])
    return tau


def aba(model: Model, q: SX, qd: SX, tau: SX) -> SX:
    """Forward dynamics ``M^-1 (tau - C qd - g)`` (nv x 1), without external forces."""
    states = joint_states(model, q)
    n = model.nq
    v: list = [None] * n  # body velocities, body frames
    c: list = [None] * n  # velocity-product accelerations, body frames
    IA: list = [None] * n  # articulated-body inertias (6x6), body frames
    pA: list = [None] * n  # articulated bias forces, body frames
    for i in model.order:
        X, parent = states[i], model.joints[i].parent
        inertia = RigidInertia.constant(model.joints[i].inertia)
        vJ = X.S(qd[i])
        if parent < 0:
            v[i], c[i] = vJ, SX.zeros(6, 1)
        else:
            v[i] = X.motion_to_child(v[parent]) + vJ
            c[i] = cross_motion(v[i], vJ)
        IA[i] = inertia.articulated()
        pA[i] = BodyInertia(model.joints[i].inertia).bias_force(v[i])
    U: list = [None] * n
    d: list = [None] * n
    u: list = [None] * n
    for i in reversed(model.order):
        X, parent = states[i], model.joints[i].parent
        k = X.index
        U[i] = X.column(IA[i])
        d[i] = U[i][k]
        u[i] = tau[i] - X.project(pA[i])
        if parent >= 0:
            Ud = U[i] / d[i]
            Ia = articulated_update(IA[i], U[i], Ud, k)
            pa = pA[i] + ca.mtimes(Ia, c[i]) + Ud * u[i]
            IA[parent] = IA[parent] + X.articulated_to_parent(Ia)
            pA[parent] = pA[parent] + X.force_to_parent(pa)
    a_base = gravity_acceleration(model)
    a: list = [None] * n
    qdd = SX.zeros(n, 1)
    for i in model.order:
        X, parent = states[i], model.joints[i].parent
        a_prime = X.motion_to_child(a_base if parent < 0 else a[parent]) + c[i]
        qdd[i] = (u[i] - ca.dot(U[i], a_prime)) / d[i]
        a[i] = a_prime + X.S(qdd[i])
    return qdd


def crba(model: Model, q: SX) -> SX:
    """The joint-space mass matrix ``M(q)`` (nv x nv, symmetric).

    Composite inertias are accumulated in body frames (RBDA table 6.2). The entries above
    the diagonal, ``M_ji = S_j^T F_i`` for the ancestors j of i with ``F_i = Ic_i S_i``, are
    found either by carrying ``F_i`` up the tree one transform per ancestor (the book's way)
    or, in deep trees, by moving ``F_i`` to the base frame once and taking dot products with
    the base-frame joint axes: about 11 operations per pair instead of a transform's 35, for
    a per-joint overhead (base poses, one transform) of about 100.
    """
    states = joint_states(model, q)
    n = model.nq
    composite = [RigidInertia.constant(joint.inertia) for joint in model.joints]
    for i in reversed(model.order):
        parent = model.joints[i].parent
        if parent >= 0:
            composite[parent] = composite[parent] + states[i].rigid_inertia_to_parent(
                composite[i]
            )
    in_base = crba_in_base_frame(model)
    if in_base:
        poses = base_poses(model, states)
        axes = [_base_axis(states[j], poses[j]) for j in range(n)]
    M = SX.zeros(n, n)
    for i in range(n):
        F = composite[i].apply(states[i].S(1))  # force for a unit rate of joint i
        M[i, i] = states[i].project(F)
        ancestors = model.support(i)[1:]
        if in_base and ancestors:
            F_base = poses[i].force_to_parent(F)
            for j in ancestors:
                M[i, j] = M[j, i] = ca.dot(axes[j], F_base)
        elif ancestors:
            child = i
            for j in ancestors:
                F = states[child].force_to_parent(F)
                M[i, j] = M[j, i] = states[j].project(F)
                child = j
    return M


def crba_in_base_frame(model: Model) -> bool:
    """Whether :func:`crba` takes the base-frame route: when the joint-ancestor pairs, at
    35 - 11 operations saved each, outweigh the per-joint overhead of about 100."""
    pairs = sum(len(model.support(i)) - 1 for i in range(model.nq))
    return pairs * (35 - 11) > 100 * model.nq


def _base_axis(state, pose) -> SX:
    """The joint's motion subspace in the base frame: ``[z; p x z]`` or ``[0; z]``."""
    z = pose.R[:, 2]
    return ca.vertcat(z, ca.cross(pose.p, z)) if state.revolute else ca.vertcat(SX.zeros(3, 1), z)


def external_torque(model: Model, q: SX, fext: SX) -> SX:
    """``sum_b J_b^T fext_b`` (nv x 1): the joint torques produced by external forces.

    ``fext`` is ``n_bodies x 6``; row b is a spatial force ``[n; f]`` on body b in the base
    frame, moment about the base origin. Being in one frame, the rows of a subtree just add;
    joint i then takes the component along its base-frame axis ``S_i = [z; p x z]``.
    """
    F = [SX.zeros(6, 1) for _ in model.joints]
    for b, body in enumerate(model.bodies):
        if body.joint >= 0:
            F[body.joint] = F[body.joint] + fext[b, :].T
    for i in reversed(model.order):
        parent = model.joints[i].parent
        if parent >= 0:
            F[parent] = F[parent] + F[i]
    states = joint_states(model, q)
    poses = base_poses(model, states)
    Q = SX.zeros(model.nq, 1)
    for i in range(model.nq):
        z, p = poses[i].R[:, 2], poses[i].p
        n, f = F[i][:3], F[i][3:]
        Q[i] = ca.dot(z, n - ca.cross(p, f)) if states[i].revolute else ca.dot(z, f)
    return Q
