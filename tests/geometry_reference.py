"""coal (the collision library behind Pinocchio) as the reference for signed distances, and
random poses."""

from __future__ import annotations

import numpy as np

from casdyn import geometry as g


def random_pose(rng, spread: float = 0.5) -> np.ndarray:
    """A uniformly random rotation and a translation in [-spread, spread]^3."""
    w, x, y, z = (q := rng.normal(size=4)) / np.linalg.norm(q)
    pose = np.eye(4)
    pose[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                    [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                    [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    pose[:3, 3] = rng.uniform(-spread, spread, 3)
    return pose


def coal_shape(shape):
    """The coal geometry of a casdyn shape (a ConvexMesh: coal's own hull of its points)."""
    import coal

    if isinstance(shape, g.Sphere):
        return coal.Sphere(shape.radius)
    if isinstance(shape, g.Capsule):
        return coal.Capsule(shape.radius, shape.length)
    if isinstance(shape, g.Cylinder):
        return coal.Cylinder(shape.radius, shape.length)
    if isinstance(shape, g.Box):
        return coal.Box(*shape.size)
    if isinstance(shape, g.Plane):
        return coal.Halfspace(np.array(shape.normal), shape.offset)
    if isinstance(shape, g.ConvexMesh):
        points = coal.StdVec_Vec3s()
        for p in shape.vertices:
            points.append(np.asarray(p, dtype=float))
        return coal.Convex.convexHull(points, False, None)
    raise TypeError(type(shape))


def coal_distance(a, pose_a, b, pose_b, coal_a=None, coal_b=None) -> float:
    """coal's signed distance (``min_distance`` with ``enable_signed_distance``), its GJK run
    to 1e-10 (its default 1e-6 stops up to ~7e-7 above the distance on curved shapes)."""
    import coal

    request = coal.DistanceRequest()
    request.enable_signed_distance = True
    request.gjk_tolerance = 1e-10
    result = coal.DistanceResult()
    coal.distance(coal_a or coal_shape(a), coal.Transform3s(pose_a[:3, :3], pose_a[:3, 3]),
                  coal_b or coal_shape(b), coal.Transform3s(pose_b[:3, :3], pose_b[:3, 3]),
                  request, result)
    return result.min_distance
