"""Geometry read from URDF and the robot's signed distances: against coal on poses from
Pinocchio's kinematics, Jacobians against finite differences, the reader against Pinocchio's."""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from geometry_reference import coal_distance, coal_shape

import casdyn
from casdyn import geometry as g
from casdyn.errors import InputError, ModelWarning
from casdyn.model.shipped import _robots_dir

OBSTACLES = (g.Obstacle("table", g.Box((1.0, 1.0, 0.05)), np.eye(4)),
             g.Obstacle("ball", g.Sphere(0.1), np.array([[1, 0, 0, 0.4], [0, 1, 0, 0.2],
                                                          [0, 0, 1, 0.5], [0, 0, 0, 1.0]])))
PANDA = Path(pin.__file__).parents[4] / "share/example-robot-data/robots/" \
    "panda_description"


def _link_poses(model, data, q):
    pin.framesForwardKinematics(model, data, q)
    return {f.name: data.oMf[i].homogeneous for i, f in enumerate(model.frames)}


@pytest.mark.parametrize("name", ["ur5e", "kuka_iiwa14"])
def test_arm_distances_agree_with_coal_on_pinocchio_poses(name):
    robot = casdyn.load_robot(name)
    model = pin.buildModelFromUrdf(str(_robots_dir() / f"{name}.urdf"))
    data = model.createData()
    assert list(model.names[1:]) == list(robot.joint_names)
    geometry = {item.name: item for item in robot.collision_geometry}
    assert len(geometry) >= 7 and len(robot.collision_pairs) >= 15
    rng = np.random.default_rng(0)
    seen = []
    for _ in range(30):
        q = robot.random_configuration(rng)
        links = _link_poses(model, data, q)
        ours = robot.collision_distances(q, obstacles=OBSTACLES)
        seen.extend(ours)
        expected = []
        for a, b in robot.collision_pairs:
            ga, gb = geometry[a], geometry[b]
            expected.append(coal_distance(ga.shape, links[ga.body] @ ga.pose,
                                          gb.shape, links[gb.body] @ gb.pose))
        for obstacle in OBSTACLES:
            for item in robot.collision_geometry:
                expected.append(coal_distance(obstacle.shape, obstacle.pose, item.shape,
                                              links[item.body] @ item.pose))
        assert ours.shape == (len(expected),)
        assert np.max(np.abs(ours - expected)) <= 1e-9
    assert min(seen) < -0.01 < 0.01 < max(seen)  # overlapping and apart pairs were compared


@pytest.mark.parametrize("method", [True, "ad"], ids=["closest_points", "ad"])
@pytest.mark.parametrize("name", ["ur5e", "kuka_iiwa14"])
def test_distance_jacobian_matches_finite_differences(name, method):
    robot = casdyn.load_robot(name)
    f = robot.function("collision_distances", obstacles=OBSTACLES, jacobian=method)
    rng = np.random.default_rng(1)
    q = robot.random_configuration(rng)
    d, J = (np.array(x) for x in f(q))
    h = 1e-6
    fd = np.column_stack([(robot.collision_distances(q + h * e, obstacles=OBSTACLES)
                           - robot.collision_distances(q - h * e, obstacles=OBSTACLES)) / (2 * h)
                          for e in np.eye(robot.nv)])
    assert np.all(np.isfinite(J)) and J.shape == (len(d), robot.nv)
    assert np.max(np.abs(J - fd)) <= 1e-6


def test_default_pairs_skip_welded_adjacent_and_disabled_links():
    robot = casdyn.load_robot("ur5e")
    bodies = {item.name: item.body for item in robot.collision_geometry}
    linked = {frozenset(p) for p in (("base_link_inertia", "shoulder_link"),
                                     ("shoulder_link", "upper_arm_link"),
                                     ("upper_arm_link", "forearm_link"),
                                     ("forearm_link", "wrist_1_link"),
                                     ("wrist_1_link", "wrist_2_link"),
                                     ("wrist_2_link", "wrist_3_link"))}
    seen = {frozenset((bodies[a], bodies[b])) for a, b in robot.collision_pairs}
    assert not seen & linked
    assert len(seen) == 7 * 6 // 2 - 6
    from casdyn.model.geometry import collision_pairs

    fewer = collision_pairs(robot.model, robot.collision_geometry,
                            [("base_link_inertia", "forearm_link")])
    assert len(fewer) == len(robot.collision_pairs) - 1


