"""The geoms of an MJCF model, read from MuJoCo's compiled arrays, as the robot's geometry,
and the pairs MuJoCo itself would test for contact.

Which geoms collide (MuJoCo's ``mj_collision``, engine_collision_driver.c): a geom takes part
in contacts when its ``contype`` or ``conaffinity`` is nonzero (the usual visual-only geom has
both 0), or when a ``<contact><pair>`` names it. Those are ``collision_geometry``; the others
are ``visual_geometry``. Shapes: ``sphere``, ``capsule`` (MuJoCo's size: radius, half-length),
``cylinder`` (radius, half-length), ``box`` (half sizes), ``plane`` (the half-space below its
z = 0 plane; its size only draws it) and ``mesh``, which MuJoCo collides as the convex hull
of its vertices: a :class:`ConvexMesh` of the compiled vertices (``mesh_vert``, in the mesh
frame the compiler chose; ``geom_pos``, ``geom_quat`` already place that frame). Ellipsoids,
height fields, SDFs and anything else are left out with a :class:`ModelWarning` naming them.

Where a geom sits: on its body (MJCF body names are casdyn's), in the body frame, where
MuJoCo's kinematics puts it (``geom_sameframe``: the compiler may put it on the body's
inertial frame instead of ``geom_pos``, ``geom_quat``). Geoms of
the worldbody, and of bodies that a floating robot leaves out because they are fixed to the
world, sit on ``"world"`` (the base frame, MuJoCo's world) at their world pose; on a fixed
base a static body is a link of the robot and keeps its geoms. The world's geoms (a floor)
are thus ordinary collision geometry, in the pairs where MuJoCo tests them, rather than
:class:`~casdyn.geometry.Obstacle` objects, which are tested against every geometry.

The pairs (:func:`mujoco_pairs`) are MuJoCo's: every two collision geoms whose bodies are not
welded together (``body_weldid``), not parent and child (welded groups, unless
``<flag filterparent="disable"/>``; the world is never a parent here), whose ``contype`` and
``conaffinity`` bitmasks are compatible, whose bodies are not excluded by
``<contact><exclude>``, and that MuJoCo has a collision function for (not two planes); plus
the explicit ``<contact><pair>`` geoms whatever the filters say; none with
``<flag contact="disable"/>`` or ``<flag constraint="disable"/>`` (MuJoCo then makes no
contacts at all).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..geometry.shapes import Box, Capsule, ConvexMesh, Cylinder, Geometry, Plane, Sphere
from .geometry import RobotGeometry
from .mjcf_frames import local_pose, quaternion_matrix

# mjtGeom
PLANE, HFIELD, SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, MESH, SDF = range(9)
_TYPE_NAMES = {PLANE: "plane", HFIELD: "hfield", SPHERE: "sphere", CAPSULE: "capsule",
               ELLIPSOID: "ellipsoid", CYLINDER: "cylinder", BOX: "box", MESH: "mesh",
               SDF: "sdf"}
SUPPORTED = (PLANE, SPHERE, CAPSULE, CYLINDER, BOX, MESH)
WORLD = "world"


def pose_matrix(position, quaternion) -> np.ndarray:
    """The 4x4 pose of a MuJoCo ``pos``, ``quat`` (``[w, x, y, z]``)."""
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = quaternion_matrix(quaternion), position
    return pose


def colliding(m) -> list[int]:
    """The geoms MuJoCo may collide: ``contype`` or ``conaffinity`` nonzero, or in a
    ``<contact><pair>``."""
    explicit = set(m.pair_geom1.tolist()) | set(m.pair_geom2.tolist())
    return [g for g in range(m.ngeom)
            if m.geom_contype[g] or m.geom_conaffinity[g] or g in explicit]


def geom_names(m, body_names: list[str]) -> list[str]:
    """Each geom's name: its MJCF name, else ``"<body>_<k>"`` (``k`` counts the body's
    geoms from 0), with a number appended where that is taken."""
    used = {m.geom(g).name for g in range(m.ngeom) if m.geom(g).name}
    names = []
    for g in range(m.ngeom):
        name = m.geom(g).name
        if not name:
            body = int(m.geom_bodyid[g])
            base = candidate = f"{body_names[body]}_{g - int(m.body_geomadr[body])}"
            k = 1
            while candidate in used:
                candidate, k = f"{base}_{k}", k + 1
            used.add(candidate)
            name = candidate
        names.append(name)
    return names


def unsupported(m, label: str, body_names: list[str]) -> list[str]:
    """A warning for the collision geoms casdyn has no shape for (left out)."""
    names = geom_names(m, body_names)
    left = [f"{names[g]!r} ({_TYPE_NAMES.get(int(m.geom_type[g]), int(m.geom_type[g]))} on "
            f"body {body_names[int(m.geom_bodyid[g])]!r})"
            for g in colliding(m) if int(m.geom_type[g]) not in SUPPORTED]
    if not left:
        return []
    return [f"{label}: collision geoms casdyn has no shape for are left out of "
            f"robot.collision_geometry: {', '.join(left)}"]


def geom_shape(m, g: int):
    """The casdyn shape of geom ``g`` in its own frame, or None (no such shape)."""
    kind, size = int(m.geom_type[g]), [float(x) for x in m.geom_size[g]]
    if kind == SPHERE:
        return Sphere(size[0])
    if kind == CAPSULE:
        return Capsule(size[0], 2 * size[1])
    if kind == CYLINDER:
        return Cylinder(size[0], 2 * size[1])
    if kind == BOX:
        return Box(tuple(2 * x for x in size))
    if kind == PLANE:
        return Plane((0.0, 0.0, 1.0), 0.0)
    if kind == MESH:
        mesh = int(m.geom_dataid[g])
        start, count = int(m.mesh_vertadr[mesh]), int(m.mesh_vertnum[mesh])
        return ConvexMesh(np.array(m.mesh_vert[start : start + count], dtype=float))
    return None


def mujoco_pairs(m, geoms: list[int]) -> list[tuple[int, int]]:
    """The pairs among ``geoms`` that MuJoCo tests for contact (see the module's text),
    ``(g1, g2)`` with ``g1 < g2``, in increasing order."""
    import mujoco

    disabled = int(m.opt.disableflags)
    if disabled & (mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT):
        return []  # MuJoCo makes no contacts
    filterparent = not disabled & mujoco.mjtDisableBit.mjDSBL_FILTERPARENT
    weld, parent = m.body_weldid, m.body_parentid
    excluded = set(m.exclude_signature.tolist())
    explicit = {(min(a, b), max(a, b)) for a, b in zip(m.pair_geom1.tolist(),
                                                      m.pair_geom2.tolist(), strict=True)}
    pairs = []
    for i, g1 in enumerate(geoms):
        for g2 in geoms[i + 1:]:
            if (g1, g2) in explicit:
                pairs.append((g1, g2))
                continue
            b1, b2 = int(m.geom_bodyid[g1]), int(m.geom_bodyid[g2])
            w1, w2 = int(weld[b1]), int(weld[b2])
            if w1 == w2:
                continue
            if filterparent and w1 and w2 and (w1 == weld[parent[w2]]
                                               or w2 == weld[parent[w1]]):
                continue
            if not (m.geom_contype[g1] & m.geom_conaffinity[g2]
                    or m.geom_contype[g2] & m.geom_conaffinity[g1]):
                continue
            if (min(b1, b2) << 16) + max(b1, b2) in excluded:
                continue
            if m.geom_type[g1] == PLANE and m.geom_type[g2] == PLANE:
                continue  # MuJoCo has no plane-plane collision
            pairs.append((g1, g2))
    return sorted(pairs)


class MJCFGeometry(RobotGeometry):
    """The geometry of a robot loaded by :func:`casdyn.load_mjcf`: its geoms (see the
    module's text), read from the compiled ``mujoco.MjModel`` ``m`` on first use.
    ``placement[b]`` is ``(casdyn body name, 4x4 pose of MuJoCo body b in that body's
    frame)``; ``body_names[b]`` the name used to name geoms."""

    def __init__(self, model, m, placement: list[tuple[str, np.ndarray]],
                 body_names: list[str]):
        super().__init__(model)
        self._m, self._placement, self._body_names = m, placement, body_names

    def for_model(self, model) -> MJCFGeometry:
        """The same geoms on another model of the same bodies."""
        return MJCFGeometry(model, self._m, self._placement, self._body_names)

    def _geometry(self, geoms: list[int]) -> tuple[Geometry, ...]:
        m, names = self._m, geom_names(self._m, self._body_names)
        items = []
        for g in geoms:
            shape = geom_shape(m, g)
            if shape is None:
                continue  # named in a warning at load
            body, frame = self._placement[int(m.geom_bodyid[g])]
            local = local_pose(m, m.geom_pos[g], m.geom_quat[g], int(m.geom_bodyid[g]),
                               int(m.geom_sameframe[g]))
            items.append(Geometry(names[g], body, shape, frame @ local))
        return tuple(items)

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        for name in ("_collision", "_visual"):
            state.pop(name, None)  # built again: shapes hold CasADi data
        return state

    @cached_property
    def _collision(self) -> tuple[Geometry, ...]:
        return self._geometry(colliding(self._m))

    @cached_property
    def _visual(self) -> tuple[Geometry, ...]:
        chosen = set(colliding(self._m))
        return self._geometry([g for g in range(self._m.ngeom) if g not in chosen])

    @property
    def collision(self) -> tuple:
        return self._collision

    @property
    def visual(self) -> tuple:
        return self._visual

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        m, names = self._m, geom_names(self._m, self._body_names)
        geoms = [g for g in colliding(m) if int(m.geom_type[g]) in SUPPORTED]
        return tuple((names[a], names[b]) for a, b in mujoco_pairs(m, geoms))


def placements(m, body_names: list[str], static: set[int]) -> list[tuple[str, np.ndarray]]:
    """Per MuJoCo body, ``(casdyn body, 4x4 pose of the body in it)``: the body itself at
    the identity, or, for the worldbody and the bodies in ``static`` (fixed to the world and
    left out of a floating robot), ``"world"`` at the body's constant world pose."""
    result: list[tuple[str, np.ndarray]] = [(WORLD, np.eye(4))]
    for b in range(1, m.nbody):
        if b in static:  # its parent is static too, or the world: already placed
            _, parent_pose = result[int(m.body_parentid[b])]
            result.append((WORLD, parent_pose @ pose_matrix(m.body_pos[b], m.body_quat[b])))
        else:
            result.append((body_names[b], np.eye(4)))
    return result
