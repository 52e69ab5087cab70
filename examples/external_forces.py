"""External forces on the UR5e, with MATLAB's conventions, and what the torques mean.

1. Holding a payload: its weight acts at the tool; the extra torque is -J^T f.
2. Pushing on a surface: the tool presses along its own z axis; the wall pushes back.
3. The same force written in the base frame: then the moment about the base origin
   (p x f) must be included by the caller.

Run:  python examples/external_forces.py
"""

import numpy as np

import casdyn

np.set_printoptions(precision=3, suppress=True)


def main():
    robot = casdyn.load_robot("ur5e")
    q = np.array([0.3, -1.1, 1.5, -1.9, -1.57, 0.0])
    T = robot.get_transform(q, "tool0")
    R, p = T[:3, :3], T[:3, 3]
    J = robot.geometric_jacobian(q, "tool0")
    print(f"UR5e at q = {q}; tool0 at {p} m in the base frame, its z axis {R[:, 2]}")
    g = robot.gravity_torque(q)
    print(f"\nholding the arm alone:              tau = {g} N m")

    # 1. a 3 kg payload: its weight, written in tool0's frame, acting at tool0's origin
    weight = 3.0 * robot.gravity  # base frame
    fext = robot.external_force("tool0", np.concatenate([np.zeros(3), R.T @ weight]), q)
    tau = robot.inverse_dynamics(q, fext=fext)
    print(f"holding a 3 kg payload at tool0:     tau = {tau} N m")
    print(f"  the payload's share, tau - g       = {tau - g}")
    print(f"  equals -J^T [0; m g] (J of tool0)  = {-J.T @ np.concatenate([np.zeros(3), weight])}")

    # 2. pressing 30 N along the tool's z axis: the surface pushes back with -30 N on the tool
    reaction = np.array([0, 0, 0, 0, 0, -30.0])  # tool0 frame: [moment; force]
    fext = robot.external_force("tool0", reaction, q)
    tau = robot.inverse_dynamics(q, fext=fext)
    print(f"\npressing 30 N along tool z:          tau = {tau} N m")
    print(f"  the contact's share, tau - g       = {tau - g}")
    print(f"  fext row of tool0 (base frame, moment about the base origin) = "
          f"{fext[robot.body_names.index('tool0')]}")

    # 3. the same reaction written in the base frame: the caller adds p x f to the moment
    f_base = R @ reaction[3:]
    by_hand = robot.external_force("tool0", np.concatenate([np.cross(p, f_base), f_base]))
    print(f"\nsame force given in the base frame (moment p x f included): "
          f"tau = {robot.inverse_dynamics(q, fext=by_hand)} N m")
    forgot = robot.external_force("tool0", np.concatenate([np.zeros(3), f_base]))
    print(f"...and with the moment forgotten (a force through the base origin instead): "
          f"tau = {robot.inverse_dynamics(q, fext=forgot)} N m")

    # forces add: payload and contact at once, plus a push on the forearm
    total = (robot.external_force("tool0", np.concatenate([np.zeros(3), R.T @ weight]), q)
             + fext + robot.external_force("forearm_link", [0, 0, 0, 0, 10.0, 0], q))
    print(f"\npayload + contact + 10 N on the forearm (its own y axis): "
          f"tau = {robot.inverse_dynamics(q, fext=total)} N m")
    return total


if __name__ == "__main__":
    main()
