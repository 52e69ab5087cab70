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
