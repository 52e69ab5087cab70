"""Real-time MPC on the UR5e at 100 Hz: track a moving joint reference within torque and
speed limits, every solve inside the 10 ms period.

The horizon is a :class:`casdyn.ocp.Problem` on the fixed-base arm: casdyn's forward
dynamics stepped by semi-implicit Euler, a state residual towards the moving reference and a
small torque residual, the torques within the effort limits and the velocities within the
speed limits as exact bounds. The reference is a parameter: each period writes the next
horizon's into the problem's parameters, nothing is rebuilt. The controller is
:meth:`casdyn.ocp.SQP.iterate`, a real-time iteration (Diehl, Bock & Schloeder 2005): the
horizon linearised once around the previous plan shifted one period on (compiled C, kept in
casdyn's compile cache) and one QP solved with HPIPM (Frison & Diehl 2020, in CasADi's
wheel). The plant is the same robot integrated with RK4 at a fifth of the period, carrying
an unmodelled 1 kg payload at the tool.

``--solver ipopt`` solves the same horizon problem (its :class:`casdyn.ocp.Transcription`)
to convergence with Ipopt instead, for comparison (not real time).

Run:  python examples/mpc.py [--plot-dir DIR] [--quick] [--solver rti|ipopt]
"""

import argparse
import time
from pathlib import Path

import casadi as ca
import numpy as np

import casdyn
from casdyn.integrators import rk4_step
from casdyn.ocp import SQP, ContactModel, ControlResidual, Problem, StateResidual, Transcription
from casdyn.plotting import pyplot

DT, HORIZON, STEPS = 0.01, 25, 300  # control period [s], horizon length, closed-loop steps
QUICK_STEPS = 40  # --quick (the tests): a shorter closed loop
SUBSTEPS = 5  # plant RK4 steps per period
PAYLOAD_KG = 1.0
HOME = np.array([0.0, -1.6, 1.6, -1.57, -1.57, 0.0])
# cost 0.5 sum w r^2: weights on the position error, the velocity and the torque
W_Q, W_QD, W_TAU = 2.0, 2e-3, 2e-5


def reference(t: np.ndarray) -> np.ndarray:
    """A smooth joint-space reference (nq, len(t)): three joints swing sinusoidally."""
    ref = np.tile(HOME[:, None], (1, len(t)))
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


def tracking_problem(robot) -> Problem:
    """The horizon: the state towards the reference (zero velocity), small torques, the
    robot's effort and speed limits (no joint position limits: the UR5e's are +-2 pi)."""
    n = robot.nq
    state = np.r_[np.full(n, W_Q), np.full(n, W_QD)]
    return Problem(ContactModel(robot, dt=DT), HORIZON,
                   [StateResidual(weight=state), ControlResidual(weight=W_TAU)],
                   [StateResidual(weight=state)], position_limits=None)


class Controller:
    """``controller(x, ref) -> tau`` for the state ``x`` and the reference ``ref`` (nq,
    N + 1): writes the reference into the parameters, solves from the previous plan shifted
    one period on (the state held with the gravity torques the first time), counts the
    solves that fail and applies the first torque. Subclasses define :meth:`solve`."""

    def __init__(self, robot):
        self.problem = tracking_problem(robot)
        self.parameters = self.problem.parameters()
        self.sqp = SQP(self.problem)  # also the plan the Ipopt controller starts from
        self.failures = 0
        self.started = False

    def solve(self, x: np.ndarray) -> bool:
        """This period's solve from the plan in ``self.sqp``; whether it succeeded."""
        raise NotImplementedError

    def start(self, x: np.ndarray) -> None:
        """The first plan: ``x`` held with the gravity torques (before the loop: it
        evaluates the robot's Functions for the first time)."""
        self.sqp.hold(x)

    def __call__(self, x: np.ndarray, ref: np.ndarray) -> np.ndarray:
        if self.started:
            self.sqp.shift(1.0)  # the knot is the period
        self.started = True
        self.parameters.set("state", reference=np.r_[ref, np.zeros_like(ref)])
        self.failures += not self.solve(x)
        return self.sqp.U[:, 0].copy()


class RealTimeIteration(Controller):
    """One Gauss-Newton QP per period (:meth:`casdyn.ocp.SQP.iterate`)."""

    def solve(self, x):
        return self.sqp.iterate(x, self.parameters)


class Ipopt(Controller):
    """The same horizon problem solved to convergence by Ipopt each period (for comparison)."""

    def __init__(self, robot):
        super().__init__(robot)
        self.nlp = Transcription(self.problem, self.parameters.modes)
        self.solver = self.nlp.solver("ipopt", options={"ipopt": {"max_iter": 100,
                                                                  "tol": 1e-6}})

    def solve(self, x):
        X, U, _, stats = self.nlp.solve(self.solver, x, self.parameters, self.sqp.X,
                                        self.sqp.U)
        self.sqp.initialize(X, U)
        return stats["success"]


