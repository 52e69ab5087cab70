"""A humanoid walking in MuJoCo and taking a push on the way, every solve inside the 10 ms
period: TALOS (example-robot-data's ``talos_reduced``, arms and head locked: 20 velocities)
on its two soles.

The problem is a :class:`casdyn.ocp.Problem` over 12 knots of 50 ms (0.6 s): casdyn's forward
contact dynamics with the held soles flat (a wrench each: the friction pyramid and the
centre of pressure inside the sole, exact), three stance modes (both soles, the left, the
right), a state residual towards the standing posture, a centre-of-mass residual that
follows the footsteps (over the stance sole while the other swings), and the swing sole's
position (the footstep, lifted ``SWING_HEIGHT``) and orientation (flat); the torque, joint
and speed limits. Every 10 ms the controller writes the schedule, the footsteps and the
centre-of-mass references into the problem's parameters and runs one real-time iteration
(:meth:`casdyn.ocp.SQP.iterate`: one QP on HPIPM, two interior-point iterations); MuJoCo
(:class:`casdyn.plant.MujocoPlant`: box soles, 1 ms steps) applies the first torques. At
``PUSH_AT`` a force of ``PUSH_N`` newtons pushes the torso sideways for ``PUSH_S``.

Needs ``pip install example-robot-data mujoco``. The first run compiles the stance modes'
linearisations, one graph with the held soles an input (about 7 s on two cores; kept in
casdyn's compile cache).

Run:  python examples/humanoid_mpc.py [--quick] [--json] [--save FILE.npz] [--plot-dir DIR]
      [--interpreted]
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import numpy as np

import casdyn
from casdyn.errors import CasdynError
from casdyn.ocp import (
    SQP,
    CenterOfMass,
    ContactModel,
    ControlResidual,
    FrameOrientation,
    FramePosition,
    Problem,
    StateResidual,
)
from casdyn.plant import MujocoPlant
from casdyn.plotting import pyplot

LEFT, RIGHT = "left_sole_link", "right_sole_link"
SOLE = (0.1, 0.05)  # half length and width, m
SOLE_THICKNESS = 0.01  # m: the plant's box soles, under the sole frames
KNOT, N = 0.05, 12  # s and count: a 0.6 s horizon
PERIOD, SIM_STEP = 0.01, 0.001  # s
MODES = ((1, 1), (1, 0), (0, 1))  # both soles, the left (the right swings), the right
START, DOUBLE, SINGLE = 1.0, 0.3, 0.7  # s: standing, then each step's double and single support
STEP, SWING_HEIGHT = 0.15, 0.05  # m: half a stride (the first step), the swing's lift
SHIFT = 0.8  # of the way from the feet's middle to the stance sole: the centre of mass
PUSH_N, PUSH_S = 200.0, 0.1  # sideways, at the torso
DURATION, PUSH_AT = 12.0, 4.0  # s
QUICK_DURATION, QUICK_PUSH_AT = 3.0, 2.0  # s
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


class Gait:
    """The footsteps: standing until ``START``, then steps of ``DOUBLE + SINGLE`` seconds,
    the right sole swinging at even steps, the left at odd ones; the first swing moves the
    right sole ``STEP`` forward, every later one moves a sole ``2 STEP`` (from behind the
    stance sole to ahead of it)."""

    def __init__(self, soles: dict[str, np.ndarray], com: np.ndarray):
        self.soles, self.com = soles, com

    def at(self, t: float) -> tuple[int, str | None, float, int]:
        """(mode index, the swinging sole or None, its progress in [0, 1), step index; -1
        before the first step) at time ``t``."""
        if t < START:
            return 0, None, 0.0, -1
        k, into = divmod(t - START, DOUBLE + SINGLE)
        k = int(k)
        if into < DOUBLE:
            return 0, None, 0.0, k
        return (1, RIGHT, (into - DOUBLE) / SINGLE, k) if k % 2 == 0 else \
            (2, LEFT, (into - DOUBLE) / SINGLE, k)

    def sole(self, sole: str, t: float) -> np.ndarray:
        """Where ``sole`` is (or goes, while it swings, lifted) at time ``t``."""
        _, swinging, progress, k = self.at(t)
        first = 0 if sole == RIGHT else 1  # its first step
        # its swings of the steps before step k (step k's comes after its double support)
        done = len(range(first, k, 2)) if k >= 0 else 0

        def travelled(n: float) -> float:
            return 0.0 if n <= 0 else (STEP + 2 * STEP * (n - 1) if sole == RIGHT
                                       else 2 * STEP * n)
        position = self.soles[sole].copy()
        position[0] += travelled(done)
        if swinging == sole:
            smooth = 3 * progress**2 - 2 * progress**3
            position[0] += (travelled(done + 1) - travelled(done)) * smooth
            position[2] += SWING_HEIGHT * 16 * progress**2 * (1 - progress) ** 2
        return position

    def com_reference(self, t: float) -> np.ndarray:
        """Between the soles along the walk; sideways over the stance sole while the other
        swings, moved across during each double support."""
        x = 0.5 * (self.sole(LEFT, t)[0] + self.sole(RIGHT, t)[0]) - \
            0.5 * (self.soles[LEFT][0] + self.soles[RIGHT][0]) + self.com[0]
        _, _, _, k = self.at(t)
        if k < 0:
            return np.r_[x, self.com[1:]]

        def over(step: int) -> float:  # the stance sole of a step: the left at even steps
            stance = LEFT if step % 2 == 0 else RIGHT
            return self.com[1] + SHIFT * (self.soles[stance][1] - self.com[1])

        into = (t - START) % (DOUBLE + SINGLE)
        y = over(k)
        if into < DOUBLE:
            before = over(k - 1) if k > 0 else self.com[1]
            a = into / DOUBLE
            y = before + (y - before) * (3 * a**2 - 2 * a**3)
        return np.r_[x, y, self.com[2]]


class Walker:
    """The problem, its parameters, the SQP and the gait."""

    def __init__(self, robot, compile: bool = True):
        nv = robot.nv
        self.robot = robot
        self.model = ContactModel(robot, (LEFT, RIGHT), dt=KNOT, damping=20.0, mu=0.7,
                                  contact="6d", sole=SOLE)
        # the tangent-space state: base rotation, base position (its height only: the
        # centre of mass leads), joints, then the velocities
        state = np.r_[[10.0] * 3, [0.0, 0.0, 100.0], np.full(nv - 6, 1.0), np.full(6, 10.0),
                      np.full(nv - 6, 0.1)]
        swing = [FramePosition(sole, weight=0.0) for sole in (LEFT, RIGHT)] + \
            [FrameOrientation(sole, weight=0.0) for sole in (LEFT, RIGHT)]
        self.problem = Problem(
            self.model, N, [StateResidual(weight=state), ControlResidual(weight=1e-4),
                            CenterOfMass(weight=[1e3, 1e3, 1e2]), *swing],
            [StateResidual(weight=10 * state), CenterOfMass(weight=[1e4, 1e4, 1e3])],
            modes=MODES)
        start = time.perf_counter()
        # switched: the three stance modes' linearisations as one graph, compiled once
        self.sqp = SQP(self.problem, compile=compile, switched=True,
                       hpipm={"mode": "speed_abs", "iter_max": HPIPM_ITERATIONS})
        self.build_s = time.perf_counter() - start
        q = robot.home_configuration()
        q[robot.nq - 12 :] = KNEES * 2
        # the soles' boxes on the floor
        q[2] += SOLE_THICKNESS - min(robot.get_transform(q, sole)[2, 3] for sole in (LEFT, RIGHT))
        self.q0 = q
        self.gait = Gait({sole: np.asarray(robot.get_transform(q, sole))[:3, 3]
                          for sole in (LEFT, RIGHT)},
                         np.asarray(robot.center_of_mass(q)[0]).ravel())
        self.parameters = self.problem.parameters()
        self.parameters.set("control", reference=self.model.standing_torques(q))

    def schedule(self, t: float) -> None:
        """Write the modes, the state, centre-of-mass and swing references of the horizon
        from time ``t``."""
        times = t + KNOT * np.arange(N + 1)
        p = self.parameters
        p.set_modes([self.gait.at(tk + KNOT / 2)[0] for tk in times[:-1]])
        com = np.stack([self.gait.com_reference(tk) for tk in times], axis=1)
        state = np.tile(np.r_[self.q0, np.zeros(self.robot.nv)][:, None], (1, N + 1))
        state[0] += com[0] - self.gait.com[0]
        p.set("state", reference=state).set("com", reference=com)
        for sole in (LEFT, RIGHT):
            swings = np.array([self.gait.at(tk)[1] == sole for tk in times[:-1]], dtype=float)
            targets = np.stack([self.gait.sole(sole, tk) for tk in times[:-1]], axis=1)
            p.set(f"frame_position:{sole}", reference=targets, weight=3000.0 * swings[None],
                  knots=range(N))
            p.set(f"frame_orientation:{sole}", weight=300.0 * swings[None], knots=range(N))

    def __call__(self, t: float, x: np.ndarray, shift: float) -> bool:
        self.schedule(t)
        if shift:
            self.sqp.shift(shift)
        return self.sqp.iterate(x, self.parameters)


def run(duration: float, push_at: float, compile: bool = True) -> dict:
    robot, urdf = talos()
    controller = Walker(robot, compile)
    plant = MujocoPlant(robot, urdf, feet={LEFT: SOLE, RIGHT: SOLE}, timestep=SIM_STEP,
                        sole_thickness=SOLE_THICKNESS)
    plant.set_state(np.r_[controller.q0, np.zeros(robot.nv)])
    torso = plant.model.body("torso_2_link").id
    controller.sqp.hold(plant.state())
    for _ in range(3):  # settle the first plan (before the robot moves)
        controller(0.0, plant.state(), 0.0)
    # what exists now (the model, the compiled Functions, the plant) stays out of the garbage
    # collector's passes: in the loop they would cost pauses of up to 4 ms
    gc.collect()
    gc.freeze()
    log = {key: [] for key in ("t", "q", "tau", "wall", "cpu", "ok", "soles")}
    for i in range(round(duration / PERIOD)):
        t, x = i * PERIOD, plant.state()
        wall, cpu = time.perf_counter(), time.process_time()
        ok = controller(t, x, PERIOD / KNOT if i else 0.0)
        log["wall"].append(time.perf_counter() - wall)
        log["cpu"].append(time.process_time() - cpu)
        log["ok"].append(ok)
        log["t"].append(t)
        log["q"].append(x[: robot.nq])
        log["tau"].append(controller.sqp.U[:, 0].copy())
        log["soles"].append([plant.data.xpos[plant.model.body(s).id].copy()
                             for s in (LEFT, RIGHT)])
        for j in range(round(PERIOD / SIM_STEP)):
            pushed = push_at <= t + j * SIM_STEP < push_at + PUSH_S
            plant.data.xfrc_applied[torso] = [0.0, PUSH_N if pushed else 0.0, 0, 0, 0, 0]
            plant.step(controller.sqp.U[:, 0])
    log = {key: np.asarray(value) for key, value in log.items()}
    start = time.perf_counter()  # retuning: one weight, then the next solve
    controller.parameters.set("control", weight=2e-4)
    controller(duration, plant.state(), 1.0)
    log["retune_s"] = time.perf_counter() - start
    log["build_s"] = controller.build_s
    log["standing_height"] = controller.q0[2]
    log["push_at"] = push_at
    return log


def summary(log) -> dict:
    wall, cpu = 1e3 * log["wall"], 1e3 * log["cpu"]
    q, t = log["q"], log["t"]
    lowest = float(q[:, 2].min())
    walking = t[-1] + PERIOD - START
    lifted = log["soles"][:, :, 2] > log["soles"][0, :, 2] + 0.02
    return {"plant": "mujoco", "robot": "talos_reduced (arms and head locked)",
            "period_ms": PERIOD * 1e3, "solves": len(cpu),
            "within_period": int(np.sum(wall < PERIOD * 1e3)),
            "within_period_cpu": int(np.sum(cpu < PERIOD * 1e3)),
            "median_ms": float(np.median(wall)), "p95_ms": float(np.percentile(wall, 95)),
            "max_ms": float(wall.max()), "cpu_median_ms": float(np.median(cpu)),
            "cpu_max_ms": float(cpu.max()), "steps_not_taken": int(np.sum(~log["ok"])),
            "sim_time_s": len(cpu) * PERIOD, "distance_m": float(q[-1, 0] - q[0, 0]),
            "speed_m_s": float((q[-1, 0] - q[0, 0]) / walking),
            "commanded_speed_m_s": STEP / (DOUBLE + SINGLE),
            "soles_lifted_periods": lifted.sum(axis=0).tolist(),
            "push_n": PUSH_N, "push_s": PUSH_S, "push_at_s": float(log["push_at"]),
            "min_base_height_m": lowest,
            "fell": bool(lowest < log["standing_height"] - 0.2),
            "build_s": float(log["build_s"]), "retune_s": float(log["retune_s"]),
            "solver": "sqp-hpipm real-time iteration (exact constraints)"}


def plot(path: Path, log) -> None:
    """The base's forward and sideways positions with the push, the soles' heights, and the
    solve times."""
    plt = pyplot()
    fig, axes = plt.subplots(3, 1, sharex=True, figsize=(9, 9), constrained_layout=True)
    t, q = log["t"], log["q"]
    axes[0].plot(t, q[:, 0] - q[0, 0], label="base forward")
    axes[0].plot(t, q[:, 1] - q[0, 1], label="base sideways")
    axes[0].axvspan(log["push_at"], log["push_at"] + PUSH_S, color="tab:red", alpha=0.3,
                    label=f"push {PUSH_N:.0f} N sideways")
    axes[0].set_ylabel("m")
    for k, sole in enumerate(("left sole", "right sole")):
        axes[1].plot(t, log["soles"][:, k, 2], label=f"{sole} height")
    axes[1].set_ylabel("m")
    axes[2].plot(t, 1e3 * log["cpu"], ".", markersize=2, label="solve (CPU)")
    axes[2].axhline(PERIOD * 1e3, color="tab:red", linestyle="--", label="period")
    axes[2].set_ylabel("ms")
    axes[2].set_xlabel("time [s]")
    for ax in axes:
        ax.grid(True)
        ax.legend(fontsize="small")
    axes[0].set_title("TALOS walking in MuJoCo under casdyn's SQP MPC, pushed on the way")
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_DURATION} s (the tests)")
    parser.add_argument("--json", action="store_true", help="last line: the summary as JSON")
    parser.add_argument("--save", help="save t, q, tau to this .npz")
    parser.add_argument("--plot-dir", help="save humanoid_mpc.png here")
    parser.add_argument("--interpreted", action="store_true",
                        help="evaluate the linearisations in CasADi's VM (no C compiler; "
                             "several times slower: not real time)")
    arguments = parser.parse_args(argv)
    log = run(*((QUICK_DURATION, QUICK_PUSH_AT) if arguments.quick else (DURATION, PUSH_AT)),
              not arguments.interpreted)
    result = summary(log)
    if arguments.save:
        np.savez(arguments.save, t=log["t"], q=log["q"], tau=log["tau"],
                 contacts=np.array([LEFT, RIGHT]))
    if arguments.plot_dir:
        plot(Path(arguments.plot_dir) / "humanoid_mpc.png", log)
    print(f"{result['solves']} solves: CPU median {result['cpu_median_ms']:.2f} ms, max "
          f"{result['cpu_max_ms']:.2f} ms ({result['within_period_cpu']} within the "
          f"{result['period_ms']:.0f} ms period)")
    print(f"walked {result['distance_m']:.2f} m in {result['sim_time_s']:.1f} s "
          f"({result['speed_m_s']:.3f} m/s after {START} s standing), pushed {PUSH_N:.0f} N "
          f"for {PUSH_S} s at {result['push_at_s']} s; lowest base "
          f"{result['min_base_height_m']:.3f} m; fell: {result['fell']}")
    if arguments.json:
        print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
