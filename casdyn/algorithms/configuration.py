"""The configuration space: limits, neutral and random configurations, ``integrate``
(``q ⊕ v``), ``difference`` (``q1 ⊖ q0``) and the tangent map, joint by joint (each joint
type knows its own, :mod:`casdyn.model.joints`)."""

from __future__ import annotations

import casadi as ca
import numpy as np

from ..errors import InputError
from ..math.spatial import SX
from ..model.joints import JOINT_TYPES
from ..model.tree import Model


def neutral(model: Model) -> np.ndarray:
    """Every joint's home coordinates, (nq,)."""
    return _joined([JOINT_TYPES[j.kind].neutral(j) for j in model.coordinate_joints])


def position_limits(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)``, (nq,) each: each joint type's limits."""
    limits = [JOINT_TYPES[j.kind].limits(j) for j in model.coordinate_joints]
    return _joined([low for low, _ in limits]), _joined([high for _, high in limits])


def per_velocity(model: Model, value) -> np.ndarray:
    """(nv,): ``value(joint)`` for each 1-dof joint, inf for each velocity of the others."""
    return _joined([np.array([value(j)]) if JOINT_TYPES[j.kind].nv == 1
                    else np.full(JOINT_TYPES[j.kind].nv, np.inf)
                    for j in model.coordinate_joints])


def random(model: Model, rng: np.random.Generator, bounded: bool = False,
           n: int | None = None) -> np.ndarray:
    """A random configuration, (nq,), or ``n`` of them, (n, nq): each joint's draw from its
    sampling box. Joints that have none (prismatic joints without limits) are an error, or
    with ``bounded`` draw in [-1, 1]."""
    types = [JOINT_TYPES[j.kind] for j in model.coordinate_joints]
    if not types:
        return np.zeros(0) if n is None else np.zeros((n, 0))
    boxes = [_box(t, j, bounded) for t, j in zip(types, model.coordinate_joints, strict=True)]
    low, high = _joined([low for low, _ in boxes]), _joined([high for _, high in boxes])
    sample = rng.uniform(low, high, size=None if n is None else (n, len(low)))
    sizes = np.cumsum([len(low) for low, _ in boxes])[:-1]
    return np.concatenate([t.from_box(part) for t, part in
                           zip(types, np.split(sample, sizes, axis=-1), strict=True)], axis=-1)


def _box(kind, joint, bounded: bool) -> tuple[np.ndarray, np.ndarray]:
    try:
        return kind.sampling_box(joint)
    except InputError:
        if not bounded:
            raise
        return -np.ones(kind.nq), np.ones(kind.nq)


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0)


def integrate(model: Model, q: SX, v: SX) -> SX:
    """``q ⊕ v`` (nq x 1): each joint's coordinates moved with its rates ``v`` (nv x 1) for
    unit time (:meth:`casdyn.model.joints.JointType.integrate`)."""
    parts = []
    for joint in model.coordinate_joints:
        kind = JOINT_TYPES[joint.kind]
        parts.append(kind.integrate(q[joint.idx_q : joint.idx_q + kind.nq],
                                    v[joint.idx_v : joint.idx_v + kind.nv]))
    return ca.vertcat(*parts) if parts else SX.zeros(0, 1)


def difference(model: Model, q0: SX, q1: SX) -> SX:
    """``q1 ⊖ q0`` (nv x 1): the rates that :func:`integrate` takes from ``q0`` to ``q1``."""
    parts = []
    for joint in model.coordinate_joints:
        kind = JOINT_TYPES[joint.kind]
        rows = slice(joint.idx_q, joint.idx_q + kind.nq)
        parts.append(kind.difference(q0[rows], q1[rows]))
    return ca.vertcat(*parts) if parts else SX.zeros(0, 1)


def is_vector_space(model: Model) -> bool:
    """Whether ``integrate`` is plain addition for every joint (then ``nq == nv``)."""
    return all(JOINT_TYPES[joint.kind].vector_space for joint in model.coordinate_joints)


def tangent_map(model: Model, q: SX) -> SX | None:
    """``d integrate(q, v) / dv`` at ``v = 0`` (nq x nv), or None where it is the identity
    (every joint 1-dof): a Jacobian with respect to ``q`` times it is the derivative in the
    tangent space, ``d/dv f(q ⊕ v)`` at ``v = 0``."""
    if is_vector_space(model):
        return None
    T = SX(model.nq, model.nv)
    for joint in model.coordinate_joints:
        kind = JOINT_TYPES[joint.kind]
        rows = slice(joint.idx_q, joint.idx_q + kind.nq)
        block = kind.tangent(q[rows])
        T[rows, joint.idx_v : joint.idx_v + kind.nv] = SX.eye(kind.nv) if block is None else block
    return T


def in_tangent_space(model: Model, jacobian: SX, q: SX) -> SX:
    """A Jacobian with respect to ``q`` (k x nq) as the derivative along ``q ⊕ v`` at
    ``v = 0`` (k x nv): unchanged where every joint has ``nq == nv`` and plain addition."""
    T = tangent_map(model, q)
    return jacobian if T is None else ca.mtimes(jacobian, T)
