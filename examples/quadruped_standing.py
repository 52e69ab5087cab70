"""The shipped solo12 quadruped standing on four point feet: the joint torques and contact
forces that hold a given pose still under gravity.

The base is tilted and the legs bent unevenly, so the feet stand at different heights (on
steps of level ground, the friction cones vertical) and do not share the weight equally. With
``q`` fixed and the robot at rest, inverse dynamics with the feet's forces as external forces
(MATLAB's convention: base-frame spatial forces about the origin, built by
``external_force``) must need no wrench at the unactuated base and only the motors' torques at
the joints. An Opti NLP (Ipopt) finds the least squared torques with every force inside its
exact friction cone (mu = 0.7) and every torque within the motors' 2.7 N m. The result is
checked two ways: the vertical forces carry the robot's weight, and ``contact_dynamics``
with those torques keeps the robot still and returns the same forces.

Run:  python examples/quadruped_standing.py [--plot-dir DIR]
"""

import argparse
from pathlib import Path

import casadi as ca
import numpy as np

import casdyn
from casdyn import Contact
from casdyn.plotting import pyplot

MU = 0.7  # friction coefficient (rubber feet on a floor)
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
# joint angles of a crouched stance ([HAA, HFE, KFE] per leg, front legs then hind legs)
LEGS = [0.1, 0.7, -1.5, 0.1, 0.9, -1.6, 0.1, -0.6, 1.3, 0.1, -0.9, 1.7]
BASE_ORIENTATION = (0.1, 0.05)  # roll and pitch of the base [rad]


def standing_pose(robot: casdyn.RigidBodyTree) -> np.ndarray:
    """``q`` with the legs at LEGS, the base tilted, and the base height chosen so that the
    lowest foot stands at z = 0; the others stand on steps at their own heights."""
    roll, pitch = BASE_ORIENTATION
    qw, qx, qy, qz = (np.cos(roll / 2) * np.cos(pitch / 2), np.sin(roll / 2) * np.cos(pitch / 2),
                      np.cos(roll / 2) * np.sin(pitch / 2), -np.sin(roll / 2) * np.sin(pitch / 2))
    q = np.r_[0.0, 0.0, 0.0, qw, qx, qy, qz, LEGS]
    feet_z = [robot.get_transform(q, foot)[2, 3] for foot in FEET]
    q[2] = -min(feet_z)
    return q


def solve(robot: casdyn.RigidBodyTree, q: np.ndarray):
    """The joint torques (12) and foot forces (4 x 3, world frame) that hold ``q`` still."""
    opti = ca.Opti()
    forces = opti.variable(3, len(FEET))
    tau = opti.variable(robot.nv - 6)
    fext = 0
    for k, foot in enumerate(FEET):
        p = robot.get_transform(q, foot)[:3, 3]  # the foot in the world frame
        f = forces[:, k]
        # a force f at p: the base-frame spatial force [p x f; f] (RST's convention)
        fext = fext + robot.external_force(foot, ca.vertcat(ca.cross(p, f), f))
    needed = robot.inverse_dynamics(q, None, None, fext)  # MX: torques to stay at rest
    opti.subject_to(needed[:6] == 0)  # the base has no motor
    opti.subject_to(needed[6:] == tau)
    limit = robot.effort_limits[6:]
    opti.subject_to(opti.bounded(-limit, tau, limit))
    for k in range(len(FEET)):
        fx, fy, fz = forces[0, k], forces[1, k], forces[2, k]
        opti.subject_to(fz >= 0)
        opti.subject_to(fx**2 + fy**2 <= (MU * fz) ** 2)  # the exact friction cone
    opti.minimize(ca.sumsqr(tau))
    weight = robot.mass * -robot.gravity[2]
    opti.set_initial(forces[2, :], weight / len(FEET))
    opti.solver("ipopt", {"print_time": False}, {"print_level": 0, "sb": "yes"})
    solution = opti.solve()
    return solution.value(tau), solution.value(forces).T, solution.stats()["return_status"]