def save_plot(path, robot, t, q, qd, tau, ref):
    """Reference and positions, tracking error, velocities and torques with their limits."""
    plt = pyplot()

    fig, axes = plt.subplots(4, 1, sharex=True, figsize=(9, 10), constrained_layout=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for j, name in enumerate(robot.joint_names):
        c = colors[j % len(colors)]
        axes[0].plot(t, q[:, j], color=c, label=name)
        axes[0].plot(t, ref[:, j], color=c, linestyle="--", linewidth=0.8)
        axes[1].plot(t, 1e3 * (q[:, j] - ref[:, j]), color=c)
        axes[2].plot(t, qd[:, j], color=c)
        axes[3].step(t[:-1], tau[:, j], where="post", color=c)
        axes[3].axhline(robot.effort_limits[j], color=c, linestyle=":", linewidth=0.8)
        axes[3].axhline(-robot.effort_limits[j], color=c, linestyle=":", linewidth=0.8)
    for sign in (1, -1):  # the UR5e's speed limits are the same on every joint
        axes[2].axhline(sign * robot.velocity_limits.max(), color="k", linestyle=":",
                        linewidth=0.8, label="limit" if sign > 0 else None)
    axes[0].set_ylabel("q [rad]\n(dashed: reference)")
    axes[1].set_ylabel("q - reference [mrad]")
    axes[2].set_ylabel("qd [rad/s]")
    axes[3].set_ylabel("tau [N m]\n(dotted: limits)")
    axes[3].set_xlabel("time [s]")
    axes[0].legend(fontsize="small", ncol=3)
    axes[2].legend(fontsize="small")
    axes[0].set_title(f"UR5e MPC at {1 / DT:.0f} Hz, unmodelled {PAYLOAD_KG:g} kg payload")
    for ax in axes:
        ax.grid(True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(plot_dir=None, steps=STEPS, solver="rti"):
    robot = casdyn.load_robot("ur5e")
    n = robot.nq
    controller = (RealTimeIteration if solver == "rti" else Ipopt)(robot)
    plant = rk4_step(robot, DT / SUBSTEPS, payload_weight(robot, PAYLOAD_KG))

    times = DT * np.arange(steps + HORIZON + 1)
    refs = reference(times)
    x = np.concatenate([HOME, np.zeros(n)])
    history_x, history_tau, solve_ms = [x], [], []
    controller.start(x)
    for k in range(steps):
        started = time.perf_counter()
        tau = controller(x, refs[:, k : k + HORIZON + 1])
        solve_ms.append(1e3 * (time.perf_counter() - started))
        for _ in range(SUBSTEPS):
            x = plant(x, tau).full().ravel()
        history_x.append(x)
        history_tau.append(tau)

    states, torques = np.array(history_x), np.array(history_tau)
    q, qd = states[:, :n], states[:, n:]
    error = np.abs(q[steps // 2 :] - refs[:, steps // 2 : steps + 1].T)
    solve_ms = np.array(solve_ms)
    within = int(np.sum(solve_ms <= 1e3 * DT))
    name = "real-time iteration, HPIPM" if solver == "rti" else "Ipopt to convergence"
    print(f"{robot.name}: MPC at {1 / DT:.0f} Hz ({name}), horizon {HORIZON} steps "
          f"({HORIZON * DT:.2f} s), {steps} closed-loop steps, unmodelled {PAYLOAD_KG:g} kg "
          "payload")
    print(f"solve time per step: median {np.median(solve_ms):.2f} ms, 95th percentile "
          f"{np.percentile(solve_ms, 95):.2f} ms, max {solve_ms.max():.2f} ms; "
          f"{within} of {steps} within the {1e3 * DT:.0f} ms period")
    print(f"{steps - controller.failures} of {steps} solves converged")
    print(f"tracking error over the second half: RMS {np.sqrt(np.mean(error ** 2)):.4f} rad, "
          f"max {error.max():.4f} rad")
    print("peak |tau| per joint [N m]:", np.round(np.abs(torques).max(axis=0), 1),
          "limits", robot.effort_limits)
    print("peak |qd| per joint [rad/s]:", np.round(np.abs(qd).max(axis=0), 2),
          "limits", np.round(robot.velocity_limits, 2))
    if plot_dir is not None:
        path = Path(plot_dir) / "mpc.png"
        save_plot(path, robot, times[: steps + 1], q, qd, torques, refs[:, : steps + 1].T)
        print("plot saved to", path)
    return solve_ms, error


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot-dir", help="save a plot of the closed loop here")
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_STEPS} closed-loop steps instead of {STEPS}")
    parser.add_argument("--solver", choices=("rti", "ipopt"), default="rti",
                        help="real-time iteration with HPIPM (default) or Ipopt to convergence")
    args = parser.parse_args()
    main(args.plot_dir, QUICK_STEPS if args.quick else STEPS, args.solver)
