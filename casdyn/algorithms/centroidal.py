"""Centroidal momentum and energy (docs: "Task space and contacts").

The centroidal momentum ``h_G = [k_G; l]`` is the robot's angular momentum about its centre
of mass and its linear momentum, base-frame axes (Orin, Goswami & Lee, "Centroidal dynamics
of a humanoid robot", Autonomous Robots 2013; angular part first, as every spatial vector
here, where Pinocchio puts the linear part first). It is found about the base origin, where
the bodies' momenta simply add, and then moved to the centre of mass:
``k_G = k_O - c x l``. These run on the model's true inertias (the reframed model), not on
the grouped ones the joint-space dynamics use, whose body momenta differ.
"""

from __future__ import annotations

from collections.abc import Sequence

import casadi as ca

from ..math.spatial import SX, RigidInertia
from ..model.tree import Model
from .dynamics import body_forces, body_velocities
from .kinematics import base_poses, center_of_mass, joint_states, total_mass


def _about_com(c: SX, h_O: SX) -> SX:
    """Spatial momenta (or their rates), base frame about the base origin (6 x k), moved to
    the centre of mass ``c``: ``[k - c x l; l]``, column by column."""
    columns = [ca.vertcat(h_O[:3, k] - ca.cross(c, h_O[3:, k]), h_O[3:, k])
               for k in range(h_O.size2())]
    return ca.horzcat(*columns)


def _to_base(model: Model, states: Sequence, per_body: list[SX]) -> SX:
    """The sum of body-frame forces (or momenta), one per joint's body, as one base-frame
    force about the base origin (6 x 1)."""
    totals = model.subtree_sums(per_body, lambda i, f: states[i].force_to_parent(f))
    total = SX.zeros(6, 1)
    for i, joint in enumerate(model.joints):
        if joint.parent < 0:
            total = total + states[i].force_to_parent(totals[i])
    return total


def centroidal_momentum_matrix(model: Model, q: SX) -> SX:
    """``A_G`` (6 x nv) with ``A_G qd = h_G``. Column block of joint i: the momentum of its
    subtree, composite inertia ``Ic_i`` (RBDA table 6.2), moving with ``S_i``; that is
    ``F = Ic_i S_i`` in i's frame, turned into base-frame axes (``R``) and taken about the
    centre of mass ``c``: ``[R n + (p_i - c) x R f; R f]``. The centre of mass comes from
    the composite inertias of the root joints, which hold every moving body's first moment."""
    states = joint_states(model, q)
    composite = model.subtree_sums(
        [RigidInertia.constant(joint.inertia) for joint in model.joints],
        lambda i, inertia: states[i].rigid_inertia_to_parent(inertia))
    poses = base_poses(model, states)
    moment = SX(model.base_inertia.first_moment.reshape(3, 1))
    for i, joint in enumerate(model.joints):
        if joint.parent < 0:
            moment = moment + ca.mtimes(poses[i].R, composite[i].h) + composite[i].m * poses[i].p
    c = moment / total_mass(model)
    A = SX.zeros(6, model.nv)
    for i, state in enumerate(states):
        nv, R = state.type.nv, poses[i].R
        arm = poses[i].p - c
        columns = []
        for unit in [1] if nv == 1 else [SX.eye(nv)[:, k] for k in range(nv)]:
            F = composite[i].apply(state.S(unit))
            f = ca.mtimes(R, F[3:])
            columns.append(ca.vertcat(ca.mtimes(R, F[:3]) + ca.cross(arm, f), f))
        state.put(A, ca.horzcat(*columns), slice(0, 6))
    return A


def _momenta(model: Model, velocities: list[SX]) -> list[SX]:
    """Each body's spatial momentum ``I_i v_i`` in its own frame, for its velocity ``v_i``."""
    return [RigidInertia.constant(joint.inertia).apply(v)
            for joint, v in zip(model.joints, velocities, strict=True)]


def centroidal_momentum(model: Model, q: SX, qd: SX) -> SX:
    """``h_G = A_G qd`` (6 x 1), from the bodies' momenta without forming ``A_G``."""
    states = joint_states(model, q)
    momenta = _momenta(model, body_velocities(model, states, qd))
    return _about_com(center_of_mass(model, q)[0], _to_base(model, states, momenta))


def centroidal_momentum_bias(model: Model, q: SX, qd: SX) -> SX:
    """``Adot_G qd`` (6 x 1): the rate of change of ``h_G`` at ``qdd = 0``. About the fixed
    base origin the momentum changes at the sum of the bodies' net forces (RNEA's body
    forces without gravity), and ``d/dt (k_O - c x l) = dk_O/dt - c x dl/dt`` since the
    centre of mass moves along ``l``."""
    states = joint_states(model, q)
    zero = SX.zeros(model.nv, 1)
    forces = body_forces(model, states, qd, zero, SX.zeros(6, 1))
    return _about_com(center_of_mass(model, q)[0], _to_base(model, states, forces))


def kinetic_energy(model: Model, q: SX, qd: SX) -> SX:
    """``qd^T M qd / 2`` (scalar) as the sum of the bodies' ``v_i . I_i v_i / 2``."""
    states = joint_states(model, q)
    velocities = body_velocities(model, states, qd)
    momenta = _momenta(model, velocities)
    return 0.5 * sum((ca.dot(v, h) for v, h in zip(velocities, momenta, strict=True)), SX(0))


def potential_energy(model: Model, q: SX) -> SX:
    """``-m g . c`` (scalar), zero with the centre of mass at the base origin."""
    c, _ = center_of_mass(model, q)
    return -total_mass(model) * ca.dot(SX(model.gravity.reshape(3, 1)), c)
