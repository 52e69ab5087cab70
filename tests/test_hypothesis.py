"""Property test: random trees drawn by hypothesis agree with Pinocchio.

Trees mix revolute, continuous, prismatic and fixed joints with any axis, joint and inertial
rpy, full inertia tensors, zero masses with and without rotational inertia, and link and
joint names made of characters that are not valid in C (``-``, ``.``, ``/``, ``__``, spaces,
non-ASCII, a leading digit or underscore). A fixed seed and a bounded number of examples keep
the run deterministic and short in CI.
"""

from __future__ import annotations

import math
import warnings
from xml.sax.saxutils import quoteattr

import numpy as np
import pytest
from conftest import assert_close
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pinocchio_reference import Reference

import casdyn
from casdyn.functions.stages import singular_joints

pytestmark = pytest.mark.slow  # property tests on many random trees

ODD_NAME = st.text(alphabet="ab_-./é 0", min_size=1, max_size=10).filter(
    lambda s: s.strip() == s and s not in ("universe", "root_joint"))
ANGLE = st.floats(-math.pi, math.pi)
COORDINATE = st.floats(-0.5, 0.5)


def _rotation(roll: float, pitch: float, yaw: float) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch),
                              math.sin(pitch), math.cos(yaw), math.sin(yaw))
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def _numbers(values) -> str:
    return " ".join(repr(float(v)) for v in values)


@st.composite
def inertial(draw) -> str:
    mass = draw(st.one_of(st.just(0.0), st.floats(0.2, 5.0)))
    if mass == 0.0 and draw(st.booleans()):
        return f'<inertial><mass value="0"/>{_inertia(np.zeros((3, 3)))}</inertial>'
    a, b = draw(st.floats(0.01, 0.5)), draw(st.floats(0.01, 0.5))
    c = draw(st.floats(abs(a - b) + 1e-3, a + b))
    R = _rotation(draw(ANGLE), draw(ANGLE), draw(ANGLE))
    origin = _numbers(draw(st.tuples(COORDINATE, COORDINATE, COORDINATE)))
    rpy = _numbers(draw(st.tuples(ANGLE, ANGLE, ANGLE)))
    return (f'<inertial><origin xyz="{origin}" rpy="{rpy}"/><mass value="{mass!r}"/>'
            f"{_inertia(R @ np.diag([a, b, c]) @ R.T)}</inertial>")


def _inertia(I: np.ndarray) -> str:  # noqa: E741
    entries = {"ixx": (0, 0), "ixy": (0, 1), "ixz": (0, 2), "iyy": (1, 1), "iyz": (1, 2),
               "izz": (2, 2)}
    return "<inertia " + " ".join(f'{k}="{float(I[ij])!r}"' for k, ij in entries.items()) + "/>"


@st.composite
def axis(draw) -> str:
    if draw(st.booleans()):
        unit = np.zeros(3)
        unit[draw(st.integers(0, 2))] = draw(st.sampled_from([-1.0, 1.0, 2.5]))
        return _numbers(unit)
    vector = np.array(draw(st.tuples(*[st.floats(-1.0, 1.0)] * 3)))
    assume(np.linalg.norm(vector) > 0.2)
    return _numbers(vector)


@st.composite
def trees(draw) -> str:
    """URDF text of a random tree with 1 to 6 links below the root."""
    n = draw(st.integers(1, 6))
    # links and joints all differ: Pinocchio's frames would mix up a link and a joint of
    # the same name
    names = draw(st.lists(ODD_NAME, min_size=2 * n + 1, max_size=2 * n + 1, unique=True))
    links, joints = names[: n + 1], names[n + 1 :]
    parts = [f"<link name={quoteattr(links[0])}/>"]
    for i in range(1, n + 1):
        parts.append(f"<link name={quoteattr(links[i])}>{draw(inertial())}</link>")
        kind = draw(st.sampled_from(["revolute", "continuous", "prismatic", "fixed"]))
        parent = links[draw(st.integers(0, i - 1))]
        xyz = _numbers(draw(st.tuples(COORDINATE, COORDINATE, COORDINATE)))
        rpy = _numbers(draw(st.tuples(ANGLE, ANGLE, ANGLE)))
        joint = (f"<joint name={quoteattr(joints[i - 1])} type={quoteattr(kind)}>"
                 f"<parent link={quoteattr(parent)}/><child link={quoteattr(links[i])}/>"
                 f'<origin xyz="{xyz}" rpy="{rpy}"/>')
        if kind != "fixed":
            joint += f'<axis xyz="{draw(axis())}"/>'
        if kind in ("revolute", "prismatic"):
            joint += '<limit lower="-1.5" upper="2" effort="10" velocity="1"/>'
        parts.append(joint + "</joint>")
    return '<robot name="hypothesis">' + "".join(parts) + "</robot>"


@settings(max_examples=100, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(trees(), st.integers(0, 2**16))
def test_random_trees_with_odd_names_agree_with_pinocchio(urdf, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", casdyn.ModelWarning)
        robot = casdyn.load_urdf(urdf)
    reference = Reference(urdf, robot.joint_names, robot.body_names)
    rng = np.random.default_rng(seed)
    lower, upper = robot.position_limits
    q = rng.uniform(np.maximum(lower, -np.pi), np.minimum(upper, np.pi))
    qd, x = rng.normal(size=(2, robot.nq))
    fext = rng.normal(size=(robot.n_bodies, 6))
    assert_close(robot.inverse_dynamics(q, qd, x, fext), reference.inverse_dynamics(q, qd, x, fext))
    assert_close(robot.mass_matrix(q), reference.mass_matrix(q))
    if not singular_joints(robot.model):
        M = reference.mass_matrix(q)
        # FD of a nearly singular M is ill-posed for both engines
        assume(robot.nv == 0 or np.linalg.cond(M) < 1e8)
        assert_close(robot.forward_dynamics(q, qd, x, fext),
                     reference.forward_dynamics(q, qd, x, fext))
    first = robot.body_names[0]
    for b, body in enumerate(robot.body_names):
        T = reference.body_transform(q, b)
        assert_close(robot.get_transform(q, body), T)
        relative = np.linalg.solve(reference.body_transform(q, 0), T)
        assert_close(robot.get_transform(q, body, relative_to=first), relative)
        assert_close(robot.geometric_jacobian(q, body), reference.jacobian(q, b))
        wrench = rng.normal(size=6)
        R, p = T[:3, :3], T[:3, 3]
        expected = np.zeros((robot.n_bodies, 6))
        expected[b] = [*(R @ wrench[:3] + np.cross(p, R @ wrench[3:])), *(R @ wrench[3:])]
        assert_close(robot.external_force(body, wrench, q), expected)
