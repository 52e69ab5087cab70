"""Residuals ``r`` of a stage cost ``0.5 sum_i w_i r_i^2``, each with a reference and weights
that are parameters of the problem (changed between solves, never rebuilt).

A residual is evaluated at a knot (:class:`Knot`: the state, the torques and the feet's
forces, all CasADi symbols) against its reference ``ref`` (a symbol of
:meth:`Residual.reference_size` rows). Frames and axes follow casdyn's conventions: positions
and velocities in world (base-frame) axes, a twist ``[w; v]`` angular first, the state
deviation ``x ⊖ x_ref`` in the tangent space (the floating base's twist in its own frame).

==========================  ===========  =================================================
residual                    rows         reference (rows)
==========================  ===========  =================================================
:class:`StateResidual`      ``2 nv``     a state ``x_ref`` (``nq + nv``)
:class:`ControlResidual`    ``nu``       torques ``u_ref`` (``nu``)
:class:`FramePosition`      3            the frame origin's position (3)
:class:`FrameOrientation`   3            a rotation matrix, row by row (9)
:class:`FramePlacement`     6            a position, then a rotation row by row (12)
:class:`FrameVelocity`      6            the frame's ``[w; v]``, world axes (6)
:class:`CenterOfMass`       3            the centre of mass (3)
:class:`CentroidalMomentum` 6            ``[k_G; l]`` (6)
:class:`ContactForce`       3 or 6       the foot's force (or wrench ``[n; f]``)
                            or ``A``'s   ``A f`` (``A``'s rows)
:class:`FootHeight`         1            the foot origin's height ``z`` (1)
:class:`Barrier`            the inner's  the inner residual's
==========================  ===========  =================================================

:class:`Barrier` wraps a residual ``r`` to penalise only where it leaves ``[lower, upper]``
(Crocoddyl's ``ActivationModelQuadraticBarrier``): with ``ContactForce(foot, matrix=A)`` it
is a friction cone as a cost, with :class:`StateResidual` joint limits as a cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import casadi as ca
import numpy as np

from casdyn.errors import InputError, unknown_name
from casdyn.math.lie import se3_log

from .checks import nonnegative
from .constraints import distances


@dataclass(frozen=True)
class Knot:
    """What a residual may read at one knot: ``x`` (``nx``), ``u`` (``nu``; None at the
    horizon's end) and ``forces`` (``force_size x n_feet``, world axes; zero on the swing
    feet; None at the end)."""

    model: object
    x: ca.SX
    u: ca.SX | None
    forces: ca.SX | None

    @property
    def q(self) -> ca.SX:
        return self.x[: self.model.nq]

    @property
    def v(self) -> ca.SX:
        return self.x[self.model.nq :]


@dataclass(frozen=True, kw_only=True)
class Residual:
    """A residual with its default ``weight`` (a scalar for every row, or one per row; ``>=
    0``; the quadratic weights ``w`` of ``0.5 sum w r^2``) and ``name`` (how the parameters
    address it; default: the kind's, with the frame or foot)."""

    weight: object = 1.0
    name: str | None = None
    needs_control = False  # only on the stages with torques (not the horizon's end)

    def __post_init__(self):
        nonnegative(f"{type(self).__name__} weight", self.weight, scalar=True)

    def label(self) -> str:
        return self.name or self.kind

    kind = "residual"

    def size(self, model) -> int:  # pragma: no cover - every residual defines it
        raise NotImplementedError

    def reference_size(self, model) -> int:
        return self.size(model)

    def default_reference(self, model) -> np.ndarray:
        return np.zeros(self.reference_size(model))

    def weights(self, model) -> np.ndarray:
        """The default weights, one per row."""
        return nonnegative(f"{self.label()} weight", self.weight, self.size(model))

    def check(self, model) -> None:
        """Refuse a frame or foot the model does not have (an InputError naming it)."""

    def value(self, knot: Knot, ref) -> ca.SX:  # pragma: no cover
        raise NotImplementedError


@dataclass(frozen=True)
class _FrameResidual(Residual):
    frame: str

    def label(self) -> str:
        return self.name or f"{self.kind}:{self.frame}"

    def check(self, model) -> None:
        bodies = model.robot.body_names
        if self.frame not in bodies:
            raise InputError(f"{type(self).__name__}: {unknown_name('body', self.frame, bodies)}")


@dataclass(frozen=True)
class StateResidual(Residual):
    """``x ⊖ x_ref`` (``2 nv``: the configuration's deviation in the tangent space, then
    ``v - v_ref``). Default reference: the robot's home configuration at rest."""

    kind = "state"

    def size(self, model) -> int:
        return model.ndx

    def reference_size(self, model) -> int:
        return model.nx

    def default_reference(self, model) -> np.ndarray:
        return np.r_[model.robot.home_configuration(), np.zeros(model.nv)]

    def value(self, knot, ref):
        return knot.model.difference_state(ref, knot.x)


@dataclass(frozen=True)
class ControlResidual(Residual):
    """``u - u_ref`` (``nu``)."""

    kind = "control"
    needs_control = True

    def size(self, model) -> int:
        return model.nu

    def value(self, knot, ref):
        return knot.u - ref


@dataclass(frozen=True)
class FramePosition(_FrameResidual):
    """``p(q) - p_ref``: the origin of body ``frame`` in the world (3)."""

    kind = "frame_position"

    def size(self, model) -> int:
        return 3

    def value(self, knot, ref):
        return knot.model.robot.get_transform(knot.q, self.frame)[:3, 3] - ref


@dataclass(frozen=True)
class FrameOrientation(_FrameResidual):
    """The rotation from ``R_ref`` to body ``frame``'s ``R(q)`` as the vector of its
    skew-symmetric part, ``vee(E - E^T) / 2`` with ``E = R_ref^T R`` (3, the frame's axes):
    ``sin(angle)`` times the axis, which is the rotation vector to first order and zero
    only where the frames agree (or are half a turn apart). Reference: ``R_ref`` row by row
    (9; default the identity)."""

    kind = "frame_orientation"

    def size(self, model) -> int:
        return 3

    def reference_size(self, model) -> int:
        return 9

    def default_reference(self, model) -> np.ndarray:
        return np.eye(3).ravel()

    def value(self, knot, ref):
        R = knot.model.robot.get_transform(knot.q, self.frame)[:3, :3]
        R_ref = ca.reshape(ref, 3, 3).T  # row by row
        E = ca.mtimes(R_ref.T, R)
        return 0.5 * ca.vertcat(E[2, 1] - E[1, 2], E[0, 2] - E[2, 0], E[1, 0] - E[0, 1])


@dataclass(frozen=True)
class FramePlacement(_FrameResidual):
    """``log6(M_ref^-1 M(q))``: the placement of body ``frame`` against ``M_ref = (R_ref,
    p_ref)`` as Crocoddyl's ``ResidualModelFramePlacement`` (6, Pinocchio's order: the
    linear part first, then the rotation vector, both in the frame's own axes; zero only
    where the placements agree). Reference: ``p_ref`` (3, world) then ``R_ref`` row by row
    (9); default the world's origin and axes. Not for a frame half a turn from ``R_ref``
    (:func:`casdyn.math.lie.log_rotation`)."""

    kind = "frame_placement"

    def size(self, model) -> int:
        return 6

    def reference_size(self, model) -> int:
        return 12

    def default_reference(self, model) -> np.ndarray:
        return np.r_[np.zeros(3), np.eye(3).ravel()]

    def value(self, knot, ref):
        T = knot.model.robot.get_transform(knot.q, self.frame)
        R_ref = ca.reshape(ref[3:], 3, 3).T  # row by row
        relative_p = ca.mtimes(R_ref.T, T[:3, 3] - ref[:3])
        return se3_log(ca.mtimes(R_ref.T, T[:3, :3]), relative_p)


@dataclass(frozen=True)
class FrameVelocity(_FrameResidual):
    """``[w; v] - ref``: body ``frame``'s angular velocity and its origin's velocity, world
    axes (6)."""

    kind = "frame_velocity"

    def size(self, model) -> int:
        return 6

    def value(self, knot, ref):
        return knot.model.robot.frame_velocity(knot.q, knot.v, self.frame) - ref


@dataclass(frozen=True)
class CenterOfMass(Residual):
    """``c(q) - c_ref``: the centre of mass in the world (3)."""

    kind = "com"

    def size(self, model) -> int:
        return 3

    def value(self, knot, ref):
        return knot.model.robot.center_of_mass(knot.q)[0] - ref


@dataclass(frozen=True)
class CentroidalMomentum(Residual):
    """``h_G(q, v) - ref`` with ``h_G = [k_G; l]``: the angular momentum about the centre of
    mass and the linear momentum, world axes (6)."""

    kind = "momentum"

    def size(self, model) -> int:
        return 6

    def value(self, knot, ref):
        return knot.model.robot.centroidal_momentum(knot.q, knot.v) - ref


@dataclass(frozen=True)
class _FootResidual(Residual):
    foot: str

    def label(self) -> str:
        return self.name or f"{self.kind}:{self.foot}"

    def check(self, model) -> None:
        if self.foot not in model.feet:
            raise InputError(f"{type(self).__name__}: "
                             f"{unknown_name('foot', self.foot, model.feet)}")


@dataclass(frozen=True)
class ContactForce(_FootResidual):
    """``A f - f_ref``: the force (``contact="6d"``: the wrench ``[n; f]``) of ``foot`` on the
    robot, world axes, mapped by ``matrix`` ``A`` (``rows x force_size``; default the
    identity, the force itself); zero while the foot swings, so weight it on the held
    knots."""

    matrix: object = None
    kind = "force"
    needs_control = True

    def __post_init__(self):
        super().__post_init__()
        if self.matrix is not None:
            A = np.asarray(self.matrix, dtype=float) if not isinstance(self.matrix, str) \
                else np.array(np.nan)
            if A.ndim != 2 or A.shape[0] == 0 or not np.all(np.isfinite(A)):
                raise InputError(f"ContactForce matrix must be a finite rows x force_size "
                                 f"matrix, got {self.matrix!r}")
            object.__setattr__(self, "matrix", tuple(map(tuple, A)))

    def size(self, model) -> int:
        return model.force_size if self.matrix is None else len(self.matrix)

    def check(self, model) -> None:
        super().check(model)
        if self.matrix is not None and len(self.matrix[0]) != model.force_size:
            raise InputError(f"ContactForce matrix: {len(self.matrix[0])} columns, the "
                             f"model's forces have {model.force_size}")

    def value(self, knot, ref):
        f = knot.forces[:, knot.model.feet.index(self.foot)]
        return (f if self.matrix is None else ca.mtimes(ca.DM(self.matrix), f)) - ref


@dataclass(frozen=True)
class FootHeight(_FootResidual):
    """``z(q) - z_ref``: the height of ``foot``'s origin above the world's ``z = 0`` (1) —
    the swing height of a gait, weighted on the knots where the foot swings."""

    kind = "foot_height"

    def size(self, model) -> int:
        return 1

    def value(self, knot, ref):
        return knot.model.robot.get_transform(knot.q, self.foot)[2, 3] - ref


@dataclass(frozen=True)
class CollisionResidual(Residual):
    """``d(q) - d_ref``: every signed distance (m) of the robot's collision geometry, as
    :class:`casdyn.ocp.CollisionDistance` lists them (its ``pairs``, default its collision
    pairs, then each of ``obstacles`` against every collision geometry). A cost on the
    distances; ``Barrier(CollisionResidual(...), lower=margin)`` penalises only coming
    closer than ``margin`` (the exact form is the constraint)."""

    obstacles: Sequence = ()
    pairs: Sequence | None = None
    kind = "collision"

    def size(self, model) -> int:
        return distances(model.robot, self.obstacles, self.pairs).size1_out(0)

    def value(self, knot, ref):
        return distances(knot.model.robot, self.obstacles, self.pairs)(knot.q) - ref


@dataclass(frozen=True)
class Barrier(Residual):
    """``r - clip(r, lower, upper)`` of the ``residual`` ``r`` (its rows; its reference):
    zero inside the box, the distance outside — ``0.5 w`` times its square is Crocoddyl's
    ``ActivationModelQuadraticBarrier``. ``lower``, ``upper``: a scalar or one per row,
    ``lower <= upper`` (``-inf``/``inf`` for no bound). Default name: ``barrier:`` and the
    residual's."""

    residual: Residual
    lower: object = -np.inf
    upper: object = np.inf
    kind = "barrier"

    def __post_init__(self):
        super().__post_init__()
        if not isinstance(self.residual, Residual):
            raise InputError(f"Barrier wraps a casdyn.ocp residual, got {self.residual!r}")
        for what in ("lower", "upper"):
            value = getattr(self, what)
            array = np.asarray(value, dtype=float) if not isinstance(value, str) \
                else np.array(np.nan)
            if array.ndim > 1 or np.any(np.isnan(array)):
                raise InputError(f"Barrier {what} must be a scalar or one number per row, "
                                 f"got {value!r}")
            object.__setattr__(self, what, tuple(np.atleast_1d(array).tolist()))

    @property
    def needs_control(self) -> bool:
        return self.residual.needs_control

    def label(self) -> str:
        return self.name or f"barrier:{self.residual.label()}"

    def size(self, model) -> int:
        return self.residual.size(model)

    def reference_size(self, model) -> int:
        return self.residual.reference_size(model)

    def default_reference(self, model) -> np.ndarray:
        return self.residual.default_reference(model)

    def bounds(self, model) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)``, one per row."""
        n = self.size(model)
        lower, upper = (np.broadcast_to(np.array(b), (n,)) if len(b) in (1, n) else None
                        for b in (self.lower, self.upper))
        if lower is None or upper is None:
            raise InputError(f"{self.label()}: lower and upper need 1 or {n} numbers, got "
                             f"{len(self.lower)} and {len(self.upper)}")
        if np.any(lower > upper):
            raise InputError(f"{self.label()}: lower > upper in rows "
                             f"{np.flatnonzero(lower > upper).tolist()}")
        return lower.copy(), upper.copy()

    def check(self, model) -> None:
        self.residual.check(model)
        self.bounds(model)

    def value(self, knot, ref):
        r = self.residual.value(knot, ref)
        lower, upper = self.bounds(knot.model)
        # row by row, an unbounded side left out of the graph (lower <= upper: one side at
        # most is non-zero)
        rows = []
        for i in range(r.numel()):
            row = ca.SX(0)
            if np.isfinite(lower[i]):
                row = row + ca.fmin(r[i] - lower[i], 0)
            if np.isfinite(upper[i]):
                row = row + ca.fmax(r[i] - upper[i], 0)
            rows.append(row)
        return ca.vertcat(*rows)


@dataclass(frozen=True)
class Layout:
    """Where each residual's reference and weights lie in a knot's parameter column:
    ``(label, reference rows, weight rows)`` in order, each a ``slice``."""

    entries: tuple[tuple[str, slice, slice], ...] = field(default_factory=tuple)
    size: int = 0

    @classmethod
    def of(cls, model, residuals) -> Layout:
        entries, start = [], 0
        for residual in residuals:
            n_ref, n_w = residual.reference_size(model), residual.size(model)
            entries.append((residual.label(), slice(start, start + n_ref),
                            slice(start + n_ref, start + n_ref + n_w)))
            start += n_ref + n_w
        return cls(tuple(entries), start)

    def defaults(self, model, residuals) -> np.ndarray:
        column = np.zeros(self.size)
        for residual, (_, ref, weight) in zip(residuals, self.entries, strict=True):
            column[ref] = residual.default_reference(model)
            column[weight] = residual.weights(model)
        return column
