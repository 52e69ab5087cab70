"""Explicit integration of the dynamics, for direct multiple shooting and MPC plants."""

from __future__ import annotations

from collections.abc import Callable

import casadi as ca


def rk4(f: Callable, x, u, h: float):
    """One classical Runge-Kutta step: ``x(t + h)`` for ``x' = f(x, u)`` with ``u`` held
    constant over the step. Works on numbers and on CasADi expressions."""
    k1 = f(x, u)
    k2 = f(x + h / 2 * k1, u)
    k3 = f(x + h / 2 * k2, u)
    k4 = f(x + h * k3, u)
    return x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def state_derivative(robot, fext=None) -> Callable:
    """``f(x, tau) = (qd, forward_dynamics(q, qd, tau, fext(q)))`` for ``x = (q, qd)``;
    ``fext`` is None or a function of ``q`` returning the ``n_bodies x 6`` matrix."""
    n = robot.nq

    def f(x, tau):
        q, qd = x[:n], x[n:]
        return ca.vertcat(qd, robot.forward_dynamics(q, qd, tau, fext(q) if fext else None))

    return f


def rk4_step(robot, h: float, fext=None) -> ca.Function:
    """``step(x, tau) -> x_next``: one RK4 step of the robot's forward dynamics, as an SX
    Function (map it over a horizon with ``step.map(N)``)."""
    x, tau = ca.SX.sym("x", 2 * robot.nq), ca.SX.sym("tau", robot.nq)
    return ca.Function(
        "rk4_step", [x, tau], [rk4(state_derivative(robot, fext), x, tau, h)],
        ["x", "tau"], ["x_next"],
    )
