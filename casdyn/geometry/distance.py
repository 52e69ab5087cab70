"""``signed_distance(a, pose_a, b, pose_b)``: exact signed distances between two shapes, as a
CasADi expression of the poses.

Each shape is a *core* swept by a radius (:mod:`casdyn.geometry.cores`): a sphere is a point,
a capsule a segment, a box and a convex mesh are polytopes, a cylinder and a plane are their
own cores (radius 0). The signed distance of the shapes is that of the cores minus both radii
(sweeping by a ball adds the radius to every support value, in the separated and the
overlapping case alike).

Which algorithm computes a pair is a property of the pair's two core kinds, read from one
table, :data:`PAIRS` (as coal's ``distance_func_matrix``): a closed form where one exists,
the searches of the cylinders' pairs (:mod:`casdyn.geometry.fixed_graphs`), and for the
polytope pairs without a closed form the compiled GJK/EPA routine (:func:`routine_distance`:
a call of the C routine that returns the unit normal ``n`` and the witness points, and
``d = n . (x_b - x_a)`` formed in the graph). The machine does not change the choice: where
no C compiler is found, a pair of the routine is an :class:`~casdyn.errors.ExportError` that
names what needs one, never another graph. The routine's pairs also have a fixed graph
(:data:`FIXED_GRAPHS`), large and slow to build, kept as the tests' independent reference and
built only on request (``routine=False``).

The routine is compiled C, so it is built by :mod:`casdyn.codegen.convex_routine`, a floor
above this one, which installs itself here (:func:`install_routine`) when ``casdyn`` is
imported: geometry imports nothing above it (docs: "Architecture").
"""

from __future__ import annotations

import warnings
from functools import lru_cache

import casadi as ca
import numpy as np

from ..errors import CasdynError, ConvergenceWarning, InputError
from . import fixed_graphs as fg
from . import primitives as pr
from .cores import _Core, _core
from .shapes import Box, Capsule, ConvexMesh, Cylinder, Mesh, Plane, Sphere, _pose, _shape

_RANK = {"plane": 0, "point": 1, "segment": 2, "box": 3, "polytope": 4, "cylinder": 5}

# --- the compiled routine -------------------------------------------------------------------
_compiled = None  # casdyn.codegen.convex_routine, installed when casdyn is imported


def install_routine(routine) -> None:
    """Make ``routine`` the compiled GJK/EPA routine of the pairs without a closed form: a
    module with ``symbol(a, b)``, ``routine(a, b)`` (the external Function of two shapes),
    ``distance(a, pose_a, b, pose_b)``, ``prepare(symbols)`` and ``LIMITS``, where each shape
    is given by :func:`routine_shape`."""
    global _compiled
    _compiled = routine


def _routine():
    if _compiled is None:  # only a partial import of casdyn leaves it out
        raise CasdynError("the compiled distance routine is not installed: import casdyn")
    return _compiled


def routine_shape(core: _Core) -> np.ndarray:
    """A core as the routine takes it: the points whose hull it is ((n, 3), its own frame)."""
    if core.kind == "point":
        return np.zeros((1, 3))
    if core.kind == "segment":
        return np.array([[0.0, 0.0, -core.half[0]], [0.0, 0.0, core.half[0]]])
    return np.array(core.poly.vertices).T


def routine_distance(a: _Core, Ta, b: _Core, Tb):
    """The cores' distance through the compiled routine (exact for polytopes; the gradient
    that of the witness points)."""
    return _routine().distance(routine_shape(a), Ta, routine_shape(b), Tb)


# --- the pair table: (kind of a, kind of b), _RANK[a] <= _RANK[b] -> the cores' distance ----
PAIRS = {
    **{("plane", kind): fg.plane_distance for kind in _RANK},
    ("point", "point"): fg.point_point,
    ("point", "segment"): fg.point_segment,
    ("point", "box"): fg.point_box,
    ("point", "polytope"): routine_distance,
    ("point", "cylinder"): fg.point_cylinder,
    ("segment", "segment"): fg.segment_segment,
    ("segment", "box"): fg.segment_box,
    ("segment", "polytope"): routine_distance,
    ("segment", "cylinder"): fg.cylinder_distance,
    ("box", "box"): routine_distance,
    ("box", "polytope"): routine_distance,
    ("box", "cylinder"): fg.cylinder_distance,
    ("polytope", "polytope"): routine_distance,
    ("polytope", "cylinder"): fg.cylinder_distance,
    ("cylinder", "cylinder"): fg.cylinder_distance,
}

# The fixed graphs of the routine's pairs: exact too, the tests' independent reference
# (``routine=False``), and large: a point against a Panda link's hull (102 vertices) takes
# 299k instructions, two 20-point hulls 434k, two boxes 13k. The routine's first call for a
# new pair is its compilation (0.5 s on an idle 2-core machine); a robot's pairs compile
# together (prepare_routines). Cylinders keep their searches (docs: "Geometry", "Which
# algorithm"): their first distance against a 30-point hull builds in 2.8 s.
FIXED_GRAPHS = {pair: fg.polytope_distance for pair, algorithm in PAIRS.items()
                if algorithm is routine_distance}


