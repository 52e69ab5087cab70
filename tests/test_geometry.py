"""Signed distances between shapes: against coal on random poses, pair by pair; finite value
and gradient in degenerate poses; gradients against finite differences; the same numbers from
a symbolic graph, its Jacobian and its C export."""

from __future__ import annotations

import itertools
import shutil
import subprocess

import casadi as ca
import numpy as np
import pytest
from geometry_reference import coal_distance, coal_shape, random_pose

from casdyn import geometry as g
from casdyn.errors import InputError
from casdyn.geometry.distance import distance_function

POINTS = np.random.default_rng(7).normal(size=(14, 3)) * [0.2, 0.12, 0.15]
SHAPES = {
    "sphere": g.Sphere(0.2),
    "capsule": g.Capsule(0.1, 0.5),
    "box": g.Box((0.3, 0.4, 0.2)),
    "cylinder": g.Cylinder(0.15, 0.4),
    "mesh": g.ConvexMesh(POINTS),
}
# pairs with a closed-form or finite exact distance (the cylinder's other pairs, found by a
# search over families of directions, are in tests/test_cylinders.py)
EXACT = [("sphere", "sphere"), ("sphere", "capsule"), ("sphere", "box"), ("sphere", "cylinder"),
         ("sphere", "mesh"), ("capsule", "capsule"), ("capsule", "box"), ("capsule", "mesh"),
         ("box", "box"), ("box", "mesh"), ("mesh", "mesh")]
# every pair is exact to rounding: the tolerance is the same for all (m)
TOLERANCE = {pair: 1e-9 for pair in EXACT}


@pytest.mark.parametrize("pair", EXACT, ids="-".join)
def test_signed_distance_agrees_with_coal_on_random_poses(pair):
    a, b = SHAPES[pair[0]], SHAPES[pair[1]]
    coal_a, coal_b = coal_shape(a), coal_shape(b)
    rng = np.random.default_rng(len(pair[0]) * 31 + len(pair[1]))
    values = []
    for _ in range(40):
        pose_a, pose_b = random_pose(rng), random_pose(rng)
        ours = g.signed_distance(a, pose_a, b, pose_b)
        theirs = coal_distance(a, pose_a, b, pose_b, coal_a, coal_b)
        assert abs(ours - theirs) <= TOLERANCE[pair], (pose_a, pose_b, ours, theirs)
        values.append(ours)
    assert min(values) < -0.01 and max(values) > 0.01  # both overlapping and apart were seen


@pytest.mark.parametrize("name", list(SHAPES))
def test_plane_distance_agrees_with_coal(name):
    plane = g.Plane((0.3, -0.2, 1.0), 0.1)
    shape = SHAPES[name]
    rng = np.random.default_rng(3)
    for _ in range(20):
        pose_plane, pose = random_pose(rng, 0.3), random_pose(rng, 0.6)
        ours = g.signed_distance(plane, pose_plane, shape, pose)
        theirs = coal_distance(plane, pose_plane, shape, pose)
        assert abs(ours - theirs) <= 1e-9
        assert abs(g.signed_distance(shape, pose, plane, pose_plane) - ours) <= 1e-12


def _moved(pose: np.ndarray, twist) -> np.ndarray:
    """``pose`` displaced by the world-frame twist (rotation vector, translation) ``twist``."""
    w, v = np.asarray(twist[:3]), np.asarray(twist[3:])
    angle = np.linalg.norm(w)
    k = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    R = np.eye(3) + (np.sin(angle) / angle * k + (1 - np.cos(angle)) / angle**2 * k @ k
                     if angle > 0 else 0)
    moved = np.eye(4)
    moved[:3, :3] = R @ pose[:3, :3]
    moved[:3, 3] = pose[:3, 3] + v
    return moved


def _gradient(a, pose_a, b, pose_b):
    """AD gradient of the distance w.r.t. a world twist of shape a (first-order rotation)."""
    xi = ca.SX.sym("xi", 6)
    w = xi[:3]
    skew = ca.vertcat(ca.horzcat(0, -w[2], w[1]), ca.horzcat(w[2], 0, -w[0]),
                      ca.horzcat(-w[1], w[0], 0))
    pose = ca.SX(ca.DM(pose_a))
    moved = ca.vertcat(ca.horzcat(ca.mtimes(ca.SX.eye(3) + skew, pose[:3, :3]),
                                  pose[:3, 3] + xi[3:]), ca.DM([[0, 0, 0, 1]]))
    d = g.signed_distance(a, moved, b, pose_b)
    f = ca.Function("grad", [xi], [d, ca.gradient(d, xi)])
    value, grad = f(np.zeros(6))
    return float(value), np.array(grad).ravel()


