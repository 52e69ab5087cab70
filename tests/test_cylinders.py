"""Signed distances of a cylinder and a capsule, a box, a convex mesh or a cylinder: against
coal where the shapes are apart, against an independent separating-axis maximum (a dense
sample of directions refined by Nelder-Mead, tests/geometry_reference.py) where they overlap
(coal 3.0.3 returns wrong depths and -DBL_MAX for some overlapping cylinders), on random,
touching and degenerate poses; gradients against finite differences of the references; the
same numbers on a robot and from C."""

from __future__ import annotations

from functools import cache

import casadi as ca
import numpy as np
import pytest
from geometry_reference import (
    coal_distance,
    coal_shape,
    random_pose,
    separating_axis_distance,
    separating_axis_distances,
)
from test_geometry import _at, _moved

import casdyn
from casdyn import geometry as g
from casdyn.geometry.distance import distance_function

CYLINDER = g.Cylinder(0.15, 0.4)
OTHERS = {
    "capsule": g.Capsule(0.1, 0.5),
    "box": g.Box((0.3, 0.4, 0.2)),
    "mesh": g.ConvexMesh(np.random.default_rng(7).normal(size=(14, 3)) * [0.2, 0.12, 0.15]),
    "cylinder": g.Cylinder(0.12, 0.3),
}
# the convex mesh's graph is the largest (about 130k instructions): its slower checks are slow
NAMES = ["capsule", "box", pytest.param("mesh", marks=pytest.mark.slow), "cylinder"]
# measured per pair over 2,000 random poses at spread 0.5 m (15% overlapping) and 600 at 0.2 m
# (80%): largest difference from the references 6e-9 m (the rounding of the cylinder's support
# sqrt(1 - (n . a)^2) near its axis; coal's GJK is run to 1e-10, the reference's simplex to
# 1e-11)
TOLERANCE = 1e-7


@cache
def _twist_gradient(a, b) -> ca.Function:
    """``(pose_a, pose_b) -> (d, dd/dxi)``, ``xi`` a world twist (rotation vector,
    translation) of shape a at 0 (first-order rotation), built once per pair."""
    xi, pose_a, pose_b = ca.SX.sym("xi", 6), ca.SX.sym("A", 4, 4), ca.SX.sym("B", 4, 4)
    w = xi[:3]
    skew = ca.vertcat(ca.horzcat(0, -w[2], w[1]), ca.horzcat(w[2], 0, -w[0]),
                      ca.horzcat(-w[1], w[0], 0))
    moved = ca.vertcat(ca.horzcat(ca.mtimes(ca.SX.eye(3) + skew, pose_a[:3, :3]),
                                  pose_a[:3, 3] + xi[3:]), ca.DM([[0, 0, 0, 1]]))
    grad = ca.substitute(ca.gradient(g.signed_distance(a, moved, b, pose_b), xi), xi,
                         ca.SX.zeros(6))
    return ca.Function("twist_gradient", [pose_a, pose_b],
                       [g.signed_distance(a, pose_a, b, pose_b), grad])


def _gradient(a, pose_a, b, pose_b):
    value, grad = _twist_gradient(a, b)(pose_a, pose_b)
    return float(value), np.array(grad).ravel()


def _references(a, b, poses, ours) -> np.ndarray:
    """For each pair of poses: coal's distance where the shapes are apart (by coal and by
    us), otherwise the separating-axis maximum (those computed together)."""
    coal_a, coal_b = coal_shape(a), coal_shape(b)
    expected = np.array([coal_distance(a, pose_a, b, pose_b, coal_a, coal_b)
                         for pose_a, pose_b in poses])
    near = ~((expected > 1e-6) & (np.asarray(ours) > 1e-6))
    if near.any():
        pairs = np.array(poses)[near]  # (m, 2, 4, 4)
        expected[near] = separating_axis_distances(a, pairs[:, 0], b, pairs[:, 1])
    return expected


def _reference(a, pose_a, b, pose_b, ours: float) -> float:
    """:func:`_references` of one pair of poses."""
    return float(_references(a, b, [(pose_a, pose_b)], [ours])[0])


def _check(a, b, poses) -> list[float]:
    f = distance_function(a, b)
    values = [float(f(pose_a, pose_b)) for pose_a, pose_b in poses]
    for (pose_a, pose_b), ours, expected in zip(poses, values, _references(a, b, poses, values),
                                                strict=True):
        assert abs(ours - expected) <= TOLERANCE, (pose_a, pose_b, ours, expected)
    return values


@pytest.mark.parametrize("name", list(OTHERS))
def test_cylinder_pairs_agree_with_the_references_on_random_poses(name):
    rng = np.random.default_rng(len(name))
    poses = [(random_pose(rng, 0.5), random_pose(rng, 0.5)) for _ in range(10)]
    poses += [(random_pose(rng, 0.15), random_pose(rng, 0.15)) for _ in range(2)]
    values = _check(OTHERS[name], CYLINDER, poses)
    assert min(values) < -0.01 and max(values) > 0.01  # both overlapping and apart were seen


