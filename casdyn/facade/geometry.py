"""The geometry and viewer part of :class:`casdyn.RigidBodyTree` (:mod:`casdyn.geometry`,
:mod:`casdyn.viewer`)."""

from __future__ import annotations

import numpy as np

from ..functions.build_geometry import collision_distances
from .base import RobotParts


class GeometryMethods(RobotParts):
    """Collision and visual geometry, collision distances, the 3D viewer."""

    @property
    def _robot_geometry(self):
        """The robot's :class:`casdyn.model.geometry.RobotGeometry` (or MJCF's), fixed when
        the robot was made (``RigidBodyTree(model, geometry=...)``; None: its URDF's, read on
        first use); the one ``collision_distances`` is built from."""
        return self._functions.stages.geometry

    @property
    def collision_geometry(self) -> tuple:
        """The URDF's ``<collision>`` shapes (MJCF: the geoms MuJoCo collides):
        ``casdyn.geometry.Geometry`` per element."""
        return self._robot_geometry.collision

    @property
    def visual_geometry(self) -> tuple:
        """The URDF's ``<visual>`` shapes (MJCF: the geoms that collide with nothing):
        ``casdyn.geometry.Geometry`` per element."""
        return self._robot_geometry.visual

    @property
    def collision_pairs(self) -> tuple[tuple[str, str], ...]:
        """Collision geometry pairs on links neither welded, adjacent nor disabled (MJCF:
        the pairs MuJoCo tests for contact, see :mod:`casdyn.model.mjcf_geometry`)."""
        return self._robot_geometry.pairs

    def collision_distances(self, q, pairs=None, obstacles=()):
        """Signed distances (m) of ``pairs`` (default :attr:`collision_pairs`), then of each
        ``casdyn.geometry.Obstacle`` against every collision geometry: 1-D array."""
        from ..functions.geometry_distances import distance_options, warn_where_the_routine_stopped

        options = distance_options(pairs, obstacles, False)
        del options["jacobian"]
        d = self._call(collision_distances, options, q=q)
        # numeric, and a pair overlaps: say where the compiled routine stopped short (its
        # capacities are EPA's); a robot clear of collisions reads no pairs here
        if isinstance(d, np.ndarray) and np.any(d <= 0):
            geometry = self._robot_geometry
            listed = geometry.pairs if options["pairs"] is None else options["pairs"]
            rows = np.reshape(q, (-1, self._model.nq)), np.reshape(d, (-1, d.shape[-1]))
            for q_k, d_k in zip(*rows, strict=True):
                warn_where_the_routine_stopped(self._model, geometry.collision, listed,
                                               options["obstacles"], q_k, d_k)
        return d

    # --- viewer (casdyn.viewer) ------------------------------------------------------------
    def show(self, q=None, *, geometry: str = "visual", port: int | None = None,
             open_browser: bool = False):
        """A :class:`casdyn.viewer.Viewer` of this robot at ``q`` (default: the home
        configuration), served on ``127.0.0.1`` (``viewer.url``); ``geometry`` is
        ``"visual"``, ``"collision"`` or ``"frames"``. Needs ``pip install "casdyn[viewer]"``."""
        from ..viewer import Viewer

        return Viewer(self, q, geometry=geometry, port=port, open_browser=open_browser)
