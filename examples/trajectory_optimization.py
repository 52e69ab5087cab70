"""Minimum-effort point-to-point motion of the KUKA iiwa 14, by direct multiple shooting.

The state is x = (q, qd), the control a piecewise-constant torque; each of the N intervals is
integrated by one RK4 step of casdyn's forward dynamics, and Ipopt (through casadi.Opti)
minimises the integral of |tau|^2 (plus a small joint-speed term, which stops the light wrist
joints from whipping at their speed limit) subject to joint, velocity and torque limits (KUKA's
data sheet values, in the shipped URDF: 320/320/176/176/110/40/40 N m, 85-135 deg/s),
starting and ending at rest.

Run:  python examples/trajectory_optimization.py [--plot-dir DIR]
"""

import argparse
import time
from pathlib import Path

import casadi as ca
import numpy as np

import casdyn
from casdyn.integrators import rk4_step
from casdyn.plotting import save_trajectory_plot

N, DURATION = 40, 2.0  # intervals, seconds
QUICK_N = 20  # --quick (the tests): fewer intervals
SPEED_WEIGHT = 1.0  # (N m)^2 per (rad/s)^2
START = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0])
GOAL = np.array([1.4, 0.1, -0.6, -0.5, 0.5, 1.3, 0.6])


def solve(robot: casdyn.RigidBodyTree, N: int = N):
    n, h = robot.nq, DURATION / N
    step = rk4_step(robot, h).map(N, "thread", 2)
    opti = ca.Opti()
    X = opti.variable(2 * n, N + 1)
    U = opti.variable(n, N)
    opti.minimize(h * (ca.sumsqr(U) + SPEED_WEIGHT * ca.sumsqr(X[n:, 1:])))
    opti.subject_to(X[:, 1:] == step(X[:, :-1], U))  # multiple-shooting continuity
    opti.subject_to(X[:, 0] == np.concatenate([START, np.zeros(n)]))
    opti.subject_to(X[:, N] == np.concatenate([GOAL, np.zeros(n)]))
    lower, upper = robot.position_limits
    opti.subject_to(opti.bounded(lower, X[:n, :], upper))
    opti.subject_to(opti.bounded(-robot.velocity_limits, X[n:, :], robot.velocity_limits))
    opti.subject_to(opti.bounded(-robot.effort_limits, U, robot.effort_limits))

    # initial guess: a straight line in joint space, with the torques that hold it still
    path = np.linspace(START, GOAL, N + 1)
    opti.set_initial(X[:n, :], path.T)
    opti.set_initial(U, robot.gravity_torque(path[:-1]).T)  # a batch: (N, nq) in and out
    opti.solver("ipopt", {"print_time": False}, {"print_level": 0, "sb": "yes"})
    started = time.perf_counter()
    solution = opti.solve()
    seconds = time.perf_counter() - started
    return solution, solution.value(X), solution.value(U), seconds


def main(plot_dir=None, N=N):
    robot = casdyn.load_robot("kuka_iiwa14")
    solution, X, U, seconds = solve(robot, N)
    n = robot.nq
    stats = solution.stats()
    print(f"{robot.name}: {n} joints, {N} intervals over {DURATION} s, "
          f"{2 * n * (N + 1) + n * N} decision variables")
    print(f"Ipopt: {stats['return_status']} after {stats['iter_count']} iterations, "
          f"{seconds:.2f} s")
    print(f"effort  integral |tau|^2 dt = {DURATION / N * np.sum(U ** 2):.2f} N^2 m^2 s")
    print("peak |tau| per joint [N m]:", np.round(np.abs(U).max(axis=1), 1),
          "limits", np.round(robot.effort_limits, 1))
    print("peak |qd|  per joint [rad/s]:", np.round(np.abs(X[n:]).max(axis=1), 2),
          "limits", np.round(robot.velocity_limits, 2))
    print("final state error:", float(np.abs(X[:n, -1] - GOAL).max()))
    # check the discretisation: integrate every interval from its start with 10x finer steps
    # (interval by interval: the arm is unstable, so errors would grow along a whole rollout)
    fine = rk4_step(robot, DURATION / N / 10).map(N)
    x = X[:, :-1]
    for _ in range(10):
        x = fine(x, U)
    print(f"largest interval defect against 10x finer integration: "
          f"{np.abs(x.full()[:n] - X[:n, 1:]).max():.1e} rad")
    if plot_dir is not None:
        t = np.linspace(0, DURATION, N + 1)
        path = Path(plot_dir) / "trajectory_optimization.png"
        save_trajectory_plot(path, t, X[:n].T, U.T, robot.joint_names,
                             "iiwa14 minimum-effort motion", t_tau=t[:-1])
        print("plot saved to", path)
    return X, U


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot-dir", help="save a plot of the trajectory here")
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_N} intervals instead of {N}")
    args = parser.parse_args()
    main(args.plot_dir, QUICK_N if args.quick else N)
