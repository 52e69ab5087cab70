"""The builder of ``collision_distances``: signed distances of a robot's collision geometry
pairs and of obstacles against it (:mod:`.geometry_distances`), and their Jacobian in the
tangent space. Signature as in :mod:`.build_dynamics`; the geometry is the robot's,
``stages.geometry``, fixed when the robot is made (read from the model's URDF file on first
use when the robot was given none)."""

from __future__ import annotations

from ..math.spatial import SX
from ..model.tree import Model
from .geometry_distances import distance_outputs
from .inputs import Q
from .registry import builds
from .stages import Stages


@builds("collision_distances", (Q,), ("d", "J"), pairs=None, obstacles=(), jacobian=False)
def collision_distances(model: Model, s: dict, options: dict, stages: Stages) -> list[SX]:
    """``[d]`` (nd x 1: ``pairs``, default the robot's ``collision_pairs``, then each obstacle
    against every collision geometry), with ``jacobian`` also ``J = dd/dv`` (nd x nv):
    through the closest points (``True``) or by AD of the whole graph (``"ad"``)."""
    geometry = stages.geometry
    pairs = geometry.pairs if options["pairs"] is None else options["pairs"]
    return distance_outputs(model, geometry.collision, pairs, options["obstacles"],
                            options["jacobian"], s["q"])
