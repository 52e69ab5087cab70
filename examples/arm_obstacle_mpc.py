"""An arm reaching around an obstacle at 100 Hz: MPC with self-collision and obstacle
constraints from casdyn's signed distances, every solve inside the 10 ms period.

The KUKA iiwa14 swings from one side to the other; a ball sits on the way its hand would
take. The controller is a real-time iteration (RTI; Diehl, Bock & Schloeder 2005) as in
examples/mpc.py: each period one QP, solved by HPIPM, linearised around the previous solution
shifted one period on. The horizon's model is the double integrator q'' = u (joint
accelerations, executed by computed torque); the nonlinear part is the collision constraints
``d_i(q_k) + J_i(q_k) dq_k >= margin`` for every distance of casdyn's
``collision_distances`` (the arm's self-collision pairs and the obstacle against every link),
linearised over the whole horizon by one compiled C function. The plant is the robot's
forward dynamics integrated with RK4 at a fifth of the period under the computed torque
``tau = ID(q, qd, u)`` held over the period.

Run:  python examples/arm_obstacle_mpc.py [--plot-dir DIR] [--quick]
"""

import argparse
import time
from pathlib import Path

import casadi as ca
import numpy as np

import casdyn
from casdyn import geometry as g
from casdyn.integrators import rk4_step
from casdyn.plotting import pyplot

DT, HORIZON, STEPS = 0.01, 25, 300  # control period [s], horizon length, closed-loop steps
QUICK_STEPS = 120  # --quick (the tests)
SUBSTEPS = 5  # plant RK4 steps per period
MARGIN = 0.02  # m: the distance the horizon keeps
ACCELERATION = 8.0  # rad/s^2 bound on every joint
START = np.array([-1.2, 0.7, 0.0, -1.3, 0.0, 0.9, 0.0])
GOAL = np.array([1.2, 0.7, 0.0, -1.3, 0.0, 0.9, 0.0])
W_Q, W_QD, W_U = 1.0, 0.05, 1e-4  # cost weights on position error, velocity, acceleration


def obstacle(robot) -> g.Obstacle:
    """A ball of 0.12 m radius where the hand would pass half way (a little below it)."""
    middle = 0.5 * (START + GOAL)
    hand = robot.get_transform(middle, "iiwa_link_7")[:3, 3]
    pose = np.eye(4)
    pose[:3, 3] = hand - np.array([0.0, 0.0, 0.04])
    return g.Obstacle("ball", g.Sphere(0.12), pose)


class Horizon:
    """``w = [x0 u0 x1 u1 ... x_N]`` (HPIPM's order), ``x = (q, qd)``, ``u = qdd``."""

    def __init__(self, robot, n_distances: int):
        n = self.n = robot.nq
        self.nx, self.nu, self.nd = 2 * n, n, n_distances
        self.stage = self.nx + self.nu
        self.size = self.stage * HORIZON + self.nx
        lower, upper = robot.position_limits
        stage_upper = np.concatenate([upper, robot.velocity_limits, np.full(n, ACCELERATION)])
        stage_lower = np.concatenate([lower, -robot.velocity_limits, np.full(n, -ACCELERATION)])
        self.upper = np.concatenate([np.tile(stage_upper, HORIZON), stage_upper[:self.nx]])
        self.lower = np.concatenate([np.tile(stage_lower, HORIZON), stage_lower[:self.nx]])
        weights = np.repeat([W_Q, W_QD, W_U], n)
        self.hessian = ca.DM(ca.Sparsity.diag(self.size), 2 * np.concatenate(
            [np.tile(weights, HORIZON), weights[:self.nx]]))
        self.target = np.concatenate([np.tile(np.concatenate([GOAL, np.zeros(2 * n)]), HORIZON),
                                      GOAL, np.zeros(n)])
        eye = np.eye(n)
        self.A = np.block([[eye, DT * eye], [0 * eye, eye]])  # semi-implicit Euler
        self.B = np.vstack([DT**2 * eye, DT * eye])

    def positions(self, w):
        """(n, N) positions of stages 1..N."""
        return ca.horzcat(*[w[k * self.stage : k * self.stage + self.n]
                            for k in range(1, HORIZON + 1)])

    def shifted(self, w: np.ndarray) -> np.ndarray:
        stages = w[: -self.nx].reshape(HORIZON, self.stage)
        last = np.concatenate([w[-self.nx :], np.zeros(self.nu)])
        return np.concatenate([*stages[1:], last, w[-self.nx :]])


