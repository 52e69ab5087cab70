"""What an MJCF model says and casdyn does not model, named in one warning."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .mjcf_geometry import colliding, mujoco_pairs

CONNECT, WELD = 0, 1  # mjtEq


def unmodelled(m, label: str, joint_names: list[str], body_names: list[str],
               damping: Sequence[str] = (), frictionloss: Sequence[str] = ()) -> list[str]:
    """A warning (one message, or none) naming what the compiled model ``m`` has and casdyn
    does not model: tendons, actuators, other equalities and the softness of connect and
    weld, springs, gravity compensation, fluid forces, mocap motion, contact forces and
    joint-limit constraints; and the ``damping`` and ``frictionloss`` of the joints named
    (casdyn's names), which the loader leaves out without ``joint_friction=True``."""
    parts = []
    dropped = [f"{what} of {', '.join(map(repr, names))}"
               for what, names in (("damping", damping), ("frictionloss", frictionloss)) if names]
    if dropped:
        parts.append(f"joint {' and '.join(dropped)} (load_mjcf(..., joint_friction=True) "
                     "adds them to every dynamics function, as MuJoCo applies them)")
    if m.ntendon:
        parts.append(f"{m.ntendon} tendon(s)")
    if m.nu:
        parts.append(f"{m.nu} actuator(s) (casdyn's tau is the joint force itself)")
    other = [k for k in range(m.neq) if m.eq_type[k] not in (CONNECT, WELD)]
    if other:
        parts.append(f"{len(other)} equality constraint(s) on joints, tendons or flexes")
    if any(m.eq_type[k] in (CONNECT, WELD) for k in range(m.neq)):
        parts.append("the softness of connect and weld equalities (solref, solimp: casdyn "
                     "holds them exactly) and a weld's torquescale")
    stiff = [joint_names[j] for j in range(m.njnt) if m.jnt_stiffness[j]]
    if stiff:
        parts.append(f"joint stiffness of {', '.join(map(repr, stiff))}")
    if np.any(m.body_gravcomp):
        parts.append("gravity compensation (gravcomp)")
    if m.opt.density or m.opt.viscosity or np.any(m.opt.wind):
        parts.append("fluid forces (density, viscosity, wind)")
    mocap = [body_names[b] for b in range(m.nbody) if m.body_mocapid[b] >= 0]
    if mocap:
        parts.append(f"mocap bodies {', '.join(map(repr, mocap))} (fixed here)")
    if len(mujoco_pairs(m, colliding(m))):
        parts.append("contact forces between geoms (MuJoCo's soft contacts; the geoms "
                     "are robot.collision_geometry, their pairs robot.collision_pairs)")
    if np.any(m.jnt_limited):
        parts.append("joint-limit constraints (the ranges are the position limits)")
    return [f"{label}: casdyn does not model: {'; '.join(parts)}"] if parts else []
