"""The benchmark models: the shipped UR5e, a Panda-like 7-dof arm, and seeded random chains."""

from __future__ import annotations

import math

import numpy as np

import casdyn

# Franka Emika Panda kinematics, Craig's modified DH parameters as published in Franka's
# "Robot and interface specifications" (a_{i-1}, d_i, alpha_{i-1}), flange 0.107 m.
PANDA_DH = [
    (0.0, 0.333, 0.0),
    (0.0, 0.0, -math.pi / 2),
    (0.0, 0.316, math.pi / 2),
    (0.0825, 0.0, math.pi / 2),
    (-0.0825, 0.384, -math.pi / 2),
    (0.0, 0.0, math.pi / 2),
    (0.088, 0.0, math.pi / 2),
]
PANDA_LIMITS = [(-2.8973, 2.8973), (-1.7628, 1.7628), (-2.8973, 2.8973), (-3.0718, -0.0698),
                (-2.8973, 2.8973), (-0.0175, 3.7525), (-2.8973, 2.8973)]


def _exact(value: float) -> float:
    """sin/cos of multiples of pi/2 as exact 0 and +-1."""
    return float(round(value)) if abs(value - round(value)) < 1e-12 else value


def _inertial(rng: np.random.Generator) -> str:
    """A full inertia tensor (the values do not change graph sizes; their zeros would)."""
    a, b = rng.uniform(0.01, 0.1, size=2)
    c = rng.uniform(abs(a - b) + 1e-3, a + b)
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    inertia = Q @ np.diag([a, b, c]) @ Q.T
    com = rng.normal(scale=0.05, size=3)
    names = {"ixx": (0, 0), "ixy": (0, 1), "ixz": (0, 2), "iyy": (1, 1), "iyz": (1, 2),
             "izz": (2, 2)}
    values = " ".join(f'{k}="{float(inertia[ij])!r}"' for k, ij in names.items())
    return (f'<inertial><origin xyz="{" ".join(repr(float(c)) for c in com)}"/>'
            f'<mass value="{float(rng.uniform(0.5, 4.0))!r}"/><inertia {values}/></inertial>')


def _chain_urdf(name: str, joints: list[tuple], rng: np.random.Generator) -> str:
    """joints: (xyz, rpy, axis, lower, upper) per revolute joint; link0 is the base."""
    links = ['<link name="link0"/>'] + [f'<link name="link{i + 1}">{_inertial(rng)}</link>'
                                        for i in range(len(joints))]
    text = []
    for i, (xyz, rpy, axis, lower, upper) in enumerate(joints):
        text.append(
            f'<joint name="joint{i + 1}" type="revolute"><parent link="link{i}"/>'
            f'<child link="link{i + 1}"/>'
            f'<origin xyz="{" ".join(repr(float(v)) for v in xyz)}" '
            f'rpy="{" ".join(repr(float(v)) for v in rpy)}"/>'
            f'<axis xyz="{" ".join(repr(float(v)) for v in axis)}"/>'
            f'<limit lower="{lower}" upper="{upper}" effort="100" velocity="2"/></joint>')
    return f'<robot name="{name}">' + "".join(links + text) + "</robot>"


def _cylinder(mass: float, radius: float, length: float, xyz: str) -> str:
    """The ur_description inertia macro: a solid cylinder along z."""
    side = mass * (3 * radius**2 + length**2) / 12
    return (f'<inertial><origin xyz="{xyz}"/><mass value="{mass}"/><inertia ixx="{side!r}" '
            f'ixy="0" ixz="0" iyy="{side!r}" iyz="0" izz="{mass * radius**2 / 2!r}"/></inertial>')


def ur5_urdf() -> str:
    """The classic UR5 of ROS-Industrial ur_description (ur5.urdf.xacro): Universal Robots'
    published DH lengths (d1 0.089159, a2 0.425, a3 0.39225, d4 0.10915, d5 0.09465,
    d6 0.0823) laid out with the xacro's shoulder and elbow offsets, exact pi/2 rotations,
    and its cylinder inertias."""
    half_pi = repr(math.pi / 2)
    links = [("base_link", ""),
             ("shoulder_link", _cylinder(3.7, 0.06, 0.15, "0 0 0")),
             ("upper_arm_link", _cylinder(8.393, 0.06, 0.56, "0 0 0.28")),
             ("forearm_link", _cylinder(2.275, 0.06, 0.5, "0 0 0.25")),
             ("wrist_1_link", _cylinder(1.219, 0.06, 0.12, "0 0 0")),
             ("wrist_2_link", _cylinder(1.219, 0.06, 0.12, "0 0 0")),
             ("wrist_3_link", _cylinder(0.1879, 0.0375, 0.0345, "0 0 0"))]
    joints = [("shoulder_pan", "0 0 0.089159", "0 0 0", "0 0 1"),
              ("shoulder_lift", "0 0.13585 0", f"0 {half_pi} 0", "0 1 0"),
              ("elbow", "0 -0.1197 0.425", "0 0 0", "0 1 0"),
              ("wrist_1", "0 0 0.39225", f"0 {half_pi} 0", "0 1 0"),
              ("wrist_2", "0 0.093 0", "0 0 0", "0 0 1"),
              ("wrist_3", "0 0 0.09465", "0 0 0", "0 1 0")]
    text = "".join(f'<link name="{name}">{inertial}</link>' for name, inertial in links)
    for k, (name, xyz, rpy, axis) in enumerate(joints):
        text += (f'<joint name="{name}_joint" type="revolute"><parent link="{links[k][0]}"/>'
                 f'<child link="{links[k + 1][0]}"/><origin xyz="{xyz}" rpy="{rpy}"/>'
                 f'<axis xyz="{axis}"/><limit lower="-3.14" upper="3.14" effort="150" '
                 f'velocity="3.15"/></joint>')
    return f'<robot name="ur5">{text}</robot>'


def panda_urdf() -> str:
    joints = []
    for a, d, alpha in PANDA_DH:
        s, c = _exact(math.sin(alpha)), _exact(math.cos(alpha))
        joints.append(((a, -s * d, c * d), (alpha, 0, 0), (0, 0, 1), *PANDA_LIMITS[len(joints)]))
    return _chain_urdf("panda_like", joints, np.random.default_rng(7))


def random_chain_urdf(n: int, seed: int = 0) -> str:
    """n revolute joints with random axes, origins and rpy, full inertias."""
    rng = np.random.default_rng(seed)
    joints = []
    for _ in range(n):
        axis = rng.normal(size=3)
        joints.append((rng.normal(scale=0.15, size=3), rng.uniform(-math.pi, math.pi, 3),
                       axis / np.linalg.norm(axis), -3.0, 3.0))
    return _chain_urdf(f"chain{n}", joints, rng)


def benchmark_models() -> dict[str, tuple[str, str, str]]:
    """name -> (URDF text, root link, tip link)."""
    models = {"UR5": (ur5_urdf(), "base_link", "wrist_3_link"),
              "UR5e": (casdyn.robot_urdf("ur5e"), "base_link", "wrist_3_link"),
              "Panda-like": (panda_urdf(), "link0", "link7")}
    for n in (6, 12, 24, 48):
        models[f"chain{n}"] = (random_chain_urdf(n), "link0", f"link{n}")
    return models
