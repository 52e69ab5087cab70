"""TALOS (example-robot-data's ``talos_reduced``) pushed sideways while standing on its two flat
feet, brought back to rest by whole-body trajectory optimisation, then checked by casdyn's own
contact dynamics.

The problem is a :class:`casdyn.ocp.ContactOCP` with 6-D feet (a wrench per sole: friction
pyramid mu 0.7 and the centre of pressure inside a 20 x 10 cm sole), inverse dynamics with
the accelerations and wrenches as variables, torques within the URDF's limits, solved by
fatrop and by Ipopt from the standing guess. The check rolls the optimal torques out through
``contact_dynamics`` (the same semi-implicit Euler step) and compares the states.

Run:  python examples/humanoid_balance.py [--quick] [--json] [--solver fatrop|ipopt|both]
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
from casdyn.ocp import ContactModel, ContactOCP, TrackingCost

FEET = ("left_sole_link", "right_sole_link")
SOLE = (0.1, 0.05)  # m, half length and half width
DT, KNOTS, QUICK_KNOTS = 0.04, 20, 8
PUSH = 0.2  # m/s, the base's sideways velocity after the push
# TALOS's half-sitting pose (example-robot-data's SRDF), by joint name prefix
HALF_SITTING = {
    "torso": [0.0, 0.006761], "head": [0.0, 0.0],
    "arm_left": [0.25847, 0.173046, -0.0002, -0.525366, 0.0, 0.0, 0.1],
    "arm_right": [-0.25847, -0.173046, 0.0002, -0.525366, 0.0, 0.0, 0.1],
    "gripper": [0.0, 0.0],
    "leg_left": [0.0, 0.0, -0.411354, 0.859395, -0.448041, -0.001708],
    "leg_right": [0.0, 0.0, -0.411354, 0.859395, -0.448041, -0.001708],
}


def load_talos():
    try:
        root = Path(distribution("example-robot-data").locate_file(
            "cmeel.prefix/share/example-robot-data/robots"))
    except PackageNotFoundError as exc:
        raise CasdynError("this example needs TALOS's URDF: pip install example-robot-data"
                          ) from exc
    return casdyn.load_urdf((root / "talos_data/robots/talos_reduced.urdf").read_text(),
                            floating_base=True)


def half_sitting(robot) -> np.ndarray:
    """The half-sitting configuration, the soles flat on the ground (z = 0)."""
    q = np.asarray(robot.home_configuration(), dtype=float)
    names = list(robot.joint_names[1:])
    for prefix, values in HALF_SITTING.items():
        joints = [j for j in names if j.startswith(prefix)]
        for joint, value in zip(joints, values, strict=True):
            q[7 + names.index(joint)] = value
    q[2] -= min(robot.get_transform(q, foot)[2, 3] for foot in FEET)
    return q


def pushed_state(robot, q: np.ndarray) -> np.ndarray:
    """``[q; v]`` just after a sideways push: the base's velocity with the soles at rest
    (the push projected on the null space of the feet's Jacobian)."""
    v = np.zeros(robot.nv)
    v[4] = PUSH  # base y velocity, base frame
    J = np.vstack([robot.geometric_jacobian(q, foot) for foot in FEET])
    v = v - np.linalg.pinv(J) @ (J @ v)
    return np.r_[q, v]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_KNOTS} knots")
    parser.add_argument("--json", action="store_true", help="last line: results as JSON")
    parser.add_argument("--solver", choices=("fatrop", "ipopt", "both"), default="both")
    arguments = parser.parse_args(argv)
    robot = load_talos()
    N = QUICK_KNOTS if arguments.quick else KNOTS
    model = ContactModel(robot, FEET, dt=DT, mu=0.7, contact="6d", sole=SOLE)
    nu = model.nu
    cost = TrackingCost(q_weight=np.r_[[10.0] * 3, [10.0] * 3, np.full(nu, 1.0)],
                        v_weight=np.r_[[1.0] * 6, np.full(nu, 0.1)],
                        u_weight=np.full(nu, 0.01), terminal=3.0)
    ocp = ContactOCP(model, cost, [(1, 1)] * N, dynamics="inverse")
    q0 = half_sitting(robot)
    x0 = pushed_state(robot, q0)
    u0 = model.standing_torques(q0)
    P = np.tile(cost.pack(model, q0, np.zeros(robot.nv), u0, np.zeros(2), np.zeros(2))[:, None],
                (1, N + 1))
    parameters = np.r_[x0, P.ravel(order="F")]
    results = []
    for name in ("fatrop", "ipopt") if arguments.solver == "both" else (arguments.solver,):
        started = time.perf_counter()
        solver = ocp.solver(name)
        built = time.perf_counter() - started
        started = time.perf_counter()
        solution = solver(x0=ocp.guess(x0, u0), p=parameters, lbx=ocp.lbz, ubx=ocp.ubz,
                          lbg=ocp.lbg, ubg=ocp.ubg)
        seconds = time.perf_counter() - started
        stats = solver.stats()
        X, W = ocp.split(solution["x"].full().ravel())
        # the check: casdyn's contact dynamics driven by the optimal torques
        x = x0.copy()
        drift = 0.0
        for k in range(N):
            x = np.asarray(model.step((1, 1))(x, W[:nu, k])[0]).ravel()
            drift = max(drift, float(np.abs(x - X[:, k + 1]).max()))
        wrenches = ocp.forces(X, W)
        cop = np.max(np.abs(wrenches[:, 1, :]) / wrenches[:, 5, :])  # |n_y| / fz
        result = {"solver": name, "success": bool(stats["success"]),
                  "iterations": int(stats["iter_count"]), "solve_s": seconds,
                  "build_s": built, "cost": float(solution["f"]),
                  "rollout_deviation": drift, "final_base_speed": float(
                      np.linalg.norm(X[robot.nq + 3 : robot.nq + 6, -1])),
                  "max_cop_x_m": float(cop), "peak_torque_ratio": float(np.max(
                      np.abs(W[:nu]) / robot.effort_limits[6:, None]))}
        results.append(result)
        print(f"{name:6s}: {'converged' if result['success'] else 'FAILED'} in "
              f"{result['iterations']} iterations, {seconds:.2f} s (build {built:.1f} s); "
              f"contact-dynamics rollout within {drift:.1e} of the plan; base speed "
              f"{PUSH} -> {result['final_base_speed']:.4f} m/s; CoP |x| <= "
              f"{result['max_cop_x_m'] * 100:.1f} cm")
    if arguments.json:
        print(json.dumps(results))
    return results


if __name__ == "__main__":
    main()