def _disabled(srdf: Path):
    return [(e.get("link1"), e.get("link2")) for e in ET.parse(srdf).getroot()
            .iter("disable_collisions")]


def test_panda_geometry_matches_pinocchios_reader_and_its_boxes_match_coal():
    urdf = PANDA / "urdf/panda.urdf"
    share = PANDA.parents[2]
    robot = casdyn.load_urdf(urdf, package_dirs=[share])
    model = pin.buildModelFromUrdf(str(urdf))
    data = model.createData()
    reference = pin.buildGeomFromUrdf(model, str(urdf), pin.COLLISION, package_dirs=[str(share)])
    gdata = reference.createData()
    ours = robot.collision_geometry
    assert [o.name for o in reference.geometryObjects] == [item.name for item in ours]
    rng = np.random.default_rng(2)
    q = robot.random_configuration(rng)
    position = dict(zip(robot.joint_names, q, strict=True))
    for name, leader, multiplier, offset in robot.mimic_joints:
        position[name] = multiplier * position[leader] + offset
    q_pin = np.array([position[name] for name in model.names[1:]])
    pin.updateGeometryPlacements(model, data, reference, gdata, q_pin)
    links = _link_poses(model, data, q_pin)
    for item, placed in zip(ours, gdata.oMg, strict=True):
        assert np.allclose(links[item.body] @ item.pose, placed.homogeneous, atol=1e-12)
        if isinstance(item.shape, g.ConvexMesh):  # the hull holds the mesh coal reads
            mesh = reference.geometryObjects[ours.index(item)].geometry
            points = np.asarray(mesh.vertices())
            hull = item.shape.hull
            assert np.all(points @ hull.normals.T - hull.offsets <= 1e-9)
    from casdyn.functions.geometry_distances import distances_function
    from casdyn.model.geometry import RobotGeometry

    geometry = RobotGeometry(robot.model, urdf, [share], _disabled(PANDA / "srdf/panda.srdf"))
    assert len(geometry.pairs) < len(robot.collision_pairs)
    boxes = [(a, b) for a, b in robot.collision_pairs
             if all(isinstance(o.shape, g.Box) for o in ours if o.name in (a, b))]
    assert boxes
    d = np.asarray(distances_function(robot.model, geometry.collision, boxes, ())(q)).ravel()
    by_name = {item.name: item for item in ours}
    for (a, b), value in zip(boxes, d, strict=True):
        ga, gb = by_name[a], by_name[b]
        expected = coal_distance(ga.shape, links[ga.body] @ ga.pose, gb.shape,
                                 links[gb.body] @ gb.pose, coal_shape(ga.shape))
        assert abs(value - expected) <= 1e-9


