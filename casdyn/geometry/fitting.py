"""Fitted shapes: a capsule that encloses a set of points (a link's mesh), for fast distances.

The fit is an approximation chosen for speed, never for exactness: distances to the capsule
are lower bounds of the distances to the points' convex hull (the capsule holds the hull), so
a constraint ``d >= 0`` on capsules keeps the meshes apart too, with some conservatism.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .shapes import Capsule, ConvexMesh, Mesh


def enclosing_capsule(points) -> tuple[Capsule, np.ndarray]:
    """``(capsule, pose)``: a capsule holding every point of ``points`` ((n, 3) array, or a
    ``ConvexMesh`` or ``Mesh``), ``pose`` (4x4) placing it in the points' frame.

    The axis is the points' principal direction (largest variance) through their mean; the
    radius is the largest distance of a point from that axis; the ends are the shortest
    segment along the axis whose radius-ball sweep still holds every point. Not the smallest
    enclosing capsule in general, but a tight one for elongated links."""
    if isinstance(points, ConvexMesh):
        points = points.vertices
    elif isinstance(points, Mesh):
        points = points.vertices()
    points = np.asarray(points, dtype=float)
    if points.ndim != 2 or points.shape[1] != 3 or len(points) < 2 or \
            not np.all(np.isfinite(points)):
        raise InputError(f"enclosing_capsule needs an (n, 3) array of finite points, n >= 2, "
                         f"got shape {points.shape}")
    centre = points.mean(axis=0)
    _, _, vt = np.linalg.svd(points - centre, full_matrices=False)
    axis = vt[0]
    along = (points - centre) @ axis
    radial = np.linalg.norm((points - centre) - np.outer(along, axis), axis=1)
    radius = max(float(radial.max()), 1e-9)
    reach = np.sqrt(np.maximum(radius**2 - radial**2, 0.0))
    top = float(np.max(along - reach))  # the upper end must reach every point's lower cap
    bottom = float(np.min(along + reach))
    if top < bottom:  # a ball holds them all
        top = bottom = 0.5 * (top + bottom)
    pose = np.eye(4)
    pose[:3, :3] = _frame_with_z(axis)
    pose[:3, 3] = centre + 0.5 * (top + bottom) * axis
    return Capsule(radius, top - bottom), pose


def _frame_with_z(axis: np.ndarray) -> np.ndarray:
    """A rotation whose third column is ``axis`` (unit)."""
    helper = np.eye(3)[int(np.argmin(np.abs(axis)))]
    x = np.cross(helper, axis)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(axis, x), axis])


def with_fitted_capsules(geometry) -> tuple:
    """``geometry`` (a tuple of :class:`Geometry`) with every ``ConvexMesh`` replaced by its
    :func:`enclosing_capsule`, placed in the same body frame; other shapes are kept."""
    from .shapes import Geometry

    fitted = []
    for item in geometry:
        if isinstance(item.shape, ConvexMesh):
            capsule, pose = enclosing_capsule(item.shape)
            item = Geometry(item.name, item.body, capsule, item.pose @ pose)
        fitted.append(item)
    return tuple(fitted)