class RealTimeIteration:
    """One QP per period: the linear dynamics as equalities, the collision distances of
    stages 1..N linearised at the shifted previous solution as inequalities."""

    def __init__(self, robot, obstacles):
        distances = robot.function("collision_distances", obstacles=obstacles, jacobian=True)
        self.horizon = h = Horizon(robot, distances.size1_out(0))
        mapped = casdyn.compile_function(distances.map(HORIZON))
        w, x0 = ca.MX.sym("w", h.size), ca.MX.sym("x0", h.nx)
        d, J = mapped(h.positions(w))  # d: nd x N, J: nd x (n N)
        X = ca.horzcat(*[w[k * h.stage : k * h.stage + h.nx] for k in range(HORIZON + 1)])
        U = ca.horzcat(*[w[k * h.stage + h.nx : (k + 1) * h.stage] for k in range(HORIZON)])
        defect = ca.mtimes(ca.DM(h.A), X[:, :-1]) + ca.mtimes(ca.DM(h.B), U) - X[:, 1:]

        def collision_rows(k):  # stage k = 1..N: J dq_k >= MARGIN - d
            at = k * h.stage
            return (ca.horzcat(ca.MX(h.nd, at), J[:, (k - 1) * h.n : k * h.n],
                               ca.MX(h.nd, h.size - at - h.n)),
                    MARGIN - d[:, k - 1], ca.DM.inf(h.nd))

        # HPIPM's row order: stage k's dynamics, then stage k's constraints (none at k = 0)
        rows, lower, upper = [], [], []
        for k in range(HORIZON):
            rows.append(ca.horzcat(ca.MX(h.nx, k * h.stage), ca.DM(h.A), ca.DM(h.B),
                                   -ca.MX.eye(h.nx),
                                   ca.MX(h.nx, h.size - (k + 1) * h.stage - h.nx)))
            lower.append(-defect[:, k])
            upper.append(-defect[:, k])
            if k > 0:
                for part, values in zip((rows, lower, upper), collision_rows(k), strict=True):
                    part.append(values)
        for part, values in zip((rows, lower, upper), collision_rows(HORIZON), strict=True):
            part.append(values)
        jacobian, lower, upper = ca.vertcat(*rows), ca.vertcat(*lower), ca.vertcat(*upper)
        gradient = ca.mtimes(h.hessian, w - h.target)
        self.qp_data = ca.Function("qp_data", [w, x0], [
            gradient, jacobian, lower, upper,
            ca.vertcat(x0, h.lower[h.nx:]) - w, ca.vertcat(x0, h.upper[h.nx:]) - w])
        self.qp = ca.conic("rti_qp", "hpipm", {"h": h.hessian.sparsity(),
                                               "a": jacobian.sparsity()},
                           {"N": HORIZON, "nx": [h.nx] * (HORIZON + 1),
                            "nu": [h.nu] * HORIZON + [0], "ng": [0] + [h.nd] * HORIZON,
                            "error_on_fail": False, "hpipm": {"mode": "speed"}})
        self.guess = None
        self.failures = 0

    def __call__(self, x: np.ndarray) -> np.ndarray:
        h = self.horizon
        if self.guess is None:
            self.guess = np.concatenate([np.tile(np.concatenate([x, np.zeros(h.nu)]), HORIZON),
                                         x])
        g_, a, lba, uba, lbx, ubx = self.qp_data(self.guess, x)
        step = self.qp(h=h.hessian, g=g_, a=a, lba=lba, uba=uba, lbx=lbx, ubx=ubx)["x"]
        self.failures += not self.qp.stats()["success"]
        w = self.guess + step.full().ravel()
        self.guess = h.shifted(w)
        return w[h.nx : h.stage].copy()


