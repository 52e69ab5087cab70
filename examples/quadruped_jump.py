"""A forward jump of the shipped solo12 quadruped, by trajectory optimisation over a fixed
contact schedule: push off on four feet, fly, land on four feet, come to rest.

Whole-body dynamics by direct multiple shooting, the floating base integrated on SE(3) by
``robot.integrate`` (``q ⊕ h v``):

* stance (push-off and landing): ``contact_dynamics`` with the four feet held gives the
  accelerations and the foot forces for the motor torques, stepped by the explicit midpoint
  rule (the held feet then drift by the step's O(h^3) error only, printed at the end); every
  force must lie in its friction pyramid (mu = 0.7), which also makes it push, not pull;
* flight: ``forward_dynamics``, a semi-implicit Euler step (``v+ = v + h qdd``,
  ``q+ = q ⊕ h v+``); the feet stay above the ground;
* touchdown: the feet are on the ground and ``impulse_dynamics`` (a plastic impact) gives
  the velocities just after it.

Ipopt minimises the motors' squared torques (within their 2.7 N m) to jump JUMP_DISTANCE
forward and stand still in the nominal pose at the end.

Run:  python examples/quadruped_jump.py [--quick] [--plot-dir DIR]
"""

import argparse
import time
from pathlib import Path

import casadi as ca
import numpy as np

import casdyn
from casdyn import Contact
from casdyn.plotting import pyplot

MU = 0.7
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
LEGS = [0.0, 0.8, -1.6] * 2 + [0.0, -0.8, 1.6] * 2  # nominal stance ([HAA, HFE, KFE] per leg)
JUMP_DISTANCE = 0.2  # m, forward
PHASES = {"push-off": 0.3, "flight": 0.2, "landing": 0.4}  # seconds
STEP = 0.025  # s; --quick: 0.05
VELOCITY_WEIGHT = 1e-2  # (N m)^2 per (rad/s)^2: damps needless motion
POSTURE_WEIGHT = 1.0  # (N m)^2 s per rad^2: the legs back in the nominal pose at the end
DAMPING = 20.0  # 1/s: contact_dynamics damps a held foot's drift velocity (Baumgarte)


def nominal(robot: casdyn.RigidBodyTree, x: float = 0.0) -> np.ndarray:
    """The standing pose at base position ``x``, feet on the ground (z = 0)."""
    q = np.r_[x, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, LEGS]
    q[2] = -min(robot.get_transform(q, foot)[2, 3] for foot in FEET)
    return q


def step_functions(robot: casdyn.RigidBodyTree, h: float):
    """(stance, flight, impact) as CasADi Functions of the state x = (q, v) and the motor
    torques u: one step held by the feet (also returning the foot forces at its start,
    3 x 4), one free, and the velocity jump of a touchdown."""
    nq, nv = robot.nq, robot.nv
    contacts = [Contact(foot) for foot in FEET]
    x, u = ca.SX.sym("x", nq + nv), ca.SX.sym("u", nv - 6)
    q, v = x[:nq], x[nq:]
    tau = ca.vertcat(ca.SX.zeros(6), u)  # the base has no motor

    held = robot.function("contact_dynamics", contacts=contacts, fext=False)
    qdd, forces = held(q, v, tau, DAMPING)
    # the explicit midpoint rule
    q_mid = robot.integrate(q, v * (h / 2))
    v_mid = v + (h / 2) * qdd
    qdd_mid, _ = held(q_mid, v_mid, tau, DAMPING)
    x_next = ca.vertcat(robot.integrate(q, v_mid * h), v + h * qdd_mid)
    stance = ca.Function("stance", [x, u], [x_next, forces.T])
    v_next = v + h * robot.forward_dynamics(q, v, tau)
    flight = ca.Function("flight", [x, u], [ca.vertcat(robot.integrate(q, v_next * h), v_next)])
    v_plus, _ = robot.impulse_dynamics(q, v, contacts)
    impact = ca.Function("impact", [x], [ca.vertcat(q, v_plus)])
    return stance, flight, impact


def standing_torques(robot: casdyn.RigidBodyTree, q: np.ndarray) -> np.ndarray:
    """Motor torques that hold ``q`` on four feet with equal vertical forces (least squares
    over the joints: ``S^T tau = g - J_c^T f``), the initial guess of every interval."""
    g = robot.gravity_torque(q)
    weight = robot.mass * -robot.gravity[2]
    f = np.array([0.0, 0.0, weight / len(FEET)])
    for foot in FEET:
        g = g - robot.geometric_jacobian(q, foot)[3:].T @ f
    return g[6:]


