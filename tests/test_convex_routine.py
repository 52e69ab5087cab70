"""Detailed convex meshes through the compiled routine (casdyn.codegen.convex_routine): the
Panda with its own meshes and SRDF against coal at random configurations, the routine against
the fixed exact graph where both apply, gradients and Jacobians against finite differences,
and the routine's C inside compile() and export_c libraries."""

from __future__ import annotations

import itertools
import warnings

import casadi as ca
import numpy as np
import pinocchio as pin
import pytest
from geometry_reference import (
    coal_distance,
    coal_shape,
    fixed_graph_distance,
    random_pose,
    separating_axis_distance,
)
from test_geometry_robot import PANDA, _link_poses

import casdyn
from casdyn import geometry as g
from casdyn.errors import ConvergenceWarning, ExportError
from casdyn.geometry import cores, distance
from casdyn.geometry.distance import routine_symbol

# coal's GJK and EPA run to this tolerance: at its default (1e-6) its depths of these hulls
# are off by up to 4e-7; run to 1e-12 it agrees with the exact references to rounding
COAL_EPA = 1e-12


def _panda():
    return casdyn.load_urdf(PANDA / "urdf/panda.urdf", package_dirs=[PANDA.parents[2]],
                            srdf=PANDA / "srdf/panda.srdf")


def _panda_links(robot, q, model, data):
    position = dict(zip(robot.joint_names, q, strict=True))
    for name, leader, multiplier, offset in robot.mimic_joints:
        position[name] = multiplier * position[leader] + offset
    return _link_poses(model, data, np.array([position[n] for n in model.names[1:]]))


def _obstacles():
    """A table the base sinks into and a rock (a hull of 60 points) in the workspace."""
    rock = g.ConvexMesh(np.random.default_rng(5).normal(size=(60, 3)) * [0.08, 0.06, 0.05])
    pose = random_pose(np.random.default_rng(6), 0.0)
    pose[:3, 3] = [0.35, 0.1, 0.5]
    return (g.Obstacle("table", g.Box((1.2, 1.2, 0.1)), np.eye(4)), g.Obstacle("rock", rock, pose))


def test_panda_with_its_own_meshes_and_srdf_agrees_with_coal():
    robot = _panda()
    obstacles = _obstacles()
    geometry = {item.name: item for item in robot.collision_geometry}
    kinds = [{type(geometry[a].shape), type(geometry[b].shape)}
             for a, b in robot.collision_pairs]
    assert kinds.count({g.ConvexMesh}) >= 12 and kinds.count({g.ConvexMesh, g.Box}) >= 30
    assert all(routine_symbol(geometry[a].shape, geometry[b].shape)  # the link hulls
               for a, b in robot.collision_pairs)
    model = pin.buildModelFromUrdf(str(PANDA / "urdf/panda.urdf"))
    data = model.createData()
    coal_shapes = {name: coal_shape(item.shape) for name, item in geometry.items()}
    f = robot.function("collision_distances", obstacles=obstacles)
    rng = np.random.default_rng(0)
    apart, overlapping = [], []
    for _ in range(25):
        q = robot.random_configuration(rng)
        links = _panda_links(robot, q, model, data)
        ours = np.asarray(f(q)).ravel()
        expected = []
        for a, b in robot.collision_pairs:
            ga, gb = geometry[a], geometry[b]
            expected.append(coal_distance(ga.shape, links[ga.body] @ ga.pose, gb.shape,
                                          links[gb.body] @ gb.pose, coal_shapes[a],
                                          coal_shapes[b], epa=COAL_EPA))
        for obstacle in obstacles:
            for name, item in geometry.items():
                expected.append(coal_distance(obstacle.shape, obstacle.pose, item.shape,
                                              links[item.body] @ item.pose,
                                              coal_b=coal_shapes[name], epa=COAL_EPA))
        expected = np.array(expected)
        assert ours.shape == expected.shape
        error = np.abs(ours - expected)
        apart.extend(error[expected > 1e-6])
        overlapping.extend(error[expected < -1e-6])
    assert len(apart) > 500 and len(overlapping) > 20
    assert max(apart) <= 1e-9 and max(overlapping) <= 1e-9


