"""An MJCF model's geoms as the robot's collision geometry (casdyn.model.mjcf_geometry),
against MuJoCo itself: geom poses (``geom_xpos``, ``geom_xmat``), the pairs MuJoCo tests for
contact (the contacts ``mj_collision`` makes when every margin is huge) and signed distances
(``mj_geomDistance``; coal where MuJoCo's penetration depth is not the exact one)."""

from __future__ import annotations

import pickle
import time

import coal
import mujoco
import numpy as np
import pytest
from conftest import assert_close
from geometry_reference import coal_distance
from mujoco_reference import random_qpos
from test_mjcf import BUDGET, _load, _package_files

import casdyn
from casdyn.geometry import Box, Capsule, ConvexMesh, Cylinder, Plane, Sphere
from casdyn.model.mjcf_geometry import geom_names

EXACT = 1e-9

SHAPES = """
<mujoco model="shapes">
  <asset>
    <mesh name="wedge" vertex="0 0 0  0.2 0 0  0 0.15 0  0 0 0.1  0.2 0.15 0.05  0.1 0.1 0.12"/>
    <mesh name="tet" vertex="0 0 0  0.1 0 0  0 0.1 0  0 0 0.1"/>
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1" pos="0 0 -0.5"/>
    <geom name="pillar" type="box" size="0.1 0.1 0.4" pos="0.6 0.3 0" euler="0 0 20"/>
    <body name="a" pos="0 0 0.2">
      <joint name="j1" axis="0 0 1"/><joint name="j2" axis="0 1 0" pos="0 0 0.1"/>
      <geom name="cap" type="capsule" fromto="0 0 0 0.4 0 0.1" size="0.05"/>
      <body name="b" pos="0.4 0 0.1">
        <joint type="ball"/>
        <geom name="box" type="box" size="0.1 0.05 0.03" pos="0.15 0 0" euler="10 20 0"/>
        <geom name="egg" type="ellipsoid" size="0.1 0.05 0.03" pos="0.15 0 0"/>
        <body name="c" pos="0.3 0 0"><joint axis="1 0 0"/>
          <geom name="wedge" type="mesh" mesh="wedge" pos="0.05 0.02 0" euler="20 0 10"/>
          <site name="wedge_frame" pos="0.05 0.02 0" euler="20 0 10"/>
          <geom type="sphere" size="0.06" pos="0.1 0 0.1"/>
        </body>
      </body>
    </body>
    <body name="free" pos="0.3 -0.3 0.3"><freejoint/>
      <geom name="cyl" type="cylinder" size="0.05 0.1"/>
      <geom name="cap2" type="capsule" size="0.04 0.08" pos="0 0.1 0"/>
      <geom name="tet" type="mesh" mesh="tet" pos="0 -0.1 0" euler="5 10 15"/>
      <geom name="look" type="box" size="0.1 0.1 0.1" contype="0" conaffinity="0" group="1"/>
    </body>
  </worldbody>
</mujoco>
"""


def _world_pose(d, g: int) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = d.geom_xmat[g].reshape(3, 3), d.geom_xpos[g]
    return T


def _placed(robot, q, item) -> np.ndarray:
    return robot.get_transform(q, item.body) @ item.pose if item.body != "world" \
        else np.asarray(item.pose)


