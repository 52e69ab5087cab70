"""The QP of a :class:`casdyn.ocp.Problem`'s horizon around a plan, for :class:`casdyn.ocp.SQP`.

Each stance mode has one linearisation Function, built once for the problem and (with C) its
own library in casdyn's compile cache: the dynamics' Jacobians in the tangent space from
casdyn's analytical contact-dynamics derivatives (:meth:`ContactModel.dynamics_derivatives`),
the cost's Gauss-Newton Hessian ``J^T diag(w) J`` (by its lower triangle), the friction rows'
Jacobians; a touchdown's by AD through its impulse solve. :class:`HorizonQP` maps them over
the horizon by the mode schedule and lays their blocks out as HPIPM's QP (CasADi's VM: a few
matrix copies around the compiled calls), or as the stage blocks of a Riccati recursion.

QP variables, stage by stage: ``[dx_0 du_0 dx_1 du_1 ... dx_N]`` with ``dx = [dq; dv]``
(``2 nv``) and ``du`` (``nu``). Nothing in the compiled code depends on the parameters'
values: references, weights and the mode schedule are inputs of every call.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import casadi as ca
import numpy as np

from casdyn.codegen.library import compile_functions
from casdyn.progress import Progress, enabled
from casdyn.runtime.evaluator import NumericEvaluator

from .problem import Problem

# "no bound" for HPIPM, which keeps every bound it is given: with 1e8 its interior point
# stalled at its iteration limit (the right cost, its tolerances unmet: measured on the
# solo12 trot's QPs), with 1e3 to 1e6 it solved them in 9 iterations
INF = 1e6


class HorizonQP:
    """The QP data of ``problem``'s horizon as Functions of the plan: ``functions`` (each
    mode's linearisation, then the terminal one), ``qp_data`` ``(X, U, P, PN, mode, on, x0,
    lam) -> (H, g, a, lba, uba, dx0, cost)`` in HPIPM's layout (``h_sparsity``,
    ``a_sparsity``; the gaps' rows of ``lba`` at ``gap_rows``, the inequalities' at
    ``inequality_rows``), with ``riccati`` also ``lq_data``, the stage blocks of a Riccati
    recursion (else None); ``update`` ``(X, U, w, alpha)``, the plan moved along a step on the
    manifold, and ``shift`` ``(X, U, alpha)``, the plan moved on by a fraction of a knot.
    ``regularization`` is added to the Hessian's diagonal; ``compile`` and ``progress`` as
    :class:`casdyn.ocp.SQP`'s."""

    def __init__(self, problem: Problem, *, regularization: float, compile: bool,
                 progress: bool | None, riccati: bool, switched: bool = False):
        self.problem, self.model, self.N = problem, problem.model, problem.N
        self.regularization = regularization
        motion = [k for k in range(len(problem.modes)) if not problem.impulses[k]]
        # the motion modes' stages as one graph with the held feet an input (switched)
        self.switched = motion if switched and len(motion) > 1 else []
        self.ndx, self.nu, self.ng = self.model.ndx, self.model.nu, problem.n_rows
        self.stage = self.ndx + self.nu
        self.size = self.stage * self.N + self.ndx
        self.functions = self._stage_functions(compile, progress)
        self._glue(self.functions[:-1], self.functions[-1], riccati)

    def _stage(self, mode: int | None) -> list[ca.Function]:
        """The parts of the stage Function ``(x, u, x_next, p, lam) -> (d, A, B, H, g, h, C,
        D, cost)`` (:func:`_assembled`); for ``mode`` None, the motion modes' switched stage,
        with the flags ``held`` (one per foot) a last input.

        The dynamics enter through their value and their analytical derivatives
        (:meth:`ContactModel.dynamics_derivatives`): the stage is differentiated with the
        accelerations and forces replaced by their first-order expansions in ``w = [dx; du]``,
        so AD only sees the step, the residuals and the rows, never the contact solve (a
        touchdown's small impulse solve is differentiated by AD). The switched stage has two
        parts: the dynamics' derivatives, and the rest with them as inputs, two C files
        that compile at once on two cores (TALOS: 112k and 40k instructions, 7.5 s to
        compile as one); the modes' own stages are one part each, compiled beside each other
        (two parts cost a call between them, about 9 us a knot: ANYmal walking's warm solve
        11.7 against 10.7-11.0 ms)."""
        m, problem = self.model, self.problem
        x, u, x_next = ca.SX.sym("x", m.nx), ca.SX.sym("u", m.nu), ca.SX.sym("x_next", m.nx)
        p = ca.SX.sym("p", problem.stage_layout.size)
        dx, du = ca.SX.sym("dx", m.ndx), ca.SX.sym("du", m.nu)
        # the exact cone's tangential directions: constants of the linearisation, the
        # forces' own at the point (w = 0)
        directions = ca.SX.sym("directions", 2, len(m.feet))
        held = ca.SX.sym("held", len(m.feet)) if mode is None else None
        expand = self._impulse_terms if mode is not None and problem.impulses[mode] else \
            partial(self._motion_terms, held=held)
        outputs, forces_at, by_forces, derivatives = expand(
            mode, [x, u, x_next, p, dx, du, directions])
        defect, r, weights, h, J = ca.substitute(outputs, [directions],
                                                 [problem.directions(forces_at)])
        n, nr = m.ndx, r.numel()
        Jr, Jh = J[n : n + nr, :], J[n + nr :, :]
        if by_forces is None:
            H = _gauss_newton(Jr, weights)
        else:
            # the rows that read only the forces (friction cones as costs, force targets):
            # their part of the Hessian through the forces' derivatives, DF^T (J_f^T W J_f) DF,
            # a small inner matrix instead of a sum over rows dense in every variable
            rows, J_f, d_forces = by_forces
            others = sorted(set(range(nr)) - set(rows))
            H = _gauss_newton(Jr[others, :], weights[others]) + _sandwich(
                d_forces, _gauss_newton(J_f[rows, :], weights[rows]))
        lam = ca.SX.sym("lam", len(m.feet))
        if problem.friction == "exact":
            H = H + self._cone_curvature(forces_at, Jh, lam)
        g = ca.mtimes(Jr.T, weights * r)
        cost = 0.5 * ca.dot(weights, r * r)
        # without CasADi's common-subexpression pass: it merges the contact solve that the
        # dynamics and their derivatives both build, but costs more time than it saves the
        # compiler (solo12's trot: build_s 9.2-9.5 s against 10.1-10.7 s with it, the same
        # solve times)
        tag = "switched" if mode is None else problem.mode_tag(mode)
        inputs = [x, u, x_next, p, lam] + [held] * (mode is None)
        outputs = [defect, J[:n, :n], J[:n, n:], H, g, h, Jh[:, :n], Jh[:, n:], cost]
        if derivatives is None:
            return [ca.Function(f"ocp_linear_{tag}", inputs, outputs)]
        function, symbols = derivatives
        return [ca.Function(f"ocp_linear_{tag}_terms", inputs + symbols, outputs), function]

    def _rows(self, x, dx, forces, directions):
        return ca.vertcat(self.problem.friction_rows(forces, directions),
                          self.problem.state_rows(self.model.integrate_state(x, dx)))

    def _motion_terms(self, mode: int | None, symbols: list,
                      held: ca.SX | None = None) -> tuple:
        """``([defect, r, w, h, J], forces, by_forces, split)``: the terms at ``w = 0`` (``J``
        their Jacobian by ``w``) and the forces, for a mode of motion (``held``, for ``mode``
        None: the flags of the switched dynamics), by the chain rule through the dynamics'
        derivatives; ``split``, for the switched stage, the derivatives' Function and the
        symbols that stand for its outputs here (else None)."""
        m, problem = self.model, self.problem
        x, u, x_next, p, dx, du, directions = symbols
        w = ca.vertcat(dx, du)
        qdd, forces = ca.SX.sym("qdd", m.nv), ca.SX.sym("forces", m.force_size, len(m.feet))
        x_plus, r, weights = problem.stage_terms(m.integrate_state(x, dx), u + du, p, qdd, forces)
        defect = m.difference_state(x_next, x_plus)
        h = self._rows(x, dx, forces, directions)
        out = ca.vertcat(defect, r, h)
        at = ca.Function("at", [*symbols[:4], w, directions, qdd, forces],
                         [defect, r, weights, h, ca.jacobian(out, w), ca.jacobian(out, qdd),
                          ca.jacobian(out, ca.vec(forces))])
        # evaluated at w = 0 by a call, which folds the zeros into a smaller graph
        if held is None:
            stance = problem.modes[mode]
            qdd_at, forces_at = m.dynamics(stance)(x, u)
            d_qdd, d_forces = m.dynamics_derivatives(stance)(x, u)
            split = None
        else:
            qdd_at, forces_at = m.switched()(x, u, held)
            derivatives = m.switched(derivatives=True)
            # the derivatives: inputs here (their own Function, a C file of its own)
            d_qdd = ca.SX.sym("dqdd", derivatives.sparsity_out(0))
            d_forces = ca.SX.sym("dforces", derivatives.sparsity_out(1))
            split = (derivatives, [d_qdd, d_forces])
        outputs = at(x, u, x_next, p, ca.SX.zeros(w.numel()), directions, qdd_at, forces_at)
        J_w, J_qdd, J_forces = outputs[4:]
        J = J_w + ca.mtimes(J_qdd, d_qdd) + ca.mtimes(J_forces, d_forces)
        # the residual rows that depend on the forces alone (structurally)
        n, nr = m.ndx, outputs[1].numel()
        moving = (ca.sum2(ca.fabs(J_w[n : n + nr, :])) + ca.sum2(ca.fabs(J_qdd[n : n + nr, :])))
        forcing = ca.sum2(ca.fabs(J_forces[n : n + nr, :]))
        rows = [i for i in range(nr) if moving[i].is_zero() and not forcing[i].is_zero()]
        by_forces = (rows, J_forces[n : n + nr, :], d_forces) if rows else None
        return [*outputs[:4], J], forces_at, by_forces, split

    def _impulse_terms(self, mode: int, symbols: list) -> tuple:
        """As :meth:`_motion_terms` for a touchdown, by AD through its impulse solve."""
        m, problem = self.model, self.problem
        x, u, x_next, p, dx, du, directions = symbols
        w = ca.vertcat(dx, du)
        x_plus, r, weights, forces = problem.stage(mode)(m.integrate_state(x, dx), u + du, p)
        defect = m.difference_state(x_next, x_plus)
        h = self._rows(x, dx, forces, directions)
        at = ca.Function("at", [*symbols[:4], w, directions],
                         [defect, r, weights, h, ca.jacobian(ca.vertcat(defect, r, h), w),
                          forces])
        *outputs, forces_at = at(x, u, x_next, p, ca.SX.zeros(w.numel()), directions)
        return outputs, forces_at, None, None

    def _cone_curvature(self, forces, Jh, lam):
        """The exact cone's part of the Lagrangian's Hessian, ``lam |f_t|^-1 j j^T`` per
        foot with ``j`` the derivative of the tangential force across its direction (the
        cone ``mu fz - |f_t|`` bends only across ``f_t``; ``lam >= 0`` its multiplier of the
        last QP): it keeps the next QP from swinging the force round the cone."""
        per = self.problem.rows_per_foot()
        H = 0
        for k in range(len(self.model.feet)):
            f = forces[:, k] if self.model.contact == "point" else forces[3:, k]
            norm = ca.fmax(ca.sqrt(f[0] ** 2 + f[1] ** 2), 1e-6)
            # rows (along, across, -along, -across): across's gradient mu dfz - d_perp.dft
            j = 0.5 * (Jh[k * per + 3, :] - Jh[k * per + 1, :])
            H = H + lam[k] / norm * ca.mtimes(j.T, j)
        return H

    def _terminal(self) -> ca.Function:
        """(x, p) -> (H, g, cost, h, C): the terminal cost's Gauss-Newton terms and the state
        constraints' rows ``h + C dx >= 0``."""
        m, problem = self.model, self.problem
        x, p = ca.SX.sym("x", m.nx), ca.SX.sym("p", problem.terminal_layout.size)
        dx = ca.SX.sym("dx", m.ndx)
        r, _ = problem.terminal()(m.integrate_state(x, dx), p)
        h = problem.state_rows(m.integrate_state(x, dx), end=True)
        at = ca.Function("at", [x, p, dx], [r, ca.jacobian(r, dx), h, ca.jacobian(h, dx)])
        r0, J, h0, C = at(x, p, ca.SX.zeros(m.ndx))
        w0 = problem.terminal()(x, p)[1]
        H = _gauss_newton(J, w0)
        return ca.Function("ocp_linear_end", [x, p],
                           [H, ca.mtimes(J.T, w0 * r0), 0.5 * ca.dot(w0, r0 * r0), h0, C])

    def _glue(self, linear, end_linear, riccati: bool):
        """The horizon's QP data from the stage Functions (CasADi's VM: a few matrix copies
        around the compiled calls)."""
        m, N, ndx, nu, ng, s = self.model, self.N, self.ndx, self.nu, self.ng, self.stage
        problem = self.problem
        X, U = ca.MX.sym("X", m.nx, N + 1), ca.MX.sym("U", nu, N)
        P = ca.MX.sym("P", problem.stage_layout.size, N)
        PN = ca.MX.sym("PN", problem.terminal_layout.size)
        mode = ca.MX.sym("mode", 1, N)
        on = ca.MX.sym("on", ng, N)  # 1: the row applies (a held foot's)
        lam = ca.MX.sym("lam", len(m.feet), N)  # the exact cones' multipliers, last QP's
        x0 = ca.MX.sym("x0", m.nx)

        def mapped(functions):
            f = functions[0] if len(functions) == 1 else ca.Function.conditional(
                f"{functions[0].name()}_by_mode", functions[:-1], functions[-1])
            call = f.map(N)
            return (lambda *a: call(*a)) if len(functions) == 1 else \
                (lambda *a: call(mode, *a))

        d, A, B, Hs, gs, h, C, D, costs = mapped(linear)(X[:, :-1], U, X[:, 1:], P, lam)
        HN, gN, costN, hN, CN = end_linear(X[:, -1], PN)
        ngN = self.problem.n_end_rows
        reg = self.regularization
        blocks = [Hs[:, k * s : (k + 1) * s] + reg * ca.MX.eye(s) for k in range(N)]
        H = ca.diagcat(*blocks, HN + reg * ca.MX.eye(ndx))
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
        if ngN:
            rows.append(ca.horzcat(ca.MX(ngN, self.size - ndx), CN))
        a = ca.vertcat(*rows)
        lower_rows = -on * h - (1 - on) * INF  # (on is 0 or 1; INF is finite)
        lba = ca.vertcat(*[ca.vertcat(-d[:, k], lower_rows[:, k]) for k in range(N)], -hN)
        uba = ca.vertcat(*[ca.vertcat(-d[:, k], INF * ca.DM.ones(ng)) for k in range(N)],
                         INF * ca.DM.ones(ngN))
        dx0 = m.difference_state(X[:, 0], x0)
        cost = ca.sum2(costs) + costN
        inputs = [X, U, P, PN, mode, on, x0, lam]
        self.qp_data = ca.Function("ocp_qp_data", inputs, [H, g, a, lba, uba, dx0, cost])
        self.lq_data = None
        if riccati:
            # without inequalities a Riccati recursion solves the QP from its stage blocks,
            # read straight into NumPy (a DM's conversion costs ~90 ns a number)
            self.lq_data = NumericEvaluator(ca.Function(
                "ocp_lq_data", inputs, [g, lba, dx0, cost, ca.horzcat(*blocks),
                                        HN + reg * ca.MX.eye(ndx), gs, gN, A, B, d]))
        self.h_sparsity, self.a_sparsity = H.sparsity(), a.sparsity()
        # where the gaps and the rows lie in lba (stage by stage: the gaps, then the rows)
        stride = ndx + ng
        self.gap_rows = np.concatenate([np.arange(k * stride, k * stride + ndx)
                                         for k in range(N)])
        self.inequality_rows = np.setdiff1d(np.arange(N * stride + ngN), self.gap_rows)
        # the step on the manifold, and the plan moved on by a fraction of a knot
        W, alpha = ca.MX.sym("w", self.size), ca.MX.sym("alpha")
        dX = ca.horzcat(*[W[k * s : k * s + ndx] for k in range(N + 1)])
        dU = ca.horzcat(*[W[k * s + ndx : (k + 1) * s] for k in range(N)])
        xs, dxs = ca.SX.sym("x", m.nx), ca.SX.sym("dx", ndx)
        plus = ca.Function("plus", [xs, dxs], [m.integrate_state(xs, dxs)]).map(N + 1)
        self.update = ca.Function("ocp_update", [X, U, W, alpha],
                                   [plus(X, alpha * dX), U + alpha * dU])
        xa, xb, a_s = ca.SX.sym("xa", m.nx), ca.SX.sym("xb", m.nx), ca.SX.sym("a")
        between = ca.Function("between", [xa, xb, a_s],
                              [m.integrate_state(xa, a_s * m.difference_state(xa, xb))])
        X_next = ca.horzcat(between.map(N)(X[:, :-1], X[:, 1:], alpha), X[:, -1])
        U_next = ca.horzcat(U[:, :-1] + alpha * (U[:, 1:] - U[:, :-1]), U[:, -1])
        self.shift = ca.Function("ocp_shift", [X, U, alpha], [X_next, U_next])

    def _stage_functions(self, compile: bool, progress: bool | None) -> list[ca.Function]:
        """The stage and terminal linearisations; with ``compile``, each compiled as its own
        library as soon as its graph is built (the compiler runs while the next graph is
        built, and a problem that shares a mode with another finds it in the cache)."""
        problem = self.problem
        own = [k for k in range(len(problem.modes)) if k not in self.switched]
        makers = [*((f"ocp_linear_{problem.mode_tag(k)}", partial(self._stage, k))
                    for k in own), ("ocp_linear_end", lambda: [self._terminal()])]
        if self.switched:
            makers.insert(0, ("ocp_linear_switched", partial(self._stage, None)))
        if not compile:
            functions = [_assembled(name, make()) for name, make in makers]
        else:
            with Progress("ocp stages", enabled(progress)) as report, \
                    ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
                report.phase(f"{len(makers)} stage functions: the graph, then its C",
                             2 * len(makers))
                compiling = []
                for name, make in makers:
                    with report.step(f"{name} (graph)"):
                        parts = make()
                    compiling.append(pool.submit(_compiled, name, parts, report))
                functions = [job.result() for job in compiling]
        if not self.switched:
            return functions
        # each motion mode: the switched stage with its flags
        switched, end = functions[0], functions[-1]
        by_mode = dict(zip(own, functions[1:-1], strict=True))
        for k in self.switched:
            args = [ca.MX.sym(switched.name_in(i), switched.sparsity_in(i))
                    for i in range(switched.n_in() - 1)]  # all but the flags
            flags = ca.DM([float(h) for h in problem.modes[k]])
            by_mode[k] = ca.Function(f"ocp_linear_{problem.mode_tag(k)}", args,
                                     switched(*args, flags))
        return [by_mode[k] for k in range(len(problem.modes))] + [end]


