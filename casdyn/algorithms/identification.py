"""Inertial parameters, parametric models and base parameters (docs: "Identification").

The parameters ``pi`` are ten per moving joint, for the body it moves (its child link with
every link fixed to it), in that link's URDF frame, in Pinocchio's order
``[m, m cx, m cy, m cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` (inertia about the link origin).
The algorithms run on joint frames of their own (axis on z, DH-like or centre-of-mass
aligned: :mod:`casdyn.model.tree`, :mod:`casdyn.model.reframe`); a constant linear map per joint
(:func:`casdyn.math.inertia.parameter_map`) takes a link's parameters into its joint's frame, so
the dynamics stay linear in ``pi`` and the regressor is exact.
"""

from __future__ import annotations

from dataclasses import replace

import casadi as ca
import numpy as np

from ..math.inertia import Inertia, parameter_map, to_parameters
from ..math.spatial import SX
from ..model.tree import Model

# a column of stacked regressors is dependent where pivoted QR leaves less than this
# fraction of the largest column norm (the samples' numbers are of order one)
BASE_TOLERANCE = 1e-8


def child_poses(model: Model) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per joint (``model.joints``), the pose of its child link in the joint's frame."""
    children = {spec.name: spec.child for spec in model.description.joints}
    poses = []
    for i, joint in enumerate(model.joints):
        # a floating base's free joint moves the root link
        child = model.bodies[0].name if model.floating_base and i == 0 else children[joint.name]
        body = model.bodies[model.body_index(child)]
        assert body.joint == i, (joint.name, child)
        poses.append((body.rotation, body.translation))
    return poses


def inertial_parameters(model: Model) -> np.ndarray:
    """``pi`` (10 per joint of ``model.joints``, in that order): each joint's inertia moved
    from its frame into its child link's frame."""
    blocks = []
    for joint, (R, p) in zip(model.joints, child_poses(model), strict=True):
        to_link = parameter_map(R.T, -R.T @ p)  # the joint frame's pose in the link frame
        blocks.append(to_link @ to_parameters(joint.inertia))
    blocks.append(np.array([getattr(model.joints[i], name) for i, name in joint_terms(model)]))
    return np.concatenate(blocks)


def joint_terms(model: Model) -> list[tuple[int, str]]:
    """The parameters after the inertial ones, as ``(joint index, field)``: with joint
    friction, ``damping`` and ``friction`` of every 1-dof joint (``model.joints`` order);
    with an armature given, ``armature`` of every 1-dof joint with a coordinate."""
    one_dof = [i for i, joint in enumerate(model.joints) if joint.type.one_dof]
    terms = [(i, name) for i in one_dof for name in ("damping", "friction")] \
        if model.joint_friction else []
    if any(joint.armature for joint in model.joints):
        terms += [(i, "armature") for i in one_dof if model.joints[i].mimic is None]
    return terms


def parameter_count(model: Model) -> int:
    """``len(pi)``: ten per joint, then the joint terms (:func:`joint_terms`)."""
    return 10 * len(model.joints) + len(joint_terms(model))


def symbolic_inertia(block: SX) -> Inertia:
    """An :class:`Inertia` whose mass, first moment and rotational inertia are entries of
    the SX parameter vector ``block`` (10 x 1)."""
    Ixx, Ixy, Iyy, Ixz, Iyz, Izz = (block[k] for k in range(4, 10))
    rotational = ca.vertcat(ca.horzcat(Ixx, Ixy, Ixz), ca.horzcat(Ixy, Iyy, Iyz),
                            ca.horzcat(Ixz, Iyz, Izz))
    return Inertia(block[0], block[1:4], rotational)


def parametric(model: Model, pi: SX) -> Model:
    """``model`` with every joint's inertia (and friction, armature) given by the parameters
    ``pi`` (link frames) as SX expressions: the algorithms run on it unchanged and return
    expressions linear in ``pi``."""
    joints = []
    for k, (joint, (R, p)) in enumerate(zip(model.joints, child_poses(model), strict=True)):
        block = ca.mtimes(SX(parameter_map(R, p)), pi[10 * k : 10 * k + 10])
        joints.append(replace(joint, inertia=symbolic_inertia(block)))
    for k, (i, name) in enumerate(joint_terms(model)):
        joints[i] = replace(joints[i], **{name: pi[10 * len(joints) + k]})
    return replace(model, joints=tuple(joints))


def base_columns(samples: np.ndarray, tolerance: float = BASE_TOLERANCE
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``(independent, K)`` for stacked regressors ``samples`` (k x p): the columns a pivoted
    QR (Businger & Golub 1965) keeps, in increasing order, and ``K`` with
    ``samples[:, dependent] = samples[:, independent] @ K``. Then ``beta = pi[independent]
    + K pi[dependent]`` are the base parameters."""
    W = np.array(samples, dtype=float)
    k, p = W.shape
    norms = np.linalg.norm(W, axis=0)
    largest = norms.max(initial=0.0)
    order = list(range(p))
    rank = 0
    residual = W.copy()
    while rank < min(k, p):
        remaining = np.linalg.norm(residual[:, rank:], axis=0)
        best = int(np.argmax(remaining)) + rank if remaining.size else rank
        if remaining.size == 0 or remaining[best - rank] <= tolerance * max(largest, 1e-300):
            break
        residual[:, [rank, best]] = residual[:, [best, rank]]
        order[rank], order[best] = order[best], order[rank]
        q = residual[:, rank] / np.linalg.norm(residual[:, rank])
        residual[:, rank + 1 :] -= np.outer(q, q @ residual[:, rank + 1 :])
        rank += 1
    independent = np.sort(np.array(order[:rank], dtype=int))
    dependent = np.array(sorted(order[rank:]), dtype=int)
    K = np.linalg.lstsq(W[:, independent], W[:, dependent], rcond=None)[0] if dependent.size \
        else np.zeros((rank, 0))
    K[np.abs(K) < 1e-10] = 0.0  # round-off of exact zeros
    return independent, K


def base_map(p: int, independent: np.ndarray, K: np.ndarray) -> np.ndarray:
    """The ``nb x p`` matrix ``P`` with ``beta = P pi``: identity on the independent columns,
    ``K`` on the dependent ones."""
    P = np.zeros((len(independent), p))
    P[np.arange(len(independent)), independent] = 1.0
    dependent = np.setdiff1d(np.arange(p), independent)
    P[:, dependent] = K
    return P