def test_every_geom_kind_becomes_its_shape_where_mujoco_places_it():
    robot = _load(SHAPES)
    m = mujoco.MjModel.from_xml_string(SHAPES)
    d = mujoco.MjData(m)
    collision = {item.name: item for item in robot.collision_geometry}
    assert list(collision) == ["floor", "pillar", "cap", "box", "wedge", "c_1", "cyl", "cap2",
                               "tet"]
    assert [item.name for item in robot.visual_geometry] == ["look"]
    shapes = {name: item.shape for name, item in collision.items()}
    assert shapes["floor"] == Plane((0, 0, 1), 0) and collision["floor"].body == "world"
    assert shapes["pillar"] == Box((0.2, 0.2, 0.8))
    assert shapes["cap"].radius == 0.05
    assert shapes["cap"].length == pytest.approx(np.hypot(0.4, 0.1), rel=1e-15)
    assert shapes["box"] == Box((0.2, 0.1, 0.06)) and shapes["c_1"] == Sphere(0.06)
    assert shapes["cyl"] == Cylinder(0.05, 0.2) and shapes["cap2"] == Capsule(0.04, 0.16)
    assert isinstance(shapes["wedge"], ConvexMesh) and len(shapes["wedge"].vertices) == 6
    wedge = np.array([0, 0, 0, 0.2, 0, 0, 0, 0.15, 0, 0, 0, 0.1, 0.2, 0.15, 0.05, 0.1, 0.1,
                      0.12]).reshape(-1, 3)
    rng = np.random.default_rng(0)
    for _ in range(3):
        q = random_qpos(m, rng)
        d.qpos[:] = q
        mujoco.mj_forward(m, d)
        for name, item in collision.items():
            assert_close(_placed(robot, q, item), _world_pose(d, _geom_ids(m)[name]))
        # the compiled mesh frame and geom pose put the file's vertices where they were
        # (MuJoCo keeps mesh vertices in single precision: 1e-7)
        T = _placed(robot, q, collision["wedge"])
        placed = shapes["wedge"].vertices @ T[:3, :3].T + T[:3, 3]
        site = m.site("wedge_frame").id
        expected = wedge @ d.site_xmat[site].reshape(3, 3).T + d.site_xpos[site]
        assert_close(np.sort(placed, axis=0), np.sort(expected, axis=0), 1e-7)


NEAR_INERTIA = """
<mujoco><worldbody><body name="b" pos="0.3 0 0"><joint axis="0 0 1"/>
  <inertial pos="0.1 0.2 0" quat="0.9 0.1 0.2 0.3" mass="1" diaginertia="1 2 3"/>
  <geom name="g" type="box" size="0.1 0.2 0.3" pos="0.1 0.2 0.00000005"
        quat="0.9 0.1000001 0.2 0.3"/>
  <site name="s" pos="0.1 0.20000005 0" quat="0.9 0.1 0.2000001 0.3"/>
</body></worldbody></mujoco>
"""


def test_a_geom_or_site_the_compiler_put_on_the_inertial_frame_is_there():
    """MuJoCo's compiler finds this geom's and site's frames equal to the body's inertial
    frame (``sameframe``, 5e-8 m apart) and its kinematics puts them there."""
    robot = _load(NEAR_INERTIA)
    m = mujoco.MjModel.from_xml_string(NEAR_INERTIA)
    assert m.geom_sameframe[0] == m.site_sameframe[0] == mujoco.mjtSameFrame.mjSAMEFRAME_INERTIA
    d = mujoco.MjData(m)
    d.qpos[:] = 0.7
    mujoco.mj_kinematics(m, d)
    (item,) = robot.collision_geometry
    assert_close(_placed(robot, d.qpos, item), _world_pose(d, 0), 1e-12)
    site = np.eye(4)
    site[:3, :3], site[:3, 3] = d.site_xmat[0].reshape(3, 3), d.site_xpos[0]
    assert_close(robot.get_transform(d.qpos, "s"), site, 1e-12)


def test_a_geom_without_a_shape_is_named_in_a_warning():
    text = SHAPES.replace('<geom name="floor"', '<geom name="ground" type="hfield" '
                          'hfield="h"/><geom name="floor"')
    text = text.replace("</asset>", '<hfield name="h" nrow="2" ncol="2" size="1 1 0.1 0.1"/>'
                        "</asset>")
    with pytest.warns(casdyn.ModelWarning) as record:
        robot = casdyn.load_mjcf(text)
    said = " ".join(str(w.message) for w in record)
    assert "'egg' (ellipsoid on body 'b')" in said and "'ground' (hfield on body 'world')" in said
    names = {item.name for item in robot.collision_geometry}
    assert "egg" not in names and "ground" not in names
    assert "contacts between geoms" not in said and "contact forces between geoms" in said