def _ordered(a, b) -> tuple[_Core, _Core, bool]:
    ca_, cb = _core(a), _core(b)
    swap = _RANK[ca_.kind] > _RANK[cb.kind]
    return (cb, ca_, True) if swap else (ca_, cb, False)


def _by_routine(a: _Core, b: _Core) -> bool:
    return PAIRS[a.kind, b.kind] is routine_distance


def routine_symbol(a, b) -> str | None:
    """The C symbol of the compiled routine that computes the distance of shapes ``a`` and
    ``b``, or None for a pair with a closed form."""
    ca_, cb, _ = _ordered(a, b)
    if not _by_routine(ca_, cb):
        return None
    return _routine().symbol(routine_shape(ca_), routine_shape(cb))


def prepare_routines(symbols) -> None:
    """Compile (or find in the cache) the routine's entry points ``symbols`` together: one
    library, one compilation, for a robot's pairs."""
    if symbols:
        _routine().prepare(symbols)


def routine_report(a, pose_a: np.ndarray, b, pose_b: np.ndarray) -> tuple[int, float] | None:
    """``(limits, bound)`` of the compiled routine's search for shapes ``a`` and ``b`` at
    numeric 4x4 poses: the capacities or limits it reached (bits of
    :data:`casdyn.codegen.convex_routine.LIMITS`, 0 when it converged) and the width (m) of
    the interval known to hold the distance; None for a pair the routine does not compute."""
    ca_, cb, swap = _ordered(a, b)
    if not _by_routine(ca_, cb):
        return None
    if swap:
        pose_a, pose_b = pose_b, pose_a
    routine = _routine().routine(routine_shape(ca_), routine_shape(cb))
    out = np.asarray(routine(pose_a, pose_b)).ravel()
    return int(out[9]), float(out[10])


def warn_if_stopped(what: str, a, pose_a: np.ndarray, b, pose_b: np.ndarray, d: float,
                    stacklevel: int = 3) -> None:
    """A :class:`ConvergenceWarning` naming ``what`` where the routine stopped at a capacity
    for shapes ``a``, ``b`` at numeric poses (see :func:`routine_report`): its value ``d``
    is then a bound, not the distance."""
    report = routine_report(a, pose_a, b, pose_b)
    if not report or not report[0]:
        return
    limits, bound = report
    reached = " and ".join(text for bit, text in _routine().LIMITS.items() if limits & bit)
    warnings.warn(ConvergenceWarning(
        f"{what}: the convex distance routine stopped at {reached}; the distance {d:.9g} m "
        f"is known only to within {bound:.3g} m (overlapping, the depth returned is an upper "
        "bound). Hulls of fewer vertices avoid it (a coarser mesh, or "
        "casdyn.geometry.with_fitted_capsules)"), stacklevel=stacklevel)


def witness_points(a, pose_a, b, pose_b):
    """``(p_a, p_b)``: the closest points (3 x 1, the poses' frame) of the cores of two
    spheres or capsules, or None for other shapes. The shapes' signed distance is
    ``|p_a - p_b| - r_a - r_b``; its rate is ``n . (v(p_a) - v(p_b))``, ``n`` the unit vector
    from ``p_b`` to ``p_a`` (closest points are stationary: the envelope theorem)."""
    ca_, cb = _core(a), _core(b)
    if {ca_.kind, cb.kind} - {"point", "segment"}:
        return None
    Ra, pa, Rb, pb = pose_a[:3, :3], pose_a[:3, 3], pose_b[:3, :3], pose_b[:3, 3]
    if ca_.kind == "point" and cb.kind == "point":
        return pa, pb
    if ca_.kind == "point":
        return pa, pr.segment_point(pa, *fg.segment(cb, Rb, pb))
    if cb.kind == "point":
        return pr.segment_point(pb, *fg.segment(ca_, Ra, pa)), pb
    return pr.segment_segment_points(*fg.segment(ca_, Ra, pa), *fg.segment(cb, Rb, pb))


# The closed forms, the cylinders' searches and the fixed graph square lengths in metres (and
# segments' fourth powers), and take 1e10 m for "no candidate here" (primitives.BIG): measured
# exact from 1e-6 m to 1e9 m; above 1e10 m a capsule against a box was off by 70%, above
# 1e154 m squares overflow. Their pairs refuse larger shapes. The hull and the compiled
# routine scale lengths by a power of two and hold at any size (docs: "Sizes").
MAX_CLOSED_FORM_SIZE = 1e9


def _size(shape) -> float:
    """The largest length of a shape (m): a radius, a length, an edge, or a hull vertex's
    distance from its frame's origin along an axis."""
    if isinstance(shape, Sphere):
        return shape.radius
    if isinstance(shape, Capsule | Cylinder):
        return max(shape.radius, shape.length)
    if isinstance(shape, Box):
        return max(shape.size)
    if isinstance(shape, ConvexMesh):
        return float(np.max(np.abs(shape.vertices)))
    return 0.0


