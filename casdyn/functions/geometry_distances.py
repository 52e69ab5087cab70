"""The signed distances of a robot's collision geometry (:mod:`casdyn.model.geometry`) as a
CasADi Function of ``q``: chosen pairs, then obstacles against every geometry, and their
Jacobian in the tangent space (``collision_distances``, built in :mod:`.build_geometry`).

The shapes are placed by one shared forward kinematics pass
(:func:`casdyn.algorithms.kinematics.base_poses`), in the base frame; each pair's distance is
:func:`casdyn.geometry.distance.distance_expression` of the placed shapes.
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from ..algorithms import configuration, kinematics
from ..errors import InputError, unknown_name
from ..geometry import primitives as pr
from ..geometry.distance import (
    distance_expression,
    distance_gradient_function,
    prepare_routines,
    routine_symbol,
    warn_if_stopped,
    witness_points,
)
from ..geometry.shapes import Mesh, Obstacle
from ..math.spatial import Transform
from ..model.geometry import moving_joint, root_link


def _pair_list(pairs) -> tuple[tuple[str, str], ...]:
    if isinstance(pairs, str) or not hasattr(pairs, "__iter__"):
        raise InputError(f"pairs must be a sequence of (name_a, name_b) of collision "
                         f"geometries, got {pairs!r}")
    result = []
    for pair in pairs:
        if isinstance(pair, str) or len(pair) != 2 or not all(isinstance(n, str) for n in pair):
            raise InputError(f"pairs must hold (name_a, name_b) of collision geometries, got "
                             f"{pair!r}")
        result.append(tuple(pair))
    return tuple(result)


def _obstacle_list(obstacles) -> tuple[Obstacle, ...]:
    if isinstance(obstacles, Obstacle):
        obstacles = (obstacles,)
    try:
        result = tuple(obstacles)
    except TypeError:
        raise InputError(f"obstacles must be a sequence of casdyn.geometry.Obstacle, got "
                         f"{obstacles!r}") from None
    for item in result:
        if not isinstance(item, Obstacle):
            raise InputError(f"obstacles must be casdyn.geometry.Obstacle, got {item!r}")
    return result


def body_poses(model, q, bodies, states=None, joints=None) -> dict[str, ca.SX]:
    """The 4x4 pose (base frame) of each named link at ``q`` (SX), from one kinematics pass."""
    states = kinematics.joint_states(model, q) if states is None else states
    joints = kinematics.base_poses(model, states) if joints is None else joints
    poses = {}
    for name in bodies:
        # the root link is the base only on a fixed base (a floating one moves it)
        if name == model.base_name or (name == root_link(model) and not model.floating_base):
            poses[name] = ca.SX.eye(4)
            continue
        joint, offset = kinematics.body_frame(model, model.body_index(name))
        pose = offset if joint < 0 else joints[joint].then(offset)
        poses[name] = pose.matrix() if isinstance(pose, Transform) else pose
    return poses


def _placed_pairs(model, geometry, pairs, obstacles, q, states=None, joints=None):
    """``(label, shape_a, pose_a, body_a, shape_b, pose_b, body_b)`` per distance: the pairs,
    then each obstacle (body None) against every geometry; poses 4x4 SX in the base frame."""
    by_name = {item.name: item for item in geometry}
    for pair in pairs:
        for name in pair:
            if name not in by_name:
                raise unknown_name("collision geometry", name, by_name)
    used = {name for pair in pairs for name in pair} | (set(by_name) if obstacles else set())
    poses = body_poses(model, q, sorted({by_name[n].body for n in used}), states, joints)

    def placed(item):
        return ca.mtimes(poses[item.body], ca.DM(item.pose))

    for name_a, name_b in pairs:
        a, b = by_name[name_a], by_name[name_b]
        yield f"{name_a}, {name_b}", a.shape, placed(a), a.body, b.shape, placed(b), b.body
    for obstacle in obstacles:
        for item in geometry:
            yield (f"{obstacle.name}, {item.name}", obstacle.shape, ca.SX(ca.DM(obstacle.pose)),
                   None, item.shape, placed(item), item.body)


def distance_expressions(model, geometry, pairs, obstacles, q) -> ca.SX:
    """The signed distances (nd x 1 SX) of ``pairs`` of named geometries, then of each
    obstacle against every geometry, at ``q``."""
    values = [_distance(a, pose_a, b, pose_b, label) for label, a, pose_a, _, b, pose_b, _
              in _placed_pairs(model, geometry, pairs, obstacles, q)]
    return ca.vertcat(*values) if values else ca.SX(0, 1)


def _wrenches(a, pose_a, b, pose_b, label):
    """``(d, w_a, w_b)``: the signed distance and its rate per unit base-frame twist (angular,
    then linear velocity of the point at the base origin) of each shape, 6 x 1 each. Spheres
    and capsules: from the closest points; other shapes: reverse AD through the pair's own
    graph."""
    d = _distance(a, pose_a, b, pose_b, label)
    points = witness_points(a, pose_a, b, pose_b)
    if points is not None:
        p_a, p_b = points
        n = (p_a - p_b) / pr.norm(p_a - p_b)
        return d, ca.vertcat(ca.cross(p_a, n), n), -ca.vertcat(ca.cross(p_b, n), n)
    d, grad_a, grad_b = distance_gradient_function(a, b)(pose_a, pose_b)
    return d, _pose_wrench(pose_a, grad_a), _pose_wrench(pose_b, grad_b)


def _pose_wrench(pose, grad):
    """The rate per base-frame twist ``(w, v)`` of a function of ``pose`` (4x4) with gradient
    ``grad``: ``dR = [w]x R``, ``dp = w x p + v`` give ``(sum_k R_k x G_k + p x g_p, g_p)``."""
    R, p, G, g = pose[:3, :3], pose[:3, 3], grad[:3, :3], grad[:3, 3]
    moment = ca.cross(p, g)
    for k in range(3):
        moment += ca.cross(R[:, k], G[:, k])
    return ca.vertcat(moment, g)


def witness_jacobian(model, geometry, pairs, obstacles, q) -> tuple[ca.SX, ca.SX]:
    """``(d, J)``: the distances and ``dd/dv`` (nd x nv, tangent space) as the shapes'
    wrenches (:func:`_wrenches`) on the columns ``(z_j, o_j x z_j)`` of the joints that move
    one body and not the other (a common motion does not change a distance)."""
    states = kinematics.joint_states(model, q)
    joints = kinematics.base_poses(model, states)
    columns: dict[int, tuple] = {}

    def chain(body):
        return set() if body is None else set(model.support(moving_joint(model, body)))

    values, rows = [], []
    for label, a, pose_a, body_a, b, pose_b, body_b in _placed_pairs(
            model, geometry, pairs, obstacles, q, states, joints):
        d, w_a, w_b = _wrenches(a, pose_a, b, pose_b, label)
        row = ca.SX(model.nv, 1)
        chain_a, chain_b = chain(body_a), chain(body_b)
        for w, own in ((w_a, chain_a - chain_b), (w_b, chain_b - chain_a)):
            for j in sorted(own):
                if j not in columns:
                    columns[j] = states[j].type.axes(joints[j]).point_columns(ca.SX.zeros(3, 1), 1)
                angular, linear = columns[j]
                states[j].put(row, (ca.mtimes(w[:3].T, angular) + ca.mtimes(w[3:].T, linear)).T)
        values.append(d)
        rows.append(row.T)
    if not values:
        return ca.SX(0, 1), ca.SX(0, model.nv)
    return ca.vertcat(*values), ca.vertcat(*rows)


def _distance(a, pose_a, b, pose_b, what: str):
    if isinstance(a, Mesh) or isinstance(b, Mesh):
        raise InputError(f"pair ({what}): a Mesh is visual only")
    try:
        return distance_expression(a, ca.SX(pose_a), b, ca.SX(pose_b))
    except InputError as exc:
        raise InputError(f"pair ({what}): {exc}") from None


def distance_outputs(model, geometry, pairs, obstacles, jacobian: bool | str, q) -> list:
    """The outputs of ``collision_distances`` at ``q`` (SX, nq): ``[d]`` or, with
    ``jacobian``, ``[d, J]``, ``J = d d(q ⊕ v)/dv`` at ``v = 0`` (nd x nv, tangent space):
    through the closest points and the joints' columns (``jacobian=True``, see
    :func:`witness_jacobian`), or by AD of the whole graph (``jacobian="ad"``)."""
    _prepare_routines(geometry, pairs, obstacles)
    if jacobian and jacobian != "ad":
        return list(witness_jacobian(model, geometry, pairs, obstacles, q))
    if not jacobian or model.nq == model.nv:  # nq == nv: each coordinate is its own tangent
        d = distance_expressions(model, geometry, pairs, obstacles, q)
        return [d, ca.jacobian(d, q)] if jacobian else [d]
    v = ca.SX.sym("v", model.nv)
    moved = distance_expressions(model, geometry, pairs, obstacles,
                                 configuration.integrate(model, q, v))
    zero = ca.DM.zeros(model.nv)
    return [ca.substitute(moved, v, zero), ca.substitute(ca.jacobian(moved, v), v, zero)]


def warn_where_the_routine_stopped(model, geometry, pairs, obstacles, q, d) -> None:
    """A :class:`casdyn.errors.ConvergenceWarning` for each distance of ``d`` (numeric, as
    :func:`distance_expressions` orders them, at numeric ``q``) that the compiled routine
    left at a capacity, naming the pair and the bound on its error. Only overlapping or
    touching pairs of the routine are asked: its capacities are EPA's (GJK on polytopes
    ends long before its iteration limit), so a robot clear of collisions pays nothing."""
    d = np.asarray(d, dtype=float).ravel()
    placed = None
    for k, value in enumerate(d):
        if value > 0:
            continue
        if placed is None:
            placed = list(_placed_pairs(model, geometry, pairs, obstacles, ca.DM(q)))
        label, a, pose_a, _, b, pose_b, _ = placed[k]
        if routine_symbol(a, b) is not None:
            pose_a, pose_b = (np.array(ca.evalf(ca.SX(pose))) for pose in (pose_a, pose_b))
            warn_if_stopped(f"collision_distances ({label})", a, pose_a, b, pose_b, value,
                            stacklevel=4)


def _prepare_routines(geometry, pairs, obstacles) -> None:
    """Build the compiled routine of every pair of detailed convex meshes among ``pairs``
    and ``obstacles`` (:mod:`casdyn.codegen.convex_routine`) at once: one library, one
    compilation."""
    by_name = {item.name: item.shape for item in geometry}
    shapes = [(by_name[a], by_name[b]) for a, b in pairs if a in by_name and b in by_name]
    shapes += [(o.shape, item.shape) for o in obstacles for item in geometry]
    symbols = [routine_symbol(a, b) for a, b in shapes
               if not isinstance(a, Mesh) and not isinstance(b, Mesh)]
    prepare_routines([s for s in symbols if s is not None])


def distances_function(model, geometry, pairs, obstacles, jacobian: bool | str = False):
    """The Function ``collision_distances``: ``(q) -> d`` or, with ``jacobian``, ``(q) -> (d,
    J)`` (:func:`distance_outputs`)."""
    q = ca.SX.sym("q", model.nq)
    outputs = distance_outputs(model, geometry, pairs, obstacles, jacobian, q)
    return ca.Function("collision_distances", [q], outputs, ["q"], ["d", "J"][:len(outputs)])


def distance_options(pairs, obstacles, jacobian) -> dict:
    """The options of ``collision_distances`` checked and made hashable: ``pairs`` None or a
    tuple of name pairs, ``obstacles`` a tuple of :class:`Obstacle`, ``jacobian`` False,
    True or ``"ad"``."""
    if jacobian not in (False, True, "ad"):
        raise InputError(f"jacobian must be False, True or 'ad', got {jacobian!r}")
    return {"pairs": None if pairs is None else _pair_list(pairs),
            "obstacles": _obstacle_list(obstacles), "jacobian": jacobian}