def main(plot_dir=None):
    robot = casdyn.load_robot("solo12", floating_base=True)
    q = standing_pose(robot)
    tau, forces, status = solve(robot, q)
    weight = robot.mass * -robot.gravity[2]
    print(f"{robot.name}: {robot.mass:.3f} kg, weight {weight:.3f} N; base at height "
          f"{q[2]:.3f} m, roll/pitch {BASE_ORIENTATION} rad")
    print(f"Ipopt: {status}")
    print("foot forces [N] (world frame, acting on the robot):")
    for foot, f in zip(FEET, forces, strict=True):
        z = robot.get_transform(q, foot)[2, 3]
        print(f"  {foot} (step at z = {z:.3f} m): fx {f[0]:+.3f}  fy {f[1]:+.3f}  "
              f"fz {f[2]:+.3f}   |f_t| / fz = {np.hypot(f[0], f[1]) / f[2]:.3f} (mu {MU})")
    print(f"sum of vertical forces {forces[:, 2].sum():.4f} N = weight {weight:.4f} N; "
          f"sum of horizontal forces {np.abs(forces[:, :2].sum(axis=0)).max():.1e} N")
    print("joint torques [N m]:", np.round(tau, 3), f"(limit {robot.effort_limits[6]} N m)")
    # check: held by its feet with these torques, the robot stays still
    contacts = [Contact(foot) for foot in FEET]
    qdd, held = robot.contact_dynamics(q, None, np.r_[np.zeros(6), tau], contacts)
    print(f"contact_dynamics with these torques: |qdd| = {np.abs(qdd).max():.1e}, "
          f"forces differ by {np.abs(held - forces).max():.1e} N")
    if plot_dir is not None:
        path = Path(plot_dir) / "quadruped_standing.png"
        feet = np.array([robot.get_transform(q, foot)[:3, 3] for foot in FEET])
        plot(path, robot, feet, forces, tau, robot.center_of_mass(q)[0])
        print(f"plot: {path}")


def plot(path, robot, feet, forces, tau, com):
    """Top view of the support polygon with the forces, and the joint torques."""
    plt = pyplot()

    fig, (top, bars) = plt.subplots(1, 2, figsize=(11, 4.8), constrained_layout=True,
                                    gridspec_kw={"width_ratios": [1, 1.3]})
    order = [0, 1, 3, 2, 0]  # FL, FR, HR, HL: around the polygon
    top.fill(feet[order, 0], feet[order, 1], color="tab:green", alpha=0.15,
             label="support polygon")
    scale = 0.1 / np.abs(forces[:, :2]).max()  # metres per newton for the horizontal parts
    for foot, p, f in zip(FEET, feet, forces, strict=True):
        top.annotate("", p[:2] + scale * f[:2], p[:2],
                     arrowprops={"arrowstyle": "->", "color": "tab:red"})
        top.text(p[0], p[1] + 0.02, f"{foot}\nfz = {f[2]:.2f} N", ha="center", fontsize=8)
    top.plot(feet[:, 0], feet[:, 1], "ko", label="feet")
    top.plot(com[0], com[1], "b*", markersize=12, label="centre of mass (projected)")
    top.plot([], [], color="tab:red", label=f"horizontal force (x{scale:.2f} m/N)")
    top.set_xlabel("x [m]")
    top.set_ylabel("y [m]")
    top.set_aspect("equal")
    top.margins(0.25)
    top.grid(True)
    top.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    top.set_title(f"solo12 standing: foot forces, mu = {MU}")
    names = robot.joint_names[1:]
    bars.bar(range(len(names)), tau, color="tab:blue", label="joint torque")
    limit = robot.effort_limits[6]
    for sign in (1, -1):
        bars.axhline(sign * limit, color="tab:red", linestyle="--",
                     label="torque limit" if sign > 0 else None)
    bars.set_xticks(range(len(names)), names, rotation=60, fontsize=8)
    bars.set_ylabel("torque [N m]")
    bars.grid(True, axis="y")
    bars.legend(fontsize="small")
    bars.set_title("joint torques that hold the pose")
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot-dir", help="save quadruped_standing.png here")
    main(parser.parse_args().plot_dir)
