"""Dynamics algorithms over a :class:`casdyn.model.tree.Model`, as CasADi SX expressions.

Each works in body coordinates: RNEA (Featherstone, RBDA 2008, table 5.1, with the classical
accelerations of Luh, Walker & Paul 1980 in its forward pass), ABA (RBDA table 7.1, with the
same classical accelerations) and CRBA (RBDA table 6.2). Gravity enters as a fictitious base
acceleration ``-g``. They are exact for any model; :mod:`casdyn.functions` runs them on the
grouped model of :mod:`casdyn.model.grouping`. External forces are base-frame spatial forces about
the base origin (MATLAB's convention); :func:`external_torque` maps them to joint space, and
the two dynamics functions use it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import casadi as ca

from ..errors import ModelError
from ..math.factorization import TreeLDLT
from ..math.spatial import SX, BodyInertia, FrameMotion, RigidInertia, Transform
from ..model.tree import Model
from .kinematics import base_poses, joint_states


def gravity_acceleration(model: Model) -> SX:
    """The fictitious base acceleration ``[0; -g]`` that stands for gravity (RBDA sec. 5.3)."""
    return ca.vertcat(SX.zeros(3, 1), SX(-model.gravity.reshape(3, 1)))


def rnea(model: Model, q: SX, qd: SX, qdd: SX, base_acceleration: SX | None = None) -> SX:
    """Inverse dynamics ``M qdd + C qd + g`` (nv x 1), without external forces.

    ``base_acceleration`` (6 x 1, base frame) defaults to gravity's ``[0; -g]``. The forward
    pass carries classical accelerations (:class:`casdyn.math.spatial.FrameMotion`), which need no
    linear velocities; the body forces and the backward pass are as in the spatial form.
    """
    states = joint_states(model, q)
    a_base = gravity_acceleration(model) if base_acceleration is None else base_acceleration
    f = body_forces(model, states, qd, qdd, a_base)
    tau = SX.zeros(model.nv, 1)
    for i in reversed(model.order):
        joint, state = model.joints[i], states[i]
        torque = state.project(f[i])
        if present(joint.armature):  # a rotor's inertia, on the joint's own rates
            torque = torque + joint.armature * state.rates(qdd) \
                + armature_rate_bias(joint, state, qd)
        state.put(tau, torque)
        if joint.parent >= 0:
            f[joint.parent] = f[joint.parent] + state.force_to_parent(f[i])
    return tau


def body_forces(model: Model, states: Sequence, qd: SX, qdd: SX, a_base: SX) -> list[SX]:
    """RNEA's forward pass: the force ``[n; f]`` (body frame, about its origin) that gives
    each body the motion of the rates ``qd`` and accelerations ``qdd`` over a base that
    accelerates with ``a_base`` (6 x 1, base frame)."""
    base = FrameMotion(SX.zeros(3, 1), a_base[:3], a_base[3:])
    n = len(model.joints)
    body_motion: list = [None] * n  # body motions, body frames
    f: list = [None] * n  # body forces, body frames
    for i in model.order:
        joint, state = model.joints[i], states[i]
        parent_motion = base if joint.parent < 0 else body_motion[joint.parent]
        body_motion[i] = state.propagate(parent_motion, state.rates(qd), state.rates(qdd))
        f[i] = BodyInertia(joint.inertia).force(body_motion[i])
    return f


def body_velocities(model: Model, states: Sequence, qd: SX) -> list[SX]:
    """Each body's spatial velocity ``[w; v]`` in its own frame (``v``: of its origin)."""
    v: list = [None] * len(model.joints)
    for i in model.order:
        state, parent = states[i], model.joints[i].parent
        vJ = state.S(state.rates(qd))
        v[i] = vJ if parent < 0 else state.motion_to_child(v[parent]) + vJ
    return v


def forward_dynamics(model: Model, q: SX, qd: SX, tau: SX) -> SX:
    """Forward dynamics ``M^-1 (tau - C qd - g)`` (nv x 1), without external forces: by
    :func:`aba`, or where mimic joints couple branches (which ABA's recursion cannot), by
    :func:`factorized_forward_dynamics`."""
    if not model.has_mimic_joints:
        return aba(model, q, qd, tau)
    return factorized_forward_dynamics(model, q, qd, tau)


def factorized_forward_dynamics(model: Model, q: SX, qd: SX, tau: SX,
                                factors: TreeLDLT | None = None) -> SX:
    """``M^-1 (tau - C qd - g)`` by the tree-sparse ``M = L^T D L`` (RBDA sec. 6.5) of
    :func:`crba`'s mass matrix (or the given ``factors`` of ``M``) and :func:`rnea`'s bias:
    exact for any model, mimic joints included; on short-limbed floating robots (quadrupeds)
    a smaller graph than ABA's."""
    if factors is None:
        factors = TreeLDLT(crba(model, q), velocity_order(model))
    bias = rnea(model, q, qd, SX.zeros(model.nv, 1))
    return factors.solve(tau - bias)