def _geom_ids(m) -> dict[str, int]:
    """casdyn's geom names -> MuJoCo geom ids (unnamed geoms: ``"<body>_<k>"``)."""
    bodies = ["world"] + [m.body(b).name or f"body{b}" for b in range(1, m.nbody)]
    return {name: g for g, name in enumerate(geom_names(m, bodies))}


def _mujoco_pairs(m) -> set[frozenset]:
    """The geom pairs MuJoCo's ``mj_collision`` makes contacts for when every margin is
    huge (every pair its filters let through is then in contact; the mid-phase, whose
    bounding volumes hold the compiled margins, is switched off, and the geoms but planes
    and height fields are made their bounding spheres: MuJoCo's box-box contacts, for one,
    miss pairs far apart within the margin)."""
    m = m.__copy__()
    for g in range(m.ngeom):
        if m.geom_type[g] not in (mujoco.mjtGeom.mjGEOM_PLANE, mujoco.mjtGeom.mjGEOM_HFIELD):
            m.geom_type[g], m.geom_size[g, 0] = mujoco.mjtGeom.mjGEOM_SPHERE, m.geom_rbound[g]
    m.geom_margin[:] = 1e3
    m.pair_margin[:] = 1e3
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_MIDPHASE
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    mujoco.mj_collision(m, d)  # the contacts alone: their constraints could fill the arena
    assert not d.warning[mujoco.mjtWarning.mjWARN_CONTACTFULL].number
    return {frozenset(int(g) for g in pair) for pair in d.contact.geom[: d.ncon]}


def _casdyn_pairs(robot, m) -> set[frozenset]:
    ids = _geom_ids(m)
    return {frozenset(ids[name] for name in pair) for pair in robot.collision_pairs}


FILTERS = """
<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 1"/>
    <body name="base"><geom name="base" size="0.1"/>
      <body name="l1"><joint axis="0 0 1"/><geom name="l1" size="0.1"/>
        <body name="l1b"><geom name="l1b" size="0.1"/>
          <body name="l2"><joint axis="0 1 0"/><geom name="l2" size="0.1"/>
            <body name="l3"><joint axis="0 1 0"/><geom name="l3" size="0.1"/>
              <geom name="l3_odd" size="0.1" contype="2" conaffinity="2"/>
              <geom name="l3_mute" size="0.1" contype="0" conaffinity="0"/>
            </body></body></body></body></body>
    <body name="other" pos="0.05 0 0"><joint axis="1 0 0"/><geom name="other" size="0.1"/>
      <geom name="other_odd" size="0.1" contype="2" conaffinity="0"/></body>
  </worldbody>
  <contact><exclude body1="l3" body2="other"/><pair geom1="l3_mute" geom2="l1"/></contact>
</mujoco>
"""


@pytest.mark.parametrize("flag", ["", '<option><flag filterparent="disable"/></option>',
                                  '<option><flag contact="disable"/></option>'])
def test_the_pairs_are_those_mujoco_tests_for_contact(flag):
    """Parent-child through joints and welds, the world never a parent, bitmasks,
    ``exclude`` and ``pair``: the same set as MuJoCo's contacts with huge margins."""
    text = FILTERS.replace("<worldbody>", flag + "<worldbody>")
    m = mujoco.MjModel.from_xml_string(text)
    robot = _load(text)
    expected = _mujoco_pairs(m)
    assert _casdyn_pairs(robot, m) == expected
    if "contact=" in flag:
        assert not expected
        return

    def has(a, b):
        return frozenset((m.geom(a).id, m.geom(b).id)) in expected

    assert has("l3_mute", "l1")  # the explicit pair
    assert not has("l3", "other") and has("l3_odd", "other_odd") is False  # excluded
    assert not has("l1", "l1b")  # welded together
    assert has("l1b", "l2") == bool(flag)  # parent (welded to l1) and child
    assert not has("floor", "base")  # both welded to the world
    assert has("floor", "l1") and has("base", "l1")  # the world is nobody's parent
    assert has("l2", "l3") == bool(flag) and has("l1", "l2") == bool(flag)
    assert not has("l3_odd", "l1") and not has("other_odd", "l1") and has("other", "l1")


