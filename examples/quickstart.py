"""A tour of casdyn on the shipped UR5e: load, evaluate, use symbolically.

Run:  python examples/quickstart.py
"""

import casadi as ca
import numpy as np

import casdyn

np.set_printoptions(precision=4, suppress=True)

robot = casdyn.load_robot("ur5e")
print(robot)
print("joints:", ", ".join(robot.joint_names))
print("bodies:", ", ".join(robot.body_names))
print(f"total mass {robot.mass:.3f} kg, gravity {robot.gravity} m/s^2 (base frame)")

q = np.array([0.0, -1.2, 1.4, -1.6, -1.57, 0.3])
qd = np.array([0.2, -0.1, 0.3, 0.0, 0.5, -0.4])

# Holding a 2 kg payload at the tool: a force of -19.6 N along the base z axis at tool0.
R = robot.get_transform(q, "tool0")[:3, :3]
payload = np.concatenate([np.zeros(3), R.T @ [0, 0, -2 * 9.81]])  # in tool0's frame
fext = robot.external_force("tool0", payload, q)

tau_hold = robot.inverse_dynamics(q, fext=fext)
print("\ntorque to hold the pose, no payload  [N m]:", robot.gravity_torque(q))
print("torque to hold the pose, 2 kg payload [N m]:", tau_hold)

qdd = robot.forward_dynamics(q, qd, tau_hold, fext)
print("\nreleasing those torques while moving, qdd [rad/s^2]:", qdd)
print("round trip |ID(FD(tau)) - tau| =",
      np.abs(robot.inverse_dynamics(q, qd, qdd, fext) - tau_hold).max())

M = robot.mass_matrix(q)
print("\nmass matrix diagonal [kg m^2]:", np.diag(M))
print("velocity product C(q, qd) qd [N m]:", robot.velocity_product(q, qd))

T = robot.get_transform(q, "tool0")
J = robot.geometric_jacobian(q, "tool0")
print("\ntool0 position in the base frame [m]:", T[:3, 3])
print("tool0 twist [w; v] for qd:", J @ qd)
com, com_jacobian = robot.center_of_mass(q)
print("centre of mass [m]:", com)

# The same dynamics as a casadi.Function, and inside an optimisation problem.
f = robot.function("inverse_dynamics")
print("\n", f, f"({f.n_instructions()} SX instructions)")

opti = ca.Opti()
x = opti.variable(robot.nq)
lower, upper = robot.position_limits
# the least holding torque (and a small pull towards q, which fixes the free wrist angle) ...
target = [0.4, 0.2, 0.3]
opti.minimize(ca.sumsqr(robot.inverse_dynamics(x)) + 0.1 * ca.sumsqr(x - q))
opti.subject_to(robot.get_transform(x, "tool0")[:3, 3] == target)  # ... at a point
opti.subject_to(opti.bounded(lower, x, upper))
opti.set_initial(x, q)
opti.solver("ipopt", {"print_time": False}, {"print_level": 0, "sb": "yes"})
solution = opti.solve()
best = solution.value(x)
print(f"pose holding tool0 at {target} with least torque:", best)
print("its holding torque [N m]:", robot.gravity_torque(best))
