"""Whole-body MPC of the shipped solo12 trotting forward, with MuJoCo as the plant.

The problem is a :class:`casdyn.ocp.Problem`: 20 knots of 20 ms (0.4 s) of casdyn's forward
contact dynamics with the held feet of each knot, stepped on SE(3) x R^12; a state residual
towards a reference walking at ``SPEED``, a control residual towards the standing torques and
the swing feet's heights; every held foot's force in its friction pyramid, the torques within
the motors' 2.7 N m, the joints within their limits — exact constraints. Every 10 ms the
controller takes MuJoCo's state, writes the references and the stance schedule into the
problem's parameters and runs one real-time iteration (:meth:`casdyn.ocp.SQP.iterate`: one
QP on HPIPM). The gait is a trot (diagonal pairs swing alternately). MuJoCo (its own soft
contacts, 1 ms steps) applies the first interval's torques plus a joint PD towards the
planned motion, clipped to the motor limit.

The first run compiles one linearisation per stance mode (seconds to half a minute; kept in
casdyn's compile cache for the next runs, whatever the horizon or the weights) and says so
on stderr while it does (on a terminal, or anywhere with ``CASDYN_PROGRESS=1``). At the end
the run changes one weight and times the next solve (``retune_s``): no build in between.

Run:  python examples/quadruped_mpc.py [--quick] [--json] [--save FILE.npz] [--plot-dir DIR]
      [--interpreted]
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from pathlib import Path

import numpy as np

import casdyn
from casdyn.ocp import SQP, ContactModel, ControlResidual, FootHeight, Problem, StateResidual
from casdyn.plant import MujocoPlant
from casdyn.plotting import pyplot

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
# The standing pose ([HAA, HFE, KFE] per leg). When the shipped model names one, use
# robot.named_configurations["standing"] here instead.
STANDING_LEGS = [0.0, 0.8, -1.6] * 2 + [0.0, -0.8, 1.6] * 2
FOOT_RADIUS = 0.015  # m: MuJoCo's foot spheres, centred on the FOOT frames
MU_MODEL, MU_PLANT = 0.6, 1.0  # the MPC's friction pyramids are inside MuJoCo's cones
PERIOD = 0.01  # s, the control period
KNOT, N = 0.02, 20  # s and count: a 0.4 s horizon
SIM_STEP = 0.001  # s, MuJoCo's time step
SPEED = 0.35  # m/s, the commanded forward speed
STAND = 0.3  # s on four feet before the trot starts
GAIT = 0.32  # s, a trot cycle: each diagonal pair swings for half of it
SWING_HEIGHT = 0.05  # m
DAMPING = 20.0  # 1/s, the held feet's velocity feedback in the model
KP, KD = 3.0, 0.05  # joint PD towards the plan, N m/rad and N m s/rad
DURATION, QUICK_DURATION = 10.0, 1.5  # s simulated
# HPIPM's interior-point iterations per QP: the real-time iteration takes the second
# iterate's step whether or not HPIPM's tolerances are met (about 2 ms of CPU an iteration
# here; the quick run walks 0.41 m with 2 or 3)
HPIPM_ITERATIONS = 2
MODES = ((1, 1, 1, 1), (1, 0, 0, 1), (0, 1, 1, 0))  # four feet, FL+HR held, FR+HL held
FOOT_WEIGHT = 2500.0  # per m^2 of a swing foot's height error


def standing(robot) -> np.ndarray:
    """The standing configuration at the origin, the feet's spheres touching the floor."""
    q = np.r_[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, STANDING_LEGS]
    q[2] = FOOT_RADIUS - min(robot.get_transform(q, foot)[2, 3] for foot in FEET)
    return q


def gait(t: float) -> tuple[int, np.ndarray]:
    """The mode index (into MODES) at time ``t`` and each foot's swing progress in [0, 1)
    (-1 for a held foot)."""
    swing = -np.ones(len(FEET))
    if t < STAND:
        return 0, swing
    phase = ((t - STAND) / GAIT) % 1.0
    mode = 1 if phase < 0.5 else 2
    progress = (phase % 0.5) / 0.5
    for k, held in enumerate(MODES[mode]):
        if not held:
            swing[k] = progress
    return mode, swing


def foot_height(progress: np.ndarray) -> np.ndarray:
    """The swing feet's reference height (zero velocity at lift-off and touchdown)."""
    s = np.clip(progress, 0.0, 1.0)
    return FOOT_RADIUS + np.where(progress >= 0, SWING_HEIGHT * 16 * s**2 * (1 - s) ** 2, 0.0)


def build_plant(robot, q0: np.ndarray) -> MujocoPlant:
    """MuJoCo with the shipped URDF, a floor, foot spheres and the motors, standing at
    ``q0``."""
    plant = MujocoPlant(robot, feet=FEET, foot_radius=FOOT_RADIUS, friction=MU_PLANT,
                        timestep=SIM_STEP)
    plant.set_state(np.r_[q0, np.zeros(robot.nv)])
    return plant


