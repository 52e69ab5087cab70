"""Rotations in MuJoCo's conventions (quaternions ``[w, x, y, z]``), as numpy arrays."""

from __future__ import annotations

import math

import numpy as np


def quaternion_matrix(quaternion) -> np.ndarray:
    """The rotation (3, 3) of a quaternion ``[w, x, y, z]`` (normalised first)."""
    w, x, y, z = np.asarray(quaternion, dtype=float) / np.linalg.norm(quaternion)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def axis_rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues' rotation by ``angle`` about the unit ``axis``."""
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


# mjtSameFrame: a geom or site frame the compiler found equal (within its tolerance) to
SAME_BODY, SAME_INERTIA, SAME_BODY_ROTATION, SAME_INERTIA_ROTATION = 1, 2, 3, 4


def local_pose(m, position, quaternion, body: int, sameframe: int) -> np.ndarray:
    """The 4x4 pose in ``body``'s frame where MuJoCo puts a geom or site given by
    ``position``, ``quaternion`` and its ``sameframe`` flag (``mj_local2Global``): where the
    compiler found the frame equal to the body's (1) or its inertial frame (2), or their
    orientations equal (3, 4), MuJoCo takes those instead, and they may differ from the
    given ones by the compiler's tolerance (1e-6 in dm_control's dog)."""
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = quaternion_matrix(quaternion), position
    if sameframe in (SAME_BODY, SAME_BODY_ROTATION):
        pose[:3, :3] = np.eye(3)
    if sameframe in (SAME_INERTIA, SAME_INERTIA_ROTATION):
        pose[:3, :3] = quaternion_matrix(m.body_iquat[body])
    if sameframe == SAME_BODY:
        pose[:3, 3] = 0.0
    if sameframe == SAME_INERTIA:
        pose[:3, 3] = m.body_ipos[body]
    return pose