@pytest.mark.slow  # several seconds: the quick tier stays quick
def test_the_routine_agrees_with_the_fixed_graph_apart_and_overlapping():
    """Two independent exact methods (support-function iterations in C, separating axes and
    closest features as a graph) on small hulls, boxes, a sphere and a capsule, where
    penetration depths are exact too."""
    rng = np.random.default_rng(1)
    meshes = [g.ConvexMesh(rng.normal(size=(8 + k, 3)) * 0.15) for k in range(4)]
    pairs = [(meshes[0], meshes[1]), (meshes[2], meshes[3]), (meshes[0], g.Box((0.3, 0.2, 0.1))),
             (g.Box((0.3, 0.2, 0.1)), g.Box((0.1, 0.25, 0.2))), (g.Sphere(0.05), meshes[1]),
             (g.Capsule(0.05, 0.3), meshes[2])]
    errors = {"apart": [], "overlapping": []}
    for a, b in pairs:
        assert routine_symbol(a, b)
        for _ in range(30):
            pose_a, pose_b = random_pose(rng, 0.3), random_pose(rng, 0.3)
            ours = g.signed_distance(a, pose_a, b, pose_b)
            exact = fixed_graph_distance(a, pose_a, b, pose_b)
            errors["apart" if exact > 0 else "overlapping"].append(abs(ours - exact))
    assert len(errors["apart"]) > 30 and len(errors["overlapping"]) > 30
    assert max(errors["apart"]) <= 1e-9 and max(errors["overlapping"]) <= 1e-9


@pytest.mark.parametrize("where", ["coincident", "touching", "inside", "far"])
def test_degenerate_poses_give_finite_values_and_gradients(where):
    rng = np.random.default_rng(2)
    a = g.ConvexMesh(rng.normal(size=(40, 3)) * 0.1)
    b = g.ConvexMesh(rng.normal(size=(40, 3)) * 0.1)
    pose_b = np.eye(4)
    if where == "touching":  # b's lowest vertex on a's highest: the plane z = that separates
        pose_b[:3, 3] = (a.vertices[np.argmax(a.vertices[:, 2])]
                         - b.vertices[np.argmin(b.vertices[:, 2])])
    elif where == "inside":
        b = g.ConvexMesh(a.vertices * 0.2)
    elif where == "far":
        pose_b[:3, 3] = [1e3, -2e3, 5e2]
    T = ca.SX.sym("T", 4, 4)
    d = g.signed_distance(a, np.eye(4), b, T)
    value, grad = ca.Function("f", [T], [d, ca.gradient(d, T)])(pose_b)
    assert np.all(np.isfinite(np.array(value))) and np.all(np.isfinite(np.array(grad)))
    if where == "touching":
        assert abs(float(value)) <= 1e-9
    if where == "far":
        assert float(value) == pytest.approx(coal_distance(a, np.eye(4), b, pose_b), abs=1e-9)
    if where in ("coincident", "inside"):
        assert float(value) == pytest.approx(
            coal_distance(a, np.eye(4), b, pose_b, epa=COAL_EPA), abs=1e-9)


def test_panda_jacobians_match_finite_differences_and_each_other():
    robot = _panda()
    obstacles = _obstacles()
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = robot.random_configuration(rng)
        _, J = (np.asarray(x) for x in robot.function(
            "collision_distances", obstacles=obstacles, jacobian=True)(q))
        _, J_ad = (np.asarray(x) for x in robot.function(
            "collision_distances", obstacles=obstacles, jacobian="ad")(q))
        h = 1e-6
        fd = np.column_stack([(robot.collision_distances(q + h * e, obstacles=obstacles)
                               - robot.collision_distances(q - h * e, obstacles=obstacles))
                              / (2 * h) for e in np.eye(robot.nv)])
        assert np.max(np.abs(J - J_ad)) <= 1e-12
        assert np.max(np.abs(J - fd)) <= 1e-6