URDF = """<robot name="r">
  <link name="a"><collision><geometry><mesh filename="{mesh}" scale="2 2 2"/></geometry>
    </collision><visual><origin xyz="0 0 1" rpy="0 0 0"/><geometry><capsule radius="0.1"
    length="0.3"/></geometry></visual></link>
  <link name="b"><collision><geometry><mesh filename="package://pkg/gone.stl"/></geometry>
    </collision><collision><origin xyz="0.5 0 0"/><geometry><sphere radius="0.2"/></geometry>
    </collision></link>
  <joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""


def test_reader_scales_meshes_and_a_missing_mesh_is_a_warning(tmp_path):
    import trimesh

    (tmp_path / "pkg").mkdir()
    trimesh.creation.box((1, 1, 1)).export(tmp_path / "pkg" / "cube.stl")
    path = tmp_path / "r.urdf"
    path.write_text(URDF.format(mesh="package://pkg/cube.stl"))
    robot = casdyn.load_urdf(path, package_dirs=[tmp_path])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        collision = robot.collision_geometry
    assert any(issubclass(w.category, ModelWarning) and "gone.stl" in str(w.message)
               for w in caught)
    assert [item.name for item in collision] == ["a_0", "b_1"]
    assert np.allclose(np.abs(collision[0].shape.vertices), 1.0)  # the unit cube, scaled 2
    visual = robot.visual_geometry[0]
    assert visual.shape == g.Capsule(0.1, 0.3) and visual.pose[2, 3] == 1.0
    # a sphere 0.5 from the axis of b, against the cube of half side 1 on the base link: -0.7
    assert np.allclose(robot.collision_distances([0.0], pairs=[("a_0", "b_1")]), [-0.7])


def test_unknown_pair_names_are_input_errors():
    robot = casdyn.load_robot("ur5e")
    with pytest.raises(InputError, match="collision geometry"):
        robot.collision_distances(robot.home_configuration(), pairs=[("nope", "wrist_1_link_0")])


def test_panda_with_fitted_capsules_agrees_with_coal_and_holds_the_meshes():
    from casdyn.functions.geometry_distances import distances_function
    from casdyn.model.geometry import RobotGeometry

    urdf, share = PANDA / "urdf/panda.urdf", PANDA.parents[2]
    robot = casdyn.load_urdf(urdf, package_dirs=[share])
    geometry = RobotGeometry(robot.model, urdf, [share], _disabled(PANDA / "srdf/panda.srdf"))
    fitted = g.with_fitted_capsules(geometry.collision)
    for mesh, capsule in zip(geometry.collision, fitted, strict=True):
        if isinstance(mesh.shape, g.ConvexMesh):  # every hull vertex inside its capsule
            local = np.linalg.inv(capsule.pose) @ mesh.pose
            ends = np.array([0, 0, capsule.shape.length / 2])
            for vertex in mesh.shape.vertices[::7]:
                p = local[:3, :3] @ vertex + local[:3, 3]
                t = np.clip(p[2], -ends[2], ends[2])
                assert np.linalg.norm(p - [0, 0, t]) <= capsule.shape.radius + 1e-12
    from casdyn.model.geometry import collision_pairs

    pairs = collision_pairs(robot.model, fitted, geometry.disabled)
    assert pairs == geometry.pairs  # the same names, links and SRDF
    f = distances_function(robot.model, fitted, pairs, OBSTACLES)
    model = pin.buildModelFromUrdf(str(urdf))
    data = model.createData()
    by_name = {item.name: item for item in fitted}
    rng = np.random.default_rng(4)
    for _ in range(5):
        q = robot.random_configuration(rng)
        position = dict(zip(robot.joint_names, q, strict=True))
        for name, leader, multiplier, offset in robot.mimic_joints:
            position[name] = multiplier * position[leader] + offset
        links = _link_poses(model, data, np.array([position[n] for n in model.names[1:]]))
        expected = [coal_distance(by_name[a].shape, links[by_name[a].body] @ by_name[a].pose,
                                  by_name[b].shape, links[by_name[b].body] @ by_name[b].pose)
                    for a, b in pairs]
        expected += [coal_distance(o.shape, o.pose, item.shape, links[item.body] @ item.pose)
                     for o in OBSTACLES for item in fitted]
        assert np.max(np.abs(f(q).full().ravel() - expected)) <= 1e-9


def test_batches_symbols_and_a_floor_plane():
    robot = casdyn.load_robot("ur5e")
    floor = g.Obstacle("floor", g.Plane((0, 0, 1), -0.2), np.eye(4))
    rng = np.random.default_rng(6)
    qs = np.array([robot.random_configuration(rng) for _ in range(4)])
    batch = robot.collision_distances(qs, obstacles=[floor])
    assert batch.shape == (4, len(robot.collision_pairs) + len(robot.collision_geometry))
    for q, row in zip(qs, batch, strict=True):
        assert np.allclose(robot.collision_distances(q, obstacles=[floor]), row, atol=1e-14)
    model = pin.buildModelFromUrdf(str(_robots_dir() / "ur5e.urdf"))
    links = _link_poses(model, model.createData(), qs[0])
    for item, value in zip(robot.collision_geometry, batch[0, len(robot.collision_pairs):],
                           strict=True):
        expected = coal_distance(floor.shape, floor.pose, item.shape,
                                 links[item.body] @ item.pose)
        assert abs(value - expected) <= 1e-9
    import casadi as ca

    symbolic = robot.collision_distances(ca.SX.sym("q", robot.nq))
    assert isinstance(symbolic, ca.SX) and symbolic.shape == (len(robot.collision_pairs), 1)


def test_floating_base_jacobian_is_in_the_tangent_space():
    robot = casdyn.load_robot("kuka_iiwa14", floating_base=True)
    rng = np.random.default_rng(8)
    q = robot.random_configuration(rng)
    for method in (True, "ad"):
        f = robot.function("collision_distances", obstacles=OBSTACLES, jacobian=method)
        d, J = (np.asarray(x.full()) for x in f(q))
        h = 1e-6
        fd = np.column_stack([
            (robot.collision_distances(robot.integrate(q, h * e), obstacles=OBSTACLES)
             - robot.collision_distances(robot.integrate(q, -h * e), obstacles=OBSTACLES))
            / (2 * h) for e in np.eye(robot.nv)])
        assert J.shape == (len(d), robot.nv)
        assert np.max(np.abs(J - fd)) <= 1e-6, method


def test_reading_a_mesh_without_trimesh_names_the_extra(monkeypatch, tmp_path):
    import sys

    from casdyn.errors import CasdynError
    from casdyn.geometry import meshes

    monkeypatch.setitem(sys.modules, "trimesh", None)  # import trimesh raises ImportError
    meshes._vertices.cache_clear()
    (tmp_path / "m.stl").write_text("solid m\nendsolid m\n")
    with pytest.raises(CasdynError, match=r"pip install 'casdyn\[geometry\]'"):
        g.Mesh(tmp_path / "m.stl").vertices()


def test_a_pickled_robot_keeps_its_geometry():
    import pickle

    robot = casdyn.load_robot("ur5e")
    q = robot.random_configuration(np.random.default_rng(9))
    expected = robot.collision_distances(q)
    copy = pickle.loads(pickle.dumps(robot))
    assert copy.collision_pairs == robot.collision_pairs
    assert np.array_equal(copy.collision_distances(q), expected)


FLOATING = """<robot name="f">
  <link name="body"><collision><geometry><sphere radius="0.1"/></geometry></collision></link>
  <link name="plate"><collision><geometry><box size="0.1 0.1 0.02"/></geometry></collision>
    </link>
  <link name="a"><collision><geometry><sphere radius="0.05"/></geometry></collision></link>
  <link name="b"><collision><geometry><sphere radius="0.05"/></geometry></collision></link>
  <joint name="weld" type="fixed"><parent link="body"/><child link="plate"/>
    <origin xyz="0 0 0.2"/></joint>
  <joint name="ja" type="revolute"><parent link="body"/><child link="a"/><axis xyz="0 1 0"/>
    <origin xyz="0.3 0 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="jb" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 1 0"/>
    <origin xyz="0.3 0 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""


