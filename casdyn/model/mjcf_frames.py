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
