"""Real-time MPC on the UR5e at 100 Hz: track a moving joint reference within torque and
speed limits, every solve inside the 10 ms period.

The controller is a real-time iteration (RTI; Diehl, Bock & Schloeder 2005): each period
it linearises the horizon once around the shifted previous solution and solves one QP with
HPIPM (Frison & Diehl 2020; a structure-exploiting interior point solver in CasADi's wheel),
instead of solving the nonlinear problem to convergence. Its model steps casdyn's forward
dynamics with semi-implicit Euler; the linearisation comes from
``forward_dynamics_derivatives``, evaluated over the whole horizon by one compiled C
function. The cost is Gauss-Newton: quadratic in the states and torques, so its Hessian is
constant. The plant is the same robot integrated with RK4 at a fifth of the period, carrying
an unmodelled 1 kg payload at the tool.

``--solver ipopt`` solves the same horizon problem to convergence with Ipopt instead, for
comparison (not real time).

Run:  python examples/mpc.py [--plot-dir DIR] [--quick] [--solver rti|ipopt]
"""

import argparse
import time
from pathlib import Path

import casadi as ca
import numpy as np

import casdyn
from casdyn.integrators import rk4_step
from casdyn.plotting import pyplot

DT, HORIZON, STEPS = 0.01, 25, 300  # control period [s], horizon length, closed-loop steps
QUICK_STEPS = 40  # --quick (the tests): a shorter closed loop
SUBSTEPS = 5  # plant RK4 steps per period
PAYLOAD_KG = 1.0
HOME = np.array([0.0, -1.6, 1.6, -1.57, -1.57, 0.0])
W_Q, W_QD, W_TAU = 1.0, 1e-3, 1e-5  # cost weights on position error, velocity, torque


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


def model_step(robot) -> ca.Function:
    """(x, tau) -> (x_next, A, B): one semi-implicit Euler step of the forward dynamics
    (``qd+ = qd + DT qdd``, ``q+ = q + DT qd+``) and its Jacobians, from casdyn's
    ``forward_dynamics_derivatives`` (no AD through the step)."""
    n = robot.nq
    x, tau = ca.SX.sym("x", 2 * n), ca.SX.sym("tau", n)
    q, qd = x[:n], x[n:]
    qdd = robot.forward_dynamics(q, qd, tau)
    dq, dqd, dtau = robot.forward_dynamics_derivatives(q, qd, tau)
    qd_next = qd + DT * qdd
    eye = ca.SX.eye(n)
    A = ca.vertcat(ca.horzcat(eye + DT**2 * dq, DT * eye + DT**2 * dqd),
                   ca.horzcat(DT * dq, eye + DT * dqd))
    B = ca.vertcat(DT**2 * dtau, DT * dtau)
    return ca.Function("mpc_step", [x, tau], [ca.vertcat(q + DT * qd_next, qd_next), A, B],
                       ["x", "tau"], ["x_next", "A", "B"])


class Horizon:
    """The horizon's variables ``w = [x0 u0 x1 u1 ... x_N]`` (HPIPM's order), the cost and
    the bounds: torques within the effort limits, velocities within the speed limits."""

    def __init__(self, robot):
        n = self.n = robot.nq
        self.nx, self.nu = 2 * n, n
        self.stage = self.nx + self.nu
        self.size = self.stage * HORIZON + self.nx
        stage_bounds = np.concatenate([np.full(n, np.inf), robot.velocity_limits,
                                       robot.effort_limits])
        self.upper = np.concatenate([np.tile(stage_bounds, HORIZON), stage_bounds[:self.nx]])
        self.lower = -self.upper
        stage_weights = np.repeat([W_Q, W_QD, W_TAU], n)
        self.hessian = ca.DM(ca.Sparsity.diag(self.size), 2 * np.concatenate(
            [np.tile(stage_weights, HORIZON), stage_weights[:self.nx]]))

    def states(self, w):
        """(nx, N + 1) states of ``w``."""
        return ca.horzcat(*[w[k * self.stage : k * self.stage + self.nx]
                            for k in range(HORIZON + 1)])

    def torques(self, w):
        """(nu, N) torques of ``w``."""
        return ca.horzcat(*[w[k * self.stage + self.nx : (k + 1) * self.stage]
                            for k in range(HORIZON)])

    def target(self, ref):
        """``w`` at the reference positions, zero velocities and torques."""
        zeros = ca.DM.zeros(self.n + self.nu)
        return ca.vertcat(*[ca.vertcat(ref[:, k], zeros) for k in range(HORIZON)],
                          ref[:, HORIZON], ca.DM.zeros(self.n))

    def initial(self, x, tau) -> np.ndarray:
        """A first guess: the state ``x`` held with the torque ``tau`` over the horizon."""
        return np.concatenate([np.tile(np.concatenate([x, tau]), HORIZON), x])

    def shifted(self, w: np.ndarray) -> np.ndarray:
        """``w`` moved one period on (the warm start): the last stage is repeated."""
        stages = w[: -self.nx].reshape(HORIZON, self.stage)
        last = np.concatenate([w[-self.nx :], stages[-1, self.nx :]])
        return np.concatenate([*stages[1:], last, w[-self.nx :]])


