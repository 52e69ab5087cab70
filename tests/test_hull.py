"""The convex hull (casdyn.geometry.hull) on the real collision meshes of example-robot-data
(float32 STL files full of repeated and coplanar vertices), against trimesh's hull (Qhull)."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import numpy as np
import pytest

from casdyn.errors import InputError
from casdyn.geometry.hull import convex_hull

pytestmark = pytest.mark.slow  # hulls of real robot meshes

pin = pytest.importorskip("pinocchio")
trimesh = pytest.importorskip("trimesh")

ROBOTS = Path(pin.__file__).parents[4] / "share/example-robot-data/robots"
MESHES = sorted(
    [*(ROBOTS / "solo_description/meshes/stl/solo12").glob("*.stl"),
     *(ROBOTS / "panda_description/meshes/collision").glob("*.stl"),
     *(ROBOTS / "ur_description/meshes/ur5/collision").glob("*.stl")])
# a mesh whose thin new faces once folded the hull (a vertex 2.7 cm above a face)
FOLDED = ROBOTS / "g1_description/meshes/right_hand_index_0_link.STL"


def test_the_three_robots_have_their_meshes():
    names = {p.parent.name for p in MESHES}
    assert names == {"solo12", "collision"} and len(MESHES) == 9 + 10 + 7


@pytest.mark.parametrize("path", [*MESHES, FOLDED], ids=lambda p: f"{p.parts[-4]}/{p.name}")
def test_hull_of_a_real_mesh_matches_trimesh(path):
    points = np.asarray(trimesh.load(path, force="mesh", process=False).vertices, dtype=float)
    scale = float(np.max(np.ptp(points, axis=0)))
    start = time.perf_counter()
    hull = convex_hull(points)
    elapsed = time.perf_counter() - start
    reference = trimesh.convex.convex_hull(points)
    # every point inside every face plane, to rounding
    assert np.max(points @ hull.normals.T - hull.offsets) <= 1e-8 * scale
    # the same solid: the volumes agree and every vertex of either hull is on the other's
    # boundary (both hulls may leave out vertices within rounding of a face)
    # convex: every hull vertex below every triangle's own plane
    corners = hull.vertices[hull.triangles]
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    heights = hull.vertices @ normals.T - np.einsum("ij,ij->i", normals, corners[:, 0])
    assert np.max(heights) <= 1e-8 * scale
    ours = trimesh.Trimesh(hull.vertices, hull.triangles, process=False)
    assert ours.is_watertight and ours.is_winding_consistent and ours.volume > 0
    assert abs(ours.volume - reference.volume) <= 1e-8 * reference.volume
    theirs = reference.vertices @ hull.normals.T - hull.offsets
    assert np.all(np.abs(theirs.max(axis=1)) <= 1e-8 * scale)
    normals = reference.face_normals
    offsets = np.einsum("ij,ij->i", normals, reference.triangles[:, 0])
    mine = hull.vertices @ normals.T - offsets
    assert np.all(np.abs(mine.max(axis=1)) <= 1e-8 * scale)
    assert abs(len(hull.vertices) - len(reference.vertices)) <= 0.05 * len(reference.vertices)
    assert elapsed < 2.0, f"{len(points)} points took {elapsed:.2f} s"


def test_repeated_and_coplanar_points_give_the_box():
    grid = np.array(list(itertools.product(*[np.linspace(0, s, 6) for s in (1, 2, 3)])))
    points = np.vstack([grid, grid[::-1], grid + 1e-13])
    hull = convex_hull(np.random.default_rng(1).permutation(points))
    assert (len(hull.vertices), len(hull.normals), len(hull.edges)) == (8, 6, 12)
    assert np.allclose(np.sort(np.abs(hull.normals), axis=0)[-2:], 1.0)


def test_a_mesh_that_folds_the_quickhull_is_rebuilt_within_the_tolerance():
    from casdyn.geometry.hull import FOLD_TOLERANCE, _fold

    path = ROBOTS / "g1_description/meshes/right_hand_thumb_1_link.STL"
    points = np.asarray(trimesh.load(path, force="mesh", process=False).vertices, dtype=float)
    scale = float(np.max(np.ptp(points, axis=0)))
    hull = convex_hull(points)  # the first attempt folds by half the part's size
    assert _fold(hull.vertices, hull.triangles) <= FOLD_TOLERANCE * scale
    # built with the coarser tolerance 1e-7 of its size: points that close to a face are on it
    assert np.max(points @ hull.normals.T - hull.offsets) <= 1e-7 * scale
    reference = trimesh.convex.convex_hull(points)
    volume = trimesh.Trimesh(hull.vertices, hull.triangles, process=False).volume
    assert abs(volume - reference.volume) <= 1e-7 * reference.volume


@pytest.mark.parametrize("size", [1e-150, 1e-12, 1e77, 1e100, 1e150, 1e300])
def test_a_cube_has_the_same_hull_at_any_size(size):
    """A cube of edge ``size`` with points on its faces and inside: the hull of the same
    points at 1 m, scaled (6 planes at ``size / 2``, the 8 corners among its vertices). The
    hull squares and cubes lengths: from 1e77 m a normal's length overflowed and the cube read
    as coplanar, at 1e300 ``eps**2`` raised a bare OverflowError."""
    grid = np.array(list(itertools.product([-1.0, 0.0, 0.5, 1.0], repeat=3))) / 2
    order = np.random.default_rng(2).permutation(len(grid))
    hull, unit = convex_hull(grid[order] * size), convex_hull(grid[order])
    assert (len(hull.triangles), len(hull.edges)) == (len(unit.triangles), len(unit.edges))
    assert np.allclose(np.sort(hull.vertices, axis=0), np.sort(unit.vertices, axis=0) * size,
                       rtol=1e-15, atol=0)
    assert len(hull.normals) == 6
    assert np.allclose(np.sort(np.abs(hull.normals), axis=1), [0, 0, 1], rtol=0, atol=1e-15)
    assert np.allclose(hull.offsets, size / 2, rtol=1e-15, atol=0)
    corners = {tuple(c) for c in np.array(list(itertools.product([-0.5, 0.5], repeat=3)))}
    assert corners <= {tuple(v) for v in hull.vertices / size}


def test_points_flat_to_rounding_are_refused_by_name_not_by_overflow():
    """A unit cube and a point 1e300 m away: to double precision a needle without width, an
    InputError that says so (it raised a bare OverflowError)."""
    cube = np.array(list(itertools.product([0.0, 1.0], repeat=3)))
    with pytest.raises(InputError, match=r"ConvexMesh vertices are coplanar \(or collinear\) "
                       r"within 1e-9 of the hull's size"):
        convex_hull(np.vstack([cube, [1e300, 0.0, 0.0]]))
