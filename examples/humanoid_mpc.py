"""A humanoid balancing under a push in MuJoCo, every solve inside the 10 ms period: TALOS
(example-robot-data's ``talos_reduced``, arms and head locked: 20 velocities) on its two
soles, pushed sideways at the torso.

The problem is a :class:`casdyn.ocp.Problem` over 10 knots of 50 ms: casdyn's forward
contact dynamics with both soles held flat (a wrench each: the friction cone's pyramid and
the centre of pressure inside the sole, exact), a state residual towards the standing
posture, the centre of mass over the feet, small torques, the torque, joint and speed limits.
Every 10 ms the controller takes MuJoCo's state and runs one real-time iteration
(:meth:`casdyn.ocp.SQP.iterate`: one QP on HPIPM, two interior-point iterations); MuJoCo
(:class:`casdyn.plant.MujocoPlant`: box soles, 1 ms steps) applies the first torques. At
``PUSH_AT`` a force of ``PUSH_N`` newtons pushes the torso sideways for ``PUSH_S``.

Needs ``pip install example-robot-data mujoco``. The first run compiles the stage
linearisation (a minute on two cores; kept in casdyn's compile cache).

Run:  python examples/humanoid_mpc.py [--quick] [--json] [--save FILE.npz] [--plot-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import time
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import numpy as np

import casdyn
from casdyn.errors import CasdynError
from casdyn.ocp import SQP, CenterOfMass, ContactModel, ControlResidual, Problem, StateResidual
from casdyn.plant import MujocoPlant
from casdyn.plotting import pyplot

SOLES = {"left_sole_link": (0.1, 0.05), "right_sole_link": (0.1, 0.05)}  # half sizes, m
KNOT, N = 0.05, 10  # s and count: a 0.5 s horizon
PERIOD, SIM_STEP = 0.01, 0.001  # s
SOLE_THICKNESS = 0.01  # m: the plant's box soles, under the sole frames
PUSH_N, PUSH_AT, PUSH_S = 200.0, 1.0, 0.1  # sideways, at the torso
DURATION, QUICK_DURATION = 5.0, 2.0  # s simulated
KNEES = [0.0, 0.0, -0.4, 0.8, -0.4, 0.0]  # each leg's six joints, hip to ankle
HPIPM_ITERATIONS = 2


def talos():
    """TALOS with its arms, grippers and head locked (at zero), and its URDF's path."""
    try:
        robots = distribution("example-robot-data").locate_file(
            "cmeel.prefix/share/example-robot-data/robots")
    except PackageNotFoundError:
        raise CasdynError("this example needs TALOS: pip install example-robot-data") from None
    urdf = robots / "talos_data/robots/talos_reduced.urdf"
    full = casdyn.load_urdf(urdf, floating_base=True)
    locked = {j: 0.0 for j in full.joint_names if j.startswith(("arm_", "gripper_", "head_"))}
    return full.locked(locked), urdf


class Balance:
    """The problem, its parameters and the SQP."""

    def __init__(self, robot):
        nv = robot.nv
        self.model = ContactModel(robot, tuple(SOLES), dt=KNOT, damping=20.0, mu=0.7,
                                  contact="6d", sole=SOLES["left_sole_link"])
        # the tangent-space state: base rotation and position, joints, then the velocities
        state = np.r_[[100.0] * 3, [1000.0] * 3, np.full(nv - 6, 10.0), np.full(6, 10.0),
                      np.full(nv - 6, 0.1)]
        self.problem = Problem(
            self.model, N, [StateResidual(weight=state), ControlResidual(weight=1e-4),
                            CenterOfMass(weight=[1e3, 1e3, 1e2])],
            [StateResidual(weight=10 * state), CenterOfMass(weight=[1e4, 1e4, 1e3])])
        start = time.perf_counter()
        self.sqp = SQP(self.problem, hpipm={"mode": "speed_abs", "iter_max": HPIPM_ITERATIONS})
        self.build_s = time.perf_counter() - start
        q = robot.home_configuration()
        q[robot.nq - 12 :] = KNEES * 2
        # the soles' boxes on the floor
        q[2] += SOLE_THICKNESS - min(robot.get_transform(q, sole)[2, 3] for sole in SOLES)
        self.q0 = q
        self.parameters = self.problem.parameters()
        self.parameters.set("state", reference=np.r_[q, np.zeros(nv)])
        self.parameters.set("control", reference=self.model.standing_torques(q))
        self.parameters.set("com", reference=np.asarray(robot.center_of_mass(q)[0]).ravel())

    def __call__(self, x: np.ndarray, shift: float) -> bool:
        if shift:
            self.sqp.shift(shift)
        return self.sqp.iterate(x, self.parameters)