@pytest.mark.parametrize("pair", EXACT, ids="-".join)
def test_gradient_matches_finite_differences(pair):
    a, b = SHAPES[pair[0]], SHAPES[pair[1]]
    rng = np.random.default_rng(11)
    for _ in range(4):
        pose_a, pose_b = random_pose(rng), random_pose(rng)
        _, grad = _gradient(a, pose_a, b, pose_b)
        h = 1e-6
        fd = [(g.signed_distance(a, _moved(pose_a, h * e), b, pose_b)
               - g.signed_distance(a, _moved(pose_a, -h * e), b, pose_b)) / (2 * h)
              for e in np.eye(6)]
        assert np.allclose(grad, fd, atol=1e-5), (grad, fd)


def _at(position, rotation=None):
    pose = np.eye(4)
    pose[:3, :3] = np.eye(3) if rotation is None else rotation
    pose[:3, 3] = position
    return pose


DEGENERATE = {
    # coincident centres: the deepest penetration, the place where norms of zero vectors live
    "coincident": lambda a, b: (np.eye(4), np.eye(4)),
    # touching along a face or a side: distance 0
    "touching": lambda a, b: (np.eye(4), _at([0.0, 0.0, _extent(a) + _extent(b)])),
    # rotated by a quarter turn about z, exactly parallel edges and axes
    "parallel": lambda a, b: (np.eye(4), _at([0.05, 0.0, 0.0], np.array([[0, -1, 0], [1, 0, 0],
                                                                          [0, 0, 1.0]]))),
    # identical axes side by side (parallel capsules), apart
    "side_by_side": lambda a, b: (np.eye(4), _at([1.0, 0.0, 0.0])),
}


def _extent(shape) -> float:
    """Half height along z of the shapes here."""
    if isinstance(shape, g.Sphere):
        return shape.radius
    if isinstance(shape, g.Capsule):
        return shape.radius + shape.length / 2
    if isinstance(shape, g.Cylinder):
        return shape.length / 2
    if isinstance(shape, g.Box):
        return shape.size[2] / 2
    return float(np.max(shape.vertices[:, 2]))


@pytest.mark.parametrize("case", list(DEGENERATE))
@pytest.mark.parametrize("pair", EXACT, ids="-".join)
def test_degenerate_poses_give_finite_value_and_gradient(pair, case):
    a, b = SHAPES[pair[0]], SHAPES[pair[1]]
    pose_a, pose_b = DEGENERATE[case](a, b)
    value, grad = _gradient(a, pose_a, b, pose_b)
    assert np.isfinite(value) and np.all(np.isfinite(grad)), (value, grad)
    theirs = coal_distance(a, pose_a, b, pose_b)
    assert abs(value - theirs) <= 1e-9, (value, theirs)


def test_parallel_capsules_have_the_gap_and_its_normal_as_gradient():
    capsule = g.Capsule(0.1, 0.5)
    value, grad = _gradient(capsule, _at([0.3, 0.0, 0.1]), capsule, np.eye(4))
    assert abs(value - 0.1) <= 1e-12
    assert np.allclose(grad[3:], [1, 0, 0], atol=1e-12)  # moving apart along x opens the gap
    assert np.all(np.isfinite(grad))


