"""An optimal control problem over a horizon of ``N`` intervals of ``model.dt``, for any robot
(fixed or floating base, some or none of its bodies holding the ground), and its
parameters.

At each interval ``k`` the robot moves by the forward dynamics of its stance mode
(:meth:`ContactModel.step`: the held feet's contact dynamics, or free motion), stepped on
the manifold; the stage cost is ``0.5 sum_i w_i r_i^2`` over the stage residuals
(:mod:`casdyn.ocp.residuals`), the end of the horizon adds the terminal residuals' cost. The
constraints are exact: each held foot's force in its friction pyramid or cone (and the centre
of pressure in the sole with ``contact="6d"``), the torques within the motors' limits, the
joints within their position and velocity limits.

Everything that changes between solves is a parameter, :class:`Parameters`: each residual's
reference and weights at each knot, the stance mode of each interval (an index into
``modes``) — changing them never rebuilds anything. The initial state is given to the solver.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence

import casadi as ca
import numpy as np

from casdyn.errors import InputError, unknown_name

from .checks import nonnegative
from .constraints import Constraint
from .model import CONES, ContactModel, Impulse
from .residuals import Knot, Layout, Residual


class Problem:
    """The problem of ``N`` intervals of ``model`` with the stage residuals ``costs`` and the
    terminal residuals ``terminal_costs`` (neither may name a residual twice; the terminal
    ones cannot read torques or forces).

    ``modes``: the stance masks (one flag per foot, or the held feet's names) the intervals
    may take (default: every foot held), or :class:`casdyn.ocp.Impulse` of a mask for a
    touchdown (the interval is the impact, :meth:`ContactModel.impulse`; weight the control
    residual there, where ``u`` has no effect; its friction rows hold the impulses);
    :attr:`Parameters.modes` picks one per interval. :attr:`modes` keeps the masks,
    :attr:`impulses` which of them are impacts.
    ``friction``: "pyramid" (four linear rows per held foot), "exact" (the second-order
    cone, ``|f_t| <= mu fz``) or None (no friction constraint). ``effort_limit`` (N m or N;
    a scalar or one per actuated joint), ``velocity_limit`` (a scalar or one per joint
    velocity ``nv``; the floating base's are never bounded): default the robot's, ``inf``
    for none.
    ``position_limits``: True for the robot's joint limits, None for none. ``constraints``:
    state constraints (:mod:`casdyn.ocp.constraints`, e.g. collision distances) held at
    every knot from the second to the horizon's end, or at the end only (``at="end"``).
    """

    def __init__(self, model: ContactModel, N: int, costs: Sequence[Residual],
                 terminal_costs: Sequence[Residual] = (), *, modes=None,
                 friction: str | None = "pyramid", effort_limit=None, velocity_limit=None,
                 position_limits: bool | None = True, constraints: Sequence[Constraint] = ()):
        if not isinstance(N, numbers.Integral) or isinstance(N, bool) or N < 1:
            raise InputError(f"N must be a whole number of at least 1, got {N!r}")
        self.model, self.N = model, int(N)
        self.costs = _residuals("costs", costs, model, terminal=False)
        self.terminal_costs = _residuals("terminal_costs", terminal_costs, model, terminal=True)
        if modes is None:
            modes = [tuple(True for _ in model.feet)]
        if isinstance(modes, str) or not isinstance(modes, Sequence | np.ndarray) or \
                len(modes) == 0:
            raise InputError(f"modes must be a non-empty sequence of stance masks, got "
                             f"{modes!r}")
        self.impulses = tuple(isinstance(m, Impulse) for m in modes)
        self.modes = [model.stance_mask(m.stance if isinstance(m, Impulse) else m,
                                        name=f"modes[{k}]") for k, m in enumerate(modes)]
        for k, impulse in enumerate(self.impulses):
            if impulse and not any(self.modes[k]):
                raise InputError(f"modes[{k}]: an Impulse needs at least one foot touching "
                                 "down")
        if friction is not None and friction not in CONES:
            raise InputError(f"friction must be 'pyramid', 'exact' or None, got {friction!r}")
        self.friction = friction
        robot, nv = model.robot, model.nv
        self.effort_limit = nonnegative(
            "effort_limit",
            robot.effort_limits[model.actuated_dofs] if effort_limit is None else effort_limit,
            model.nu, finite=False)
        # the 1-dof joints' coordinates: q[iq] moves with v[iv] one to one
        self._q_index = np.array([j.idx_q for j in robot.model.coordinate_joints
                                  if j.type.one_dof], dtype=int)
        self._v_index = np.array([j.idx_v for j in robot.model.coordinate_joints
                                  if j.type.one_dof], dtype=int)
        velocity = np.full(nv, np.inf)
        velocity[self._v_index] = robot.velocity_limits[self._v_index]
        self.velocity_limit = nonnegative("velocity_limit", velocity if velocity_limit is None
                                          else velocity_limit, nv, finite=False)
        if robot.floating_base:
            self.velocity_limit[:6] = np.inf
        if position_limits not in (True, None, False):
            raise InputError(f"position_limits must be True (the robot's) or None, got "
                             f"{position_limits!r}")
        lower, upper = robot.position_limits
        if position_limits:
            self._q_lower, self._q_upper = lower[self._q_index], upper[self._q_index]
        else:
            self._q_lower = np.full(len(self._q_index), -np.inf)
            self._q_upper = np.full(len(self._q_index), np.inf)
        self.stage_layout = Layout.of(model, self.costs)
        self.terminal_layout = Layout.of(model, self.terminal_costs)
        # a name in both lists is one residual over the knots: one reference and weights
        sizes = {label: (ref.stop - ref.start, w.stop - w.start)
                 for label, ref, w in self.stage_layout.entries}
        for label, ref, w in self.terminal_layout.entries:
            if label in sizes and sizes[label] != (ref.stop - ref.start, w.stop - w.start):
                raise InputError(f"terminal_costs: {label!r} names a stage residual of "
                                 "another size (give it another name=...)")
        if isinstance(constraints, Constraint):
            constraints = (constraints,)
        if not isinstance(constraints, Sequence) or \
                not all(isinstance(c, Constraint) for c in constraints):
            raise InputError("constraints must be a sequence of casdyn.ocp constraints, got "
                             f"{constraints!r}")
        self.constraints = tuple(constraints)
        # the rows held from knot 1 on, and those at the horizon's end (these and the end's)
        self.n_state_rows = sum(c.size(model) for c in self.constraints if c.at == "all")
        self.n_end_rows = sum(c.size(model) for c in self.constraints)
        # the SQP's rows per interval: the feet's, then the state constraints'
        self.n_friction_rows = self.rows_per_foot() * len(model.feet)
        self.n_rows = self.n_friction_rows + self.n_state_rows
        self._stages: dict[int, ca.Function] = {}
        self._terminal: ca.Function | None = None

    # -- friction rows -------------------------------------------------------------------------
    def rows_per_foot(self, linearised: bool = True) -> int:
        """Inequality rows of one foot: the friction pyramid's four, or the exact cone's two
        (``linearised``: four, see :meth:`friction_rows`); four more for the centre of
        pressure with ``contact="6d"``; none without friction."""
        if self.friction is None:
            return 0
        cone = 2 if self.friction == "exact" and not linearised else 4
        return cone + (4 if self.model.contact == "6d" else 0)

    def held_rows(self, mode: int, linearised: bool = True) -> np.ndarray:
        """Which of the feet's rows apply in ``modes[mode]`` (the held feet's), a bool array
        of ``rows_per_foot(linearised) * n_feet``."""
        return np.repeat(np.array(self.modes[mode], dtype=bool), self.rows_per_foot(linearised))

    def state_rows(self, x, end: bool = False):
        """The state constraints' rows ``c(x) >= 0`` in the order of ``constraints``: those
        held from knot 1 on (``n_state_rows``), or with ``end`` every one (``n_end_rows``,
        the horizon's end)."""
        m = self.model
        rows = [c.value(m, x[: m.nq], x[m.nq :]) for c in self.constraints
                if end or c.at == "all"]
        return ca.vertcat(*rows) if rows else type(x)(0, 1)

    def friction_rows(self, forces, directions=None):
        """Every foot's rows ``h >= 0`` for its force (``forces``: ``force_size x n_feet``,
        world axes): the pyramid (:func:`casdyn.ocp.friction_pyramid`), or the exact cone
        (:func:`casdyn.ocp.friction_cone`: ``fz >= 0`` and ``mu^2 fz^2 - |f_t|^2 >= 0``,
        smooth, for an NLP solver with exact Hessians). With
        ``directions`` (``2 x n_feet``, unit tangential directions ``d``, constants of the
        linearisation) the exact cone is four rows ``mu fz - e . f_t`` for ``e`` in
        ``(d, d_perp, -d, -d_perp)``: the face along ``d`` is the cone itself where ``d`` is
        the force's own direction, and the four bound every tangential step (a smooth
        cone's gradient vanishes at ``f_t = 0``, where a QP would leave ``f_t`` free).
        With ``contact="6d"`` each foot adds its centre-of-pressure rows."""
        m = self.model
        if self.friction is None:
            return ca.SX(0, 1) if isinstance(forces, ca.SX) else ca.MX(0, 1)
        rows = []
        for k in range(len(m.feet)):
            force = forces[:, k]
            if self.friction == "exact" and directions is not None:
                f = force if m.contact == "point" else force[3:]
                d = directions[:, k]
                along, across = d[0] * f[0] + d[1] * f[1], d[0] * f[1] - d[1] * f[0]
                cone = ca.vertcat(m.mu * f[2] - along, m.mu * f[2] - across,
                                  m.mu * f[2] + along, m.mu * f[2] + across)
                rows.append(ca.vertcat(cone, m.contact_rows(force, "pyramid")[4:]))
            else:
                rows.append(m.contact_rows(force, self.friction))
        return ca.vertcat(*rows)

    def directions(self, forces):
        """The unit tangential directions of ``forces`` (``2 x n_feet``; the x axis where a
        foot's tangential force is below 1e-9 N)."""
        m = self.model
        columns = []
        for k in range(len(m.feet)):
            f = forces[:, k] if m.contact == "point" else forces[3:, k]
            norm = ca.sqrt(f[0] ** 2 + f[1] ** 2)
            small = norm < 1e-9
            columns.append(ca.vertcat(ca.if_else(small, 1.0, f[0] / ca.fmax(norm, 1e-300)),
                                      ca.if_else(small, 0.0, f[1] / ca.fmax(norm, 1e-300))))
        return ca.horzcat(*columns) if columns else ca.SX(2, 0)

    # -- the stage Functions --------------------------------------------------------------
    def stage(self, mode: int) -> ca.Function:
        """``(x, u, p) -> (x_next, r, w, forces)`` of ``modes[mode]``: the next state, the
        stage residuals and their weights (stacked in the order of ``costs``) and the feet's
        forces during the interval (``force_size x n_feet``, world axes, zero on the swing
        feet; an impulse mode's impulses, N s) for the parameter column ``p``
        (:attr:`stage_layout`)."""
        if mode not in self._stages:
            m = self.model
            x, u = ca.SX.sym("x", m.nx), ca.SX.sym("u", m.nu)
            p = ca.SX.sym("p", self.stage_layout.size)
            if self.impulses[mode]:
                x_next, forces = m.impulse(self.modes[mode])(x, u)
                r, w = self._residuals(self.costs, self.stage_layout, Knot(m, x, u, forces), p)
            else:
                qdd, forces = m.dynamics(self.modes[mode])(x, u)
                x_next, r, w = self.stage_terms(x, u, p, qdd, forces)
            self._stages[mode] = ca.Function(f"ocp_stage_{self.mode_tag(mode)}", [x, u, p],
                                             [x_next, r, w, forces], ["x", "u", "p"],
                                             ["x_next", "r", "w", "forces"])
        return self._stages[mode]

    def stage_terms(self, x, u, p, qdd, forces):
        """``(x_next, r, w)`` of :meth:`stage` for given accelerations ``qdd`` (``nv``) and
        feet's ``forces`` (``force_size x n_feet``): the step and the residuals without the
        dynamics' solve (the SQP adds the dynamics' own derivatives)."""
        m = self.model
        r, w = self._residuals(self.costs, self.stage_layout, Knot(m, x, u, forces), p)
        return m.advance(x, qdd), r, w

    def mode_tag(self, mode: int) -> str:
        """``modes[mode]`` as a name: one digit per foot (1: held), "free" without feet,
        prefixed "impulse_" for a touchdown."""
        tag = "".join("1" if held else "0" for held in self.modes[mode]) or "free"
        return f"impulse_{tag}" if self.impulses[mode] else tag

    def terminal(self) -> ca.Function:
        """``(x, p) -> (r, w)``: the terminal residuals and weights for the column ``p``
        (:attr:`terminal_layout`)."""
        if self._terminal is None:
            m = self.model
            x, p = ca.SX.sym("x", m.nx), ca.SX.sym("p", self.terminal_layout.size)
            r, w = self._residuals(self.terminal_costs, self.terminal_layout,
                                   Knot(m, x, None, None), p)
            self._terminal = ca.Function("ocp_terminal", [x, p], [r, w], ["x", "p"], ["r", "w"])
        return self._terminal

    @staticmethod
    def _residuals(residuals, layout, knot, p):
        parts, weights = [], []
        for residual, (_, ref, weight) in zip(residuals, layout.entries, strict=True):
            parts.append(residual.value(knot, p[ref]))
            weights.append(p[weight])
        if not parts:
            return ca.SX(0, 1), ca.SX(0, 1)
        return ca.vertcat(*parts), ca.vertcat(*weights)

    # -- bounds ------------------------------------------------------------------------------
    def control_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)`` of ``u`` (``nu`` each)."""
        return -self.effort_limit, self.effort_limit.copy()

    def state_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)`` of ``x = [q; v]`` in coordinates (``nx`` each; ``inf`` where
        unbounded)."""
        m = self.model
        lower, upper = np.full(m.nx, -np.inf), np.full(m.nx, np.inf)
        lower[self._q_index], upper[self._q_index] = self._q_lower, self._q_upper
        lower[m.nq :], upper[m.nq :] = -self.velocity_limit, self.velocity_limit
        return lower, upper

    def tangent_bounds(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The bounds of :meth:`state_bounds` as bounds on ``dx`` about the states ``X``
        (``(nx, K)`` -> two ``(2 nv, K)``): exact, since a bounded coordinate moves one to
        one with its rate."""
        m = self.model
        lower, upper = self.state_bounds()
        K = X.shape[1]
        dl, du = np.full((m.ndx, K), -np.inf), np.full((m.ndx, K), np.inf)
        q = X[self._q_index]
        dl[self._v_index] = self._q_lower[:, None] - q
        du[self._v_index] = self._q_upper[:, None] - q
        dl[m.nv :] = lower[m.nq :, None] - X[m.nq :]
        du[m.nv :] = upper[m.nq :, None] - X[m.nq :]
        return dl, du

    @property
    def unbounded(self) -> bool:
        """Whether nothing bounds the problem: no friction or state-constraint rows, no
        finite torque, position or velocity limit (its QPs are then solved by a Riccati
        recursion, :mod:`casdyn.ocp.riccati`)."""
        return self.n_rows == 0 and self.n_end_rows == 0 and not any(
            np.isfinite(bound).any() for bound in (*self.control_bounds(),
                                                   *self.state_bounds()))

    # -- parameters --------------------------------------------------------------------------
    def parameters(self) -> Parameters:
        """The default parameters: each residual's default reference and weights at every
        knot, every interval in ``modes[0]``."""
        return Parameters(self)


class Parameters:
    """The numbers a :class:`Problem` is solved for: :attr:`stage` (``(n_p, N)``, one column
    per interval), :attr:`terminal` (``(n_pN,)``) and :attr:`modes` (``(N,)`` indices into
    ``problem.modes``). Write them with :meth:`set` and :meth:`set_modes`."""

    def __init__(self, problem: Problem):
        self.problem = problem
        m, N = problem.model, problem.N
        self.stage = np.tile(problem.stage_layout.defaults(m, problem.costs)[:, None], (1, N))
        self.terminal = problem.terminal_layout.defaults(m, problem.terminal_costs)
        self.modes = np.zeros(N, dtype=int)

    def copy(self) -> Parameters:
        other = Parameters.__new__(Parameters)
        other.problem = self.problem
        other.stage, other.terminal = self.stage.copy(), self.terminal.copy()
        other.modes = self.modes.copy()
        return other

    def set(self, name: str, *, reference=None, weight=None, knots=None) -> Parameters:
        """Set residual ``name``'s ``reference`` and/or ``weight`` at ``knots`` (knot ``k <
        N`` is interval ``k``'s stage cost, ``N`` the terminal cost; an int, a slice, or
        indices; default every knot where ``name`` is a residual). A value is one column for
        all those knots (a scalar weight for every row) or a ``(rows, len(knots))`` matrix
        (a weight also ``(1, len(knots))``: one per knot for every row).
        Returns self."""
        problem, N = self.problem, self.problem.N
        where = {}
        for layout, last in ((problem.stage_layout, False), (problem.terminal_layout, True)):
            for label, ref, w in layout.entries:
                if label == name:
                    where[last] = (ref, w)
        if not where:
            labels = [e[0] for e in problem.stage_layout.entries + problem.terminal_layout.entries]
            raise InputError(f"set: {unknown_name('residual', name, sorted(set(labels)))}")
        selected = _knots(knots, N, [k for k in range(N) if False in where] +
                          ([N] if True in where else []))
        for k in selected:
            if (k == N) not in where:
                raise InputError(f"set: {name!r} is not a "
                                 f"{'terminal' if k == N else 'stage'} residual (knot {k})")
        for value, index, what in ((reference, 0, "reference"), (weight, 1, "weight")):
            if value is None:
                continue
            rows = where[next(iter(where))][index]
            n = rows.stop - rows.start
            columns = _columns(f"set {name!r} {what}", value, n, len(selected),
                               nonnegative=what == "weight")
            for j, k in enumerate(selected):
                if k == N:
                    self.terminal[where[True][index]] = columns[:, j]
                else:
                    self.stage[where[False][index], k] = columns[:, j]
        return self

    def get(self, name: str, knot: int) -> tuple[np.ndarray, np.ndarray]:
        """``(reference, weights)`` of residual ``name`` at ``knot``."""
        problem, N = self.problem, self.problem.N
        layout = problem.terminal_layout if knot == N else problem.stage_layout
        column = self.terminal if knot == N else self.stage[:, knot]
        for label, ref, w in layout.entries:
            if label == name:
                return column[ref].copy(), column[w].copy()
        raise InputError(f"get: no residual {name!r} at knot {knot}")

    def set_modes(self, modes) -> Parameters:
        """One mode index per interval (``(N,)``, into ``problem.modes``). Returns self."""
        modes = np.asarray(modes)
        count = len(self.problem.modes)
        if modes.shape != (self.problem.N,) or modes.dtype.kind not in "iuf" or \
                not np.all(np.isin(modes, np.arange(count))):
            raise InputError(f"modes: one index in 0..{count - 1} per interval "
                             f"({self.problem.N}), got {modes.tolist()}")
        self.modes = modes.astype(int)
        return self


def _residuals(what: str, residuals, model, *, terminal: bool) -> tuple[Residual, ...]:
    if isinstance(residuals, Residual):
        residuals = (residuals,)
    if not isinstance(residuals, Sequence) or not all(isinstance(r, Residual) for r in residuals):
        raise InputError(f"{what} must be a sequence of casdyn.ocp residuals, got {residuals!r}")
    labels = set()
    for residual in residuals:
        residual.check(model)
        if terminal and residual.needs_control:
            raise InputError(f"{what}: {residual.label()!r} reads the torques or forces, "
                             "which the horizon's end does not have")
        if residual.label() in labels:
            raise InputError(f"{what}: two residuals named {residual.label()!r} (give one a "
                             "name=...)")
        labels.add(residual.label())
    return tuple(residuals)


def _knots(knots, N: int, default: list[int]) -> list[int]:
    if knots is None:
        return default
    if isinstance(knots, slice):
        return list(range(N + 1))[knots]
    if isinstance(knots, numbers.Integral) and not isinstance(knots, bool):
        knots = [knots]
    if not isinstance(knots, Iterable):
        raise InputError(f"knots must be an int, a slice or indices, got {knots!r}")
    knots = list(knots)
    if not all(isinstance(k, numbers.Integral) and not isinstance(k, bool) and 0 <= k <= N
               for k in knots):
        raise InputError(f"knots: indices in 0..{N}, got {knots!r}")
    return [int(k) for k in knots]


def _columns(what: str, value, rows: int, count: int, *, nonnegative: bool) -> np.ndarray:
    array = np.asarray(value, dtype=float) if not isinstance(value, str) else np.array(np.nan)
    if array.ndim == 0:
        array = np.full(rows, float(array))
    if array.ndim == 2 and array.size == rows and array.shape[0] != rows:
        array = array.ravel()  # a 3 x 3 rotation, row by row
    if array.ndim == 1 and array.shape[0] == rows:
        array = np.tile(array[:, None], (1, count))
    if nonnegative and array.shape == (1, count):
        array = np.repeat(array, rows, axis=0)  # one weight per knot, for every row
    if array.shape != (rows, count):
        raise InputError(f"{what}: expected {rows} rows (or ({rows}, {count}) for the knots), "
                         f"got shape {np.shape(value)}")
    if not np.all(np.isfinite(array)) or (nonnegative and np.any(array < 0)):
        raise InputError(f"{what}: expected finite{' non-negative' if nonnegative else ''} "
                         f"numbers, got {np.asarray(value).tolist()}")
    return array