def _gauss_newton(J: ca.SX, w: ca.SX) -> ca.SX:
    """``J^T diag(w) J``."""
    return _symmetric_product(J, w * J if J.size1() else J)  # (w scales each row)


def _sandwich(D: ca.SX, K: ca.SX) -> ca.SX:
    """``D^T K D`` of a symmetric ``K``."""
    return _symmetric_product(D, ca.mtimes(K, D))


def _symmetric_product(A: ca.SX, B: ca.SX) -> ca.SX:
    """``A^T B`` where it is symmetric: its lower triangle formed and mirrored (half the
    products of the full one)."""
    n = A.size2()
    lower = ca.SX(n, n)
    for j in range(n):
        lower[j:, j] = ca.mtimes(A[:, j:].T, B[:, j])
    return lower + ca.tril(lower, False).T


def _compiled(name: str, parts: list[ca.Function], report: Progress) -> ca.Function:
    """The stage Function ``name`` of ``parts`` (:func:`_assembled`), compiled with the
    quick flags (one library in the compile cache, a C file per large part)."""
    with report.step(f"{name} (C)"):
        compiled, _, _ = compile_functions(parts, f"ocp_{name}", quick=True)
    return _assembled(name, compiled)


def _assembled(name: str, parts: list[ca.Function]) -> ca.Function:
    """The stage Function ``name`` of its ``parts``: the one, or the terms ``(x, u, x_next,
    p, lam[, held], dqdd, dforces) -> ...`` called with the dynamics' derivatives
    ``(x, u[, held]) -> (dqdd, dforces)``."""
    if len(parts) == 1:
        return parts[0]
    terms, derivatives = parts
    args = [ca.MX.sym(terms.name_in(i), terms.sparsity_in(i)) for i in range(terms.n_in() - 2)]
    held = args[5:]  # the switched stage's flags
    return ca.Function(name, args, terms(*args, *derivatives(*args[:2], *held)),
                       terms.name_in()[:-2], terms.name_out())