@pytest.mark.slow  # several seconds: the quick tier stays quick
def test_compiled_and_exported_libraries_hold_the_routine(tmp_path):
    robot = _panda()
    q = robot.random_configuration(np.random.default_rng(4))
    f = robot.function("collision_distances", jacobian=True)
    expected = [np.asarray(x) for x in f(q)]
    exported = robot.export_c(tmp_path / "c", {"cd": ("collision_distances", {"jacobian": True})})
    source = (tmp_path / "c").glob("*.c")
    assert any("casdyn_convex_distance" in path.read_text() for path in source)
    for got, want in zip(exported["cd"](q), expected, strict=True):
        assert np.max(np.abs(np.asarray(got) - want)) <= 1e-13
    robot.compile(["collision_distances"], directory=tmp_path / "cache")
    assert np.max(np.abs(robot.collision_distances(q) - expected[0].ravel())) <= 1e-13


def _instructions(a, b) -> int:
    T_a, T_b = ca.SX.sym("T_a", 4, 4), ca.SX.sym("T_b", 4, 4)
    return ca.Function("d", [T_a, T_b], [distance.distance_expression(a, T_a, b, T_b)]) \
        .n_instructions()


def test_the_same_shapes_give_the_same_function_with_or_without_a_compiler(monkeypatch):
    """The algorithm is a property of the pair: without a C compiler a pair of the routine
    is a clear error (never another graph), a pair with a closed form the same graph, a
    routine already built the same call; the fixed graph only when asked for."""
    from casdyn.codegen import build

    rng = np.random.default_rng(8)
    built = (g.Box((0.3, 0.2, 0.1)), g.ConvexMesh(rng.normal(size=(20, 3)) * 0.1))
    new = (g.Box((0.2, 0.2, 0.25)), g.Box((0.1, 0.3, 0.2)))  # never built before
    closed = [(g.Capsule(0.1, 0.3), g.Box((0.2, 0.2, 0.25))), (g.Sphere(0.1), g.Sphere(0.2)),
              (g.Cylinder(0.1, 0.3), g.Capsule(0.05, 0.2))]
    with_compiler = [_instructions(*pair) for pair in [built, *closed]]

    def none(compiler=None):
        raise ExportError("no C compiler found (looked for cc)")

    monkeypatch.setattr(build, "find_compiler", none)
    assert [_instructions(*pair) for pair in [built, *closed]] == with_compiler
    assert routine_symbol(*new)  # two boxes: the routine's pair on every machine
    with pytest.raises(ExportError, match=r"C routine compiled on first use.*no C compiler"):
        g.signed_distance(new[0], np.eye(4), new[1], np.eye(4))
    pose = random_pose(rng, 0.2)  # the fixed graph, asked for: no compiler needed
    assert abs(fixed_graph_distance(*new[:1], np.eye(4), new[1], pose)
               - coal_distance(new[0], np.eye(4), new[1], pose)) <= 1e-9


