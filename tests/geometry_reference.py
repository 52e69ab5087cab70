"""coal (the collision library behind Pinocchio) as the reference for signed distances, and
random poses."""

from __future__ import annotations

import numpy as np

from casdyn import geometry as g


def random_pose(rng, spread: float = 0.5) -> np.ndarray:
    """A uniformly random rotation and a translation in [-spread, spread]^3."""
    w, x, y, z = (q := rng.normal(size=4)) / np.linalg.norm(q)
    pose = np.eye(4)
    pose[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                    [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                    [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    pose[:3, 3] = rng.uniform(-spread, spread, 3)
    return pose


def coal_shape(shape):
    """The coal geometry of a casdyn shape (a ConvexMesh: coal's own hull of its points)."""
    import coal

    if isinstance(shape, g.Sphere):
        return coal.Sphere(shape.radius)
    if isinstance(shape, g.Capsule):
        return coal.Capsule(shape.radius, shape.length)
    if isinstance(shape, g.Cylinder):
        return coal.Cylinder(shape.radius, shape.length)
    if isinstance(shape, g.Box):
        return coal.Box(*shape.size)
    if isinstance(shape, g.Plane):
        return coal.Halfspace(np.array(shape.normal), shape.offset)
    if isinstance(shape, g.ConvexMesh):
        points = coal.StdVec_Vec3s()
        for p in shape.vertices:
            points.append(np.asarray(p, dtype=float))
        return coal.Convex.convexHull(points, False, None)
    raise TypeError(type(shape))


def coal_distance(a, pose_a, b, pose_b, coal_a=None, coal_b=None,
                  epa: float | None = None) -> float:
    """coal's signed distance (``min_distance`` with ``enable_signed_distance``), its GJK run
    to 1e-10 (its default 1e-6 stops up to ~7e-7 above the distance on curved shapes).
    ``epa``: GJK and EPA run to this tolerance (1e-12 for convex hulls: at its default coal's
    depths of hulls are off by up to 4e-7; boxes at such tolerances go wrong, see
    tests/test_convex_distance_c.py)."""
    import coal

    request = coal.DistanceRequest()
    request.enable_signed_distance = True
    request.gjk_tolerance = 1e-10
    if epa is not None:
        request.gjk_tolerance = request.epa_tolerance = epa
        request.gjk_max_iterations = request.epa_max_iterations = 1000
    result = coal.DistanceResult()
    coal.distance(coal_a or coal_shape(a), coal.Transform3s(pose_a[:3, :3], pose_a[:3, 3]),
                  coal_b or coal_shape(b), coal.Transform3s(pose_b[:3, :3], pose_b[:3, 3]),
                  request, result)
    return result.min_distance


def fixed_graph_distance(a, pose_a, b, pose_b) -> float:
    """casdyn's exact fixed-graph distance of two shapes (``routine=False``: not the compiled
    routine, which pairs of convex meshes go to), evaluated by its SX Function, built once per
    pair of shapes."""
    from casdyn.geometry.distance import distance_function

    return float(distance_function(a, b, routine=False)(pose_a, pose_b))


def support(shape, pose, n) -> np.ndarray:
    """The support function ``max over the shape of n . x`` (world) for each row of ``n``
    (k, 3), from the shape's definition (not from casdyn's distance code); ``pose`` one 4x4
    pose, or one per row (k, 4, 4)."""
    R, p = pose[..., :3, :3], pose[..., :3, 3]
    local = n @ R if R.ndim == 2 else np.einsum("ki,kij->kj", n, R)  # in the shape's frame
    if isinstance(shape, g.Sphere):
        extent = shape.radius * np.linalg.norm(n, axis=1)
    elif isinstance(shape, g.Capsule):
        extent = shape.length / 2 * np.abs(local[:, 2]) + shape.radius * np.linalg.norm(n, axis=1)
    elif isinstance(shape, g.Cylinder):
        extent = (shape.radius * np.hypot(local[:, 0], local[:, 1])
                  + shape.length / 2 * np.abs(local[:, 2]))
    elif isinstance(shape, g.Box):
        extent = np.abs(local) @ (np.array(shape.size) / 2)
    elif isinstance(shape, g.ConvexMesh):
        extent = np.max(local @ shape.vertices.T, axis=1)
    else:
        raise TypeError(type(shape))
    return (n @ p if p.ndim == 1 else np.einsum("ki,ki->k", n, p)) + extent


def _sphere_points(count: int) -> np.ndarray:
    """``count`` nearly uniform unit vectors (a Fibonacci lattice), rows."""
    k = np.arange(count) + 0.5
    z = 1 - 2 * k / count
    angle = np.pi * (1 + 5**0.5) * k
    r = np.sqrt(1 - z * z)
    return np.stack([r * np.cos(angle), r * np.sin(angle), z], axis=1)


def separating_axis_distance(a, pose_a, b, pose_b, samples: int = 20000,
                             starts: int = 12) -> float:
    """The signed distance as the largest ``g(n) = -(h_a(n) + h_b(-n))`` over unit ``n``
    (valid apart and overlapping): the best of a dense sample of directions, the ``starts``
    best of them at least 0.1 rad apart each refined by Nelder-Mead in the plane tangent to
    it (scipy's method, :func:`nelder_mead`). Independent of casdyn's and coal's algorithms;
    slow (about 30 ms; :func:`separating_axis_distances` for many poses at once). Measured
    against exact pairs (sphere-capsule, box-box, mesh-capsule, overlapping): agrees to
    1e-10."""
    return float(separating_axis_distances(a, pose_a[None], b, pose_b[None], samples,
                                           starts)[0])


def separating_axis_distances(a, poses_a, b, poses_b, samples: int = 20000,
                              starts: int = 12) -> np.ndarray:
    """:func:`separating_axis_distance` at each pair of poses (k, 4, 4): the refinements of
    every pair run together, a few times faster than one pair after another."""
    directions = _sphere_points(samples)
    best, centres, owners = [], [], []
    for k, (pose_a, pose_b) in enumerate(zip(poses_a, poses_b, strict=True)):
        values = -(support(a, pose_a, directions) + support(b, pose_b, -directions))
        best.append(float(np.max(values)))
        chosen = _distinct_peaks(directions, values, starts)
        centres += chosen
        owners += [k] * len(chosen)
    centres, owners = np.array(centres), np.array(owners)
    u = np.cross(centres, np.where(np.abs(centres[:, :1]) < 0.9, [1.0, 0, 0], [0, 1.0, 0]))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    v = np.cross(centres, u)
    poses_a, poses_b = np.asarray(poses_a)[owners], np.asarray(poses_b)[owners]

    def negative(runs, x):  # -g on the unit sphere, x in the tangent plane of each run's centre
        n = centres[runs] + x[:, :1] * u[runs] + x[:, 1:] * v[runs]
        n /= np.linalg.norm(n, axis=1, keepdims=True)
        return support(a, poses_a[runs], n) + support(b, poses_b[runs], -n)

    best = np.array(best)
    np.maximum.at(best, owners, -nelder_mead(negative, len(centres)))
    return best


def _distinct_peaks(directions: np.ndarray, values: np.ndarray, count: int) -> list:
    """The best ``count`` of the ``directions`` by ``values`` at least 0.1 rad apart."""
    chosen: list[np.ndarray] = []
    for i in np.argsort(-values):
        if len(chosen) == count:
            break
        if all(directions[i] @ c < np.cos(0.1) for c in chosen):
            chosen.append(directions[i])
    return chosen


def nelder_mead(f, runs: int, step: float = 0.02, xatol: float = 1e-11, fatol: float = 1e-14,
                maxiter: int = 4000) -> np.ndarray:
    """The least value of each of ``runs`` minimisations of a function of two variables from
    ``(0, 0)``: scipy's Nelder-Mead (``minimize(method="Nelder-Mead")``: its coefficients,
    steps and stopping rule, the initial simplex ``(0, 0), (step, 0), (0, step)``), the runs
    stepped together so that each step evaluates ``f`` once for all of them: ``f(r, x)``
    takes the runs ``r`` (m,) and a point of each ``x`` (m, 2) and returns their values."""
    everyone = np.arange(runs)
    sim = np.tile([[0.0, 0.0], [step, 0.0], [0.0, step]], (runs, 1, 1))
    fsim = f(np.repeat(everyone, 3), sim.reshape(-1, 2)).reshape(runs, 3)
    active = everyone
    for _ in range(maxiter - 1):
        order = np.argsort(fsim[active], axis=1)
        sim[active] = np.take_along_axis(sim[active], order[:, :, None], axis=1)
        fsim[active] = np.take_along_axis(fsim[active], order, axis=1)
        s, fs = sim[active], fsim[active]
        done = ((np.abs(s[:, 1:] - s[:, :1]).max(axis=(1, 2)) <= xatol)
                & (np.abs(fs[:, :1] - fs[:, 1:]).max(axis=1) <= fatol))
        active = active[~done]
        if not len(active):
            break
        _nelder_mead_step(f, sim, fsim, active)
    return fsim.min(axis=1)


def _nelder_mead_step(f, sim: np.ndarray, fsim: np.ndarray, active: np.ndarray) -> None:
    """One step of scipy's Nelder-Mead (rho 1, chi 2, psi 0.5, sigma 0.5) for the ``active``
    runs, whose simplices ``sim`` (runs, 3, 2) with values ``fsim`` are sorted best first."""
    s, fs = sim[active], fsim[active]
    xbar = np.add.reduce(s[:, :-1], 1) / 2
    worst = s[:, -1]
    xr = 2 * xbar - worst
    fxr = f(active, xr)
    new, fnew = xr.copy(), fxr.copy()
    expand = fxr < fs[:, 0]
    if expand.any():
        xe = 3 * xbar[expand] - 2 * worst[expand]
        fxe = f(active[expand], xe)
        better = fxe < fxr[expand]
        where = np.flatnonzero(expand)[better]
        new[where], fnew[where] = xe[better], fxe[better]
    contract = ~expand & (fxr >= fs[:, -2])
    outside = contract & (fxr < fs[:, -1])
    # outside the simplex where the reflected point beats the worst, else inside
    xc = np.where(outside[:, None], 1.5 * xbar - 0.5 * worst, 0.5 * xbar + 0.5 * worst)
    shrink = np.zeros(len(active), dtype=bool)
    if contract.any():
        fxc = f(active[contract], xc[contract])
        kept = np.where(outside[contract], fxc <= fxr[contract], fxc < fs[contract, -1])
        where = np.flatnonzero(contract)
        new[where[kept]], fnew[where[kept]] = xc[contract][kept], fxc[kept]
        shrink[where[~kept]] = True
    moved = ~shrink
    sim[active[moved], -1], fsim[active[moved], -1] = new[moved], fnew[moved]
    if shrink.any():
        runs = active[shrink]
        shrunk = sim[runs, :1] + 0.5 * (sim[runs, 1:] - sim[runs, :1])
        sim[runs, 1:] = shrunk
        fsim[runs, 1:] = f(np.repeat(runs, 2), shrunk.reshape(-1, 2)).reshape(-1, 2)