@pytest.mark.parametrize("floating", [False, True])
def test_the_root_link_of_a_floating_base_is_a_moving_body(tmp_path, floating):
    path = tmp_path / "f.urdf"
    path.write_text(FLOATING)
    robot = casdyn.load_urdf(path, floating_base=floating)
    # body and plate welded, a adjacent to both through ja: only b against them, whether the
    # base is fixed or floating
    assert robot.collision_pairs == (("body_0", "b_0"), ("plate_0", "b_0"))
    q = robot.random_configuration(np.random.default_rng(3))
    f = robot.function("collision_distances", jacobian=True)
    _, J = (np.asarray(x.full()) for x in f(q))
    h = 1e-6
    fd = np.column_stack([(robot.collision_distances(robot.integrate(q, h * e))
                           - robot.collision_distances(robot.integrate(q, -h * e))) / (2 * h)
                          for e in np.eye(robot.nv)])
    assert np.max(np.abs(J - fd)) <= 1e-6
    assert np.allclose(J[:, : robot.nv - 2], 0.0, atol=1e-12)  # a common motion: no change


def test_collision_hulls_are_built_only_for_distances_once_per_file(monkeypatch):
    import time

    from casdyn.geometry import hull

    robots = PANDA.parent
    urdf = robots / "solo_description/robots/solo12.urdf"
    built = []
    original = hull.convex_hull
    monkeypatch.setattr(hull, "convex_hull", lambda p: built.append(len(p)) or original(p))
    hull.file_hull.cache_clear()
    robot = casdyn.load_urdf(urdf, floating_base=True, package_dirs=[robots.parents[1]])
    assert len(robot.visual_geometry) == len(robot.collision_geometry) == 17
    assert robot.collision_pairs and built == []  # reading and pairing build no hull
    with robot.show() as viewer:
        assert viewer.geometry == "visual"
    assert built == []
    files = {(item.shape.mesh.path, item.shape.mesh.scale) for item in robot.collision_geometry}
    start = time.perf_counter()
    for item in robot.collision_geometry:
        assert len(item.shape.vertices) >= 4
    elapsed = time.perf_counter() - start
    assert len(built) == len(files) == 10  # 17 meshes, 10 files: one hull per file
    assert elapsed < 10.0, f"the hulls of solo12 took {elapsed:.1f} s"