def test_a_floating_robot_puts_the_geoms_of_fixed_bodies_on_the_world():
    text = """<mujoco><worldbody>
      <body name="table" pos="1 0 0.3" euler="0 0 30"><geom name="top" type="box"
        size="0.5 0.5 0.02" pos="0 0.1 0"/></body>
      <body name="torso" pos="0 0 1"><freejoint/><geom name="torso" size="0.1"/></body>
    </worldbody></mujoco>"""
    robot = _load(text)
    m = mujoco.MjModel.from_xml_string(text)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    top = next(item for item in robot.collision_geometry if item.name == "top")
    assert robot.floating_base and top.body == "world"
    assert_close(top.pose, _world_pose(d, m.geom("top").id))
    assert robot.collision_pairs == (("top", "torso"),)


@pytest.mark.slow  # several seconds: the quick tier stays quick
def test_distance_jacobians_and_pickling_take_the_world_geometry():
    """The closest-point Jacobian of pairs with world geometry (a floor, a pillar) is the
    AD one, and a pickled robot reads its geoms again."""
    robot = _load(SHAPES)
    m = mujoco.MjModel.from_xml_string(SHAPES)
    pairs = list(robot.collision_pairs)
    assert ("floor", "cap") in pairs and ("pillar", "wedge") in pairs
    q = random_qpos(m, np.random.default_rng(5))
    d, J = robot.function("collision_distances", pairs=pairs, jacobian=True)(q)
    d_ad, J_ad = robot.function("collision_distances", pairs=pairs, jacobian="ad")(q)
    assert_close(d, d_ad)
    assert_close(J, J_ad)
    copy = pickle.loads(pickle.dumps(robot))
    assert copy.collision_pairs == robot.collision_pairs
    assert_close(copy.collision_distances(q, pairs=pairs), d.full().ravel())


def _coal(shape):
    if isinstance(shape, Sphere):
        return coal.Sphere(shape.radius)
    if isinstance(shape, Capsule):
        return coal.Capsule(shape.radius, shape.length)
    if isinstance(shape, Box):
        return coal.Box(*shape.size)
    if isinstance(shape, Cylinder):
        return coal.Cylinder(shape.radius, shape.length)
    return None  # planes and meshes: MuJoCo alone


def _coal_distance(a, Ta, b, Tb) -> float:
    result = coal.DistanceResult()
    return coal.distance(a, coal.Transform3s(Ta[:3, :3], Ta[:3, 3]), b,
                         coal.Transform3s(Tb[:3, :3], Tb[:3, 3]), coal.DistanceRequest(),
                         result)


def _apart(items, d, a: str, ga: int, b: str, gb: int, mujocos: float) -> float:
    """The distance of geoms apart: MuJoCo's, or for a pair with a mesh coal's, run to 1e-12
    (MuJoCo's distances of meshes are off by a few 1e-9 m: 1.7e-9 from the palm mesh of
    robosuite's Robotiq gripper S to a finger's box, where coal agrees with casdyn to 1e-16)."""
    shape_a, shape_b = items[a].shape, items[b].shape
    if not (isinstance(shape_a, ConvexMesh) or isinstance(shape_b, ConvexMesh)):
        return mujocos
    return coal_distance(shape_a, _world_pose(d, ga), shape_b, _world_pose(d, gb), epa=1e-12)


