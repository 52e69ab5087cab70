"""Rigid-body inertia as plain NumPy constants (the URDF's numbers, moved between frames)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Inertia:
    """Rigid-body spatial inertia about a frame's origin, in that frame's axes.

    ``first_moment`` is ``h = m c`` (c the centre of mass); ``rotational`` is the 3x3
    rotational inertia about the frame origin (not about the centre of mass).
    """

    mass: float
    first_moment: np.ndarray
    rotational: np.ndarray

    @staticmethod
    def zero() -> Inertia:
        return Inertia(0.0, np.zeros(3), np.zeros((3, 3)))

    @staticmethod
    def from_com(mass: float, com: np.ndarray, inertia_about_com: np.ndarray) -> Inertia:
        """Parallel-axis shift of a centroidal inertia to the frame origin."""
        com = np.asarray(com, dtype=float)
        shift = mass * (com @ com * np.eye(3) - np.outer(com, com))
        return Inertia(mass, mass * com, inertia_about_com + shift)

    @property
    def com(self) -> np.ndarray:
        """The centre of mass in this frame (the origin for a massless body)."""
        return self.first_moment / self.mass if self.mass > 0 else np.zeros(3)

    @property
    def about_com(self) -> np.ndarray:
        """The rotational inertia about the centre of mass, in this frame's axes."""
        c = self.com
        return self.rotational - self.mass * (c @ c * np.eye(3) - np.outer(c, c))

    def transformed(self, rotation: np.ndarray, translation: np.ndarray) -> Inertia:
        """The same body's inertia about, and in the axes of, a frame in which this frame has
        pose ``(rotation, translation)``."""
        moved = Inertia.from_com(
            self.mass, rotation @ self.com + translation, rotation @ self.about_com @ rotation.T
        )
        return moved.symmetrized()

    def symmetrized(self) -> Inertia:
        return Inertia(self.mass, self.first_moment, 0.5 * (self.rotational + self.rotational.T))

    def __add__(self, other: Inertia) -> Inertia:
        return Inertia(
            self.mass + other.mass,
            self.first_moment + other.first_moment,
            self.rotational + other.rotational,
        )

    def __sub__(self, other: Inertia) -> Inertia:
        return Inertia(
            self.mass - other.mass,
            self.first_moment - other.first_moment,
            self.rotational - other.rotational,
        )


# Pinocchio's order of the ten inertial parameters (``Inertia::toDynamicParameters``)
PARAMETER_NAMES = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
_UPPER = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))  # Ixx Ixy Iyy Ixz Iyz Izz


def to_parameters(inertia: Inertia) -> np.ndarray:
    """``[m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` (10,), rotational inertia about the origin."""
    I = inertia.rotational  # noqa: E741
    return np.r_[inertia.mass, inertia.first_moment, [I[r, c] for r, c in _UPPER]]


def parameter_map(rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    """The 10 x 10 matrix that takes a body's parameters in a frame B to those in a frame A
    where B has pose ``(rotation, translation)``. Linear in the parameters, also for a
    massless part: ``h' = R h + m p``, ``I' = R I R^T - [p][R h] - [R h][p] - m [p][p]``
    (``[x]`` the cross-product matrix; the last term is the parallel-axis shift)."""
    R, p = np.asarray(rotation, dtype=float), np.asarray(translation, dtype=float)
    P = _skew(p)
    columns = []
    for k in range(10):
        unit = np.zeros(10)
        unit[k] = 1.0
        m, h = unit[0], unit[1:4]
        I = np.zeros((3, 3))  # noqa: E741
        for value, (r, c) in zip(unit[4:], _UPPER, strict=True):
            I[r, c] = I[c, r] = value
        Rh = R @ h
        moved = R @ I @ R.T - P @ _skew(Rh) - _skew(Rh) @ P - m * P @ P
        columns.append(np.r_[m, Rh + m * p, [moved[r, c] for r, c in _UPPER]])
    return np.array(columns).T


def _skew(x: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])
