"""The identification part of :class:`casdyn.RigidBodyTree`: inertial and base parameters,
regressors (:mod:`casdyn.algorithms.identification`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

import numpy as np

from ..algorithms import identification
from ..functions.build_dynamics import regressor
from ..functions.inputs import PI
from .base import RobotParts


class IdentificationMethods(RobotParts):
    """Inertial parameters, regressors and base parameters."""

    random_configuration: Callable[..., np.ndarray]  # RigidBodyTree's

    @property
    def _pi(self) -> np.ndarray:
        """The model's own inertial parameters (read-only): the default of the input pi,
        computed once, by the engine."""
        return self._engine.default(PI.name)

    def inertial_parameters(self) -> np.ndarray:
        """``pi`` (10 per joint that moves a body, in ``model.joints`` order: ``joint_names``,
        with mimic joints at their place in the URDF): each joint's body (its child link and
        the links fixed to it) in the child link's frame, as Pinocchio's
        ``dynamicParameters``: ``[m, m cx, m cy, m cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``,
        inertia about the link origin."""
        return self._pi.copy()

    def regressor(self, q=None, qd=None, qdd=None):
        """``Y`` (nv, len(pi)): ``Y @ inertial_parameters() == inverse_dynamics(q, qd, qdd)``
        for any parameters (no external force); Pinocchio's ``computeJointTorqueRegressor``."""
        return self._call(regressor, q=q, qd=qd, qdd=qdd)

    def base_parameters(self) -> tuple[np.ndarray, np.ndarray]:
        """``(P, beta)``: the ``nb x len(pi)`` map to the identifiable combinations
        ``beta = P @ pi``, full rank, with ``Y = base_regressor(...) @ P`` exactly.

        Found numerically: regressors at 50 random states (seeded, within the limits),
        stacked, then a QR with column pivoting keeps the columns that add more than
        ``casdyn.algorithms.identification.BASE_TOLERANCE`` (1e-8) of the largest column norm; every
        other column is a fixed combination of the kept ones."""
        P = self._base[1]
        return P.copy(), P @ self._pi

    def base_regressor(self, q=None, qd=None, qdd=None):
        """``Y_b`` (nv, nb): the columns of :meth:`regressor` that :meth:`base_parameters`
        keeps, so that ``Y_b @ beta == inverse_dynamics(q, qd, qdd)``."""
        independent, _ = self._base
        return self.regressor(q, qd, qdd)[..., independent]

    @cached_property
    def _base(self) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(0)
        Q = self.random_configuration(rng, n=50)  # the same draws as 50 single calls
        Qd, Qdd = rng.normal(size=(2, 50, self._model.nv))
        samples = self.regressor(Q, Qd, Qdd).reshape(50 * self._model.nv, len(self._pi))
        independent, K = identification.base_columns(samples)
        return independent, identification.base_map(samples.shape[1], independent, K)