class TrotController:
    """The problem, its parameters, the SQP and the schedule for the horizon from time t."""

    def __init__(self, robot, compile: bool = True):
        self.model = ContactModel(robot, FEET, dt=KNOT, damping=DAMPING, mu=MU_MODEL)
        q_weight = np.r_[[1.0, 5.0, 20.0], [20.0, 20.0, 10.0], np.full(12, 2.0)] ** 2
        v_weight = np.r_[[1.0, 1.0, 1.0], [5.0, 5.0, 2.0], np.full(12, 0.05)] ** 2
        heights = [FootHeight(foot, weight=0.0) for foot in FEET]  # weighted while swinging
        self.problem = Problem(
            self.model, N, [StateResidual(weight=np.r_[q_weight, v_weight]),
                            ControlResidual(weight=0.01), *heights],
            [StateResidual(weight=9.0 * np.r_[q_weight, v_weight]), *heights], modes=MODES)
        start = time.perf_counter()
        self.sqp = SQP(self.problem, compile=compile,
                       hpipm={"mode": "speed_abs", "iter_max": HPIPM_ITERATIONS})
        self.build_s = time.perf_counter() - start
        self.parameters = self.problem.parameters()
        self.q0 = standing(robot)
        self.u0 = self.model.standing_torques(self.q0)
        self.parameters.set("control", reference=self.u0)
        self.sqp.hold(np.r_[self.q0, np.zeros(robot.nv)])

    def schedule(self, t: float, x: np.ndarray) -> None:
        """Write the references and the stance modes of the horizon from time ``t``."""
        nq = self.model.nq
        X_ref = np.tile(np.r_[self.q0, np.zeros(self.model.nv)][:, None], (1, N + 1))
        times = t + KNOT * np.arange(N + 1)
        X_ref[0] = x[0] + SPEED * np.maximum(times - max(t, STAND), 0.0)
        X_ref[nq + 3] = SPEED if t >= STAND else 0.0
        swing = np.array([gait(tk)[1] for tk in times]).T  # (feet, N + 1)
        self.parameters.set("state", reference=X_ref)
        for k, foot in enumerate(FEET):
            self.parameters.set(f"foot_height:{foot}", reference=foot_height(swing[k])[None],
                                weight=FOOT_WEIGHT * (swing[k] >= 0)[None])
        self.parameters.set_modes([gait(tk + KNOT / 2)[0] for tk in times[:-1]])

    def __call__(self, t: float, x: np.ndarray, shift: float = 0.0) -> bool:
        """One solve at time ``t`` from the state ``x``, the guess first moved on by
        ``shift`` knots (the time since the last solve)."""
        if shift:
            self.sqp.shift(shift)
        self.schedule(t, x)
        return self.sqp.iterate(x, self.parameters)


def run(duration: float, compile: bool = True):
    robot = casdyn.load_robot("solo12", floating_base=True)
    controller = TrotController(robot, compile)
    plant = build_plant(robot, controller.q0)

    for _ in range(3):  # settle the first plan (not timed: before the robot moves)
        controller(0.0, plant.state())
    # what exists now (the model, the compiled Functions, the plant) stays out of the garbage
    # collector's passes: in the loop they would cost pauses of up to 4 ms
    gc.collect()
    gc.freeze()
    steps = round(duration / PERIOD)
    substeps = round(PERIOD / SIM_STEP)
    log = {key: [] for key in ("t", "q", "v", "vx", "tau", "forces", "wall", "cpu", "ok",
                               "capped")}
    limit = robot.effort_limits[6:]
    for i in range(steps):
        t = i * PERIOD
        x = plant.state()
        wall, cpu = time.perf_counter(), time.process_time()
        ok = controller(t, x, PERIOD / KNOT if i else 0.0)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        X, U = controller.sqp.X, controller.sqp.U
        mode = gait(t + KNOT / 2)[0]
        _, forces = controller.model.step(MODES[mode])(X[:, 0], U[:, 0])
        log["wall"].append(wall)
        log["cpu"].append(cpu)
        log["ok"].append(ok)  # a step taken (HPIPM solved, or stopped at its iter_max)
        log["capped"].append("iteration limit" in controller.sqp.status)
        log["forces"].append(np.asarray(forces).T)
        nq = robot.nq
        for j in range(substeps):
            s = (j * SIM_STEP) / KNOT  # where in the first interval
            q_des = X[7:nq, 0] + s * (X[7:nq, 1] - X[7:nq, 0])
            v_des = X[nq + 6 :, 0] + s * (X[nq + 6 :, 1] - X[nq + 6 :, 0])
            now = plant.state()
            tau = np.clip(U[:, 0] + KP * (q_des - now[7:nq]) + KD * (v_des - now[nq + 6 :]),
                          -limit, limit)
            if j == 0:
                log["t"].append(t)
                log["q"].append(now[:nq])
                log["v"].append(x[nq:])
                log["vx"].append(plant.data.qvel[0])  # MuJoCo's: the base's, world axes
                log["tau"].append(tau)
            plant.step(tau)
    log = {key: np.asarray(value) for key, value in log.items()}
    # retuning: one weight changed, then the next solve's result, with no build in between
    start = time.perf_counter()
    controller.parameters.set("control", weight=0.02)
    controller(steps * PERIOD, plant.state(), 1.0)
    log["retune_s"] = time.perf_counter() - start
    log["build_s"] = controller.build_s
    return log


