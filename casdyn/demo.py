"""``casdyn demo``: what casdyn computes for a shipped robot, with real numbers."""

from __future__ import annotations

import numpy as np

from . import load_robot

PAYLOAD_KG = 2.0


def run(name: str = "ur5e") -> None:
    np.set_printoptions(precision=4, suppress=True)
    robot = load_robot(name)
    tool = robot.model.leaf_bodies()[-1]
    print(f"{robot}  (tool frame {tool!r}, {robot.mass:.3f} kg)")
    q = robot.random_configuration(0)
    qd = np.full(robot.nv, 0.5)
    print(f"state: q = {q}\n       qd = {qd}")

    weight = np.array([0, 0, 0, *(PAYLOAD_KG * robot.gravity)])  # base frame, through the tool
    position = robot.get_transform(q, tool)[:3, 3]
    weight[:3] = np.cross(position, weight[3:])
    fext = robot.external_force(tool, weight)
    print(f"\nholding torque, robot alone      [N m]: {robot.gravity_torque(q)}")
    print(f"holding torque, {PAYLOAD_KG} kg at {tool:<8} [N m]: "
          f"{robot.inverse_dynamics(q, fext=fext)}")

    tau = robot.inverse_dynamics(q, qd, np.zeros(robot.nv), fext)
    qdd = robot.forward_dynamics(q, qd, tau, fext)
    print(f"forward(inverse(qdd = 0)) = {qdd}  (round trip)")

    dq, _, dtau = robot.forward_dynamics_derivatives(q, qd, tau, fext)
    print(f"\nMPC linearisation: d qdd/dq, d qdd/dqd, d qdd/dtau are {dq.shape} each; "
          f"largest eigenvalue of M^-1 = {np.linalg.eigvalsh(dtau).max():.4g}")

    print("\nas CasADi functions (SX graph sizes, in instructions):")
    for function_name in ("inverse_dynamics", "forward_dynamics"):
        full = robot.function(function_name).n_instructions()
        lean = robot.function(function_name, fext=False).n_instructions()
        print(f"  {function_name:<17} {full:>6} with the fext input, {lean:>6} without")
    print(f"  {'mass_matrix':<17} {robot.function('mass_matrix').n_instructions():>6}")