def save_plot(path, t, q, distances, labels):
    """Joint positions, and every signed distance with the margin and zero."""
    plt = pyplot()
    fig, axes = plt.subplots(2, 1, sharex=True, figsize=(9, 8), constrained_layout=True)
    axes[0].plot(t, q)
    axes[0].set_ylabel("q [rad]")
    for i, label in enumerate(labels):
        axes[1].plot(t, distances[:, i], linewidth=1.6 if "ball" in label else 0.7,
                     label=label if "ball" in label else None)
    axes[1].axhline(MARGIN, color="k", linestyle=":", label=f"margin {MARGIN} m")
    axes[1].axhline(0.0, color="r", linewidth=0.8)
    axes[1].set_ylim(-0.01, 0.35)
    axes[1].set_ylabel("signed distance [m]")
    axes[1].set_xlabel("time [s]")
    axes[1].legend(fontsize="x-small", ncol=2)
    axes[0].set_title(f"iiwa14 reaching around a ball, MPC at {1 / DT:.0f} Hz")
    for ax in axes:
        ax.grid(True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(plot_dir=None, steps=STEPS, save=None):
    robot = casdyn.load_robot("kuka_iiwa14")
    obstacles = (obstacle(robot),)
    controller = RealTimeIteration(robot, obstacles)
    n = robot.nq

    def distance_of(q):
        return robot.collision_distances(q, obstacles=obstacles)
    labels = [f"{a} / {b}" for a, b in robot.collision_pairs] + [
        f"ball / {item.name}" for item in robot.collision_geometry]

    def computed_torque(x, u):
        return robot.inverse_dynamics(x[:n], x[n:], u)

    plant = rk4_step(robot, DT / SUBSTEPS)
    x = np.concatenate([START, np.zeros(n)])
    history, distances, solve_ms, closest = [x], [], [], np.inf
    distances.append(distance_of(x[:n]))
    for _ in range(steps):
        started = time.perf_counter()
        u = controller(x)
        solve_ms.append(1e3 * (time.perf_counter() - started))
        tau = computed_torque(x, u)
        for _ in range(SUBSTEPS):
            x = plant(x, tau).full().ravel()
            closest = min(closest, float(distance_of(x[:n]).min()))
        history.append(x)
        distances.append(distance_of(x[:n]))
    states, distances, solve_ms = np.array(history), np.array(distances), np.array(solve_ms)
    q = states[:, :n]
    within = int(np.sum(solve_ms <= 1e3 * DT))
    print(f"{robot.name}: MPC at {1 / DT:.0f} Hz (real-time iteration, HPIPM), horizon "
          f"{HORIZON} steps, {distances.shape[1]} distance constraints per stage "
          f"({len(robot.collision_pairs)} self-collision pairs, the ball against "
          f"{len(robot.collision_geometry)} links), {steps} closed-loop steps")
    print(f"solve time per step: median {np.median(solve_ms):.2f} ms, 95th percentile "
          f"{np.percentile(solve_ms, 95):.2f} ms, max {solve_ms.max():.2f} ms; {within} of "
          f"{steps} within the {1e3 * DT:.0f} ms period")
    print(f"{steps - controller.failures} of {steps} QPs solved")
    print(f"smallest signed distance in the closed loop (every plant substep): {closest:.4f} m")
    ball = distances[:, len(robot.collision_pairs):]
    print(f"closest approach to the ball: {ball.min():.4f} m")
    print(f"final |q - goal|: {np.abs(q[-1] - GOAL).max():.4f} rad")
    if save is not None:  # the run, for `casdyn show kuka_iiwa14 --trajectory FILE`
        np.savez(save, t=DT * np.arange(steps + 1), q=q, v=states[:, n:])
        print("trajectory saved to", save)
    if plot_dir is not None:
        path = Path(plot_dir) / "arm_obstacle_mpc.png"
        save_plot(path, DT * np.arange(steps + 1), q, distances, labels)
        print("plot saved to", path)
    return closest, solve_ms


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot-dir", help="save a plot of the closed loop here")
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_STEPS} closed-loop steps instead of {STEPS}")
    parser.add_argument("--save", help="save t, q, v to this .npz (casdyn show --trajectory)")
    args = parser.parse_args()
    main(args.plot_dir, QUICK_STEPS if args.quick else STEPS, args.save)