def test_forward_and_reverse_derivatives_agree_and_the_hessian_is_finite():
    """The routine's outputs are constants in both AD modes (forward mode once read an
    empty Jacobian as uninitialised memory: NaN and wrong columns)."""
    rng = np.random.default_rng(9)
    a, b = (g.ConvexMesh(rng.normal(size=(30, 3)) * 0.1) for _ in range(2))
    x = ca.SX.sym("x", 3)
    poses = [ca.vertcat(ca.horzcat(ca.DM(pose[:3, :3]), pose[:3, 3] + k * x),
                        ca.DM([[0, 0, 0, 1]]))
             for k, pose in enumerate([random_pose(rng, 0.2) for _ in range(4)], start=1)]
    d = ca.vertcat(*(g.signed_distance(a, np.eye(4), b, pose) for pose in poses))
    seed = ca.DM([0.3, -0.5, 0.8])
    f = ca.Function("f", [x], [ca.jtimes(d, x, seed), ca.jacobian(d, x) @ seed,
                               ca.hessian(d[0], x)[0]])
    forward, jacobian, hessian = (np.asarray(v) for v in f([0.01, 0.02, -0.01]))
    h = 1e-6
    fd = (np.asarray(ca.Function("d", [x], [d])(np.array([0.01, 0.02, -0.01]) + h * seed))
          - np.asarray(ca.Function("d", [x], [d])(np.array([0.01, 0.02, -0.01]) - h * seed)))
    assert np.allclose(forward, jacobian, atol=1e-14) and np.allclose(forward, fd / (2 * h),
                                                                       atol=1e-6)
    assert np.all(np.isfinite(hessian))



def test_functions_in_separate_files_share_one_copy_of_the_routine(tmp_path, monkeypatch):
    """Each large function gets a C file of its own; the routine's entry points are global
    symbols, so they go into the first file only (twice, the link failed)."""
    from casdyn import sizes
    from casdyn.codegen import library

    rng = np.random.default_rng(10)
    a, b = (g.ConvexMesh(rng.normal(size=(40, 3)) * 0.1) for _ in range(2))
    T = ca.SX.sym("T", 4, 4)
    d = g.signed_distance(a, np.eye(4), b, T)
    functions = [ca.Function("d", [T], [d]), ca.Function("grad", [T], [ca.gradient(d, T)])]
    monkeypatch.setattr(sizes, "OWN_C_FILE", 1)
    loaded = library.export_functions(functions, tmp_path, "two")
    assert len(list(tmp_path.glob("*.c"))) == 2
    pose = random_pose(rng, 0.3)
    for ours, theirs in zip(loaded, functions, strict=True):
        assert np.allclose(np.asarray(ours(pose)), np.asarray(theirs(pose)), atol=1e-14)