def _check_closed_form_size(a, b) -> None:
    if isinstance(a, Plane) or isinstance(b, Plane):
        return  # linear in the lengths: any size
    for shape in (a, b):
        if _size(shape) > MAX_CLOSED_FORM_SIZE:
            raise InputError(
                f"signed_distance of {a!r} and {b!r}: {shape!r} has a length of "
                f"{_size(shape):.3g} m, beyond the {MAX_CLOSED_FORM_SIZE:.0e} m up to which "
                "this pair's closed-form distance is exact (it squares lengths in metres); "
                "the compiled routine's pairs (a ConvexMesh or a Cylinder with a capsule, box, "
                "ConvexMesh or Cylinder, two boxes, a sphere and a ConvexMesh) hold at any "
                "size")


def distance_expression(a, pose_a, b, pose_b, routine: bool = True):
    """The signed distance of shapes ``a`` and ``b`` as an expression of the 4x4 poses (SX or
    MX matrices, or numbers as DM), by the pair's algorithm in :data:`PAIRS`.
    ``routine=False`` builds the fixed graph of :data:`FIXED_GRAPHS` instead for a pair of
    the compiled routine (the tests' independent reference; large, see above). Pairs not
    computed by the routine refuse shapes larger than :data:`MAX_CLOSED_FORM_SIZE`."""
    ca_, cb, swap = _ordered(a, b)
    if swap:
        pose_a, pose_b = pose_b, pose_a
    algorithm = PAIRS[ca_.kind, cb.kind]
    if algorithm is routine_distance and not routine:
        algorithm = FIXED_GRAPHS[ca_.kind, cb.kind]
    if algorithm is not routine_distance:
        _check_closed_form_size(a, b)
    return algorithm(ca_, pose_a, cb, pose_b) - ca_.radius - cb.radius


@lru_cache(maxsize=512)
def distance_function(a, b, routine: bool = True) -> ca.Function:
    """``sd(pose_a, pose_b)`` as a CasADi Function of two 4x4 poses (``routine``: as
    :func:`distance_expression`)."""
    Ta, Tb = ca.SX.sym("pose_a", 4, 4), ca.SX.sym("pose_b", 4, 4)
    return ca.Function("signed_distance", [Ta, Tb],
                       [distance_expression(a, Ta, b, Tb, routine)], ["pose_a", "pose_b"],
                       ["distance"])


@lru_cache(maxsize=512)
def distance_gradient_function(a, b) -> ca.Function:
    """``(pose_a, pose_b) -> (sd, dsd/dpose_a, dsd/dpose_b)`` (4x4 gradients, reverse AD of
    the pair's graph)."""
    Ta, Tb = ca.SX.sym("pose_a", 4, 4), ca.SX.sym("pose_b", 4, 4)
    d = distance_expression(a, Ta, b, Tb)
    return ca.Function("signed_distance_gradient", [Ta, Tb],
                       [d, ca.reshape(ca.gradient(d, ca.vec(Ta)), 4, 4),
                        ca.reshape(ca.gradient(d, ca.vec(Tb)), 4, 4)])


def signed_distance(a, pose_a, b, pose_b):
    """Signed distance between shape ``a`` at ``pose_a`` and shape ``b`` at ``pose_b``.

    ``pose_*``: 4x4 homogeneous transforms of the shapes' frames in one common frame, numbers
    or CasADi SX/MX symbols. Returns the distance (m) when the shapes are apart and minus the
    penetration depth (the length of the smallest translation that separates them) when they
    overlap: a float for numeric poses, an expression of the poses' kind otherwise. Value and
    gradient are finite for every input. Numeric poses of a pair whose compiled routine stops
    at a capacity before its tolerance (EPA on detailed round hulls deep in each other) give a
    :class:`casdyn.errors.ConvergenceWarning` with the value's error bound.
    """
    _shape(a, "signed_distance: a")
    _shape(b, "signed_distance: b")
    for shape, what in ((a, "a"), (b, "b")):
        if isinstance(shape, Mesh):
            raise InputError(f"signed_distance: {what} is a Mesh (visual only); use "
                             "ConvexMesh (e.g. Mesh(...).convex())")
    symbolic = [isinstance(x, ca.SX | ca.MX) for x in (pose_a, pose_b)]
    if not any(symbolic):
        pose_a, pose_b = _pose(pose_a, "pose_a"), _pose(pose_b, "pose_b")
        d = float(distance_function(a, b)(pose_a, pose_b))
        warn_if_stopped(f"signed_distance({a!r}, {b!r})", a, pose_a, b, pose_b, d)
        return d
    kind = type(pose_a) if symbolic[0] else type(pose_b)
    poses = []
    for pose, what, sym in ((pose_a, "pose_a", symbolic[0]), (pose_b, "pose_b", symbolic[1])):
        if sym:
            if not isinstance(pose, kind):
                raise InputError("signed_distance: pose_a and pose_b mix SX and MX")
            if pose.shape != (4, 4):
                raise InputError(f"signed_distance: {what} must be 4x4, got {pose.shape}")
            poses.append(pose)
        else:
            poses.append(kind(ca.DM(_pose(pose, what))))
    return distance_function(a, b)(*poses)
