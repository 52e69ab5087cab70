"""Sequential quadratic programming of a :class:`casdyn.ocp.Problem` on HPIPM: the exact
optimum from a cold start (:meth:`SQP.solve`), one QP per control period for MPC
(:meth:`SQP.iterate`, the real-time iteration of Diehl, Bock & Schloeder 2005).

Each iteration linearises every interval around the current plan — one compiled Function
per stance mode, the dynamics through casdyn's analytical contact-dynamics derivatives, laid
out as the horizon's QP by :class:`casdyn.ocp.linearisation.HorizonQP` — and solves that QP
in the tangent space with HPIPM (Frison & Diehl 2020, in CasADi's wheel), whose Riccati
recursion runs stage by stage; a problem without inequalities (nothing bounds the step) has
its QPs solved by one Riccati recursion of casdyn's own (:mod:`casdyn.ocp.riccati`).

QP variables, stage by stage (HPIPM's order): ``[dx_0 du_0 dx_1 du_1 ... dx_N]`` with
``dx = [dq; dv]`` (``2 nv``) and ``du`` (``nu``). Constraints of each stage: the linearised
gap ``A dx_k + B du_k - dx_{k+1} = -(F(x_k, u_k) ⊖ x_{k+1})``, the held feet's linearised
friction (and centre-of-pressure) rows ``C dx_k + D du_k >= -h`` (the swing feet's rows
unbounded), the boxes on ``du`` (torque limits) and on ``dx`` (joint position and velocity
limits, exact in the tangent space); ``dx_0`` is fixed by the measured state. All are
exact: the SQP converges to the NLP's own optimum (a Gauss-Newton step vanishes only at a
KKT point of the problem), globalised by a filter line search on the cost and the l1
constraint violation (Waechter & Biegler 2006), with a feasibility restoration where the
filter takes no step.

Nothing in the compiled code depends on the parameters' values: references, weights and the
mode schedule are inputs of every call.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import casadi as ca
import numpy as np

from casdyn.arguments import flag
from casdyn.errors import ConvergenceWarning, InputError
from casdyn.runtime.evaluator import NumericEvaluator

from . import riccati
from .checks import number
from .linearisation import INF, HorizonQP
from .problem import Parameters, Problem

# HPIPM's return status (hpipm_common.h)
_HPIPM = {0: "solved", 1: "stopped at its iteration limit (iter_max)",
          2: "stopped at its minimum step", 3: "NaN in its solution",
          4: "inconsistent equality constraints"}


@dataclass(frozen=True)
class Result:
    """What :meth:`SQP.solve` reached: the plan ``X`` (``(nx, N + 1)``), ``U`` (``(nu, N)``),
    its ``cost``, ``violation`` (the largest constraint violation: gaps, friction rows,
    bounds), the SQP ``iterations`` and whether it ``converged`` (violation below the
    tolerance, and the step below it or the step's change of the cost below ``cost_tol``; see
    :meth:`SQP.solve`), with ``message``."""

    X: np.ndarray
    U: np.ndarray
    cost: float
    violation: float
    iterations: int
    converged: bool
    message: str


class SQP:
    """The solver of ``problem``: ``compile`` builds the per-mode linearisations as C (a
    library each, compiled while the next is built, kept in the compile cache; else
    CasADi's VM),
    reporting the build on stderr as :mod:`casdyn.progress` says (``progress``).
    ``switched``: the motion modes' linearisations as one graph with the held feet an input
    (one compile instead of one per mode; each knot then costs what the mode with the most
    feet held costs).
    ``hpipm``: HPIPM's options (default ``mode`` "speed", ``iter_max`` 50).
    ``regularization``: added to the Hessian's diagonal (``>= 0``; it changes the steps, not
    the optimum)."""

    def __init__(self, problem: Problem, *, compile: bool = True, hpipm: dict | None = None,
                 regularization: float = 1e-8, progress: bool | None = None,
                 switched: bool = False):
        if not isinstance(problem, Problem):
            raise InputError(f"SQP needs a casdyn.ocp.Problem, got {type(problem).__name__}")
        self.problem, self.model, self.N = problem, problem.model, problem.N
        self.regularization = number("regularization", regularization)
        m = self.model
        self.ndx, self.nu, self.ng = m.ndx, m.nu, problem.n_rows
        self.stage = self.ndx + self.nu
        self.size = self.stage * self.N + self.ndx
        held = [np.r_[problem.held_rows(k), np.ones(problem.n_state_rows, dtype=bool)]
                for k in range(len(problem.modes))]
        self._on = np.stack(held, axis=1).astype(float)
        # nothing bounds the step: one Riccati recursion solves each QP (riccati.py)
        self._riccati = problem.unbounded
        self._build(compile, progress, flag(switched, "switched"))
        options = {"mode": "speed", "iter_max": 50}
        options.update(hpipm or {})
        N = self.N
        self.qp = ca.conic("ocp_qp", "hpipm", {"h": self._h_sparsity, "a": self._a_sparsity},
                           {"N": N, "nx": [self.ndx] * (N + 1), "nu": [self.nu] * N + [0],
                            "ng": [self.ng] * N + [problem.n_end_rows],
                            "error_on_fail": False, "inf": INF,
                            "hpipm": options})
        self.X = self.U = None
        self._identity = None  # the restoration's Hessian, made on first use
        self._lam = np.zeros((len(m.feet), N))
        # the rows of each foot's along row in the QP's constraints, interval by interval
        per, stride = problem.rows_per_foot(), self.ndx + self.ng
        self._along = np.array([k * stride + self.ndx + j * per for k in range(N)
                                for j in range(len(m.feet))], dtype=int)
        self.status = "not run"  # what the last iterate() or solve() did
        self.qp_iterations = 0  # HPIPM's iterations in the last QP

    # -- building ---------------------------------------------------------------------------
    def _build(self, compile: bool, progress: bool | None, switched: bool):
        """The horizon's QP data (:class:`casdyn.ocp.linearisation.HorizonQP`) and, with C,
        the Riccati recursion of a problem without inequalities."""
        horizon = HorizonQP(self.problem, regularization=self.regularization, compile=compile,
                            progress=progress, riccati=self._riccati, switched=switched)
        self._functions, self._qp_data, self._lq_data = \
            horizon.functions, horizon.qp_data, horizon.lq_data
        self._h_sparsity, self._a_sparsity = horizon.h_sparsity, horizon.a_sparsity
        self._gap_rows, self._inequality_rows = horizon.gap_rows, horizon.inequality_rows
        self._update, self._shift = horizon.update, horizon.shift
        self._riccati_c = NumericEvaluator(riccati.compiled(self.N, self.ndx, self.nu)) \
            if compile and self._riccati else None

    # -- the plan ------------------------------------------------------------------------------
    def initialize(self, X, U) -> None:
        """Set the plan: states ``(nx, N + 1)`` (unit quaternions, never zero) and torques
        ``(nu, N)``."""
        m = self.model
        X, U = np.asarray(X, dtype=float), np.asarray(U, dtype=float)
        if X.shape != (m.nx, self.N + 1) or U.shape != (self.nu, self.N):
            raise InputError(f"initialize: expected X {(m.nx, self.N + 1)} and U "
                             f"{(self.nu, self.N)}, got {X.shape} and {U.shape}")
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(U))):
            raise InputError("initialize: X and U must be finite, got NaN or inf")
        if m.robot.floating_base and np.any(np.linalg.norm(X[3:7], axis=0) < 1e-6):
            raise InputError("initialize: a zero quaternion in X (give a standing pose)")
        self.X, self.U = X.copy(), U.copy()
        self._lam[:] = 0.0

    def hold(self, x0) -> None:
        """Set the plan to ``x0`` held over the horizon with the torques that hold its
        configuration still on all feet (:meth:`ContactModel.standing_torques`)."""
        x0 = self._state(x0)
        u = self.model.standing_torques(x0[: self.model.nq])
        self.initialize(np.tile(x0[:, None], (1, self.N + 1)), np.tile(u[:, None], (1, self.N)))

    def shift(self, fraction: float) -> None:
        """Move the plan on by ``fraction`` of a knot (the warm start of the next period;
        finite, ``>= 0``)."""
        fraction = number("fraction", fraction)
        self._need_plan("shift")
        X, U = self._shift(self.X, self.U, fraction)
        self.X, self.U = X.full(), U.full()

    # -- solving -----------------------------------------------------------------------------
    def iterate(self, x0, parameters: Parameters) -> bool:
        """One QP from the measured state ``x0`` (``nx``) with ``parameters``; the full step
        is taken (a real-time iteration). Updates :attr:`X` and :attr:`U`.

        Returns whether the plan took a usable step: HPIPM solved the QP, or stopped at its
        iteration limit or minimum step with a finite step. :attr:`status` says which. A QP
        whose data are not finite (a plan that diverged) is not handed to HPIPM, and a step
        that is not finite is not taken: the plan stays as it was, the call returns False with a
        :class:`casdyn.ConvergenceWarning` (start again with :meth:`hold` or
        :meth:`initialize`)."""
        args = self._arguments("iterate", x0, parameters)
        step = self._qp(self._data(self.X, self.U, args))
        if step is None:
            return False
        X, U = self._update(self.X, self.U, step[0], 1.0)
        self.X, self.U = X.full(), U.full()
        return True

    def solve(self, x0, parameters: Parameters, *, max_iter: int = 200,
              tol: float = 1e-7, cost_tol: float = 1e-11) -> Result:
        """Iterate from the current plan (:meth:`hold` ``x0`` first where there is none)
        until the constraint violation is below ``tol`` and either the QP's step (its largest
        entry) is below ``tol`` or the cost's derivative along it is below ``cost_tol``
        relative to the cost (the step would change the cost by less: stationary, as
        Crocoddyl stops on its expected improvement), each step shortened by a filter line
        search; at most ``max_iter`` QPs. Gauss-Newton steps converge linearly, at a rate
        set by the residuals left at the optimum (small residuals: a few iterations).
        A result that did not converge warns (:class:`casdyn.ConvergenceWarning`)."""
        if self.X is None:
            self.hold(x0)
        tol = number("tol", tol, positive=True)
        cost_tol = number("cost_tol", cost_tol)
        args = self._arguments("solve", x0, parameters)
        # each trial point is linearised: where it is taken, that is the next QP's data
        data = self._data(self.X, self.U, args)
        cost, theta, worst = self._measure(data, self.X, self.U)
        search = _Filter(theta)
        message, converged, iterations = "", False, 0
        for iterations in range(1, int(max_iter) + 1):
            step = self._qp(data, warn=False)
            if step is None:
                message = self.status
                break
            w, slope = step
            full_step = float(np.max(np.abs(w.full()))) if w.numel() else 0.0
            if worst <= tol and (full_step <= tol or
                                 -slope <= cost_tol * max(1.0, abs(cost))):
                # the QP's step vanishes at a feasible plan, or changes its cost by less
                # than cost_tol: a KKT point (a line search there would only compare costs
                # that differ by rounding)
                converged, message = True, f"converged in {iterations} iterations"
                break
            alpha = 1.0
            while alpha >= 1e-12:
                X, U = (v.full() for v in self._update(self.X, self.U, w, alpha))
                trial = self._data(X, U, args)
                trial_cost, trial_theta, trial_worst = self._measure(trial, X, U)
                if search.accepts(cost, theta, slope, alpha, trial_cost, trial_theta):
                    break
                alpha *= 0.5
            else:
                if worst <= tol and abs(slope) <= 1e3 * np.finfo(float).eps * max(1.0, abs(cost)):
                    # feasible, and the step changes the cost less than rounding resolves:
                    # as stationary as doubles can tell (a slow Gauss-Newton tail)
                    converged = True
                    message = f"converged to rounding in {iterations} iterations"
                    break
                # no step the filter takes: restore feasibility, then a new filter from there
                restored = self._restore(data, theta, args)
                if restored is None:
                    message = "the line search found no acceptable step, nor the restoration"
                    break
                X, U, trial, (trial_cost, trial_theta, trial_worst) = restored
                search = _Filter(trial_theta)
            self.X, self.U, data = X, U, trial
            cost, theta, worst = trial_cost, trial_theta, trial_worst
        else:
            message = f"not converged in {max_iter} iterations"
        if not converged:
            warnings.warn(f"SQP.solve: {message}", ConvergenceWarning, stacklevel=2)
        self.status = message
        return Result(self.X.copy(), self.U.copy(), cost, worst, iterations, converged, message)

    def cost(self, x0, parameters: Parameters) -> float:
        """The cost of the current plan."""
        args = self._arguments("cost", x0, parameters)
        return _vector(self._data(self.X, self.U, args)[6])[0]

    # -- internals ---------------------------------------------------------------------------
    def _data(self, X, U, args) -> list:
        """The QP of the plan ``(X, U)``: ``[H, g, a, lba, uba, dx0, cost]`` (DMs); where a
        Riccati recursion solves it, as NumPy arrays without ``H``, ``a`` and ``uba``
        (None), then its stage blocks ``[H_k, H_N, g_k, g_N, A, B, d]``."""
        if not self._riccati:
            return self._qp_data(X, U, *args, self._lam)
        for view, value in zip(self._lq_data.input_views, (X, U, *args, self._lam),
                               strict=True):
            view[...] = value.reshape(view.shape) if np.ndim(value) else value
        # copies in the buffers' own (column-major) layout: the C recursion's inputs
        g, lba, dx0, cost, *blocks = (v.copy(order="K")
                                      for v in self._lq_data.evaluate_dense())
        return [None, g, None, lba, None, dx0, cost, *blocks]

    def _qp(self, data, *, warn: bool = True, hpipm: bool = False):
        """(step, cost slope along the step) of the QP of ``data``, or None with the reason
        in :attr:`status` (and a warning where ``warn``); by HPIPM, or by one Riccati
        recursion where nothing bounds the step (unless ``hpipm``)."""
        if not all(_finite(d) for d in data):
            return self._failed("the QP's data are not finite: the plan diverged", warn)
        if self._riccati and not hpipm:
            return self._riccati_step(data, warn)
        H, g, a, lba, uba, dx0 = data[:6]
        lbx, ubx = self._boxes(dx0.full().ravel())
        solution = self.qp(h=H, g=g, a=a, lba=lba, uba=uba, lbx=lbx, ubx=ubx)
        stats = self.qp.stats()
        code = int(stats.get("return_status", -1))
        self.qp_iterations = int(stats.get("iter_count", -1))
        self.status = f"HPIPM: {_HPIPM.get(code, f'return status {code}')} after " \
            f"{self.qp_iterations} iterations"
        w = solution["x"]
        # a step at HPIPM's iteration limit or minimum step is its last interior iterate:
        # finite, it is taken (the next QP goes on from there)
        if code not in (0, 1, 2) or not w.is_regular():
            return self._failed(f"{self.status}; the step is not taken", warn)
        if self.problem.friction == "exact":
            # the along rows' multipliers (CasADi: negative where a lower bound is active)
            lam_a = solution["lam_a"].full().ravel()
            self._lam = np.maximum(0.0, -lam_a[self._along]).reshape(self._lam.shape, order="F")
        return w, float(ca.dot(g, w))

    def _riccati_step(self, data, warn: bool):
        """:meth:`_qp` by one Riccati recursion on the stage blocks that ``data`` ends with."""
        N, ndx, nu, s = self.N, self.ndx, self.nu, self.stage
        Hs, HN, gs, gN, A, B, d = data[7:]
        dx0 = data[5].ravel()
        try:
            if self._riccati_c is not None:  # the compiled recursion: the blocks as they are
                for view, value in zip(self._riccati_c.input_views,
                                       (Hs, HN, gs, gN, A, B, d, dx0), strict=True):
                    view[...] = value.reshape(view.shape)
                w = self._riccati_c.evaluate().ravel()
                if self._riccati_c.failed:
                    raise np.linalg.LinAlgError("Q_uu is not positive definite")
            else:
                w = riccati.solve(Hs.reshape(s, N, s).transpose(1, 0, 2), HN, gs.T,
                                  gN.ravel(), A.reshape(ndx, N, ndx).transpose(1, 0, 2),
                                  B.reshape(ndx, N, nu).transpose(1, 0, 2), d.T, dx0)
        except (np.linalg.LinAlgError, RuntimeError):
            return self._failed("the Riccati recursion met a singular or indefinite "
                                "Hessian", warn)
        self.qp_iterations, self.status = 1, "Riccati recursion: solved"
        if not np.all(np.isfinite(w)):
            return self._failed(f"{self.status}; the step is not finite and is not taken",
                                warn)
        return ca.DM(w), float(data[1].ravel() @ w)

    def _restore(self, data, theta: float, args):
        """The feasibility restoration of a filter line search, Gauss-Newton style: the
        smallest step (``min |dw|^2``) that satisfies the linearised constraints, shortened
        until the violation falls by a tenth; ``(X, U, data, measures)`` there, or None."""
        if self._identity is None:
            sparsity = self._h_sparsity
            rows, columns = sparsity.get_triplet()
            self._identity = ca.DM(sparsity, [1.0 if r == c else 0.0
                                              for r, c in zip(rows, columns, strict=True)])
        if self._riccati:  # HPIPM's data (the restoration's rows are those of the QP)
            data = self._qp_data(self.X, self.U, *args, self._lam)
        _, g, *rest = data
        step = self._qp([self._identity, ca.DM.zeros(g.shape), *rest], warn=False, hpipm=True)
        if step is None:
            return None
        alpha = 1.0
        while alpha >= 1e-8:
            X, U = (v.full() for v in self._update(self.X, self.U, step[0], alpha))
            trial = self._data(X, U, args)
            measures = self._measure(trial, X, U)
            if math.isfinite(measures[0]) and measures[1] <= 0.9 * theta:
                return X, U, trial, measures
            alpha *= 0.5
        return None

    def _limits(self, X, U) -> tuple[np.ndarray, np.ndarray]:
        """The torque and state limits about the plan ``(X, U)`` as bounds of the QP's
        ``[du_0 dx_1 du_1 ... dx_N]`` (unclipped: ``lower > 0`` or ``upper < 0`` where the
        plan itself is outside)."""
        lu, uu = self.problem.control_bounds()
        dl, dh = self.problem.tangent_bounds(X[:, 1:])
        return (np.concatenate([lu[:, None] - U, dl]).ravel(order="F"),
                np.concatenate([uu[:, None] - U, dh]).ravel(order="F"))

    def _boxes(self, dx0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bounds of the QP's variables: ``dx_0`` fixed, the torque and state limits."""
        lower, upper = self._limits(self.X, self.U)
        return (np.clip(np.r_[dx0, lower], -INF, INF), np.clip(np.r_[dx0, upper], -INF, INF))

    def _measure(self, data, X, U) -> tuple[float, float, float]:
        """(cost, l1 violation, largest violation) of the plan ``(X, U)`` from its QP's
        ``data``: the gaps (``-lba`` of the gap rows), the held feet's rows (``lba > 0``:
        ``h < 0``; the others' ``lba`` is ``-INF``), ``x_0``'s distance from the measured
        state, the torque and state limits (from knot 1)."""
        lba, dx0 = _vector(data[3]), _vector(data[5])
        lower, upper = self._limits(X, U)
        parts = np.concatenate([
            np.abs(lba[self._gap_rows]), np.maximum(0, lba[self._inequality_rows]),
            np.abs(dx0), np.maximum(0, lower), np.maximum(0, -upper)])
        return _vector(data[6])[0], float(parts.sum()), float(parts.max(initial=0.0))

    def _failed(self, why: str, warn: bool):
        self.status = why
        if warn:
            warnings.warn(f"SQP: {why}; the plan is unchanged", ConvergenceWarning,
                          stacklevel=4)
        return None

    def _need_plan(self, what: str) -> None:
        if self.X is None:
            raise InputError(f"{what}: set the plan first (hold(x0) or initialize(X, U))")

    def _state(self, x0) -> np.ndarray:
        nx = self.model.nx
        x0 = np.asarray(x0, dtype=float)
        if x0.shape != (nx,) or not np.all(np.isfinite(x0)):
            raise InputError(f"x0: expected {nx} finite numbers, got "
                             f"{x0.tolist() if x0.size < 64 else x0.shape}")
        return x0

    def _arguments(self, what: str, x0, parameters):
        self._need_plan(what)
        x0 = self._state(x0)
        if not isinstance(parameters, Parameters) or parameters.problem is not self.problem:
            raise InputError(f"{what}: parameters must come from this problem's "
                             "parameters()")
        if not (np.all(np.isfinite(parameters.stage)) and
                np.all(np.isfinite(parameters.terminal))):
            raise InputError(f"{what}: the parameters are not finite")
        on = self._on[:, parameters.modes]
        on[self.problem.n_friction_rows :, 0] = 0.0  # the first state is the measured one
        return (parameters.stage, parameters.terminal, parameters.modes[None, :].astype(float),
                on, x0)


