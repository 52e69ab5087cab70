"""Real robots: every example-robot-data URDF that Pinocchio loads, casdyn loads and agrees
with (ID with external forces, FD, M, the transform and Jacobian of every body).

``example-robot-data`` (PyPI, a test dependency) ships ~70 public URDFs of arms, hands,
quadrupeds, humanoids and drones. The count of agreeing files is printed at the end of the
run (conftest.py).
"""

from __future__ import annotations

import warnings
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close
from pinocchio_reference import Reference

import casdyn

CORPUS_RELATIVE = 1e-8


def corpus_root() -> Path:
    try:
        dist = distribution("example-robot-data")
    except PackageNotFoundError:
        return Path("example-robot-data is not installed")
    return Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots"))


ROOT = corpus_root()
FILES = sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*.urdf")) if ROOT.is_dir() else []


def test_the_corpus_is_installed():
    assert len(FILES) >= 60, f"example-robot-data URDFs not found under {ROOT}"


def corpus_state(robot: casdyn.RigidBodyTree, seed: int = 0):
    """q uniform within the limits ([-1, 1] where a joint has none), normal rates, a
    normal wrench on every body."""
    rng = np.random.default_rng(seed)
    lower, upper = robot.position_limits
    q = rng.uniform(np.where(np.isfinite(lower), lower, -1.0),
                    np.where(np.isfinite(upper), upper, 1.0))
    qd, x = rng.normal(size=(2, robot.nq))
    return q, qd, x, rng.normal(size=(robot.n_bodies, 6))


@pytest.mark.parametrize("name", FILES)
def test_casdyn_agrees_with_pinocchio(name, corpus_results):
    path = ROOT / name
    corpus_results[name] = "fails"
    try:
        pin.buildModelFromUrdf(str(path))
    except (RuntimeError, ValueError):
        corpus_results[name] = "pinocchio refuses"
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", casdyn.ModelWarning)  # named in test_loading.py
        robot = casdyn.load_urdf(path)
    text = path.read_text()
    reference = Reference(text, robot.joint_names, robot.body_names)
    assert reference.model.nv == robot.nv, "Pinocchio has other joints"
    q, qd, x, fext = corpus_state(robot)
    check = lambda a, b: assert_close(a, b, CORPUS_RELATIVE)  # noqa: E731
    check(robot.inverse_dynamics(q, qd, x, fext), reference.inverse_dynamics(q, qd, x, fext))
    M = reference.mass_matrix(q)
    check(robot.mass_matrix(q), M)
    if robot.model.joints_moving_no_inertia():
        # casdyn refuses FD; Pinocchio's mass matrix is indeed singular there
        with pytest.raises(casdyn.ModelError):
            robot.forward_dynamics(q, qd, x, fext)
        assert np.linalg.eigvalsh(M).min() <= 1e-12 * max(1.0, np.abs(M).max())
    else:
        check(robot.forward_dynamics(q, qd, x, fext), reference.forward_dynamics(q, qd, x, fext))
    for b, body in enumerate(robot.body_names):
        check(robot.get_transform(q, body), reference.body_transform(q, b))
        check(robot.geometric_jacobian(q, body), reference.jacobian(q, b))
    corpus_results[name] = "agrees"
