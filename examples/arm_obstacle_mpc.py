"""An arm reaching around an obstacle at 100 Hz: MPC with self-collision and obstacle
constraints from casdyn's signed distances, every solve inside the 10 ms period.

The KUKA iiwa14 swings from one side to the other; a ball sits on the way its hand would
take. The horizon is a :class:`casdyn.ocp.Problem` on the fixed-base arm: casdyn's forward
dynamics driven by the joint torques, stepped by semi-implicit Euler, a state residual
towards the goal and a small torque residual, the torque, speed and joint limits as bounds,
and every distance of casdyn's ``collision_distances`` (the arm's self-collision pairs and
the ball against every link) at least ``MARGIN`` at every knot
(:class:`casdyn.ocp.CollisionDistance`) — exact constraints of the QP. The controller is a
real-time iteration as in examples/mpc.py (:meth:`casdyn.ocp.SQP.iterate`: one QP on HPIPM a
period, linearised around the previous plan shifted one period on). The plant is the
robot's forward dynamics integrated with RK4 at a fifth of the period under the first
torque, held over the period.

Run:  python examples/arm_obstacle_mpc.py [--plot-dir DIR] [--quick]
"""

import argparse
import time
from pathlib import Path

import numpy as np

import casdyn
from casdyn import geometry as g
from casdyn.integrators import rk4_step
from casdyn.ocp import (
    SQP,
    CollisionDistance,
    ContactModel,
    ControlResidual,
    Problem,
    StateResidual,
)
from casdyn.plotting import pyplot

DT, HORIZON, STEPS = 0.01, 25, 300  # control period [s], horizon length, closed-loop steps
QUICK_STEPS = 120  # --quick (the tests)
SUBSTEPS = 5  # plant RK4 steps per period
MARGIN = 0.02  # m: the distance the horizon keeps
START = np.array([-1.2, 0.7, 0.0, -1.3, 0.0, 0.9, 0.0])
GOAL = np.array([1.2, 0.7, 0.0, -1.3, 0.0, 0.9, 0.0])
# cost 0.5 sum w r^2: weights on the position error, the velocity and the torque (towards
# the torques that hold the goal)
W_Q, W_QD, W_TAU = 2.0, 0.1, 2e-4


def obstacle(robot) -> g.Obstacle:
    """A ball of 0.12 m radius where the hand would pass half way (a little below it)."""
    middle = 0.5 * (START + GOAL)
    hand = robot.get_transform(middle, "iiwa_link_7")[:3, 3]
    pose = np.eye(4)
    pose[:3, 3] = hand - np.array([0.0, 0.0, 0.04])
    return g.Obstacle("ball", g.Sphere(0.12), pose)


class Controller:
    """One QP per period (:meth:`casdyn.ocp.SQP.iterate`) on the reaching problem."""

    def __init__(self, robot, obstacles):
        n = robot.nq
        state = np.r_[np.full(n, W_Q), np.full(n, W_QD)]
        self.problem = Problem(
            ContactModel(robot, dt=DT), HORIZON,
            [StateResidual(weight=state), ControlResidual(weight=W_TAU)],
            [StateResidual(weight=state)],
            constraints=[CollisionDistance(obstacles, margin=MARGIN)])
        self.parameters = self.problem.parameters()
        self.parameters.set("state", reference=np.r_[GOAL, np.zeros(n)])
        self.parameters.set("control", reference=robot.gravity_torque(GOAL))
        # HPIPM's interior point stopped at 10 iterations: the real-time iteration takes its
        # step (at 50, a few QPs near the ball took 15 ms)
        self.sqp = SQP(self.problem, hpipm={"mode": "speed_abs", "iter_max": 10})
        self.failures = 0

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if self.sqp.X is None:
            self.sqp.hold(x)
        else:
            self.sqp.shift(1.0)  # the knot is the period
        self.failures += not self.sqp.iterate(x, self.parameters)
        return self.sqp.U[:, 0].copy()


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
    controller = Controller(robot, obstacles)
    n = robot.nq

    def distance_of(q):
        return robot.collision_distances(q, obstacles=obstacles)
    labels = [f"{a} / {b}" for a, b in robot.collision_pairs] + [
        f"ball / {item.name}" for item in robot.collision_geometry]

    plant = rk4_step(robot, DT / SUBSTEPS)
    x = np.concatenate([START, np.zeros(n)])
    history, distances, solve_ms, closest = [x], [], [], np.inf
    distances.append(distance_of(x[:n]))
    for _ in range(steps):
        started = time.perf_counter()
        tau = controller(x)
        solve_ms.append(1e3 * (time.perf_counter() - started))
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