@pytest.mark.slow
@pytest.mark.parametrize("spread, count", [(0.5, 500), (0.2, 120)])
@pytest.mark.parametrize("name", list(OTHERS))
def test_cylinder_pairs_agree_with_the_references_on_many_random_poses(name, spread, count):
    """Mostly apart (spread 0.5 m: 15% overlap), mostly overlapping (0.2 m: 80%); the
    reference takes about 30 ms per overlapping pose, so the counts are what CI's budget
    allows (2,000 and 400 poses per pair agreed as well)."""
    rng = np.random.default_rng(1000 + len(name))
    poses = [(random_pose(rng, spread), random_pose(rng, spread)) for _ in range(count)]
    values = _check(OTHERS[name], CYLINDER, poses)
    assert sum(v < 0 for v in values) >= 60  # overlapping poses were compared


def _touching(a, b, rng):
    """Random poses moved until the shapes touch: b translated along the distance's
    gradient (the contact normal) by minus the distance."""
    pose_a, pose_b = random_pose(rng), random_pose(rng)
    value, grad = _gradient(b, pose_b, a, pose_a)
    return pose_a, _moved(pose_b, np.r_[0, 0, 0, -value * grad[3:]])


@pytest.mark.parametrize("name", NAMES)
def test_touching_poses_give_zero(name):
    rng = np.random.default_rng(3)
    a = OTHERS[name]
    for _ in range(3):
        pose_a, pose_b = _touching(a, CYLINDER, rng)
        ours = g.signed_distance(a, pose_a, CYLINDER, pose_b)
        assert abs(ours) <= 1e-9
        assert abs(_reference(a, pose_a, CYLINDER, pose_b, ours)) <= TOLERANCE


QUARTER = np.array([[0, 0, 1], [0, 1, 0], [-1, 0, 0.0]])  # z onto -x: axes perpendicular
DEGENERATE = {
    "coincident": (np.eye(4), np.eye(4)),
    "coaxial_apart": (_at([0, 0, 0.8]), np.eye(4)),
    "coaxial_inside": (_at([0, 0, 0.05]), np.eye(4)),
    "stacked_touching": (_at([0, 0, 0.45]), np.eye(4)),
    "parallel_side_by_side": (_at([0.5, 0, 0.1]), np.eye(4)),
    "parallel_overlapping": (_at([0.1, 0.05, 0.1]), np.eye(4)),
    "perpendicular_crossing": (_at([0, 0, 0], QUARTER), np.eye(4)),
    "perpendicular_apart": (_at([0, 0.4, 0], QUARTER), np.eye(4)),
    "deep": (_at([0.01, -0.02, 0.03], QUARTER), _at([0, 0, 0.0])),
}


def _degenerate(name, case):
    a = OTHERS[name]
    pose_a, pose_b = DEGENERATE[case]
    value, grad = _gradient(a, pose_a, CYLINDER, pose_b)
    swapped, grad_swapped = _gradient(CYLINDER, pose_b, a, pose_a)
    for v, gr in ((value, grad), (swapped, grad_swapped)):
        assert np.isfinite(v) and np.all(np.isfinite(gr)), (v, gr)
    assert abs(swapped - value) <= 1e-12
    expected = _reference(a, pose_a, CYLINDER, pose_b, value)
    assert abs(value - expected) <= TOLERANCE, (value, expected)


QUICK_DEGENERATE = [("capsule", "coaxial_inside"), ("capsule", "perpendicular_crossing"),
                    ("box", "coincident"), ("box", "stacked_touching"),
                    ("cylinder", "parallel_side_by_side"), ("cylinder", "deep"),
                    ("cylinder", "coaxial_apart")]


@pytest.mark.parametrize("name, case", QUICK_DEGENERATE)
def test_degenerate_poses_give_finite_value_and_gradient(name, case):
    _degenerate(name, case)


@pytest.mark.slow
@pytest.mark.parametrize("case", list(DEGENERATE))
@pytest.mark.parametrize("name", list(OTHERS))
def test_every_degenerate_pose_gives_finite_value_and_gradient(name, case):
    _degenerate(name, case)


