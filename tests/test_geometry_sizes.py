"""Signed distances at extreme sizes (docs: "Geometry and distances", "Sizes"): the pairs of
closed forms exact at both ends of their range, 1e-6 m and 1e9 m, and refused beyond it by
name; the hull and the compiled routine at any size are tested in test_hull.py and
test_convex_routine.py."""

from __future__ import annotations

import numpy as np
import pytest
from geometry_reference import coal_distance, random_pose

from casdyn import geometry as g
from casdyn.errors import InputError
from casdyn.geometry.distance import MAX_CLOSED_FORM_SIZE, routine_symbol


def _pairs(size: float) -> list:
    """Pairs of closed forms (point, segment, box, cylinder), their lengths ``size`` times
    those of a 0.1-0.3 m pair."""
    return [(g.Sphere(0.1 * size), g.Sphere(0.2 * size)),
            (g.Sphere(0.1 * size), g.Box((0.2 * size, 0.3 * size, 0.1 * size))),
            (g.Capsule(0.05 * size, 0.3 * size), g.Box((0.2 * size, 0.3 * size, 0.1 * size))),
            (g.Capsule(0.05 * size, 0.3 * size), g.Capsule(0.1 * size, 0.2 * size)),
            (g.Sphere(0.1 * size), g.Cylinder(0.1 * size, 0.3 * size))]


@pytest.mark.parametrize("size", [1e-6, MAX_CLOSED_FORM_SIZE])
def test_closed_forms_are_exact_at_both_ends_of_their_range(size):
    """Each pair at random poses scaled by ``size`` gives ``size`` times coal's distance of
    the pair at 1 m (coal has absolute tolerances, so it is run at 1 m), to 1e-9 of the size
    and 1e-15 m (a norm is floored there, to keep its gradient finite). Below 1e-6 m two
    capsules' fourth powers of lengths fall under the 1e-30 floor; above 1e10 m a capsule
    against a box read the 1e10 m that stands for "no candidate"."""
    rng = np.random.default_rng(30)
    for (a, b), (unit_a, unit_b) in zip(_pairs(size), _pairs(1.0), strict=True):
        assert routine_symbol(a, b) is None  # closed forms, not the routine
        for _ in range(20):
            pose_a, pose_b = random_pose(rng, 0.3), random_pose(rng, 0.3)
            expected = coal_distance(unit_a, pose_a, unit_b, pose_b)
            pose_a[:3, 3] *= size
            pose_b[:3, 3] *= size
            # 1e-9 of the size (coal's agreement at 1 m) and the floor of norms, 1e-15 m
            assert g.signed_distance(a, pose_a, b, pose_b) == pytest.approx(
                size * expected, abs=1e-9 * size + 2e-15)


def test_closed_forms_refuse_shapes_beyond_their_range_by_name():
    """A capsule 3e10 m long against a box: refused, naming the capsule and the range (it
    returned 1e10 m, the graph's "no candidate", whatever the poses)."""
    capsule, box = g.Capsule(1e9, 3e10), g.Box((1e3, 1e3, 1e3))
    with pytest.raises(InputError, match=r"Capsule\(radius=1000000000.0, length=30000000000.0\) "
                       r"has a length of 3e\+10 m, beyond the 1e\+09 m"):
        g.signed_distance(capsule, np.eye(4), box, np.eye(4))
    with pytest.raises(InputError, match=r"Sphere\(radius=2000000000.0\) has a length of 2e\+09 m"):
        g.signed_distance(g.Cylinder(0.1, 0.3), np.eye(4), g.Sphere(2e9), np.eye(4))


def test_planes_and_the_routines_pairs_hold_beyond_the_closed_forms_range():
    """A plane's distance is linear in the lengths, and the routine scales them: a box of edge
    2e12 m 1e12 m below a plane's surface, and inside another box, at their exact depths."""
    box = g.Box((2e12, 2e12, 2e12))
    pose = np.eye(4)
    pose[2, 3] = 1e12  # the box's top face at 2e12
    assert g.signed_distance(g.Plane((0, 0, 1), 1e12), np.eye(4), box, pose) == pytest.approx(
        -1e12, rel=1e-12)
    assert g.signed_distance(box, np.eye(4), box, pose) == pytest.approx(-1e12, rel=1e-12)
