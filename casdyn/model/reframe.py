"""Choosing joint frames that make the constant tree transforms sparse (Denavit-Hartenberg).

A joint frame only has to have the joint axis as z; it may be turned about that axis and
slid along it freely, since both commute with the joint's own motion. Following the modified
DH convention (Craig, *Introduction to Robotics*, ch. 3), each joint frame gets its x axis
along the common normal to the axis of its main child joint, with its origin at the foot
of that normal. The child's constant rotation is then ``Rx(alpha) Rz(theta)``; for a
revolute child the ``Rz(theta)`` part is moved into the joint angle (``q + offset``),
leaving the 4-nonzero ``Rx(alpha)``, against 9 for a general rotation, in every transform
the algorithms apply. Bodies keep their URDF frames through constant offsets, so none of
this is visible outside the model.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from .build import snap
from .tree import Model

_PARALLEL = 1e-9  # |z_i x z_c| below this: parallel axes
_FAR = 10.0  # a common normal's foot farther than this times the origins' distance is not used


def _rot_z(angle: float) -> np.ndarray:
    """Rotation about z; multiples of pi/2 come out exact, so sparse inertias stay sparse."""
    c, s = math.cos(angle), math.sin(angle)
    return snap(np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]))


def _main_children(model: Model) -> list[int | None]:
    """For each joint, the child joint with the largest subtree (None for leaves)."""
    size = model.subtree_sums([1] * len(model.joints))
    main: list[int | None] = [None] * len(model.joints)
    for i in model.order:
        parent = model.joints[i].parent
        if parent >= 0 and (main[parent] is None or size[i] > size[main[parent]]):
            main[parent] = i
    return main


def _frame_change(R_i, o_i, R_c, o_c) -> tuple[np.ndarray, float]:
    """(Rz(phi), t) putting frame i's x axis along the common normal from axis i (through
    o_i along R_i z) to axis c, and its origin at the normal's foot on axis i."""
    z_i, z_c = R_i[:, 2], R_c[:, 2]
    normal = np.cross(z_i, z_c)
    if np.linalg.norm(normal) < _PARALLEL:  # parallel: any normal; take the one through o_i
        d = o_c - o_i
        normal = d - (d @ z_i) * z_i
        if np.linalg.norm(normal) < _PARALLEL:  # coaxial: nothing to gain
            return np.eye(3), 0.0
        t = 0.0
    else:
        # o_i + t z_i + a n = o_c + u z_c, solved for t (n = z_i x z_c / |.|)
        n = normal / np.linalg.norm(normal)
        t = float(np.cross(o_c - o_i, z_c) @ n / np.linalg.norm(normal))
        if abs(t) > _FAR * max(float(np.linalg.norm(o_c - o_i)), 1e-6):
            # nearly parallel axes: the normal's foot runs away, and the inertia moved there
            # would lose its digits to cancellation (m t^2 against the body's own)
            return np.eye(3), 0.0
    x_local = R_i.T @ normal
    return _rot_z(math.atan2(x_local[1], x_local[0])), t


# Rough operation counts per nonzero constant of a joint: a tree rotation entry is used in
# six 3x3 products, a translation entry in three cross products, a centre-of-mass entry in
# the products of a body force (about three since casdyn.model.grouping leaves revolute bodies
# massless: their first moment enters only U h and h x a; 3 rather than 6 measured 3-6 %
# smaller UR5e and iiwa graphs and no larger benchmark graph); an inertia about the centre
# of mass that is not diagonal costs a full product and cross product.
_WEIGHTS = {"rotation": 6, "translation": 4, "com": 3, "full_inertia": 30}


def _nonzeros(values: np.ndarray) -> int:
    return int(np.count_nonzero(values))


def _tree(joint, frame_parent, frame_own):
    """The joint's constant transform between the re-chosen frames of its parent and its
    own, with the revolute ``Rz(offset)`` split off when that makes it sparser."""
    rotation_i, t_i = frame_own
    rotation = joint.rotation @ rotation_i
    translation = joint.rotation @ np.array([0.0, 0.0, t_i]) + joint.translation
    if frame_parent is not None:
        rotation_p, t_p = frame_parent
        rotation = rotation_p.T @ rotation
        translation = rotation_p.T @ (translation - np.array([0.0, 0.0, t_p]))
    rotation, translation, offset = snap(rotation), snap(translation), 0.0
    if joint.type.turns_about_z and abs(rotation[0, 2]) < 1e-12:
        # rotation = Rx(alpha) Rz(offset): the Rz part can join the joint angle
        angle = math.atan2(-rotation[0, 1], rotation[0, 0])
        split = snap(rotation @ _rot_z(-angle))
        if _nonzeros(split) < _nonzeros(rotation):
            rotation, offset = split, angle
    return rotation, translation, offset