class Controller:
    """``controller(x, ref, tau_guess) -> tau`` for the state ``x`` and the reference ``ref``
    (nq, N + 1): solves the horizon problem from the previous solution shifted one period on
    (from ``tau_guess`` held the first time), counts the solves that fail, applies the first
    torque. Subclasses define :meth:`solve`."""

    def __init__(self, robot):
        self.horizon = h = Horizon(robot)
        # the horizon's variables, initial state and reference, for the subclasses' problems
        self.w, self.x0 = ca.MX.sym("w", h.size), ca.MX.sym("x0", h.nx)
        self.ref = ca.MX.sym("ref", h.n, HORIZON + 1)
        self.guess = None
        self.failures = 0

    def solve(self, w: np.ndarray, x: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, bool]:
        """The horizon's variables after this period's solve from the guess ``w``, and
        whether the solver succeeded."""
        raise NotImplementedError

    def __call__(self, x: np.ndarray, ref: np.ndarray, tau_guess: np.ndarray) -> np.ndarray:
        h = self.horizon
        w, success = self.solve(h.initial(x, tau_guess) if self.guess is None else self.guess,
                                x, ref)
        self.failures += not success
        self.guess = h.shifted(w)
        return w[h.nx : h.stage].copy()


class RealTimeIteration(Controller):
    """One Gauss-Newton QP per period."""

    def __init__(self, robot):
        super().__init__(robot)
        h, w, x0, ref = self.horizon, self.w, self.x0, self.ref
        step = model_step(robot).map(HORIZON)
        # the linearisation of the whole horizon as one compiled function, cached on disk
        step = casdyn.compile_function(step)
        X, U = h.states(w), h.torques(w)
        x_next, A, B = step(X[:, :-1], U)
        # rows k: A_k dx_k + B_k du_k - dx_{k+1} = -(f(x_k, u_k) - x_{k+1})
        minus_eye = -ca.MX.eye(h.nx)
        rows = [ca.horzcat(ca.MX(h.nx, k * h.stage), A[:, k * h.nx : (k + 1) * h.nx],
                           B[:, k * h.nu : (k + 1) * h.nu], minus_eye,
                           ca.MX(h.nx, h.size - (k + 1) * h.stage - h.nx))
                 for k in range(HORIZON)]
        jacobian = ca.vertcat(*rows)
        defect = ca.vec(x_next - X[:, 1:])
        gradient = ca.mtimes(h.hessian, w - h.target(ref))
        lower = ca.vertcat(x0, h.lower[h.nx:]) - w
        upper = ca.vertcat(x0, h.upper[h.nx:]) - w
        self.qp_data = ca.Function("qp_data", [w, x0, ref],
                                   [gradient, jacobian, -defect, lower, upper])
        self.qp = ca.conic("rti_qp", "hpipm", {"h": h.hessian.sparsity(),
                                               "a": jacobian.sparsity()},
                           {"N": HORIZON, "nx": [h.nx] * (HORIZON + 1),
                            "nu": [h.nu] * HORIZON + [0], "ng": [0] * (HORIZON + 1),
                            "error_on_fail": False})

    def solve(self, w, x, ref):
        g, a, b, lower, upper = self.qp_data(w, x, ref)
        step = self.qp(h=self.horizon.hessian, g=g, a=a, lba=b, uba=b, lbx=lower,
                       ubx=upper)["x"]
        return w + step.full().ravel(), self.qp.stats()["success"]


class Ipopt(Controller):
    """The same horizon problem solved to convergence by Ipopt each period (for comparison)."""

    def __init__(self, robot):
        super().__init__(robot)
        h, w, x0, ref = self.horizon, self.w, self.x0, self.ref
        X, U = h.states(w), h.torques(w)
        defects = ca.vec(model_step(robot).map(HORIZON)(X[:, :-1], U)[0] - X[:, 1:])
        target = w - h.target(ref)
        cost = 0.5 * ca.dot(target, ca.mtimes(h.hessian, target))
        nlp = {"x": w, "p": ca.vertcat(x0, ca.vec(ref)), "f": cost,
               "g": ca.vertcat(X[:, 0] - x0, defects)}
        self.solver = ca.nlpsol("mpc", "ipopt", nlp, {
            "print_time": False, "expand": True, "error_on_fail": False,
            "ipopt": {"print_level": 0, "sb": "yes", "max_iter": 100, "tol": 1e-6}})

    def solve(self, w, x, ref):
        solution = self.solver(x0=w, p=np.concatenate([x, ref.ravel(order="F")]),
                               lbx=self.horizon.lower, ubx=self.horizon.upper, lbg=0, ubg=0)
        return solution["x"].full().ravel(), self.solver.stats()["success"]


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
    tau_hold = robot.gravity_torque(HOME)
    history_x, history_tau, solve_ms = [x], [], []
    for k in range(steps):
        started = time.perf_counter()
        tau = controller(x, refs[:, k : k + HORIZON + 1], tau_hold)
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