def velocity_order(model: Model) -> list[int]:
    """The velocity indices with every joint's after its ancestors' (mimic joints have
    none of their own): the order in which ``M = L^T D L`` has no fill-in."""
    order = []
    for i in model.order:
        joint = model.joints[i]
        if joint.mimic is None:
            order += list(range(joint.idx_v, joint.idx_v + joint.type.nv))
    return order


def aba(model: Model, q: SX, qd: SX, tau: SX) -> SX:
    """Forward dynamics ``M^-1 (tau - C qd - g)`` (nv x 1), without external forces, for a
    model without mimic joints.

    RBDA table 7.1 with classical accelerations (as :func:`rnea`'s forward pass): with
    ``a = a_cl - [0; w x v]``, the recursion keeps its form for ``a_cl``, the velocity-product
    term ``c_cl`` (a joint's classical acceleration at rest over a parent at rest turning with
    ``w_p``) and the bias ``pA_cl = [w x I w; w x (w x h)]``. These need the angular
    velocities only, no linear ones, and the bias is the cheaper Newton-Euler form: about 5 %
    fewer instructions on humanoids.
    """
    if model.has_mimic_joints:
        raise ModelError(f"ABA does not take mimic joints ({model.name!r} has some)")
    states = joint_states(model, q)
    n = len(model.joints)
    zero = SX.zeros(3, 1)
    w: list = [None] * n  # angular velocities, body frames
    c: list = [None] * n  # velocity-product accelerations (classical), body frames
    IA: list = [None] * n  # articulated-body inertias (6x6), body frames
    pA: list = [None] * n  # articulated bias forces (classical), body frames
    for i in model.order:
        state, parent = states[i], model.joints[i].parent
        rates = state.rates(qd)
        at_rest = state.propagate(FrameMotion(zero if parent < 0 else w[parent], zero, zero),
                              rates, SX.zeros(rates.shape))
        w[i], c[i] = at_rest.w, ca.vertcat(at_rest.alpha, at_rest.origin)
        IA[i] = RigidInertia.constant(model.joints[i].inertia).articulated()
        pA[i] = BodyInertia(model.joints[i].inertia).force(FrameMotion(w[i], zero, zero))
    articulation: list = [None] * n
    for i in reversed(model.order):
        state, parent = states[i], model.joints[i].parent
        articulation[i] = state.type.articulate(
            IA[i], tau[state.v] - state.project(pA[i])
            - armature_rate_bias(model.joints[i], state, qd), model.joints[i].armature)
        if parent >= 0:
            Ia, pa = articulation[i].handed_on(IA[i], pA[i], c[i])
            IA[parent] = IA[parent] + state.articulated_to_parent(Ia)
            pA[parent] = pA[parent] + state.force_to_parent(pa)
    a_base = gravity_acceleration(model)
    a: list = [None] * n
    qdd = SX.zeros(model.nv, 1)
    for i in model.order:
        state, parent = states[i], model.joints[i].parent
        a_prime = state.motion_to_child(a_base if parent < 0 else a[parent]) + c[i]
        qdd[state.v] = articulation[i].acceleration(a_prime)
        a[i] = articulation[i].body_acceleration(a_prime, state.S(qdd[state.v]))
    return qdd


def crba(model: Model, q: SX) -> SX:
    """The joint-space mass matrix ``M(q)`` (nv x nv, symmetric).

    Composite inertias are accumulated in body frames (RBDA table 6.2). The entries above
    the diagonal, ``M_ji = S_j^T F_i`` for the ancestors j of i with ``F_i = Ic_i S_i``, are
    found either by carrying ``F_i`` up the tree one transform per ancestor (the book's way)
    or, in deep trees, by moving ``F_i`` to the base frame once and taking dot products with
    the base-frame joint axes: about 11 operations per pair instead of a transform's 35, for
    a per-joint overhead (base poses, one transform) of about 100.

    ``M`` does not depend on a free root joint's coordinates (velocities are body twists):
    its motion is left out, and "base frame" above is then the root body's frame. Entries
    between joints on different branches are structural zeros (RBDA sec. 6.5): the generated
    C neither computes nor stores them.
    """
    states = joint_states(model, q)
    states = [replace(state, XJ=Transform.identity())
              if model.joints[i].parent < 0 and state.type.nv == 6 else state
              for i, state in enumerate(states)]
    n = len(model.joints)
    composite = model.subtree_sums(
        [RigidInertia.constant(joint.inertia) for joint in model.joints],
        lambda i, inertia: states[i].rigid_inertia_to_parent(inertia))
    in_base = crba_in_base_frame(model)
    if in_base:
        poses = base_poses(model, states)
        axes = [states[j].type.axes(poses[j]).subspace() for j in range(n)]
    M = SX(model.nv, model.nv)

    def put(j: int, column: int, block: SX, factor: float, mirror: bool) -> None:
        """``M[v_j, column] += factor * block`` (and the mirrored entries): with mimic
        joints every pair of joints adds ``k_i k_j`` times its block to its leaders'
        entries; without, every entry is written once, onto a structural zero."""
        rows = states[j].v
        M[rows, column] = M[rows, column] + factor * block
        if mirror:
            M[column, rows] = M[column, rows] + factor * block.T

    for i in range(n):
        # the force for a unit rate of each of joint i's velocities, one column each
        columns = states[i].columns
        units = [1] if len(columns) == 1 else [SX.eye(len(columns))[:, k]
                                                for k in range(len(columns))]
        k_i = states[i].factor
        ancestors = model.support(i)[1:]
        for unit, column in zip(units, columns, strict=True):
            F = composite[i].apply(states[i].S(unit))
            put(i, column, states[i].project(F), k_i * k_i, False)
            if in_base and ancestors:
                F_base = poses[i].force_to_parent(F)
                for j in ancestors:
                    block = states[j].type.along(axes[j], F_base)
                    put(j, column, block, k_i * states[j].factor, True)
            elif ancestors:
                child = i
                for j in ancestors:
                    F = states[child].force_to_parent(F)
                    put(j, column, states[j].project(F), k_i * states[j].factor, True)
                    child = j
    for i, joint in enumerate(model.joints):
        if present(joint.armature):  # on the diagonal, once per dof
            v = states[i].v
            M[v, v] = M[v, v] + joint.armature * SX.eye(states[i].type.nv)
    return M