def solve(robot: casdyn.RigidBodyTree, h: float = STEP):
    nq, nv = robot.nq, robot.nv
    counts = {phase: round(duration / h) for phase, duration in PHASES.items()}
    N = sum(counts.values())
    phase = np.repeat(list(counts), list(counts.values()))  # the phase of each interval
    touchdown = counts["push-off"] + counts["flight"]  # the node where the feet land
    stance, flight, impact = step_functions(robot, h)
    q_sym = ca.SX.sym("q", nq)
    feet = ca.Function("feet", [q_sym], [ca.horzcat(*[
        robot.get_transform(q_sym, foot)[:3, 3] for foot in FEET])])

    opti = ca.Opti()
    X = opti.variable(nq + nv, N + 1)
    U = opti.variable(nv - 6, N)
    start, goal = nominal(robot), nominal(robot, JUMP_DISTANCE)
    opti.subject_to(X[:, 0] == np.r_[start, np.zeros(nv)])
    # the base at the goal (its 6-D pose error in the tangent space: 4 quaternion equations
    # would constrain the unit norm twice)
    opti.subject_to(robot.difference(X[:nq, N], goal)[:6] == 0)
    # at rest: the base's twist (with the feet held, the joints' rates then follow; all of
    # v would constrain the feet's velocities, which the contacts already damp, twice)
    opti.subject_to(X[nq : nq + 6, N] == 0)
    limit = robot.effort_limits[6:]
    opti.subject_to(opti.bounded(-limit, U, limit))
    stance_intervals = [k for k in range(N) if phase[k] != "flight"]
    forces = []
    for k in range(N):
        x = impact(X[:, k]) if k == touchdown else X[:, k]
        if phase[k] == "flight":
            opti.subject_to(X[:, k + 1] == flight(x, U[:, k]))
            if k + 1 < touchdown:  # (at touchdown they are on the ground)
                opti.subject_to(feet(X[:nq, k + 1])[2, :] >= 0)
        else:
            x_next, f = stance(x, U[:, k])
            opti.subject_to(X[:, k + 1] == x_next)
            forces.append(f)
    F = ca.horzcat(*forces)  # 3 x (4 * stance intervals)
    for axis in (0, 1):  # the friction pyramid, inside the cone of MU * fz / sqrt(2)
        opti.subject_to(opti.bounded(-MU / np.sqrt(2) * F[2, :], F[axis, :],
                                     MU / np.sqrt(2) * F[2, :]))
    opti.subject_to(feet(X[:nq, touchdown])[2, :] == 0)
    opti.minimize(h * ca.sumsqr(U) + VELOCITY_WEIGHT * h * ca.sumsqr(X[nq:, :])
                  + POSTURE_WEIGHT * ca.sumsqr(X[7:nq, N] - goal[7:]))

    # initial guess: the stance pose sliding forward, with the torques that hold it
    t = np.linspace(0.0, 1.0, N + 1)
    guess = np.array([nominal(robot, JUMP_DISTANCE * s) for s in t]).T
    opti.set_initial(X[:nq, :], guess)
    opti.set_initial(U, np.tile(standing_torques(robot, start)[:, None], N))
    opti.solver("ipopt", {"print_time": False},
                {"print_level": 0, "sb": "yes", "max_iter": 200})
    started = time.perf_counter()
    solution = opti.solve()
    seconds = time.perf_counter() - started
    values = solution.value(X), solution.value(U), solution.value(F)
    return solution, values, seconds, phase, stance_intervals, feet