def test_symbolic_function_jacobian_and_c_export_agree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # generate() writes to the working directory
    if shutil.which("gcc") is None:
        pytest.fail("gcc is needed to compile the exported distance")
    a, b = g.Capsule(0.1, 0.5), g.Box((0.3, 0.4, 0.2))
    pose_a, pose_b = ca.SX.sym("A", 4, 4), ca.SX.sym("B", 4, 4)
    d = g.signed_distance(a, pose_a, b, pose_b)
    assert isinstance(d, ca.SX)
    poses = ca.vertcat(ca.vec(pose_a), ca.vec(pose_b))
    f = ca.Function("sd_capsule_box", [poses], [d, ca.jacobian(d, poses)])
    source = f.generate("sd_capsule_box.c", {"with_header": False})
    library = tmp_path / "sd_capsule_box.so"
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", source, "-o", str(library)], check=True)
    compiled = ca.external("sd_capsule_box", str(library))
    rng = np.random.default_rng(5)
    for _ in range(10):
        numbers = [random_pose(rng), random_pose(rng)]
        x = np.concatenate([p.ravel(order="F") for p in numbers])
        value, jac = f(x)
        c_value, c_jac = compiled(x)
        assert abs(float(value) - g.signed_distance(a, *numbers[:1], b, numbers[1])) <= 1e-12
        assert abs(float(c_value) - float(value)) <= 1e-12
        assert np.allclose(np.array(c_jac), np.array(jac), atol=1e-12)
    mx = g.signed_distance(a, ca.MX.sym("A", 4, 4), b, np.eye(4))
    assert isinstance(mx, ca.MX)


def test_convex_hull_holds_every_point_and_matches_trimesh():
    import trimesh

    points = np.random.default_rng(2).normal(size=(500, 3))
    hull = g.ConvexMesh(points).hull
    assert np.all(points @ hull.normals.T - hull.offsets <= 1e-9)
    reference = trimesh.PointCloud(points).convex_hull
    ours = trimesh.Trimesh(hull.vertices, hull.triangles)
    assert abs(ours.volume - reference.volume) <= 1e-9 * reference.volume
    assert len(hull.vertices) == len(reference.vertices)


def test_box_hull_has_six_faces_and_twelve_edges():
    corners = np.array(list(itertools.product((0, 1), (0, 2), (0, 3))), dtype=float)
    inside = np.random.default_rng(0).uniform(0, 1, (30, 3))
    hull = g.ConvexMesh(np.vstack([corners, inside])).hull
    assert (len(hull.vertices), len(hull.normals), len(hull.edges)) == (8, 6, 12)


@pytest.mark.parametrize("call, message", [
    (lambda: g.signed_distance(g.Plane(), np.eye(4), g.Plane(), np.eye(4)), "two planes"),
    (lambda: g.signed_distance(g.Mesh("x.stl"), np.eye(4), g.Sphere(1), np.eye(4)), "Mesh"),
    (lambda: g.signed_distance(g.Sphere(1), np.eye(3), g.Sphere(1), np.eye(4)), "pose_a"),
    (lambda: g.signed_distance("ball", np.eye(4), g.Sphere(1), np.eye(4)), "got str"),
    (lambda: g.Sphere(-1), "Sphere radius"),
    (lambda: g.Box((1, 0, 1)), "Box size"),
    (lambda: g.ConvexMesh(np.eye(3)), "n >= 4"),
    (lambda: g.ConvexMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]), "coplanar"),
])
def test_bad_input_is_an_input_error_naming_it(call, message):
    with pytest.raises(InputError, match=message):
        call()


def test_distance_functions_are_cached_per_shape_pair():
    a, b = g.Sphere(0.1), g.Box((1, 1, 1))
    assert distance_function(a, b) is distance_function(g.Sphere(0.1), g.Box((1, 1, 1)))


@pytest.mark.slow  # several seconds: the quick tier stays quick
def test_detailed_convex_meshes_go_to_the_compiled_routine_and_agree_with_coal():
    """Hulls of 4,000 random points (thousands of faces): the fixed graph would grow with
    their faces and edges; the compiled routine computes the distance, apart and overlapping,
    against a box and a capsule too."""
    from casdyn.geometry.distance import routine_symbol

    rng = np.random.default_rng(0)
    a, b = (g.ConvexMesh(rng.normal(size=(4000, 3))) for _ in range(2))
    far = np.eye(4)
    far[0, 3] = 10.0
    for other in (b, g.Box((1.0, 2.0, 0.5)), g.Capsule(0.3, 1.0)):
        assert routine_symbol(a, other)
        for pose in (far, random_pose(rng, 1.0)):
            ours = g.signed_distance(a, np.eye(4), other, pose)
            assert abs(ours - coal_distance(a, np.eye(4), other, pose)) <= 1e-9