def test_a_fresh_process_exports_a_deserialised_graph(tmp_path):
    """The hulls of a graph built in one process are found by another that only loads the
    Function (CasADi serialisation): the routine's C is kept in the compile cache."""
    import subprocess
    import sys

    rng = np.random.default_rng(12)
    a, b = (g.ConvexMesh(rng.normal(size=(30, 3)) * 0.1) for _ in range(2))
    T = ca.SX.sym("T", 4, 4)
    f = ca.Function("f", [T], [g.signed_distance(a, np.eye(4), b, T)])
    (tmp_path / "f.casadi").write_text(f.serialize())
    pose = random_pose(rng, 0.3)
    np.save(tmp_path / "pose.npy", pose)
    script = (
        "import sys, numpy as np, casadi as ca\n"
        "from casdyn.ocp.compiled import compiled\n"
        f"f = ca.Function.deserialize(open({str(tmp_path / 'f.casadi')!r}).read())\n"
        f"c = compiled(f, directory={str(tmp_path / 'ocp')!r})\n"
        f"print(float(c(np.load({str(tmp_path / 'pose.npy')!r}))))\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert abs(float(run.stdout) - float(f(pose))) <= 1e-14


@pytest.mark.parametrize("size", [1e-150, 1e150, 1e300])
def test_boxes_and_meshes_at_extreme_sizes_have_their_exact_distances(size):
    """Two boxes of edge 2 size, rotated, overlapping by size / 2 and apart by size / 2, and a
    sphere's centre inside a cube mesh, against closed forms. The routine squared and cubed
    lengths in metres: two boxes of edge 2e150 overlapping by 5e149 were reported 1.1e150
    apart."""
    box = g.Box((2 * size,) * 3)
    rotation = random_pose(np.random.default_rng(13), 0.0)
    for offset, expected in ((1.5, -0.5), (2.5, 0.5)):
        pose_b = rotation.copy()
        pose_b[:3, 3] = rotation[:3, :3] @ [offset * size, 0, 0]
        assert g.signed_distance(box, rotation, box, pose_b) == pytest.approx(expected * size,
                                                                              rel=1e-12)
    cube = g.ConvexMesh(np.array(list(itertools.product([-size, size], repeat=3))))
    centre = np.eye(4)
    centre[:3, 3] = [0.25 * size, -0.5 * size, 0.0]  # half the edge from the nearest face
    assert g.signed_distance(g.Sphere(0.1 * size), centre, cube, np.eye(4)) == pytest.approx(
        -0.6 * size, rel=1e-12)


def test_the_routine_path_never_makes_the_fixed_graphs_edge_directions(monkeypatch):
    """A hull's distinct edge directions take time quadratic in its size (the first distance
    of a 5,000-vertex hull spent over four minutes on them) and only the fixed graph uses
    them: no pair the routine computes makes them."""
    def forbidden(hull):
        raise AssertionError("the edge directions were made for a routine pair")

    monkeypatch.setattr(cores, "edge_directions", forbidden)
    rng = np.random.default_rng(16)
    mesh, other = (g.ConvexMesh(rng.normal(size=(n, 3)) * 0.1) for n in (300, 200))
    box, corners = g.Box((0.1, 0.2, 0.3)), np.array(list(itertools.product((-1, 1), repeat=3)))
    as_hull = coal_shape(g.ConvexMesh(corners * [0.05, 0.1, 0.15]))  # coal's boxes: see above
    pairs = [(mesh, other, None), (box, mesh, as_hull), (g.Sphere(0.05), mesh, None),
             (g.Capsule(0.05, 0.2), mesh, None)]
    for a, b, coal_a in pairs:
        assert routine_symbol(a, b)
        for _ in range(5):
            pose = random_pose(rng, 0.3)
            assert g.signed_distance(a, np.eye(4), b, pose) == pytest.approx(
                coal_distance(a, np.eye(4), b, pose, coal_a=coal_a, epa=COAL_EPA), abs=1e-9)


def test_a_full_polytope_warns_with_a_bound_that_holds_the_distance():
    """800 points on a sphere (a Fibonacci lattice) against themselves at one pose: EPA needs
    more vertices than its polytope holds (about 1.3 per point here). It used to return its
    best bound silently, the depth 0.1 mm too large; now a ConvergenceWarning names the
    capacity and the bound, which holds the true distance. Reference: the largest g(n) over a
    dense sample of directions refined by Nelder-Mead, a lower bound of sd."""
    from geometry_reference import _sphere_points

    sphere = g.ConvexMesh(_sphere_points(800) * 0.1)
    pose = random_pose(np.random.default_rng(18), 0.1)
    with pytest.warns(ConvergenceWarning, match=r"EPA's vertex capacity.*known only to "
                      r"within .* m \(overlapping, the depth returned is an upper bound\)"):
        d = g.signed_distance(sphere, pose, sphere, pose)
    limits, bound = distance.routine_report(sphere, pose, sphere, pose)
    assert limits == 2 and 0 < bound <= 1e-3
    reference = separating_axis_distance(sphere, pose, sphere, pose)
    assert reference - d >= 5e-5  # the depth over-estimated, within the bound
    assert reference <= d + bound


@pytest.mark.slow
def test_a_5000_vertex_hull_in_seconds_and_a_full_polytope_warns_with_its_bound():
    """A hull of 5,000 points on a sphere: its distances agree with coal, with no warning;
    against itself at one pose EPA needs more vertices than it holds (about 1.6 per point),
    which a ConvergenceWarning says, with a bound that holds the true distance. Reference
    there: the largest g(n) over a dense sample of directions refined by Nelder-Mead, a lower
    bound of sd (coal stops early too: its depth is not the width along its own normal)."""
    rng = np.random.default_rng(17)
    points = rng.normal(size=(5000, 3))
    sphere = g.ConvexMesh(points * 0.1 / np.linalg.norm(points, axis=1)[:, None])
    assert len(sphere.vertices) == 5000
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        for translation in ([0.15, 0.1, 0.05], [0.3, -0.1, 0.1]):
            pose = random_pose(rng, 0.0)
            pose[:3, 3] = translation
            assert g.signed_distance(sphere, np.eye(4), sphere, pose) == pytest.approx(
                coal_distance(sphere, np.eye(4), sphere, pose, epa=COAL_EPA), abs=1e-9)
    pose = random_pose(rng, 0.1)
    with pytest.warns(ConvergenceWarning, match=r"EPA's vertex capacity.*known only to "
                      r"within .* m \(overlapping, the depth returned is an upper bound\)"):
        d = g.signed_distance(sphere, pose, sphere, pose)
    limits, bound = distance.routine_report(sphere, pose, sphere, pose)
    assert limits == 2 and 0 < bound <= 1e-3
    reference = separating_axis_distance(sphere, pose, sphere, pose)
    assert reference - d >= 1e-5  # the depth over-estimated, within the bound
    assert reference <= d + bound


def test_collision_distances_warn_where_the_routine_stopped(tmp_path):
    """The robot-level call says it too: a link whose collision mesh is the 800-point sphere,
    an obstacle of the same hull placed on it (EPA runs out of vertices); the pairs apart and
    a batch of configurations are unaffected."""
    from geometry_reference import _sphere_points
    from scipy.spatial import ConvexHull

    points = _sphere_points(800) * 0.1
    faces = ConvexHull(points).simplices + 1
    (tmp_path / "ball.obj").write_text(
        "".join(f"v {x:.17g} {y:.17g} {z:.17g}\n" for x, y, z in points)
        + "".join(f"f {i} {j} {k}\n" for i, j, k in faces))
    inertial = ('<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" '
                'iyz="0" izz="0.1"/></inertial>')
    urdf = (f'<robot name="ball_arm"><link name="base">{inertial}</link>'
            f'<link name="ball">{inertial}<collision><geometry><mesh filename="ball.obj"/>'
            '</geometry></collision></link><joint name="turn" type="revolute">'
            '<parent link="base"/><child link="ball"/><axis xyz="0 0 1"/>'
            '<limit lower="-3" upper="3" effort="1" velocity="1"/></joint></robot>')
    (tmp_path / "ball_arm.urdf").write_text(urdf)
    robot = casdyn.load_urdf(tmp_path / "ball_arm.urdf")
    rock = g.Obstacle("rock", g.ConvexMesh(points), np.eye(4))
    with pytest.warns(ConvergenceWarning, match=r"collision_distances \(rock, .*\): the convex "
                      r"distance routine stopped at EPA's vertex capacity"):
        [d] = robot.collision_distances([0.0], obstacles=[rock])
    assert d < -0.19
    away = np.eye(4)
    away[:3, 3] = [1.0, 0.0, 0.0]
    far = g.Obstacle("far", g.ConvexMesh(points), away)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        robot.collision_distances(np.array([[0.0], [0.3]]), obstacles=[far])


def test_new_pairs_link_the_routine_compiled_once(tmp_path, monkeypatch):
    """The routine's object is compiled once and kept; each new set of hulls compiles only
    its small table of entries (0.05 s instead of 0.7 s) and links with it."""
    from casdyn.codegen import convex_routine

    monkeypatch.setenv("CASDYN_CACHE", str(tmp_path))
    rng = np.random.default_rng(11)
    far = np.eye(4)
    far[:3, 3] = [2.0, 0.0, 0.0]
    for _ in range(3):
        a, b = rng.normal(size=(20, 3)), rng.normal(size=(8, 3))
        normal = convex_routine.routine(a, b)(np.eye(4), far).full().ravel()[:3]
        assert np.linalg.norm(normal) == pytest.approx(1.0)
    assert len(list(tmp_path.glob("libcasdyn_convex_*.so"))) == 3
    assert len(list((tmp_path / "objects").glob("*.o"))) == 1