class _Filter:
    """The filter line search of Waechter & Biegler (2006; Ipopt's without its barrier; the
    restoration is :meth:`SQP._restore`): a step is taken where it reduces the violation
    ``theta`` (l1) or the cost enough against the current point and every point the filter
    holds; where the violation is small and the step descends, it must reduce the cost
    (Armijo). Costs are compared as Ipopt compares them, to rounding (ten machine epsilons
    of the cost): near the optimum, where the steps are tiny, a cost that only rounding
    raised does not stop the search."""

    gamma_theta, gamma_cost, eta, delta, s_theta, s_cost = 1e-5, 1e-5, 1e-4, 1.0, 1.1, 2.3

    def __init__(self, theta0: float):
        self.theta_max = 1e4 * max(1.0, theta0)
        self.points: list[tuple[float, float]] = []

    def accepts(self, cost, theta, slope, alpha, trial_cost, trial_theta) -> bool:
        if not (math.isfinite(trial_cost) and math.isfinite(trial_theta)) or \
                trial_theta > self.theta_max:
            return False
        if any(trial_theta >= t and trial_cost >= c for t, c in self.points):
            return False
        switching = slope < 0 and \
            alpha * (-slope) ** self.s_cost > self.delta * theta ** self.s_theta
        rounding = 10 * np.finfo(float).eps * max(1.0, abs(cost))
        if switching and theta <= 1e-4 * max(1.0, self.theta_max / 1e4):
            return trial_cost <= cost + self.eta * alpha * slope + rounding
        if trial_theta <= (1 - self.gamma_theta) * theta or \
                trial_cost <= cost - self.gamma_cost * theta + rounding:
            self.points.append(((1 - self.gamma_theta) * theta,
                                cost - self.gamma_cost * theta))
            return True
        return False


def _vector(value) -> np.ndarray:
    """A DM or an array as a flat array."""
    return value.full().ravel() if isinstance(value, ca.DM) else np.ravel(value)


def _finite(value) -> bool:
    """Whether a DM or an array (None: absent) holds finite numbers only."""
    if value is None:
        return True
    return value.is_regular() if isinstance(value, ca.DM) else bool(np.all(np.isfinite(value)))