def _inertia_in(joint, frame_own):
    rotation_i, t_i = frame_own
    moved = joint.inertia.transformed(rotation_i.T, np.array([0.0, 0.0, -t_i]))
    scale = max(1e-300, float(np.abs(moved.rotational).max(initial=0.0)), moved.mass)
    return replace(
        moved,
        first_moment=_clean(moved.first_moment, scale),
        rotational=_clean(moved.rotational, scale),
    )


def _clean(values: np.ndarray, scale: float) -> np.ndarray:
    """Round-off of the frame change (relative 1e-14) back to exact zeros."""
    cleaned = values.copy()
    cleaned[np.abs(cleaned) < 1e-14 * scale] = 0.0
    return cleaned


def _cost(model: Model, frames, i: int, children: list[list[int]]) -> float:
    """Weighted nonzero count of everything joint i's frame choice touches."""
    total = 0.0
    for j in [i, *children[i]]:
        joint = model.joints[j]
        parent = frames[joint.parent] if joint.parent >= 0 else None
        rotation, translation, offset = _tree(joint, parent, frames[j])
        total += _WEIGHTS["rotation"] * _nonzeros(rotation)
        total += _WEIGHTS["translation"] * _nonzeros(translation) + (offset != 0.0)
    inertia = _inertia_in(model.joints[i], frames[i])
    total += _WEIGHTS["com"] * _nonzeros(_clean(inertia.com, 1.0))
    Ic = inertia.about_com
    off_diagonal = Ic - np.diag(np.diag(Ic))
    total += _WEIGHTS["full_inertia"] * bool(
        _nonzeros(_clean(off_diagonal, np.abs(Ic).max(initial=1e-300)))
    )
    return total


def _com_frame(joint) -> tuple[np.ndarray, float] | None:
    """(Rz(phi), t) putting the body's centre of mass on the new frame's x axis."""
    if joint.inertia.mass <= 0:
        return None
    c = joint.inertia.com
    return _rot_z(math.atan2(c[1], c[0])), float(c[2])


def sparsify_frames(model: Model) -> Model:
    """The same model with DH-like joint frames where they make it cheaper (see above)."""
    n = len(model.joints)
    # joint frames at q = 0 in the base frame
    R = [np.eye(3)] * n
    o = [np.zeros(3)] * n
    for i in model.order:
        joint = model.joints[i]
        if joint.parent < 0:
            R[i], o[i] = joint.rotation, joint.translation
        else:
            R[i] = R[joint.parent] @ joint.rotation
            o[i] = R[joint.parent] @ joint.translation + o[joint.parent]
    children: list[list[int]] = [[] for _ in range(n)]
    for i, joint in enumerate(model.joints):
        if joint.parent >= 0:
            children[joint.parent].append(i)
    # frames[i] = (Rz(phi_i), t_i): joint i's new frame in its old one, the cheapest of:
    # unchanged, DH towards its main child, centre of mass on the x axis
    frames = [(np.eye(3), 0.0)] * n
    for i, child in enumerate(_main_children(model)):
        if not model.joints[i].type.axial:
            continue  # turning or sliding its frame would change what its q means
        options = [_com_frame(model.joints[i])]
        if child is not None and model.joints[child].type.axial:
            options.append(_frame_change(R[i], o[i], R[child], o[child]))
        chosen, best = frames[i], _cost(model, frames, i, children)
        for option in options:
            if option is None:
                continue
            frames[i] = option
            cost = _cost(model, frames, i, children)
            if cost < best:
                chosen, best = option, cost
        frames[i] = chosen

    joints = []
    for i, joint in enumerate(model.joints):
        parent = frames[joint.parent] if joint.parent >= 0 else None
        rotation, translation, offset = _tree(joint, parent, frames[i])
        joints.append(
            replace(
                joint,
                rotation=rotation,
                translation=translation,
                inertia=_inertia_in(joint, frames[i]),
                offset=offset,
            )
        )
    bodies = []
    for body in model.bodies:
        if body.joint >= 0:
            rotation_i, t_i = frames[body.joint]
            body = replace(
                body,
                rotation=snap(rotation_i.T @ body.rotation),
                translation=rotation_i.T @ (body.translation - np.array([0.0, 0.0, t_i])),
            )
        bodies.append(body)
    return replace(model, joints=tuple(joints), bodies=tuple(bodies))