def main(plot_dir=None, h=STEP, save=None):
    robot = casdyn.load_robot("solo12", floating_base=True)
    solution, (X, U, F), seconds, phase, stance_intervals, feet = solve(robot, h)
    stats = solution.stats()
    N = U.shape[1]
    t = np.arange(N + 1) * h
    weight = robot.mass * -robot.gravity[2]
    print(f"{robot.name}: {robot.mass:.2f} kg; {N} intervals of {h * 1000:.0f} ms "
          f"({', '.join(f'{p} {d} s' for p, d in PHASES.items())})")
    print(f"Ipopt: {stats['return_status']} after {stats['iter_count']} iterations, "
          f"{seconds:.1f} s")
    print(f"base: x {X[0, 0]:.3f} -> {X[0, -1]:.3f} m, height {X[2, 0]:.3f} m standing, "
          f"{X[2].max():.3f} m at the apex")
    fz = F[2].reshape(-1, 4).sum(axis=1)  # total vertical force per stance interval
    print(f"vertical foot force: peak {fz.max():.1f} N = {fz.max() / weight:.2f} x weight; "
          f"friction use max |f_t|/fz = "
          f"{np.max(np.hypot(F[0], F[1]) / np.maximum(F[2], 1e-9)):.3f} (mu {MU})")
    print(f"peak |tau| {np.abs(U).max():.2f} N m (limit {robot.effort_limits[6]} N m)")
    # the held feet drift only by the Euler step's error
    heights = np.array([np.array(feet(X[: robot.nq, k]))[2] for k in range(N + 1)])
    held = [k for k in range(N + 1) if k in stance_intervals or k == N]
    print(f"largest foot height while held: {np.abs(heights[held]).max() * 1000:.2f} mm")
    if save is not None:  # the jump, for `casdyn show solo12 --floating-base --trajectory FILE`
        forces = np.zeros((N + 1, 4, 3))  # per knot and foot, world axes; zero in flight
        for j, k in enumerate(stance_intervals):
            forces[k] = np.asarray(F)[:, 4 * j : 4 * j + 4].T
        np.savez(save, t=t, q=X[: robot.nq].T, v=X[robot.nq :].T, tau=U.T, forces=forces,
                 contacts=np.array(FEET))
        print(f"trajectory saved to {save}")
    if plot_dir is not None:
        path = Path(plot_dir) / "quadruped_jump.png"
        plot(path, robot, t, X, U, F, phase, stance_intervals)
        print(f"plot: {path}")


def plot(path, robot, t, X, U, F, phase, stance_intervals):
    """Base height and forward position, foot forces and joint torques, phases shaded."""
    plt = pyplot()

    fig, (base, forces, torques) = plt.subplots(3, 1, sharex=True, figsize=(9, 9),
                                                constrained_layout=True)
    h = t[1] - t[0]
    stance_intervals = list(stance_intervals)
    flight = [k for k in range(len(phase)) if phase[k] == "flight"]
    for ax in (base, forces, torques):
        ax.axvspan(t[flight[0]], t[flight[-1] + 1], color="tab:blue", alpha=0.08,
                   label="flight (no contact)")
        ax.grid(True)
    base.plot(t, X[2], label="base height z [m]")
    base.plot(t, X[0], label="base forward position x [m]")
    base.set_ylabel("base [m]")
    base.legend(fontsize="small", loc="upper left")
    base.set_title("solo12 forward jump: push-off, flight, landing")
    for k, foot in enumerate(FEET):
        fz = np.full(len(phase), np.nan)  # no force (no line) in flight
        fz[stance_intervals] = F[2, k::4]
        forces.plot(*_held(t, fz), label=f"{foot} fz")
    forces.set_ylabel("vertical foot force [N]")
    forces.set_title("left and right feet push alike (the jump is symmetric)", fontsize=9)
    forces.legend(fontsize="small", ncol=2, loc="upper right")
    for j, name in enumerate(robot.joint_names[1:]):
        torques.plot(*_held(t, U[j]), label=name, linewidth=1)
    limit = robot.effort_limits[6]
    torques.axhline(limit, color="tab:red", linestyle="--", label="torque limit")
    torques.axhline(-limit, color="tab:red", linestyle="--")
    torques.set_ylabel("joint torque [N m]")
    torques.set_xlabel("time [s]")
    torques.set_xlim(t[0], t[-1] + h)
    torques.legend(fontsize="x-small", ncol=5, loc="lower left")
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _held(t, values):
    """Points drawing each interval's value held from t_k to t_k+1 (NaN: nothing drawn)."""
    return np.repeat(t, 2)[1:-1], np.repeat(values, 2)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50 ms steps (the tests)")
    parser.add_argument("--plot-dir", help="save quadruped_jump.png here")
    parser.add_argument("--save", help="save t, q, v, tau, forces, contacts to this .npz")
    arguments = parser.parse_args()
    main(arguments.plot_dir, 0.05 if arguments.quick else STEP, arguments.save)
