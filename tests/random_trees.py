"""Seeded generator of random URDF trees for cross-checks.

Trees branch, have fixed chains between moving joints, revolute / continuous / prismatic
joints with arbitrary non-unit axes (some exactly along ±x, ±y, ±z), arbitrary joint and
inertial rpy, full inertia tensors, massless links, and links and joints written in shuffled
document order (so the order of ``q`` is not the order of a tree walk). With ``multi_dof``
some joints are ``planar`` (axis z, as Pinocchio reads them) or ``floating``, and the root
link has an inertia (for floating-base models).
"""

from __future__ import annotations

import numpy as np

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed")


def _vector(values) -> str:
    return " ".join(repr(float(v)) for v in np.ravel(values))


def _inertia(rng: np.random.Generator) -> np.ndarray:
    """A full, physically valid inertia tensor (principal moments obey the triangle rule)."""
    a, b = rng.uniform(0.01, 0.5, size=2)
    c = rng.uniform(abs(a - b) + 1e-3, a + b)
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return Q @ np.diag([a, b, c]) @ Q.T


def _inertia_attributes(inertia: np.ndarray) -> str:
    entries = {"ixx": (0, 0), "ixy": (0, 1), "ixz": (0, 2), "iyy": (1, 1), "iyz": (1, 2),
               "izz": (2, 2)}
    return " ".join(f'{name}="{_vector(inertia[ij])}"' for name, ij in entries.items())


def _axis(rng: np.random.Generator) -> np.ndarray:
    if rng.uniform() < 0.4:
        axis = np.zeros(3)
        axis[rng.integers(3)] = rng.choice([-1.0, 1.0]) * rng.choice([1.0, 2.5])
        return axis
    return rng.normal(size=3) * rng.uniform(0.5, 3.0)


def _inertial(rng: np.random.Generator) -> str:
    inertia = _inertia(rng)
    return (
        "    <inertial>\n"
        f'      <origin xyz="{_vector(rng.normal(scale=0.2, size=3))}" '
        f'rpy="{_vector(rng.uniform(-np.pi, np.pi, 3))}"/>\n'
        f'      <mass value="{_vector(rng.uniform(0.2, 5.0))}"/>\n'
        f"      <inertia {_inertia_attributes(inertia)}/>\n"
        "    </inertial>\n"
    )


def random_urdf(seed: int, n_links: int = 10, *, chain: bool = False,
                multi_dof: bool = False) -> str:
    """URDF text of a random tree with ``n_links`` links besides the root ``base``."""
    rng = np.random.default_rng(seed)
    parents, kinds = [], []
    for i in range(1, n_links + 1):
        parent = "base" if i == 1 else (f"link{i - 1}" if chain else
                                          rng.choice(["base"] + [f"link{k}" for k in range(1, i)]))
        parents.append(str(parent))
        kinds.append(JOINT_TYPES[rng.choice(4, p=[0.35, 0.2, 0.25, 0.2])])
        if multi_dof and rng.uniform() < 0.25:
            kinds[-1] = str(rng.choice(["planar", "floating"]))
    if all(kind == "fixed" for kind in kinds):
        kinds[-1] = "revolute"
    links = ['  <link name="base">\n' + _inertial(rng) + "  </link>" if multi_dof
             else '  <link name="base"/>']
    joints = []
    for i, (parent, kind) in enumerate(zip(parents, kinds, strict=True), start=1):
        body = f'  <link name="link{i}">\n'
        leaf = f"link{i}" not in parents  # leaves carry mass, so that M is never singular
        # so do the links of multi-dof joints (a massless one could move without moving mass)
        if leaf or kind in ("planar", "floating") or rng.uniform() < 0.8:
            body += _inertial(rng)
        links.append(body + "  </link>")
        joint = (
            f'  <joint name="joint{i}" type="{kind}">\n'
            f'    <parent link="{parent}"/>\n    <child link="link{i}"/>\n'
            f'    <origin xyz="{_vector(rng.normal(scale=0.3, size=3))}" '
            f'rpy="{_vector(rng.uniform(-np.pi, np.pi, 3))}"/>\n'
        )
        if kind == "planar":
            joint += '    <axis xyz="0 0 1"/>\n'
        elif kind not in ("fixed", "floating"):
            joint += f'    <axis xyz="{_vector(_axis(rng))}"/>\n'
        if kind in ("revolute", "prismatic"):
            joint += '    <limit lower="-2.0" upper="2.5" effort="10" velocity="1"/>\n'
        joints.append(joint + "  </joint>")
    order = rng.permutation(len(links) - 1) + 1
    body_text = "\n".join([links[0]] + [links[i] for i in order])
    joint_text = "\n".join(joints[i] for i in rng.permutation(len(joints)))
    header = f'<?xml version="1.0"?>\n<robot name="random{seed}">'
    return f"{header}\n{body_text}\n{joint_text}\n</robot>\n"