def _coal_distances(name, robot, q, pairs, obstacles) -> list[float]:
    """coal's distances of ``pairs`` then of each obstacle against every geometry, on the
    link poses of Pinocchio's kinematics of the shipped robot ``name`` at ``q``."""
    model = pin.buildModelFromUrdf(str(_robots_dir() / f"{name}.urdf"))
    links = _link_poses(model, model.createData(), q)
    geometry = {item.name: item for item in robot.collision_geometry}
    result = [coal_distance(geometry[a].shape, links[geometry[a].body] @ geometry[a].pose,
                            geometry[b].shape, links[geometry[b].body] @ geometry[b].pose)
              for a, b in pairs]
    for obstacle in obstacles:
        result += [coal_distance(obstacle.shape, obstacle.pose, item.shape,
                                 links[item.body] @ item.pose)
                   for item in robot.collision_geometry]
    return result


@pytest.mark.slow
def test_collision_distances_is_a_registered_function_compiled_and_exported(tmp_path):
    from casdyn.functions.registry import SIGNATURES

    assert "collision_distances" in casdyn.FUNCTION_NAMES
    assert SIGNATURES["collision_distances"].options == {"pairs": None, "obstacles": (),
                                                         "jacobian": False}
    robot = casdyn.load_robot("ur5e")
    pairs = robot.collision_pairs[:4]
    table = [g.Obstacle("table", g.Box((1.0, 1.0, 0.05)), np.eye(4))]
    same = [g.Obstacle("table", g.Box((1.0, 1.0, 0.05)), np.eye(4))]
    f = robot.function("collision_distances", pairs=list(pairs), obstacles=table,
                       jacobian=True)
    assert f is robot.function("collision_distances", pairs=pairs, obstacles=same,
                               jacobian=True)  # equal options: the cached Function
    assert f.name_out() == ["d", "J"]
    assert robot.function("collision_distances").name_out() == ["d"]
    qs = robot.random_configuration(np.random.default_rng(4), 3)
    expected = [np.asarray(f(q)[0]).ravel() for q in qs]
    reference = [_coal_distances("ur5e", robot, q, pairs, table) for q in qs]
    assert np.allclose(expected, reference, atol=1e-9)
    options = {"pairs": pairs, "obstacles": table, "jacobian": True}
    loaded = robot.export_c(tmp_path / "c", [("collision_distances", options)])
    (key, compiled), = loaded.items()
    assert key == "collision_distances_jacobian"
    for q in qs:
        for ours, theirs in zip(compiled(q), f(q), strict=True):
            assert np.allclose(np.asarray(ours), np.asarray(theirs), atol=1e-12, rtol=0)
    robot.compile([("collision_distances", {"pairs": pairs, "obstacles": table})],
                  directory=tmp_path / "cache")
    assert any(n.startswith("collision_distances") for n in robot.compiled_functions)
    assert np.allclose(robot.collision_distances(qs, pairs=pairs, obstacles=table), expected,
                       atol=1e-12, rtol=0)
