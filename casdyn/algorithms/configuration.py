"""The configuration space: limits, neutral and random configurations, ``integrate``
(``q ⊕ v``), ``difference`` (``q1 ⊖ q0``) and the tangent map, joint by joint (each joint
type knows its own, :mod:`casdyn.model.joints`)."""

from __future__ import annotations

import warnings

import casadi as ca
import numpy as np

from ..errors import InputError, ModelWarning
from ..math.spatial import SX
from ..model.srdf import FREE_FLYER_NAMES, SRDF
from ..model.tree import Model


def neutral(model: Model) -> np.ndarray:
    """Every joint's home coordinates, (nq,)."""
    return _joined([j.type.neutral(j) for j in model.coordinate_joints])


def position_limits(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)``, (nq,) each: each joint type's limits."""
    limits = [j.type.limits(j) for j in model.coordinate_joints]
    return _joined([low for low, _ in limits]), _joined([high for _, high in limits])


def per_velocity(model: Model, value) -> np.ndarray:
    """(nv,): ``value(joint)`` for each 1-dof joint, inf for each velocity of the others."""
    return _joined([np.array([value(j)]) if j.type.one_dof
                    else np.full(j.type.nv, np.inf)
                    for j in model.coordinate_joints])


def random(model: Model, rng: np.random.Generator, bounded: bool = False,
           n: int | None = None) -> np.ndarray:
    """A random configuration, (nq,), or ``n`` of them, (n, nq): each joint's draw from its
    sampling box. Joints that have none (prismatic joints without limits) are an error, or
    with ``bounded`` draw in [-1, 1]."""
    types = [j.type for j in model.coordinate_joints]
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
        kind = joint.type
        parts.append(kind.integrate(q[joint.idx_q : joint.idx_q + kind.nq],
                                    v[joint.idx_v : joint.idx_v + kind.nv]))
    return ca.vertcat(*parts) if parts else SX.zeros(0, 1)


def difference(model: Model, q0: SX, q1: SX) -> SX:
    """``q1 ⊖ q0`` (nv x 1): the rates that :func:`integrate` takes from ``q0`` to ``q1``."""
    parts = []
    for joint in model.coordinate_joints:
        kind = joint.type
        rows = slice(joint.idx_q, joint.idx_q + kind.nq)
        parts.append(kind.difference(q0[rows], q1[rows]))
    return ca.vertcat(*parts) if parts else SX.zeros(0, 1)


def is_vector_space(model: Model) -> bool:
    """Whether ``integrate`` is plain addition for every joint (then ``nq == nv``)."""
    return all(joint.type.vector_space for joint in model.coordinate_joints)


def tangent_map(model: Model, q: SX) -> SX | None:
    """``d integrate(q, v) / dv`` at ``v = 0`` (nq x nv), or None where it is the identity
    (every joint 1-dof): a Jacobian with respect to ``q`` times it is the derivative in the
    tangent space, ``d/dv f(q ⊕ v)`` at ``v = 0``."""
    if is_vector_space(model):
        return None
    T = SX(model.nq, model.nv)
    for joint in model.coordinate_joints:
        kind = joint.type
        rows = slice(joint.idx_q, joint.idx_q + kind.nq)
        block = kind.tangent(q[rows])
        T[rows, joint.idx_v : joint.idx_v + kind.nv] = SX.eye(kind.nv) if block is None else block
    return T


def tangent_jacobian(model: Model, expression: SX, q: SX) -> SX:
    """``d/dh expression(q ⊕ h)`` at ``h = 0`` (k x nv) for an ``expression`` (k x 1) of the
    symbol ``q``: :func:`in_tangent_space` of its Jacobian in ``q``, but differentiated
    through ``q ⊕ h``, whose derivatives at ``h = 0`` fold to constants: a smaller graph
    where ``q`` has quaternions (the floating solo12's inverse-dynamics ``d tau/dq``, with
    CSE and without external forces: 4,834 instructions against 5,254), though not
    everywhere (its contact-dynamics derivatives, whose ``J^T lam`` and foot accelerations
    keep :func:`in_tangent_space`: 88,017 against 87,803)."""
    if is_vector_space(model):
        return ca.jacobian(expression, q)
    h = SX.sym("h", model.nv)
    moved = ca.jacobian(ca.substitute(expression, q, integrate(model, q, h)), h)
    return ca.substitute(moved, h, SX.zeros(model.nv))


def in_tangent_space(model: Model, jacobian: SX, q: SX) -> SX:
    """A Jacobian with respect to ``q`` (k x nq) as the derivative along ``q ⊕ v`` at
    ``v = 0`` (k x nv): unchanged where every joint has ``nq == nv`` and plain addition."""
    T = tangent_map(model, q)
    return jacobian if T is None else ca.mtimes(jacobian, T)


# --- named configurations (SRDF group states) ----------------------------------------
def named(srdf: SRDF, model: Model) -> dict[str, np.ndarray]:
    """Each group_state of ``srdf`` as ``q`` (nq,) of ``model`` in casdyn's layout.

    Joints a state does not name keep their home value (:func:`neutral`);
    mimic joints are skipped (they follow their leaders); the free flyer is ``root_joint``
    or ``floating_base``, ignored on a fixed base. A joint the model does not have is named
    in a :class:`~casdyn.ModelWarning` and skipped (SRDFs often cover joints a reduced URDF
    lacks); a value of the wrong size is an :class:`~casdyn.InputError`. A later state of
    the same name replaces an earlier one.
    """
    joints = {joint.name: joint for joint in model.joints}
    if model.floating_base:
        free = model.joints[0]
        joints.update({name: free for name in FREE_FLYER_NAMES})
    named = {}
    for state in srdf.group_states:
        q = neutral(model)
        unknown = []
        for name, values in state.values:
            joint = joints.get(name)
            if joint is None:
                if name not in FREE_FLYER_NAMES:
                    unknown.append(name)
                continue
            if joint.mimic is not None:
                continue
            where = f"srdf {srdf.label}: group_state {state.name!r}, joint {name!r}"
            q[joint.idx_q : joint.idx_q + joint.type.nq] = _coordinates(joint, values, where)
        if unknown:
            warnings.warn(f"srdf {srdf.label}: group_state {state.name!r} names joints the "
                          f"robot {model.name!r} does not have, ignored: {', '.join(unknown)}",
                          ModelWarning, stacklevel=3)
        named[state.name] = q
    return named


def _coordinates(joint, values: tuple[float, ...], where: str) -> np.ndarray:
    """A joint's SRDF value (Pinocchio's layout, or casdyn's where they differ in size) as
    casdyn coordinates."""
    v = np.asarray(values, dtype=float)
    q = joint.type.from_pinocchio(joint, v)
    if q is None:
        sizes = sorted({joint.type.nq, joint.type.pinocchio_nq(joint)})
        raise InputError(f"{where}: expected {' or '.join(map(str, sizes))} values "
                         f"(Pinocchio's layout), got {v.size}")
    at = joint.type.quaternion_at
    if at is not None and not np.any(q[at : at + 4]):
        raise InputError(f"{where}: the quaternion is zero")
    return q
