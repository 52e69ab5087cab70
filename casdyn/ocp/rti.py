"""Real-time iteration (RTI; Diehl, Bock & Schloeder 2005) of a contact OCP on HPIPM.

Each call linearises the whole horizon once around the current guess (one compiled C
function: dynamics Jacobians by CasADi's AD of casdyn's contact dynamics, Gauss-Newton cost
Hessians ``J^T J``), solves one QP in the tangent space with HPIPM (Frison & Diehl 2020, in
CasADi's wheel) and takes the full step on the manifold.

QP variables, stage by stage (HPIPM's order): ``w = [dx_0 du_0 dx_1 du_1 ... dx_N]`` with
``dx = [dq; dv]`` (``2 nv``) and ``du`` (``nu``). Constraints, stage by stage:
the gaps ``A_k dx_k + B_k du_k - dx_{k+1} = -(F(x_k, u_k) ⊖ x_{k+1})`` then the linearised
friction pyramids of the held feet's forces (the swing feet's rows unbounded);
``du`` within the torque limits, ``dx_0`` fixed by the measured state.

With ``constraints="barrier"`` the pyramids and the torque limits move into the cost as
relaxed logarithmic barriers (Feller & Ebenbauer 2017; as OCS2 does for legged robots): their
Gauss-Newton terms ``B''(h) dh dh^T`` and ``B'(h) dh`` join each stage's Hessian and gradient
and the QP keeps only the gaps (and unbounded boxes), which HPIPM solves in a few iterations
— about half the time of the QP with the inequalities; the price: the barrier penalises a
violation rather than forbidding it, and keeps the optimum a little inside the constraints.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence

import casadi as ca
import numpy as np

from casdyn.codegen.library import compile_function
from casdyn.errors import ConvergenceWarning, InputError

from .checks import nonnegative, number
from .cost import TrackingCost
from .model import ContactModel, legged

INF = 1e8  # HPIPM's "no bound"
# HPIPM's return status (hpipm_common.h)
_HPIPM = {0: "solved", 1: "stopped at its iteration limit (iter_max)",
          2: "stopped at its minimum step", 3: "NaN in its solution",
          4: "inconsistent equality constraints"}


def relaxed_barrier(h, mu: float, delta: float):
    """First and second derivatives of the relaxed log barrier of ``h >= 0``:
    ``-mu ln h`` for ``h > delta``, continued below ``delta`` by the quadratic with the same
    value, slope and curvature at ``delta`` (finite everywhere, convex)."""
    inside = h > delta
    d1 = ca.if_else(inside, -mu / h, mu * (h - 2 * delta) / delta**2)
    d2 = ca.if_else(inside, mu / h**2, mu / delta**2 + 0 * h)
    return d1, d2


class RealTimeIteration:
    """One Gauss-Newton QP per call for the horizon of ``N`` knots of ``model.dt``.

    ``modes``: the distinct stance masks (one flag per foot) the schedule may use; each
    knot selects one by its index. ``effort_limit``: ``|u| <=`` it (N m, a scalar or an
    ``nu`` vector, ``>= 0``). ``hpipm``: options passed to HPIPM (default: ``mode``
    "speed", ``iter_max`` 20). ``compile``: build the linearisation as C (else CasADi's VM;
    the first build of a horizon takes the C compiler a minute or two, then it is cached),
    reporting on stderr as :mod:`casdyn.progress` says (``progress``: True, False, or None
    to follow ``$CASDYN_PROGRESS`` or whether stderr is a terminal).
    ``constraints``: "hard" (QP inequalities) or "barrier" (relaxed log barriers in the cost,
    ``barrier = (mu, delta)`` for the pyramid rows in newtons, ``torque_barrier`` for the
    torque limits in N m; each two finite positive numbers).
    """

    def __init__(self, model: ContactModel, cost: TrackingCost, N: int,
                 modes: Sequence[Sequence[bool]], *, effort_limit=None,
                 hpipm: dict | None = None, compile: bool = True,
                 constraints: str = "hard", barrier: tuple[float, float] = (1.0, 0.5),
                 torque_barrier: tuple[float, float] = (0.1, 0.3),
                 progress: bool | None = None):
        if not isinstance(N, numbers.Integral) or isinstance(N, bool) or N < 1:
            raise InputError(f"N must be a whole number of at least 1, got {N!r}")
        legged(model, "RealTimeIteration")
        self.model, self.cost, self.N = model, cost, int(N)
        if isinstance(modes, str) or not isinstance(modes, Sequence | np.ndarray):
            raise InputError(f"modes must be a sequence of stance masks, got {modes!r}")
        self.modes = [model.stance_mask(m, name=f"modes[{k}]") for k, m in enumerate(modes)]
        if not self.modes:
            raise InputError("modes: give at least one stance mask")
        nf = len(model.feet)
        if constraints not in ("hard", "barrier"):
            raise InputError(f"constraints must be 'hard' or 'barrier', got {constraints!r}")
        self.soft = constraints == "barrier"
        self.barrier = _barrier("barrier", barrier)
        self.torque_barrier = _barrier("torque_barrier", torque_barrier)
        self.ndx, self.nu, self.ng = model.ndx, model.nu, model.rows_per_foot * nf
        self.ng_qp = 0 if self.soft else self.ng
        self.stage = self.ndx + self.nu
        self.size = self.stage * self.N + self.ndx
        limit = model.robot.effort_limits[6:] if effort_limit is None else effort_limit
        self.effort_limit = nonnegative("effort_limit", limit, self.nu, finite=False)
        self._build(compile, progress)
        options = {"mode": "speed", "iter_max": 20}
        options.update(hpipm or {})
        self.qp = ca.conic("rti_qp", "hpipm", {"h": self._h_sparsity, "a": self._a_sparsity},
                           {"N": self.N, "nx": [self.ndx] * (self.N + 1),
                            "nu": [self.nu] * self.N + [0],
                            "ng": [self.ng_qp] * self.N + [0], "error_on_fail": False,
                            "inf": INF, "hpipm": options})
        self.X = self.U = None
        self.status = "not run"  # what the last iterate() did (see iterate)

    # -- building ----------------------------------------------------------------------
    def _stage_dynamics(self, mask) -> ca.Function:
        """(x, u, x_next) -> (defect, A, B, c, C, D) for one stance mask."""
        m = self.model
        x, u, x_next = ca.SX.sym("x", m.nx), ca.SX.sym("u", m.nu), ca.SX.sym("x_next", m.nx)
        dx, du = ca.SX.sym("dx", m.ndx), ca.SX.sym("du", m.nu)
        x_plus, forces = m.step(mask)(m.integrate_state(x, dx), u + du)
        defect = m.difference_state(x_next, x_plus)
        rows = ca.vertcat(*[m.contact_rows(forces[:, k]) for k in range(len(m.feet))])
        w = ca.vertcat(dx, du)
        jac = ca.jacobian(ca.vertcat(defect, rows), w)  # one sweep for both
        at = ca.Function("at", [x, u, x_next, w], [defect, rows, jac])
        # evaluated at w = 0 by a call, which folds the zeros into a smaller graph than
        # substitute() does
        defect, rows, jac = at(x, u, x_next, ca.SX.zeros(w.numel()))
        n = m.ndx
        outputs = [defect, jac[:n, :n], jac[:n, n:], rows, jac[n:, :n], jac[n:, n:]]
        tag = "".join("1" if h else "0" for h in mask)
        return ca.Function(f"stage_{tag}", [x, u, x_next], outputs)

    def _stage_cost(self, terminal: bool) -> ca.Function:
        """(x, u, p) -> (H, g): the Gauss-Newton Hessian and gradient of one stage in
        (dx, du) (terminal: (x, p) in dx)."""
        m, cost = self.model, self.cost
        x, u, p = ca.SX.sym("x", m.nx), ca.SX.sym("u", m.nu), ca.SX.sym(
            "p", cost.parameter_size(m))
        dx, du = ca.SX.sym("dx", m.ndx), ca.SX.sym("du", m.nu)
        if terminal:
            r, w, inputs = cost.residual(m, m.integrate_state(x, dx), None, p), dx, [x, p]
        else:
            r = cost.residual(m, m.integrate_state(x, dx), u + du, p)
            w, inputs = ca.vertcat(dx, du), [x, u, p]
        at = ca.Function("at", [*inputs, w], [r, ca.jacobian(r, w)])
        r, J = at(*inputs, ca.SX.zeros(w.numel()))
        H, g = ca.mtimes(J.T, J), ca.mtimes(J.T, r)
        return ca.Function("terminal_cost" if terminal else "stage_cost", inputs, [H, g])

    def _stage_barrier(self) -> ca.Function:
        """(c, C, D, on, u) -> (H, g): the Gauss-Newton terms of the relaxed barriers of one
        stage's pyramid rows ``c + C dx + D du >= 0`` (rows with ``on`` 0 left out) and of
        ``|u + du| <= effort_limit``."""
        ng, ndx, nu = self.ng, self.ndx, self.nu
        c, on = ca.SX.sym("c", ng), ca.SX.sym("on", ng)
        C, D, u = ca.SX.sym("C", ng, ndx), ca.SX.sym("D", ng, nu), ca.SX.sym("u", nu)
        d1, d2 = relaxed_barrier(c, *self.barrier)
        J = ca.horzcat(C, D)
        H = ca.mtimes(J.T, ca.mtimes(ca.diag(on * d2), J))
        g = ca.mtimes(J.T, on * d1)
        limit = self.effort_limit
        for sign in (1.0, -1.0):  # limit - sign u >= 0
            t1, t2 = relaxed_barrier(limit - sign * u, *self.torque_barrier)
            g = g + ca.vertcat(ca.DM.zeros(ndx), -sign * t1)
            H = H + ca.diagcat(ca.DM.zeros(ndx, ndx), ca.diag(t2))
        return ca.Function("stage_barrier", [c, C, D, on, u], [H, g])

    def _build(self, compile: bool, progress: bool | None):
        m, N, ndx, nu, ng = self.model, self.N, self.ndx, self.nu, self.ng
        stages = [self._stage_dynamics(mask) for mask in self.modes]
        dynamics = stages[0] if len(stages) == 1 else ca.Function.conditional(
            "stage_dynamics", stages[:-1], stages[-1])
        np_ = self.cost.parameter_size(m)
        X, U = ca.MX.sym("X", m.nx, N + 1), ca.MX.sym("U", nu, N)
        P = ca.MX.sym("P", np_, N + 1)
        mode = ca.MX.sym("mode", 1, N)
        held = ca.MX.sym("held", len(m.feet), N)  # 1: the foot's pyramid rows apply
        x0 = ca.MX.sym("x0", m.nx)
        if len(stages) == 1:
            d, A, B, c, C, D = dynamics.map(N)(X[:, :-1], U, X[:, 1:])
        else:
            d, A, B, c, C, D = dynamics.map(N)(mode, X[:, :-1], U, X[:, 1:])
        Hs, gs = self._stage_cost(False).map(N)(X[:, :-1], U, P[:, :-1])
        HN, gN = self._stage_cost(True)(X[:, -1], P[:, -1])
        # each foot's rows, knot by knot
        on = ca.vec(ca.kron(held, ca.DM.ones(m.rows_per_foot, 1)))
        if self.soft:
            Hb, gb = self._stage_barrier().map(N)(c, C, D, ca.reshape(on, ng, N), U)
            Hs, gs = Hs + Hb, gs + gb
            ng = 0
        s = self.stage
        blocks_h = [Hs[:, k * s : (k + 1) * s] for k in range(N)] + [HN]
        H = ca.diagcat(*blocks_h)
        g = ca.vertcat(ca.vec(gs), gN)
        minus_eye = -ca.MX.eye(ndx)
        rows = []
        for k in range(N):
            left, right = k * s, self.size - (k + 1) * s - ndx
            rows.append(ca.horzcat(ca.MX(ndx, left), A[:, k * ndx : (k + 1) * ndx],
                                   B[:, k * nu : (k + 1) * nu], minus_eye, ca.MX(ndx, right)))
            if ng:
                rows.append(ca.horzcat(ca.MX(ng, left), C[:, k * ndx : (k + 1) * ndx],
                                       D[:, k * nu : (k + 1) * nu],
                                       ca.MX(ng, self.size - (k + 1) * s)))
        a = ca.vertcat(*rows)
        lower_rows = -on * ca.vec(c) - (1 - on) * INF  # (on is 0 or 1; INF is finite)
        lba = ca.vertcat(*[ca.vertcat(-d[:, k], lower_rows[k * ng : (k + 1) * ng])
                           for k in range(N)])
        uba = ca.vertcat(*[ca.vertcat(-d[:, k], INF * ca.DM.ones(ng)) for k in range(N)])
        limit = np.tile(np.full(nu, INF) if self.soft else self.effort_limit, N)
        du_lower, du_upper = -limit - ca.vec(U), limit - ca.vec(U)
        dx0 = m.difference_state(X[:, 0], x0)
        free = INF * ca.DM.ones(ndx)
        lbx = ca.vertcat(dx0, *[ca.vertcat(du_lower[k * nu : (k + 1) * nu], -free)
                                for k in range(N)])
        ubx = ca.vertcat(dx0, *[ca.vertcat(du_upper[k * nu : (k + 1) * nu], free)
                                for k in range(N)])
        qp_data = ca.Function("rti_qp_data", [X, U, P, mode, held, x0],
                              [H, g, a, lba, uba, lbx, ubx])
        self._h_sparsity, self._a_sparsity = H.sparsity(), a.sparsity()
        # the step on the manifold and the warm start moved on by a fraction of a knot
        W = ca.MX.sym("w", self.size)
        dX = ca.horzcat(*[W[k * s : k * s + ndx] for k in range(N + 1)])
        dU = ca.horzcat(*[W[k * s + ndx : (k + 1) * s] for k in range(N)])
        xs, dxs = ca.SX.sym("x", m.nx), ca.SX.sym("dx", ndx)
        plus = ca.Function("plus", [xs, dxs], [m.integrate_state(xs, dxs)]).map(N + 1)
        update = ca.Function("rti_update", [X, U, W], [plus(X, dX), U + dU])
        alpha = ca.MX.sym("alpha")
        xa, xb = ca.SX.sym("xa", m.nx), ca.SX.sym("xb", m.nx)
        a_s = ca.SX.sym("a")
        between = ca.Function("between", [xa, xb, a_s],
                              [m.integrate_state(xa, a_s * m.difference_state(xa, xb))])
        X_next = ca.horzcat(between.map(N)(X[:, :-1], X[:, 1:], alpha), X[:, -1])
        U_next = ca.horzcat(U[:, :-1] + alpha * (U[:, 1:] - U[:, :-1]), U[:, -1])
        shift = ca.Function("rti_shift", [X, U, alpha], [X_next, U_next])
        if compile:
            qp_data, update, shift = (compile_function(f, progress=progress)
                                      for f in (qp_data, update, shift))
        self._qp_data, self._update, self._shift = qp_data, update, shift

    # -- running -------------------------------------------------------------------------
    def initialize(self, X: np.ndarray, U: np.ndarray):
        """Set the guess: states ``(nx, N + 1)`` (unit quaternions, never zero) and torques
        ``(nu, N)``."""
        X, U = np.asarray(X, dtype=float), np.asarray(U, dtype=float)
        if X.shape != (self.model.nx, self.N + 1) or U.shape != (self.nu, self.N):
            raise InputError(f"initialize: expected X {(self.model.nx, self.N + 1)} and U "
                             f"{(self.nu, self.N)}, got {X.shape} and {U.shape}")
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(U))):
            raise InputError("initialize: X and U must be finite, got NaN or inf")
        if np.any(np.linalg.norm(X[3:7], axis=0) < 1e-6):
            raise InputError("initialize: a zero quaternion in X (give a standing pose)")
        self.X, self.U = X.copy(), U.copy()

    def iterate(self, x0, P, mode, held) -> bool:
        """One QP from the measured state ``x0`` with the parameters ``P``
        (``(n_p, N + 1)``, see :class:`TrackingCost`), the mode index of each interval
        ``(N,)`` and the held feet ``(n_feet, N)``; updates :attr:`X` and :attr:`U`.

        Returns whether the plan took a usable step: HPIPM solved the QP, or stopped at its
        iteration limit (``iter_max``) with a finite step, which a real-time iteration
        takes as it is. :attr:`status` says which, with HPIPM's iterations. A QP whose data
        are not finite (a plan that diverged) is not handed to HPIPM, and a step that is
        not finite is not taken: the plan stays as it was, the call returns False with a
        :class:`casdyn.ConvergenceWarning`, and :attr:`status` says why (start again with
        :meth:`initialize`)."""
        if self.X is None:
            raise InputError("iterate: call initialize(X, U) first")
        x0, P, mode, held = self._schedule(x0, P, mode, held)
        data = self._qp_data(self.X, self.U, P, mode, held, x0)
        if not all(np.all(np.isfinite(d.nonzeros())) for d in data):
            return self._failed("the QP's data are not finite: the plan diverged")
        H, g, a, lba, uba, lbx, ubx = data
        w = self.qp(h=H, g=g, a=a, lba=lba, uba=uba, lbx=lbx, ubx=ubx)["x"]
        stats = self.qp.stats()
        code = int(stats.get("return_status", -1))
        self.status = f"HPIPM: {_HPIPM.get(code, f'return status {code}')} after " \
            f"{stats.get('iter_count', '?')} iterations"
        if code not in (0, 1) or not np.all(np.isfinite(w.nonzeros())):
            return self._failed(f"{self.status}; the step is not taken")
        X, U = self._update(self.X, self.U, w)
        self.X, self.U = X.full(), U.full()
        return True

    def _failed(self, why: str) -> bool:
        """The plan kept as it was, ``why`` in :attr:`status` and a warning; False."""
        self.status = why
        warnings.warn(f"RealTimeIteration.iterate: {why}; the plan is unchanged",
                      ConvergenceWarning, stacklevel=3)
        return False

    def _schedule(self, x0, P, mode, held):
        """:meth:`iterate`'s arguments checked (a mode index out of range would select the
        last stage function without a word, a NaN would reach HPIPM)."""
        nx, nf, N = self.model.nx, len(self.model.feet), self.N
        x0 = np.asarray(x0, dtype=float)
        if x0.shape != (nx,):
            raise InputError(f"x0: expected {nx} finite numbers, got shape {x0.shape}")
        if not np.all(np.isfinite(x0)):
            raise InputError(f"x0: expected {nx} finite numbers, got {x0.tolist()}")
        P = np.asarray(P, dtype=float)
        n_p = self.cost.parameter_size(self.model)
        if P.shape != (n_p, N + 1):
            raise InputError(f"P: expected shape {(n_p, N + 1)}, got {P.shape}")
        if not np.all(np.isfinite(P)):
            raise InputError("P: expected finite numbers, got NaN or inf")
        mode = np.asarray(mode, dtype=float)
        if mode.size != N or mode.ndim > 2:
            raise InputError(f"mode: expected {N} values (one per interval), got shape "
                             f"{mode.shape}")
        mode = mode.reshape(1, N)
        if not np.all(np.isin(mode, np.arange(len(self.modes)))):
            raise InputError(f"mode: each knot's index into the {len(self.modes)} modes "
                             f"(0 to {len(self.modes) - 1}), got {mode.ravel().tolist()}")
        held = np.asarray(held, dtype=float)
        if held.shape != (nf, N):
            raise InputError(f"held: expected shape {(nf, N)}, got {held.shape}")
        if not np.all(np.isin(held, (0.0, 1.0))):
            raise InputError(f"held: 0 or 1 per foot and interval, got {held.tolist()}")
        return x0, P, mode, held

    def shift(self, fraction: float):
        """Move the guess on by ``fraction`` of a knot (the warm start of the next period;
        finite, ``>= 0``)."""
        fraction = number("fraction", fraction)
        X, U = self._shift(self.X, self.U, fraction)
        self.X, self.U = X.full(), U.full()


def _barrier(name: str, value) -> tuple[float, float]:
    """``(mu, delta)`` of a relaxed barrier: two finite positive numbers (``delta`` divides
    the quadratic continuation, ``mu`` scales it)."""
    try:
        if isinstance(value, str) or np.shape(value) != (2,):
            raise InputError(name)
        return number(name, value[0], positive=True), number(name, value[1], positive=True)
    except (InputError, ValueError):
        raise InputError(f"{name} must be 2 finite positive numbers (mu, delta), "
                         f"got {value!r}") from None
