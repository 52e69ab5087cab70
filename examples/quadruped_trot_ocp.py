"""One trot step of the shipped solo12 as an offline optimal control problem, solved from a
standing guess by Ipopt and by fatrop, with the dynamics written two ways.

30 intervals of 20 ms: 0.1 s on four feet, 0.2 s on FL+HR (FR and HL swing 5 cm high), 0.2 s
on FR+HL, 0.1 s on four feet; the base is asked to move forward at 0.3 m/s. The problem is
:class:`casdyn.ocp.ContactOCP`: variables stage by stage (fatrop finds the stages itself),
friction pyramids (mu 0.7) on the held feet, torques within 2.7 N m, the NLP's functions
compiled by CasADi's JIT. ``--dynamics inverse`` (default) has the accelerations and the
foot forces as variables (``M a + h = S^T u + J_c^T f``), ``forward`` steps casdyn's contact
dynamics.

Run:  python examples/quadruped_trot_ocp.py [--solver ipopt|fatrop|both]
      [--dynamics inverse|forward|both] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from quadruped_mpc import FEET, STANDING_LEGS  # the feet and the standing pose, in one place

import casdyn
from casdyn.ocp import ContactModel, ContactOCP, TrackingCost

DT, SPEED, SWING_HEIGHT, MU = 0.02, 0.3, 0.05, 0.7
PHASES = (((1, 1, 1, 1), 5), ((1, 0, 0, 1), 10), ((0, 1, 1, 0), 10), ((1, 1, 1, 1), 5))
QUICK_PHASES = (((1, 1, 1, 1), 2), ((1, 0, 0, 1), 4), ((0, 1, 1, 0), 4), ((1, 1, 1, 1), 2))
COST = dict(q_weight=np.r_[[1.0, 5.0, 20.0], [20.0, 20.0, 10.0], np.full(12, 2.0)],
            v_weight=np.r_[[1.0, 1.0, 1.0], [5.0, 5.0, 2.0], np.full(12, 0.05)],
            u_weight=np.full(12, 0.1), foot_weight=50.0, terminal=3.0)


def standing(robot) -> np.ndarray:
    """The standing configuration, feet on the ground (z = 0)."""
    q = np.r_[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, STANDING_LEGS]
    q[2] = -min(robot.get_transform(q, foot)[2, 3] for foot in FEET)
    return q


def trot_problem(robot, phases=PHASES, dynamics="inverse", cone="pyramid"):
    """(ocp, x_init, parameters, guess) of the trot step."""
    model = ContactModel(robot, FEET, dt=DT, damping=0.0 if dynamics == "inverse" else 20.0,
                         mu=MU)
    cost = TrackingCost(**COST)
    stance = [mask for mask, count in phases for _ in range(count)]
    ocp = ContactOCP(model, cost, stance, dynamics=dynamics, cone=cone)
    q0 = standing(robot)
    u0 = model.standing_torques(q0)
    x_init = np.r_[q0, np.zeros(robot.nv)]
    N = len(stance)
    columns = []
    for k in range(N + 1):
        q_ref = q0.copy()
        q_ref[0] = SPEED * k * DT
        v_ref = np.zeros(robot.nv)
        v_ref[3] = SPEED
        swing = np.zeros(len(FEET))
        weight = np.zeros(len(FEET))
        if k < N:
            start = max(j for j in range(k + 1) if j == 0 or stance[j] != stance[j - 1])
            end = min([j for j in range(k + 1, N) if stance[j] != stance[k]] + [N])
            s = (k - start) / max(end - start, 1)
            for i, held in enumerate(stance[k]):
                if not held:
                    swing[i] = SWING_HEIGHT * 16 * s**2 * (1 - s) ** 2
                    weight[i] = 1.0
        columns.append(cost.pack(model, q_ref, v_ref, u0, swing, weight))
    P = np.stack(columns, axis=1)
    parameters = np.r_[x_init, P.ravel(order="F")]
    return ocp, x_init, parameters, ocp.guess(x_init, u0)


def solve(ocp, parameters, guess, name: str) -> dict:
    """Solve once (the first call also builds and compiles), report iterations and time."""
    started = time.perf_counter()
    solver = ocp.solver(name, options={"ipopt": {"max_iter": 300}} if name == "ipopt" else
                        {"fatrop": {"max_iter": 300}})
    built = time.perf_counter() - started
    started = time.perf_counter()
    solution = solver(x0=guess, p=parameters, lbx=ocp.lbz, ubx=ocp.ubz, lbg=ocp.lbg,
                      ubg=ocp.ubg)
    seconds = time.perf_counter() - started
    stats = solver.stats()
    z = solution["x"].full().ravel()
    g = solution["g"].full().ravel()
    violation = float(np.max(np.r_[ocp.lbg - g, g - ocp.ubg, 0.0]))
    return {"solver": name, "dynamics": ocp.dynamics, "success": bool(stats["success"]),
            "iterations": int(stats.get("iter_count", -1)), "solve_s": seconds,
            "build_s": built, "cost": float(solution["f"]), "violation": violation, "z": z}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solver", choices=("ipopt", "fatrop", "both"), default="both")
    parser.add_argument("--dynamics", choices=("inverse", "forward", "both"),
                        default="inverse")
    parser.add_argument("--quick", action="store_true", help="12 intervals (the tests)")
    parser.add_argument("--json", action="store_true", help="last line: results as JSON")
    arguments = parser.parse_args(argv)
    robot = casdyn.load_robot("solo12", floating_base=True)
    solvers = ("ipopt", "fatrop") if arguments.solver == "both" else (arguments.solver,)
    kinds = ("inverse", "forward") if arguments.dynamics == "both" else (arguments.dynamics,)
    results = []
    for dynamics in kinds:
        ocp, _, parameters, guess = trot_problem(
            robot, QUICK_PHASES if arguments.quick else PHASES, dynamics)
        for name in solvers:
            result = solve(ocp, parameters, guess, name)
            X, _ = ocp.split(result["z"])
            result["distance_m"] = float(X[0, -1] - X[0, 0])
            results.append(result)
            print(f"{dynamics:7s} {name:6s}: {'converged' if result['success'] else 'FAILED'} "
                  f"in {result['iterations']} iterations, {result['solve_s']:.2f} s "
                  f"(build {result['build_s']:.1f} s); cost {result['cost']:.4f}, "
                  f"constraint violation {result['violation']:.1e}, base moved "
                  f"{result['distance_m']:.3f} m")
    if arguments.json:
        print(json.dumps([{k: v for k, v in r.items() if k != "z"} for r in results]))
    return results


if __name__ == "__main__":
    main()
