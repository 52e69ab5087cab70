"""MJCF ``connect`` and ``weld`` equalities as casdyn's closed loops
(:class:`casdyn.model.loops.Loop`), read from MuJoCo's compiled arrays."""

from __future__ import annotations

import numpy as np

from .mjcf_frames import quaternion_matrix
from .mjcf_unmodelled import CONNECT, WELD

SITE = 6  # mjtObj: an equality between sites rather than bodies


def mjcf_loops(m, reader) -> tuple:
    """The active ``connect`` and ``weld`` equalities as loops (MuJoCo's
    ``mj_instantiateEquality``): a connect holds ``eq_data[0:3]`` of body 1 on
    ``eq_data[3:6]`` of body 2; a weld ``eq_data[3:6]`` of body 1 on ``eq_data[0:3]`` of
    body 2, body 1's frame turned by the quaternion ``eq_data[6:10]`` on body 2's; between
    sites, the sites' origins (and frames). ``reader``: the MJCF reader (its body names,
    floating root, static bodies; inactive equalities are named in its warnings)."""
    from .loops import Loop

    loops, inactive = [], []
    body_name = {b: reader.body_names[b] for b in range(m.nbody)}
    if reader.floating is not None:
        body_name[0] = "world"
    for k in range(m.neq):
        kind = int(m.eq_type[k])
        if kind not in (CONNECT, WELD):
            continue
        name = m.eq(k).name or f"equality{k}"
        if not m.eq_active0[k]:
            inactive.append(name)
            continue
        data = np.array(m.eq_data[k], dtype=float)
        ids = int(m.eq_obj1id[k]), int(m.eq_obj2id[k])
        if int(m.eq_objtype[k]) == SITE:
            bodies = [int(m.site_bodyid[i]) for i in ids]
            points = [np.array(m.site_pos[i], dtype=float) for i in ids]
            frames = [quaternion_matrix(m.site_quat[i]) for i in ids]
            rotation = frames[1] @ frames[0].T  # site 1's frame on site 2's
        else:
            bodies = list(ids)
            # a connect's anchors are body 1's then body 2's, a weld's the other way round
            points = [data[0:3], data[3:6]] if kind == CONNECT else [data[3:6], data[0:3]]
            rotation = quaternion_matrix(data[6:10]).T if kind == WELD else np.eye(3)
        sides = [_on_robot(m, reader, body, point) for body, point in zip(bodies, points,
                                                                           strict=True)]
        if sides[0][0] == 0 and sides[1][0] == 0:
            inactive.append(name)  # between bodies fixed to the world: it holds nothing
            continue
        if sides[0][0] == 0:  # body 1 fixed to the world: it becomes the held side b
            # R_1 = R_2 rotation: body 2's frame R_2 held on the world frame R_1 rotation^T
            (b, point_b, R_b), (a, point_a, _) = sides
            rotation = R_b @ rotation.T
        else:
            (a, point_a, _), (b, point_b, R_b) = sides
            rotation = R_b @ rotation
        loops.append(Loop(body_name[a], body_name[b], "point" if kind == CONNECT else "6d",
                          tuple(point_a), tuple(point_b), tuple(rotation.ravel()), name))
    if inactive:
        reader.warnings.append(
            f"{reader.label}: equalities inactive at the start, or between bodies fixed to the "
            f"world, are left out: {', '.join(map(repr, inactive))}")
    return tuple(loops)


def _on_robot(m, reader, body: int, point: np.ndarray):
    """``(body, point, R)``: ``point`` of ``body`` on the robot, ``R`` the axes the loop's
    frames are given in there (the identity); a body fixed to the world and left out of a
    floating robot gives the world (body 0) with ``point`` and ``R`` in world coordinates."""
    if body not in reader.static:
        return body, point, np.eye(3)
    rotation, translation = np.eye(3), np.zeros(3)
    while body != 0:  # every ancestor of a static body is static: its pose is constant
        local = quaternion_matrix(m.body_quat[body])
        translation = local @ translation + np.array(m.body_pos[body], dtype=float)
        rotation = local @ rotation
        body = int(m.body_parentid[body])
    return 0, translation + rotation @ point, rotation