@pytest.mark.parametrize("name", NAMES)
def test_gradient_is_the_slope_of_the_reference(name):
    """The AD gradient (w.r.t. a world twist of the other shape) against central differences
    of our value (to rounding) and of the reference's (the true slope, to the references'
    accuracy over the step)."""
    a = OTHERS[name]
    rng = np.random.default_rng(11)
    for k in range(4):
        spread = 0.5 if k < 2 else 0.15
        pose_a, pose_b = random_pose(rng, spread), random_pose(rng, spread)
        value, grad = _gradient(a, pose_a, CYLINDER, pose_b)

        def ours(pose, a=a, pose_b=pose_b):
            return g.signed_distance(a, pose, CYLINDER, pose_b)

        def reference(pose, a=a, pose_b=pose_b, value=value):
            if value > 0.01:
                return coal_distance(a, pose, CYLINDER, pose_b)
            return separating_axis_distance(a, pose, CYLINDER, pose_b)

        for e, slope in zip(np.eye(6), grad, strict=True):
            h = 1e-6
            fd = (ours(_moved(pose_a, h * e)) - ours(_moved(pose_a, -h * e))) / (2 * h)
            assert abs(fd - slope) <= 1e-6, (k, e, fd, slope)
        h = 1e-4
        e = rng.normal(size=6)
        e /= np.linalg.norm(e)
        fd = (reference(_moved(pose_a, h * e)) - reference(_moved(pose_a, -h * e))) / (2 * h)
        assert abs(fd - grad @ e) <= 1e-4, (k, fd, grad @ e)


def test_robot_distances_to_a_cylinder_agree_with_the_references_and_differentiate():
    robot = casdyn.load_robot("ur5e")
    pillar = g.Obstacle("pillar", g.Cylinder(0.08, 0.6), _at([0.35, 0.1, 0.3], QUARTER))
    pairs = robot.collision_pairs[:2]
    rng = np.random.default_rng(2)
    q = robot.random_configuration(rng)
    f = robot.function("collision_distances", pairs=pairs, obstacles=[pillar], jacobian=True)
    d, J = (np.asarray(x) for x in f(q))
    poses = {item.name: robot.get_transform(q, item.body) @ item.pose
             for item in robot.collision_geometry}
    expected = [g.signed_distance(item.shape, poses[item.name], pillar.shape, pillar.pose)
                for item in robot.collision_geometry]
    assert np.allclose(d.ravel()[len(pairs):], expected, atol=1e-12, rtol=0)
    for item, value in zip(robot.collision_geometry, expected, strict=True):
        reference = _reference(pillar.shape, pillar.pose, item.shape, poses[item.name], value)
        assert abs(value - reference) <= TOLERANCE
    h = 1e-6
    fd = np.column_stack([(robot.collision_distances(q + h * e, pairs=pairs, obstacles=[pillar])
                           - robot.collision_distances(q - h * e, pairs=pairs,
                                                       obstacles=[pillar])) / (2 * h)
                          for e in np.eye(robot.nv)])
    assert np.all(np.isfinite(J)) and np.max(np.abs(J - fd)) <= 1e-6


@pytest.mark.slow
def test_cylinder_distances_export_to_c(tmp_path):
    robot = casdyn.load_robot("ur5e")
    pillar = g.Obstacle("pillar", g.Cylinder(0.08, 0.6), _at([0.35, 0.1, 0.3], QUARTER))
    options = {"pairs": (), "obstacles": [pillar], "jacobian": True}
    f = robot.function("collision_distances", **options)
    loaded = robot.export_c(tmp_path / "c", [("collision_distances", options)])
    (compiled,) = loaded.values()
    for q in robot.random_configuration(np.random.default_rng(4), 3):
        for ours, theirs in zip(compiled(q), f(q), strict=True):
            assert np.allclose(np.asarray(ours), np.asarray(theirs), atol=1e-12, rtol=0)


@pytest.mark.slow
def test_the_reference_agrees_with_coal_where_coal_is_exact():
    """The separating-axis reference against coal: cylinder pairs apart, and overlapping
    pairs coal handles exactly (sphere-capsule, box-box), so that it is a fair judge where
    coal is not."""
    rng = np.random.default_rng(5)
    checked = 0
    for a, b, spread in [(OTHERS["box"], CYLINDER, 0.8), (OTHERS["cylinder"], CYLINDER, 0.8),
                         (g.Sphere(0.2), OTHERS["capsule"], 0.15),
                         (OTHERS["box"], OTHERS["box"], 0.15)]:
        for _ in range(3):
            pose_a, pose_b = random_pose(rng, spread), random_pose(rng, spread)
            theirs = coal_distance(a, pose_a, b, pose_b, coal_shape(a), coal_shape(b))
            if spread < 0.5 or theirs > 0.01:
                assert abs(separating_axis_distance(a, pose_a, b, pose_b) - theirs) <= 1e-9
                checked += 1
    assert checked >= 8


def test_a_detailed_convex_mesh_against_a_cylinder_is_refused_with_the_way_out():
    from casdyn.errors import InputError
    from casdyn.geometry.cores import _core
    from casdyn.geometry.fixed_graphs import MAX_CYLINDER_DIRECTIONS

    mesh = g.ConvexMesh(np.random.default_rng(0).normal(size=(400, 3)))
    assert _core(mesh).poly.directions.shape[1] > MAX_CYLINDER_DIRECTIONS
    with pytest.raises(InputError, match="with_fitted_capsules"):
        g.signed_distance(mesh, np.eye(4), CYLINDER, _at([5.0, 0, 0]))
