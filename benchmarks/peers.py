"""The CasADi peers, urdf2casadi and adam: fixed-base SX Functions of (q, qd, x), and adam's
floating-base Functions as it builds them."""

from __future__ import annotations

import os
import tempfile

import casadi as ca
import numpy as np

GRAVITY = [0.0, 0.0, -9.81]  # urdf2casadi is given this; casdyn's default
ADAM_GRAVITY = [0.0, 0.0, -9.80665]  # adam's built-in standard gravity


def urdf2casadi_functions(urdf: str, root: str, tip: str) -> dict[str, ca.Function]:
    from urdf2casadi import urdfparser

    parser = urdfparser.URDFparser()
    parser.from_string(urdf)
    return {
        "ID": parser.get_inverse_dynamics_rnea(root, tip, gravity=GRAVITY),
        "FD": parser.get_forward_dynamics_aba(root, tip, gravity=GRAVITY),
        "M": parser.get_inertia_matrix_crba(root, tip),
    }


def adam_functions(urdf: str, root: str, joint_names) -> dict[str, ca.Function]:
    """adam is floating-base: the base is pinned (identity pose, zero twist) and the joint
    block taken, inlined into SX so the constants simplify. Fixed-base FD is M^-1 (tau - h),
    as an adam user would write it."""
    from adam.casadi import KinDynComputations

    with tempfile.NamedTemporaryFile("w", suffix=".urdf", delete=False) as f:
        f.write(urdf)
    try:
        kd = KinDynComputations(f.name, list(joint_names), root_link=root)
    finally:
        os.unlink(f.name)
    n = len(joint_names)
    q, qd, x = ca.SX.sym("q", n), ca.SX.sym("qd", n), ca.SX.sym("x", n)
    base, still = ca.DM.eye(4), ca.DM.zeros(6)
    M = kd.mass_matrix_fun()(base, q)[6:, 6:]
    h = kd.bias_force_fun()(base, q, still, qd)[6:]
    return {
        "ID": ca.Function("adam_id", [q, qd, x], [ca.mtimes(M, x) + h]),
        "FD": ca.Function("adam_fd", [q, qd, x], [ca.solve(M, x - h)]),
        "M": ca.Function("adam_m", [q], [M]),
    }


def check_against(functions: dict[str, ca.Function], robot, seed=0) -> float:
    """Largest relative difference of a peer's ID/FD/M from casdyn's at a random state."""
    rng = np.random.default_rng(seed)
    q, qd, x = robot.random_configuration(rng), *rng.normal(size=(2, robot.nq))
    ours = {"ID": robot.inverse_dynamics(q, qd, x), "FD": robot.forward_dynamics(q, qd, x),
            "M": robot.mass_matrix(q)}
    worst = 0.0
    for key, f in functions.items():
        theirs = f(q) if key == "M" else f(q, qd, x)
        theirs = np.asarray(theirs.full()).reshape(ours[key].shape)
        worst = max(worst, np.abs(theirs - ours[key]).max() / max(1, np.abs(ours[key]).max()))
    return worst


def with_inertial_origins(urdf: str) -> str:
    """adam needs an <origin> in every <inertial>: the URDF default (zero) written out."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(urdf)
    for inertial in root.iter("inertial"):
        if inertial.find("origin") is None:
            ET.SubElement(inertial, "origin", xyz="0 0 0", rpy="0 0 0")
    return ET.tostring(root, encoding="unicode")


def _adam_floating(urdf: str, root: str, joint_names, mixed: bool = False):
    """adam's KinDynComputations of a floating-base URDF in the body-fixed representation
    (casdyn's: the base twist in the base frame), or with ``mixed`` its mixed one."""
    from adam import Representations
    from adam.casadi import KinDynComputations

    with tempfile.NamedTemporaryFile("w", suffix=".urdf", delete=False) as f:
        f.write(with_inertial_origins(urdf))
    try:
        kd = KinDynComputations(f.name, list(joint_names), root_link=root)
    finally:
        os.unlink(f.name)
    kd.set_frame_velocity_representation(Representations.MIXED_REPRESENTATION if mixed else
                                         Representations.BODY_FIXED_REPRESENTATION)
    return kd


def adam_task_sizes(urdf: str, root: str, joint_names, frame: str) -> dict[str, int]:
    """n_instructions of adam's centroidal_momentum_matrix_fun and jacobian_dot_fun(frame),
    body-fixed representation (``Jdot``: the frame's Jacobian in its own axes, like casdyn's
    ``reference_frame="local"``), and of the mixed representation's ``jacobian_dot_fun``
    (``Jdot mixed``: base-frame axes like casdyn's default, but the base twist in mixed form)."""
    kd = _adam_floating(urdf, root, joint_names)
    mixed = _adam_floating(urdf, root, joint_names, mixed=True)
    return {"A_G": kd.centroidal_momentum_matrix_fun().n_instructions(),
            "Jdot": kd.jacobian_dot_fun(frame).n_instructions(),
            "Jdot mixed": mixed.jacobian_dot_fun(frame).n_instructions()}


def adam_floating_sizes(urdf: str, root: str, joint_names) -> dict[str, int]:
    """n_instructions of adam's floating-base mass_matrix_fun, bias_force_fun (C qd + g) and
    aba_fun in the body-fixed representation."""
    kd = _adam_floating(urdf, root, joint_names)
    return {"M": kd.mass_matrix_fun().n_instructions(),
            "h": kd.bias_force_fun().n_instructions(),
            "FD": kd.aba_fun().n_instructions()}
