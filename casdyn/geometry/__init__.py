"""Shapes, their placement on a robot or in the world, and exact signed distances between
them as CasADi expressions (docs: "Geometry and distances")."""

from .distance import signed_distance
from .fitting import enclosing_capsule, with_fitted_capsules
from .shapes import Box, Capsule, ConvexMesh, Cylinder, Geometry, Mesh, Obstacle, Plane, Sphere

__all__ = ["Box", "Capsule", "ConvexMesh", "Cylinder", "Geometry", "Mesh", "Obstacle", "Plane",
           "Sphere", "enclosing_capsule", "signed_distance",
           "with_fitted_capsules"]