def present(value) -> bool:
    """Whether a joint-space coefficient (armature, damping, friction) adds anything: a
    symbol always, a number if it is not zero (so that absent terms cost nothing)."""
    return isinstance(value, SX) or value != 0


def armature_rate_bias(joint, state, qd: SX) -> SX | float:
    """The velocity term of a free joint's rotor inertia: ``armature [0; w x v]`` for its
    rates ``[w; v]`` (0 for other joints, or without armature). MuJoCo puts a free joint's
    armature on the rate of its ``qvel``, whose linear part is the world-frame velocity
    ``R v``; ``d(R v)/dt = R (v' + w x v)``, so in casdyn's body twist the rotor force is
    ``armature (a + [0; w x v])``."""
    if state.type.nv != 6 or not present(joint.armature):
        return 0.0
    rates = state.rates(qd)
    return joint.armature * ca.vertcat(SX.zeros(3, 1), ca.cross(rates[:3], rates[3:]))


def armature_bias(model: Model, q: SX, qd: SX) -> SX:
    """:func:`armature_rate_bias` of every joint (nv x 1), zero without free-joint armature."""
    tau = SX.zeros(model.nv, 1)
    states = joint_states(model, q)
    for joint, state in zip(model.joints, states, strict=True):
        if state.type.nv == 6 and present(joint.armature):
            state.put(tau, armature_rate_bias(joint, state, qd))
    return tau


def friction_torque(model: Model, q: SX, qd: SX) -> SX:
    """``d qd + c tanh(qd / friction_smoothing)`` (nv x 1) of the joints' viscous (``d``) and
    Coulomb (``c``) friction, where the model has joint friction; a mimic joint's on its own
    rate, handed to its leader times its multiplier. Zero without."""
    tau = SX.zeros(model.nv, 1)
    if not model.joint_friction:
        return tau
    states = joint_states(model, q)
    for joint, state in zip(model.joints, states, strict=True):
        if present(joint.damping) or present(joint.friction):
            rate = state.rates(qd)  # a ball's or free joint's: each of its rates
            state.put(tau, joint.damping * rate
                      + joint.friction * ca.tanh(rate / model.friction_smoothing))
    return tau


def crba_in_base_frame(model: Model) -> bool:
    """Whether :func:`crba` takes the base-frame route: when the joint-ancestor pairs, at
    35 - 11 operations saved each, outweigh the per-joint overhead of about 100."""
    pairs = sum(len(model.support(i)) - 1 for i in range(len(model.joints)))
    return pairs * (35 - 11) > 100 * len(model.joints)


def subtree_external_forces(model: Model, fext: SX) -> list[SX]:
    """Per joint, the sum (6 x 1, base frame, about the base origin) of the external forces
    ``fext`` (n_bodies x 6) on the bodies it carries: its own and every joint's below."""
    F = [SX.zeros(6, 1) for _ in model.joints]
    for b, body in enumerate(model.bodies):
        if body.joint >= 0:
            F[body.joint] = F[body.joint] + fext[b, :].T
    return model.subtree_sums(F)


def external_torque(model: Model, q: SX, fext: SX) -> SX:
    """``sum_b J_b^T fext_b`` (nv x 1): the joint torques produced by external forces.

    ``fext`` is ``n_bodies x 6``; row b is a spatial force ``[n; f]`` on body b in the base
    frame, moment about the base origin. Being in one frame, the rows of a subtree just add;
    joint i then takes the components along its base-frame motion subspace.
    """
    F = subtree_external_forces(model, fext)
    states = joint_states(model, q)
    poses = base_poses(model, states)
    Q = SX.zeros(model.nv, 1)
    for i, state in enumerate(states):
        state.put(Q, state.type.axes(poses[i]).project(F[i]))
    return Q
