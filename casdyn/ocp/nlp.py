"""A contact OCP as one NLP, laid out stage by stage for fatrop (and solvable by Ipopt).

Variables ``[x_0, w_0, x_1, w_1, ..., x_N]`` with ``x = [q; v]`` (``nq + nv``, the quaternion
in coordinates: every gap maps a unit quaternion to a unit quaternion) and the stage's inputs
``w``: the torques ``u`` (``dynamics="forward"``) or ``[u; a; f]`` (``dynamics="inverse"``:
accelerations and the feet's forces ``3 x n_feet`` column by column). Constraints, in
fatrop's order (``structure_detection="auto"`` finds the stages from it):

    x_1 - F(x_0, w_0) = 0,   path_0(x_0, w_0),   x_2 - F(x_1, w_1) = 0,   path_1 ...,
    path_N(x_N)

where ``path_0`` starts with ``x_0 = x_init``. With ``dynamics="forward"``, ``F`` is
:meth:`ContactModel.step` and ``path_k`` the held feet's friction rows of its forces. With
``dynamics="inverse"``, ``F`` is the semi-implicit Euler step ``v+ = v + dt a``,
``q+ = q ⊕ dt v+`` and ``path_k`` holds ``M a + h - S^T u - J_c^T f = 0``, the held feet's
``J a + Jdot v + damping J v = 0``, the swing feet's ``f = 0`` and the friction rows.
The torque, joint-position and velocity limits are bounds. The cost is the
:class:`TrackingCost` ``0.5 sum_k |r_k|^2``.
"""

from __future__ import annotations

from collections.abc import Sequence

import casadi as ca
import numpy as np

from casdyn.errors import InputError

from .checks import nonnegative
from .cost import TrackingCost
from .model import CONES, ContactModel, legged
from .transcription import join_stages, nlpsol_options, split_stages


