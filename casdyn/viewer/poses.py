"""One compiled Function for everything the viewer draws at a configuration: the pose of
every body and the centre of mass, from a single forward kinematics pass."""

from __future__ import annotations

import casadi as ca

from ..algorithms import kinematics
from ..functions.geometry_distances import body_poses


def pose_function(model, bodies: tuple[str, ...]) -> ca.Function:
    """``viewer_poses(q) -> (poses, com)``: ``poses`` is ``4 x 4 n``, the 4x4 pose of each of
    ``bodies`` side by side in the base frame (the world for a floating base); ``com``
    (3 x 1) the centre of mass in the base frame (zeros for a robot without mass)."""
    q = ca.SX.sym("q", model.nq)
    poses = body_poses(model, q, bodies)
    stacked = ca.horzcat(*[poses[name] for name in bodies]) if bodies else ca.SX(4, 0)
    massless = model.base_inertia.mass + sum(j.inertia.mass for j in model.joints) <= 0
    com = ca.SX.zeros(3, 1) if massless else kinematics.center_of_mass(model, q)[0]
    return ca.Function("viewer_poses", [q], [stacked, com], ["q"], ["poses", "com"])
