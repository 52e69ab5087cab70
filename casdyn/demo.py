"""``casdyn demo``: what casdyn computes for a shipped robot, with real numbers.

An arm (the default ur5e): holding torques with a payload, the FD/ID round trip, the MPC
linearisation. A legged robot that ships a ``standing`` configuration (solo12): the free
robot standing on its feet, its foot forces and joint torques at rest.
"""

from __future__ import annotations

import numpy as np

from . import Contact, load_robot
from .tree import RigidBodyTree

PAYLOAD_KG = 2.0


def run(name: str = "ur5e") -> None:
    np.set_printoptions(precision=4, suppress=True)
    robot = load_robot(name)
    if "standing" in robot.named_configurations:
        _stand(load_robot(name, floating_base=True))
    else:
        _arm(robot)


def standing(robot: RigidBodyTree, q: np.ndarray, feet: tuple[str, ...]
             ) -> tuple[np.ndarray, np.ndarray]:
    """``(forces, tau)`` holding the free ``robot`` at rest at ``q`` on point contacts at the
    origins of ``feet``: ``forces`` (len(feet), 3) on the robot, base-frame (world) axes;
    ``tau`` (nv - 6,) the joint torques. At rest ``g(q) = S^T tau + J_c^T f``; the free
    joint's six rows fix ``f`` up to internal forces, and the least-squares (minimum-norm)
    ``f`` of those rows is taken: no optimiser, no friction cone.
    """
    g = robot.gravity_torque(q)
    J = np.vstack([robot.geometric_jacobian(q, foot)[3:] for foot in feet])  # linear rows
    forces = np.linalg.lstsq(J[:, :6].T, g[:6], rcond=None)[0]
    return forces.reshape(len(feet), 3), (g - J.T @ forces)[6:]


def _stand(robot: RigidBodyTree) -> None:
    q = robot.named_configurations["standing"]
    feet = robot.model.leaf_bodies()
    weight = robot.mass * np.linalg.norm(robot.gravity)
    print(f"{robot}\n{robot.mass:.4f} kg, weight m g = {weight:.6f} N; pose 'standing' "
          f"(its SRDF): base at z = {q[2]:.4f} m")
    for foot in feet:
        print(f"  {foot:<8} at {robot.get_transform(q, foot)[:3, 3]} m (world)")

    forces, tau = standing(robot, q, feet)
    print("\nstanding at rest on four point contacts (least-squares foot forces, world axes):")
    for foot, force in zip(feet, forces, strict=True):
        print(f"  {foot:<8} f = [{force[0]:+.6f} {force[1]:+.6f} {force[2]:+.6f}] N")
    total = forces.sum(axis=0)
    print(f"  sum      f = [{total[0]:+.6f} {total[1]:+.6f} {total[2]:+.6f}] N "
          f"(-m g = {-robot.mass * robot.gravity[2]:.6f} N up)")
    share = np.max(np.abs(tau) / robot.effort_limits[6:])
    print(f"joint torques [N m]: {tau}\n  largest |tau| is {share:.1%} of the effort limit")

    qdd, held = robot.contact_dynamics(q, np.zeros(robot.nv), np.r_[np.zeros(6), tau],
                                       [Contact(foot) for foot in feet])
    print(f"\ncontact_dynamics(q, 0, tau, feet): max |qdd| = {np.max(np.abs(qdd)):.2e}, "
          f"forces differ by {np.max(np.abs(held - forces)):.2e} N (the robot stays put)")
    size = robot.function("contact_dynamics", contacts=feet).n_instructions()
    print(f"as a CasADi function for MPC: contact_dynamics is {size} SX instructions")


def _arm(robot: RigidBodyTree) -> None:
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