class ContactOCP:
    """The NLP of ``N = len(stance)`` intervals with the held feet ``stance[k]`` (one mask
    per interval), the cost parameters ``P`` (``(n_p, N + 1)``, see :class:`TrackingCost`)
    and the initial state ``x_init`` as NLP parameters.

    ``cone``: "pyramid" (four linear rows per foot) or "exact" (the second-order cone).
    ``effort_limit``, ``velocity_limit``: scalars or ``nu`` vectors (joints only, ``>= 0``,
    ``inf`` for none); default the robot's. ``position_limits``: ``(lower, upper)`` joint
    positions (scalars or ``nu`` vectors, ``lower <= upper``) or None.
    """

    def __init__(self, model: ContactModel, cost: TrackingCost, stance: Sequence[Sequence],
                 *, dynamics: str = "inverse", cone: str = "pyramid", effort_limit=None,
                 velocity_limit=None, position_limits=None):
        if dynamics not in ("forward", "inverse"):
            raise InputError(f"dynamics must be 'forward' or 'inverse', got {dynamics!r}")
        if cone not in CONES:
            raise InputError(f"cone must be 'pyramid' or 'exact', got {cone!r}")
        legged(model, "ContactOCP")
        self.model, self.cost, self.dynamics, self.cone = model, cost, dynamics, cone
        if isinstance(stance, str) or not isinstance(stance, Sequence | np.ndarray):
            raise InputError(f"stance must be one stance mask per interval, got {stance!r}")
        self.stance = [model.stance_mask(s, name=f"stance[{k}]") for k, s in enumerate(stance)]
        self.N = len(self.stance)
        if self.N < 1:
            raise InputError("stance: give at least one interval")
        nf = len(model.feet)
        self.nw = (model.nu if dynamics == "forward"
                   else model.nu + model.nv + model.force_size * nf)
        robot = model.robot
        self.effort_limit = nonnegative(
            "effort_limit", robot.effort_limits[6:] if effort_limit is None else effort_limit,
            model.nu, finite=False)
        self.velocity_limit = nonnegative(
            "velocity_limit",
            robot.velocity_limits[6:] if velocity_limit is None else velocity_limit,
            model.nu, finite=False)
        self.position_limits = None if position_limits is None else \
            _position_limits(position_limits, model.nu)
        self._build()

    # -- layout ---------------------------------------------------------------------------
    def split(self, z) -> tuple:
        """``(X (nx, N + 1), W (nw, N))`` of a variable vector (NumPy or CasADi)."""
        return split_stages(z, self.model.nx, self.nw, self.N)

    def join(self, X, W) -> np.ndarray:
        """The variable vector of ``X`` and ``W`` (the inverse of :meth:`split`)."""
        return join_stages(X, W)

    def forces(self, X, W) -> np.ndarray:
        """The feet's forces of each interval, ``(N, force_size, n_feet)`` (world axes)."""
        m, nf = self.model, len(self.model.feet)
        out = np.zeros((self.N, m.force_size, nf))
        for k in range(self.N):
            if self.dynamics == "inverse":
                out[k] = W[m.nu + m.nv :, k].reshape(nf, m.force_size).T
            else:
                out[k] = np.asarray(m.step(self.stance[k])(X[:, k], W[:, k])[1])
        return out

    # -- building -------------------------------------------------------------------------
    def _cone_rows(self, f, held):
        rows = [self.model.contact_rows(f[:, k], self.cone) for k, h in enumerate(held) if h]
        return ca.vertcat(*rows) if rows else ca.SX(0, 1)

    def _stage(self, held) -> ca.Function:
        """(x, w) -> (x_next, equalities, inequalities >= 0) for one stance mask."""
        m = self.model
        nf = len(m.feet)
        x, w = ca.SX.sym("x", m.nx), ca.SX.sym("w", self.nw)
        q, v = x[: m.nq], x[m.nq :]
        u = w[: m.nu]
        if self.dynamics == "forward":
            x_next, f = m.step(held)(x, u)
            equal = ca.SX(0, 1)
        else:
            a = w[m.nu : m.nu + m.nv]
            f = ca.reshape(w[m.nu + m.nv :], m.force_size, nf)
            v_next = v + m.dt * a
            x_next = ca.vertcat(m.robot.integrate(q, m.dt * v_next), v_next)
            swing = [f[:, k] for k, h in enumerate(held) if not h]
            equal = ca.vertcat(m.inverse_dynamics_residual(q, v, a, u, f),
                               ca.vec(m.foot_acceleration(q, v, a, held)), *swing)
        tag = "".join("1" if h else "0" for h in held)
        return ca.Function(f"ocp_stage_{tag}", [x, w], [x_next, equal, self._cone_rows(f, held)])

    def _build(self):
        m, cost, N = self.model, self.cost, self.N
        nx, nw = m.nx, self.nw
        stages = {mask: self._stage(mask) for mask in set(self.stance)}
        z = ca.MX.sym("z", nx * (N + 1) + nw * N)
        n_p = cost.parameter_size(m)
        p = ca.MX.sym("p", nx + n_p * (N + 1))
        x_init, P = p[:nx], ca.reshape(p[nx:], n_p, N + 1)
        X, W = self.split(z)
        xs, us, ps = ca.SX.sym("x", nx), ca.SX.sym("u", m.nu), ca.SX.sym("p", n_p)
        stage_cost = ca.Function("stage_cost", [xs, us, ps],
                                 [0.5 * ca.sumsqr(cost.residual(m, xs, us, ps))])
        final_cost = ca.Function("final_cost", [xs, ps],
                                 [0.5 * ca.sumsqr(cost.residual(m, xs, None, ps))])
        g, lbg, ubg = [], [], []
        objective = 0
        for k in range(N):
            x_next, equal, cone = stages[self.stance[k]](X[:, k], W[:, k])
            g.append(X[:, k + 1] - x_next)
            lbg.append(np.zeros(nx))
            if k == 0:
                g.append(X[:, 0] - x_init)
                lbg.append(np.zeros(nx))
            g += [equal, cone]
            lbg += [np.zeros(equal.numel()), np.zeros(cone.numel())]
            ubg += [np.zeros(nx)] + ([np.zeros(nx)] if k == 0 else []) + [
                np.zeros(equal.numel()), np.full(cone.numel(), np.inf)]
            objective = objective + stage_cost(X[:, k], W[: m.nu, k], P[:, k])
        objective = objective + final_cost(X[:, N], P[:, N])
        self.nlp = {"x": z, "p": p, "f": objective, "g": ca.vertcat(*g)}
        self.lbg, self.ubg = np.concatenate(lbg), np.concatenate(ubg)
        self.equality = [bool(lo == hi) for lo, hi in zip(self.lbg, self.ubg, strict=True)]
        self.lbz, self.ubz = self._bounds()

    def _bounds(self):
        m = self.model
        lx, ux = np.full(m.nx, -np.inf), np.full(m.nx, np.inf)
        ux[m.nq + 6 :], lx[m.nq + 6 :] = self.velocity_limit, -self.velocity_limit
        if self.position_limits is not None:
            lx[7 : m.nq], ux[7 : m.nq] = self.position_limits
        lw, uw = np.full(self.nw, -np.inf), np.full(self.nw, np.inf)
        lw[: m.nu], uw[: m.nu] = -self.effort_limit, self.effort_limit
        lower = np.concatenate([np.r_[lx, lw]] * self.N + [lx])
        upper = np.concatenate([np.r_[ux, uw]] * self.N + [ux])
        return lower, upper

    # -- solving --------------------------------------------------------------------------
    def solver(self, name: str = "ipopt", *, jit: bool = False, options: dict | None = None):
        """A ``casadi.nlpsol`` of the NLP: ``name`` "ipopt" or "fatrop" (with
        ``structure_detection`` "auto"), its functions expanded to SX; both to a tolerance
        of 1e-6 (fatrop's barrier starting at ``mu_init`` 1e-2).

        ``jit`` compiles them to C with CasADi's JIT (its "shell" compiler, with casdyn's
        compiler and flags policy for huge graphs, :func:`casdyn.codegen.build.jit_options`)
        instead of evaluating them in CasADi's VM: faster iterations, but the exact
        Hessian's C takes gcc minutes for a few dozen knots (measured: 12 intervals of solo12,
        7.7 min), so it pays only for a problem solved many times. CasADi compiles these
        itself, each time: fatrop's structure detection needs the symbolic NLP, so they
        cannot come from a library of the compile cache."""
        extra = {}
        if jit:
            from ..codegen.build import jit_options

            extra = {"jit": True, "compiler": "shell", "jit_options": jit_options()}
        opts = nlpsol_options(name, self.equality, 1e-6, options, extra)
        return ca.nlpsol(f"contact_ocp_{name}", name, self.nlp, opts)

    def guess(self, x_init, u_guess, forces=None) -> np.ndarray:
        """A first guess: ``x_init`` held over the horizon (its quaternion, never zero), the
        torques ``u_guess`` and, for ``dynamics="inverse"``, zero accelerations and the
        ``forces`` (``force_size x n_feet``, default: the weight shared by the held
        feet)."""
        m = self.model
        x_init = np.asarray(x_init, dtype=float)
        if x_init.shape != (m.nx,):
            raise InputError(f"x_init: expected {m.nx} finite numbers, got shape "
                             f"{x_init.shape}")
        if not np.all(np.isfinite(x_init)):
            raise InputError(f"x_init: expected {m.nx} finite numbers, got NaN or inf")
        if np.linalg.norm(x_init[3:7]) < 1e-6:
            raise InputError("x_init: the quaternion is zero")
        if np.shape(u_guess) != (m.nu,):
            raise InputError(f"u_guess: expected {m.nu} torques, got shape {np.shape(u_guess)}")
        X = np.tile(x_init[:, None], (1, self.N + 1))
        W = np.zeros((self.nw, self.N))
        W[: m.nu] = np.asarray(u_guess, dtype=float)[:, None]
        if self.dynamics == "inverse":
            weight = m.robot.mass * -m.robot.gravity[2]
            for k, held in enumerate(self.stance):
                f = np.zeros((m.force_size, len(m.feet)))
                if forces is not None:
                    f = np.asarray(forces, dtype=float) * np.array(held)[None, :]
                elif any(held):
                    f[-1] = weight / sum(held) * np.array(held, dtype=float)
                W[m.nu + m.nv :, k] = f.T.ravel()
        return self.join(X, W)


def _position_limits(limits, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)``, each a scalar or ``n`` joint positions (``-inf``/``inf`` for
    none), as two ``(n,)`` arrays with ``lower <= upper``."""
    expected = f"position_limits must be (lower, upper), each a scalar or {n} numbers"
    try:
        if isinstance(limits, str) or len(limits) != 2:
            raise ValueError
        sides = [np.asarray(side) for side in limits]
        if any(side.dtype.kind not in "iuf" for side in sides):  # NumPy reads "1" as 1.0
            raise ValueError
        bounds = [np.broadcast_to(side.astype(float), (n,)).copy() for side in sides]
    except (TypeError, ValueError):
        raise InputError(f"{expected}, got {limits!r}") from None
    if any(np.any(np.isnan(side)) for side in bounds):
        raise InputError(f"{expected}, got NaN in {limits!r}")
    lower, upper = bounds
    if np.any(lower > upper):
        k = int(np.argmax(lower > upper))
        raise InputError(f"position_limits: lower must not exceed upper (joint {k}: "
                         f"{lower[k]} > {upper[k]})")
    return lower, upper
