"""Explicit integration of the dynamics, for direct multiple shooting and MPC plants.

The state is ``x = [q; qd]`` (nq + nv); on a floating base ``qd`` holds the root's body twist,
which :func:`state_derivative` maps to ``dq/dt`` through the tangent map.
"""

from __future__ import annotations

from collections.abc import Callable

import casadi as ca

from . import arguments
from .algorithms import configuration

__all__ = ["rk4", "rk4_step", "state_derivative"]


def rk4(f: Callable, x, u, h: float):
    """One classical Runge-Kutta step: ``x(t + h)`` for ``x' = f(x, u)`` with ``u`` held
    constant over the step, on a vector space. Works on numbers and on CasADi expressions."""
    k1 = f(x, u)
    k2 = f(x + h / 2 * k1, u)
    k3 = f(x + h / 2 * k2, u)
    k4 = f(x + h * k3, u)
    return x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def state_derivative(robot, fext=None) -> Callable:
    """``f(x, tau) = (dq/dt, qdd)`` for ``x = (q, qd)``: ``dq/dt = T(q) qd`` with ``T`` the
    tangent map (``qd`` itself where every joint is 1-dof; a floating base's body twist
    moves its position and quaternion), ``qdd = forward_dynamics(q, qd, tau, fext(q))``.
    ``fext`` is None or a function of ``q`` returning the ``n_bodies x 6`` matrix. Works on
    CasADi symbols."""
    nq = robot.nq

    def f(x, tau):
        q, qd = x[:nq], x[nq:]
        T = configuration.tangent_map(robot.model, q)
        q_rate = qd if T is None else ca.mtimes(T, qd)
        return ca.vertcat(q_rate, robot.forward_dynamics(q, qd, tau, fext(q) if fext else None))

    return f


def rk4_step(robot, h: float, fext=None) -> ca.Function:
    """``step(x, tau) -> x_next``: one classical RK4 step of length ``h`` (a finite number)
    of :func:`state_derivative`, as an SX Function (map it over a horizon with
    ``step.map(N)``); ``x = [q; qd]``, ``tau`` (nv).
    Quaternions are normalised at the end of the step (a projection back onto the unit
    sphere, which the RK4 stages leave by O(h^5))."""
    h = arguments.finite_number(h, "h")
    nq, nv = robot.nq, robot.nv
    x, tau = ca.SX.sym("x", nq + nv), ca.SX.sym("tau", nv)
    x_next = rk4(state_derivative(robot, fext), x, tau, h)
    if not configuration.is_vector_space(robot.model):
        q_next = configuration.integrate(robot.model, x_next[:nq], ca.SX.zeros(nv, 1))
        x_next = ca.vertcat(q_next, x_next[nq:])
    return ca.Function("rk4_step", [x, tau], [x_next], ["x", "tau"], ["x_next"])