def summary(log) -> dict:
    wall_ms = 1e3 * log["wall"]
    q = log["q"]
    sim_time = len(log["t"]) * PERIOD
    min_height = float(q[:, 2].min())
    return {"plant": "mujoco", "period_ms": PERIOD * 1e3, "solves": len(wall_ms),
            "within_period": int(np.sum(wall_ms < PERIOD * 1e3)),
            # the same by the process's CPU time: what a busy shared machine does not inflate
            "within_period_cpu": int(np.sum(1e3 * log["cpu"] < PERIOD * 1e3)),
            "median_ms": float(np.median(wall_ms)), "p95_ms": float(np.percentile(wall_ms, 95)),
            "max_ms": float(wall_ms.max()),
            "cpu_median_ms": float(np.median(1e3 * log["cpu"])),
            "cpu_max_ms": float(np.max(1e3 * log["cpu"])),
            "qp_at_iteration_cap": int(np.sum(log["capped"])),
            "steps_not_taken": int(np.sum(~log["ok"])),
            "sim_time_s": sim_time, "distance_m": float(q[-1, 0] - q[0, 0]),
            "min_base_height_m": min_height, "fell": bool(min_height < 0.12),
            "build_s": float(log["build_s"]), "retune_s": float(log["retune_s"]),
            "solver": "sqp-hpipm real-time iteration (exact constraints)"}


def plot(path: Path, log):
    """Base velocity vs command, base height, foot forces with their cone limits, solve
    times."""
    plt = pyplot()
    fig, axes = plt.subplots(4, 1, sharex=True, figsize=(9, 11), constrained_layout=True)
    t = log["t"]
    vx = log["vx"]
    command = np.where(t >= STAND, SPEED, 0.0)
    axes[0].plot(t, vx, label="base forward velocity (world)")
    axes[0].plot(t, command, "--", label="command")
    axes[0].set_ylabel("m/s")
    axes[1].plot(t, log["q"][:, 2], label="base height")
    axes[1].set_ylabel("m")
    for k, foot in enumerate(FEET):
        f = log["forces"][:, k]
        axes[2].plot(t, f[:, 2], label=f"{foot} fz")
        axes[2].plot(t, np.hypot(f[:, 0], f[:, 1]) / MU_MODEL, ":", linewidth=0.8,
                     label=f"{foot} |f_t| / mu (below fz: inside the cone)")
    axes[2].set_ylabel("planned force [N]")
    axes[3].plot(t, 1e3 * log["wall"], ".", markersize=2, label="solve (wall)")
    axes[3].axhline(PERIOD * 1e3, color="tab:red", linestyle="--", label="period")
    axes[3].set_ylabel("ms")
    axes[3].set_xlabel("time [s]")
    for ax in axes:
        ax.grid(True)
        ax.legend(fontsize="x-small", ncol=2)
    axes[0].set_title("solo12 trot in MuJoCo under casdyn's SQP MPC (real-time iteration)")
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_DURATION} s (the tests)")
    parser.add_argument("--json", action="store_true", help="last line: the summary as JSON")
    parser.add_argument("--save", help="save t, q, v, tau, forces, contacts to this .npz")
    parser.add_argument("--plot-dir", help="save quadruped_mpc.png here")
    parser.add_argument("--interpreted", action="store_true",
                        help="evaluate the linearisation in CasADi's VM (no C compiler; "
                             "several times slower: not real time)")
    arguments = parser.parse_args(argv)
    log = run(QUICK_DURATION if arguments.quick else DURATION, not arguments.interpreted)
    result = summary(log)
    if arguments.save:
        np.savez(arguments.save, t=log["t"], q=log["q"], v=log["v"], tau=log["tau"],
                 forces=log["forces"], contacts=np.array(FEET))
    if arguments.plot_dir:
        plot(Path(arguments.plot_dir) / "quadruped_mpc.png", log)
    print(f"{result['solves']} solves: median {result['median_ms']:.2f} ms, p95 "
          f"{result['p95_ms']:.2f} ms, max {result['max_ms']:.2f} ms (period "
          f"{result['period_ms']:.0f} ms; {result['within_period']} within)")
    print(f"walked {result['distance_m']:.2f} m in {result['sim_time_s']:.1f} s; lowest base "
          f"{result['min_base_height_m']:.3f} m; fell: {result['fell']}")
    if arguments.json:
        print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
