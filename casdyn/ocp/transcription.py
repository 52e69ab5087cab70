"""A :class:`casdyn.ocp.Problem` as one NLP for ``casadi.nlpsol`` (Ipopt, fatrop), by
multiple shooting with its own stage Functions: the same model, residuals and constraints
that :class:`casdyn.ocp.SQP` linearises, so both reach the same optimum.

Variables stage by stage (fatrop's layout, ``structure_detection="auto"``):
``[x_0, u_0, x_1, u_1, ..., x_N]`` (``x`` in coordinates: every gap maps a unit quaternion to
a unit quaternion). Constraints, stage by stage: ``x_{k+1} - F(x_k, u_k) = 0``, at the first
``x_0 - x_init = 0``, then the held feet's rows ``h >= 0`` of that interval's mode (the exact
cone as its one smooth row, :meth:`Problem.friction_rows`) and, from the second knot on, the
state constraints; the state constraints of ``x_N`` last. The
torque, joint-position and velocity limits are bounds (the state's from knot 1 on). The
NLP's parameters are ``[x_init; vec(P); P_N]``; the mode of each interval is fixed when the
NLP is built (a stance schedule is a different NLP's structure).
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from casdyn.errors import InputError

from .problem import Parameters, Problem


def split_stages(z, nx: int, nw: int, N: int) -> tuple:
    """``(X (nx, N + 1), W (nw, N))`` of a stage-wise variable vector
    ``[x_0, w_0, x_1, ..., x_N]`` (NumPy or CasADi)."""
    stride = nx + nw
    if isinstance(z, np.ndarray | ca.DM):
        z = np.asarray(z, dtype=float).ravel()
        X = np.stack([z[k * stride : k * stride + nx] for k in range(N + 1)], axis=1)
        W = np.stack([z[k * stride + nx : (k + 1) * stride] for k in range(N)], axis=1) \
            if nw else np.zeros((0, N))
        return X, W
    X = ca.horzcat(*[z[k * stride : k * stride + nx] for k in range(N + 1)])
    W = ca.horzcat(*[z[k * stride + nx : (k + 1) * stride] for k in range(N)])
    return X, W


def join_stages(X, W) -> np.ndarray:
    """The stage-wise variable vector of ``X`` and ``W`` (the inverse of
    :func:`split_stages`)."""
    X, W = np.asarray(X, dtype=float), np.asarray(W, dtype=float)
    return np.concatenate([np.r_[X[:, k], W[:, k]] for k in range(W.shape[1])] + [X[:, -1]])


def nlpsol_options(name: str, equality: list[bool], tol: float,
                   options: dict | None = None, extra: dict | None = None) -> dict:
    """``nlpsol``'s options for a stage-wise NLP: quiet, no exception on failure, the
    equality flags, expanded to SX; fatrop with ``structure_detection="auto"`` and
    ``mu_init`` 1e-2; both to ``tol``; then ``extra``, then the caller's ``options`` (a dict
    value merged into the one it replaces)."""
    opts = {"print_time": False, "error_on_fail": False, "equality": equality, "expand": True,
            **(extra or {})}
    if name == "fatrop":
        opts.update({"structure_detection": "auto",
                     "fatrop": {"print_level": 0, "mu_init": 1e-2, "tol": tol}})
    elif name == "ipopt":
        opts["ipopt"] = {"print_level": 0, "sb": "yes", "tol": tol}
    for key, value in (options or {}).items():
        if isinstance(value, dict) and isinstance(opts.get(key), dict):
            opts[key] = {**opts[key], **value}
        else:
            opts[key] = value
    return opts


class Transcription:
    """The NLP of ``problem`` with the interval modes ``modes`` (``(N,)`` indices into
    ``problem.modes``)."""

    def __init__(self, problem: Problem, modes):
        self.problem, self.N = problem, problem.N
        self.modes = problem.parameters().set_modes(modes).modes
        m, N = problem.model, problem.N
        nx, nu = m.nx, m.nu
        n_p, n_pN = problem.stage_layout.size, problem.terminal_layout.size
        z = ca.MX.sym("z", nx * (N + 1) + nu * N)
        p = ca.MX.sym("p", nx + n_p * N + n_pN)
        x_init, P = p[:nx], ca.reshape(p[nx : nx + n_p * N], n_p, N)
        PN = p[nx + n_p * N :]
        X, U = self.split(z)
        g, lbg, ubg, objective = [], [], [], 0
        for k in range(N):
            x_next, r, w, forces = problem.stage(int(self.modes[k]))(X[:, k], U[:, k], P[:, k])
            objective = objective + 0.5 * ca.dot(w, r * r)
            held = np.flatnonzero(problem.held_rows(int(self.modes[k]), linearised=False))
            rows = problem.friction_rows(forces)[held.tolist()] if held.size else ca.MX(0, 1)
            if k > 0:  # the state constraints from the second knot on
                rows = ca.vertcat(rows, problem.state_rows(X[:, k]))
            g += [X[:, k + 1] - x_next] + ([X[:, 0] - x_init] if k == 0 else []) + [rows]
            equal = nx * (2 if k == 0 else 1)
            lbg += [np.zeros(equal), np.zeros(rows.numel())]
            ubg += [np.zeros(equal), np.full(rows.numel(), np.inf)]
        r, w = problem.terminal()(X[:, N], PN)
        objective = objective + 0.5 * ca.dot(w, r * r)
        end = problem.state_rows(X[:, N], end=True)
        g.append(end)
        lbg.append(np.zeros(end.numel()))
        ubg.append(np.full(end.numel(), np.inf))
        self.nlp = {"x": z, "p": p, "f": objective, "g": ca.vertcat(*g)}
        self.lbg, self.ubg = np.concatenate(lbg), np.concatenate(ubg)
        self.equality = [bool(lo == hi) for lo, hi in zip(self.lbg, self.ubg, strict=True)]
        lx, ux = problem.state_bounds()
        lu, uu = problem.control_bounds()
        free = np.full(nx, np.inf)
        self.lbz = np.concatenate([np.r_[-free if k == 0 else lx, lu] for k in range(N)] + [lx])
        self.ubz = np.concatenate([np.r_[free if k == 0 else ux, uu] for k in range(N)] + [ux])

    def split(self, z):
        """``(X (nx, N + 1), U (nu, N))`` of a variable vector (NumPy or CasADi)."""
        m = self.problem.model
        return split_stages(z, m.nx, m.nu, self.N)

    def join(self, X, U) -> np.ndarray:
        """The variable vector of ``X`` and ``U`` (the inverse of :meth:`split`)."""
        return join_stages(X, U)

    def parameter_vector(self, x_init, parameters: Parameters) -> np.ndarray:
        """The NLP's ``p`` for the initial state and the problem's parameters (whose modes
        must be this NLP's)."""
        if not np.array_equal(parameters.modes, self.modes):
            raise InputError("the parameters' modes differ from the NLP's: build a "
                             "Transcription for that schedule")
        return np.r_[np.asarray(x_init, dtype=float), parameters.stage.ravel(order="F"),
                     parameters.terminal]

    def solver(self, name: str = "ipopt", *, options: dict | None = None):
        """A ``casadi.nlpsol`` of the NLP, "ipopt" or "fatrop" (with ``structure_detection``
        "auto"), its functions expanded to SX; tolerance 1e-8 unless ``options`` say."""
        return ca.nlpsol(f"ocp_{name}", name, self.nlp,
                         nlpsol_options(name, self.equality, 1e-8, options))

    def solve(self, solver, x_init, parameters: Parameters, X, U) -> tuple:
        """``(X, U, cost, stats)`` from ``solver`` started at the plan ``(X, U)``."""
        result = solver(x0=self.join(X, U), p=self.parameter_vector(x_init, parameters),
                        lbx=self.lbz, ubx=self.ubz, lbg=self.lbg, ubg=self.ubg)
        Xs, Us = self.split(result["x"])
        return Xs, Us, float(result["f"]), solver.stats()