def run(duration: float) -> dict:
    robot, urdf = talos()
    controller = Balance(robot)
    plant = MujocoPlant(robot, urdf, feet=SOLES, timestep=SIM_STEP,
                        sole_thickness=SOLE_THICKNESS)
    plant.set_state(np.r_[controller.q0, np.zeros(robot.nv)])
    torso = plant.model.body("torso_2_link").id
    controller.sqp.hold(plant.state())
    for _ in range(3):  # settle the first plan (before the robot moves)
        controller(plant.state(), 0.0)
    log = {key: [] for key in ("t", "q", "tau", "wall", "cpu", "ok")}
    for i in range(round(duration / PERIOD)):
        t, x = i * PERIOD, plant.state()
        wall, cpu = time.perf_counter(), time.process_time()
        ok = controller(x, PERIOD / KNOT if i else 0.0)
        log["wall"].append(time.perf_counter() - wall)
        log["cpu"].append(time.process_time() - cpu)
        log["ok"].append(ok)
        log["t"].append(t)
        log["q"].append(x[: robot.nq])
        log["tau"].append(controller.sqp.U[:, 0].copy())
        for j in range(round(PERIOD / SIM_STEP)):
            pushed = PUSH_AT <= t + j * SIM_STEP < PUSH_AT + PUSH_S
            plant.data.xfrc_applied[torso] = [0.0, PUSH_N if pushed else 0.0, 0, 0, 0, 0]
            plant.step(controller.sqp.U[:, 0])
    log = {key: np.asarray(value) for key, value in log.items()}
    start = time.perf_counter()  # retuning: one weight, then the next solve
    controller.parameters.set("com", weight=[2e3, 2e3, 1e2])
    controller(plant.state(), 1.0)
    log["retune_s"] = time.perf_counter() - start
    log["build_s"] = controller.build_s
    log["standing_height"] = controller.q0[2]
    return log


def summary(log) -> dict:
    wall, cpu = 1e3 * log["wall"], 1e3 * log["cpu"]
    q = log["q"]
    lowest = float(q[:, 2].min())
    return {"plant": "mujoco", "robot": "talos_reduced (arms and head locked)",
            "period_ms": PERIOD * 1e3, "solves": len(cpu),
            "within_period": int(np.sum(wall < PERIOD * 1e3)),
            "within_period_cpu": int(np.sum(cpu < PERIOD * 1e3)),
            "median_ms": float(np.median(wall)), "cpu_median_ms": float(np.median(cpu)),
            "cpu_max_ms": float(cpu.max()), "steps_not_taken": int(np.sum(~log["ok"])),
            "push_n": PUSH_N, "push_s": PUSH_S, "sim_time_s": len(cpu) * PERIOD,
            "largest_sideways_m": float(np.abs(q[:, 1] - q[0, 1]).max()),
            "final_sideways_m": float(q[-1, 1] - q[0, 1]),
            "min_base_height_m": lowest,
            "fell": bool(lowest < log["standing_height"] - 0.2),
            "build_s": float(log["build_s"]), "retune_s": float(log["retune_s"]),
            "solver": "sqp-hpipm real-time iteration (exact constraints)"}


def plot(path: Path, log) -> None:
    """The base's sideways position and height, and the solve times."""
    plt = pyplot()
    fig, axes = plt.subplots(3, 1, sharex=True, figsize=(9, 8), constrained_layout=True)
    t, q = log["t"], log["q"]
    axes[0].plot(t, q[:, 1] - q[0, 1], label="base sideways")
    axes[0].axvspan(PUSH_AT, PUSH_AT + PUSH_S, color="tab:red", alpha=0.2,
                    label=f"push {PUSH_N:.0f} N")
    axes[0].set_ylabel("m")
    axes[1].plot(t, q[:, 2], label="base height")
    axes[1].set_ylabel("m")
    axes[2].plot(t, 1e3 * log["cpu"], ".", markersize=2, label="solve (CPU)")
    axes[2].axhline(PERIOD * 1e3, color="tab:red", linestyle="--", label="period")
    axes[2].set_ylabel("ms")
    axes[2].set_xlabel("time [s]")
    for ax in axes:
        ax.grid(True)
        ax.legend(fontsize="small")
    axes[0].set_title("TALOS pushed sideways in MuJoCo under casdyn's SQP MPC")
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_DURATION} s (the tests)")
    parser.add_argument("--json", action="store_true", help="last line: the summary as JSON")
    parser.add_argument("--save", help="save t, q, tau to this .npz")
    parser.add_argument("--plot-dir", help="save humanoid_mpc.png here")
    arguments = parser.parse_args(argv)
    log = run(QUICK_DURATION if arguments.quick else DURATION)
    result = summary(log)
    if arguments.save:
        np.savez(arguments.save, t=log["t"], q=log["q"], tau=log["tau"])
    if arguments.plot_dir:
        plot(Path(arguments.plot_dir) / "humanoid_mpc.png", log)
    print(f"{result['solves']} solves: CPU median {result['cpu_median_ms']:.2f} ms, max "
          f"{result['cpu_max_ms']:.2f} ms ({result['within_period_cpu']} within the "
          f"{result['period_ms']:.0f} ms period)")
    print(f"pushed {PUSH_N:.0f} N for {PUSH_S} s: moved {result['largest_sideways_m']:.3f} m "
          f"sideways, lowest base {result['min_base_height_m']:.3f} m; fell: {result['fell']}")
    if arguments.json:
        print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
