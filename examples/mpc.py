"""Closed-loop MPC on the UR5e: track a moving joint reference under torque limits.

Every control period the controller solves a multiple-shooting problem over a short horizon
(RK4 steps of casdyn's forward dynamics, Ipopt), applies the first torque, and the plant —
the same forward dynamics integrated with finer steps, plus an unmodelled 1 kg payload at the
tool — moves on. The solver is an Opti problem turned into one casadi.Function, warm-started
from the previous solution.

Run:  python examples/mpc.py [--plot-dir DIR]
"""

import argparse
import time
from pathlib import Path

import casadi as ca
import numpy as np

import casdyn
from casdyn.integrators import rk4_step
from casdyn.plotting import save_trajectory_plot

DT, HORIZON, STEPS = 0.05, 10, 60  # control period [s], horizon length, closed-loop steps
QUICK_STEPS = 20  # --quick (the tests): a shorter closed loop
PAYLOAD_KG = 1.0


def reference(t: np.ndarray, home: np.ndarray) -> np.ndarray:
    """A smooth joint-space reference (nq, len(t)): three joints swing sinusoidally."""
    ref = np.tile(home[:, None], (1, len(t)))
    ref[0] += 0.6 * np.sin(1.5 * t)
    ref[1] += 0.3 * np.sin(2.0 * t)
    ref[2] += 0.4 * np.sin(2.5 * t + 0.5)
    return ref


def payload_weight(robot, mass_kg):
    """fext(q): the weight of a payload held at tool0, a base-frame force with moment p x f."""

    def fext(q):
        p = robot.get_transform(q, "tool0")[:3, 3]
        weight = ca.DM(mass_kg * robot.gravity)
        return robot.external_force("tool0", ca.vertcat(ca.cross(p, weight), weight))

    return fext


def controller(robot) -> ca.Function:
    """(x0, ref, X guess, U guess) -> (first torque, X, U) of the horizon problem."""
    n = robot.nq
    step = rk4_step(robot, DT).map(HORIZON)
    opti = ca.Opti()
    X, U = opti.variable(2 * n, HORIZON + 1), opti.variable(n, HORIZON)
    x0, ref = opti.parameter(2 * n), opti.parameter(n, HORIZON + 1)
    opti.minimize(ca.sumsqr(X[:n, 1:] - ref[:, 1:]) + 1e-3 * ca.sumsqr(X[n:, 1:])
                  + 1e-6 * ca.sumsqr(U))
    opti.subject_to(X[:, 0] == x0)
    opti.subject_to(X[:, 1:] == step(X[:, :-1], U))
    opti.subject_to(opti.bounded(-robot.effort_limits, U, robot.effort_limits))
    # expand: one SX graph for the whole NLP, whose derivatives evaluate fastest
    opti.solver("ipopt", {"print_time": False, "expand": True, "error_on_fail": False},
                {"print_level": 0, "sb": "yes", "max_iter": 100, "tol": 1e-6})
    return opti.to_function("mpc", [x0, ref, X, U], [U[:, 0], X, U])


def main(plot_dir=None, steps=STEPS):
    robot = casdyn.load_robot("ur5e")
    n = robot.nq
    home = np.array([0.0, -1.6, 1.6, -1.57, -1.57, 0.0])
    mpc = controller(robot)

    # the plant: 5 finer RK4 substeps per period, with a payload the controller does not know
    substep = rk4_step(robot, DT / 5, payload_weight(robot, PAYLOAD_KG))

    times = DT * np.arange(steps + HORIZON + 1)
    refs = reference(times, home)
    x = np.concatenate([home, np.zeros(n)])
    X_guess = np.tile(x[:, None], (1, HORIZON + 1))
    U_guess = np.tile(robot.gravity_torque(home)[:, None], (1, HORIZON))
    history_q, history_tau, solve_ms, failures = [x[:n]], [], [], 0
    for k in range(steps):
        started = time.perf_counter()
        tau, X_guess, U_guess = mpc(x, refs[:, k:k + HORIZON + 1], X_guess, U_guess)
        solve_ms.append(1e3 * (time.perf_counter() - started))
        failures += not mpc.stats()["success"]
        tau = tau.full().ravel()
        for _ in range(5):
            x = substep(x, tau).full().ravel()
        history_q.append(x[:n])
        history_tau.append(tau)
        # shift the solution one period for the next warm start
        X_guess = ca.horzcat(X_guess[:, 1:], X_guess[:, -1])
        U_guess = ca.horzcat(U_guess[:, 1:], U_guess[:, -1])

    q = np.array(history_q)
    error = np.abs(q[steps // 2:] - refs[:, steps // 2:steps + 1].T)
    print(f"{robot.name}: MPC at {1 / DT:.0f} Hz, horizon {HORIZON} steps "
          f"({HORIZON * DT:.2f} s), {steps} closed-loop steps, unmodelled {PAYLOAD_KG} kg payload")
    print(f"solve time per step: median {np.median(solve_ms):.1f} ms, "
          f"max {np.max(solve_ms):.1f} ms (first {solve_ms[0]:.1f} ms, cold); "
          f"{steps - failures} of {steps} solves converged")
    print(f"tracking error over the second half: RMS {np.sqrt(np.mean(error ** 2)):.4f} rad, "
          f"max {error.max():.4f} rad")
    print("peak |tau| per joint [N m]:", np.round(np.abs(history_tau).max(axis=0), 1))
    if plot_dir is not None:
        path = Path(plot_dir) / "mpc.png"
        save_trajectory_plot(path, times[:steps + 1], q, np.array(history_tau),
                             robot.joint_names, "UR5e closed-loop MPC", t_tau=times[:steps])
        print("plot saved to", path)
    return solve_ms, error


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot-dir", help="save a plot of the closed loop here")
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_STEPS} closed-loop steps instead of {STEPS}")
    args = parser.parse_args()
    main(args.plot_dir, QUICK_STEPS if args.quick else STEPS)