def compare_distances(robot, m, states: int, seed: int = 0, pair_limit: int | None = None):
    """``(separated, penetrating, skipped)``: the largest error where the geoms are apart
    (against MuJoCo, or coal for a pair with a mesh: :func:`_apart`), against coal where they
    overlap (primitives), and the pairs skipped. With ``pair_limit``: that many pairs, drawn
    at random, none of two meshes (MuJoCo's mesh-mesh distances were up to 3.9e-9 m off on
    robosuite's UR5e, where coal run to 1e-12 agrees with casdyn to 4e-15; mesh pairs are
    checked against coal in tests/test_convex_routine.py) nor of a cylinder and a mesh
    (tested against coal in tests/test_cylinders.py). Meshes of any size: their pairs go to
    the compiled routine."""
    d = mujoco.MjData(m)
    items = {item.name: item for item in robot.collision_geometry}
    ids = _geom_ids(m)
    order = list(robot.collision_pairs)
    if pair_limit is not None:
        def small(pair):
            kinds = [type(items[n].shape) for n in pair]
            return kinds.count(ConvexMesh) < 2 and set(kinds) != {Cylinder, ConvexMesh}

        order = [order[i] for i in np.random.default_rng(seed).permutation(len(order))
                 if small(order[i])]
    pairs, skipped = [], []
    for a, b in order:
        if pair_limit is not None and len(pairs) == pair_limit:
            break
        pairs.append((a, b))  # every pair has an exact distance
    f = robot.function("collision_distances", pairs=pairs)
    rng = np.random.default_rng(seed)
    separated = penetrating = 0.0
    for _ in range(states):
        q = random_qpos(m, rng)
        d.qpos[:] = q
        mujoco.mj_forward(m, d)
        values = f(q).full().ravel()
        for (a, b), value in zip(pairs, values, strict=True):
            ga, gb = ids[a], ids[b]
            reference = mujoco.mj_geomDistance(m, d, ga, gb, 1e3, None)
            if reference > 0:
                exact = _apart(items, d, a, ga, b, gb, reference)
                separated = max(separated, abs(value - exact))
                continue
            assert value < 1e-9, (a, b, value, reference)  # MuJoCo: they overlap
            shapes = _coal(items[a].shape), _coal(items[b].shape)
            if None not in shapes:
                exact = _coal_distance(shapes[0], _world_pose(d, ga), shapes[1],
                                       _world_pose(d, gb))
                penetrating = max(penetrating, abs(value - exact))
    return separated, penetrating, skipped


def test_distances_agree_with_mujoco_and_coal():
    """Apart: MuJoCo's ``mj_geomDistance`` to 1e-9 (coal's, run to 1e-12, for the pairs with
    a mesh). Overlapping: the same sign, and coal's depth (exact, where MuJoCo's box-capsule
    depth, for one, is not) to 1e-7."""
    robot = _load(SHAPES)
    m = mujoco.MjModel.from_xml_string(SHAPES)
    separated, penetrating, skipped = compare_distances(robot, m, states=30)
    assert separated < EXACT and penetrating < 1e-7, (separated, penetrating)
    assert not skipped  # every pair has an exact distance
    assert ("wedge", "tet") in robot.collision_pairs


@pytest.mark.slow
def test_the_installed_packages_geoms_agree_with_mujoco(capsys):
    """On the gymnasium and dm_control models (a fixed shuffled order, within the time
    budget): the collision pairs are MuJoCo's contact pairs, and the distances of up to 20
    of them agree with ``mj_geomDistance`` (coal's for the pairs with a mesh) where apart at
    two random states."""
    files, _ = _package_files()
    order = np.random.default_rng(1).permutation(len(files))
    checked, skipped, wrong = [], [], []
    start = time.monotonic()
    for index in order:
        shown, path = files[index]
        if BUDGET and time.monotonic() - start > BUDGET:
            skipped.append((shown, "not reached within the time budget"))
            continue
        try:
            m = mujoco.MjModel.from_xml_path(str(path))
        except ValueError:
            skipped.append((shown, "not a model MuJoCo compiles alone"))
            continue
        if m.nv == 0 or m.ngeom == 0:
            skipped.append((shown, "no joints or no geoms"))
            continue
        robot = _load(m)
        ids = _geom_ids(m)
        kept = {ids[item.name] for item in robot.collision_geometry}
        expected = {pair for pair in _mujoco_pairs(m) if pair <= kept}
        if _casdyn_pairs(robot, m) != expected:
            wrong.append(f"{shown}: pairs differ")
            continue
        separated, _, _ = compare_distances(robot, m, states=2, pair_limit=20)
        (checked if separated < EXACT else wrong).append(f"{shown} ({separated:.1e})")
    with capsys.disabled():
        print(f"\ncollision geometry agrees with MuJoCo on {len(checked)} models "
              f"({len(wrong)} disagree)")
        for shown, reason in skipped:
            print(f"  skipped {shown}: {reason}")
    assert not wrong, wrong
