"""Real robots: every example-robot-data URDF that Pinocchio loads, casdyn loads and agrees
with (ID with external forces, FD, M, the inertial parameters, the transform and Jacobian of
every body; the regressor reproduces ID).

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

pytestmark = pytest.mark.slow  # every example-robot-data URDF against Pinocchio

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
    """q uniform within the limits ([-1, 1] where a joint has none: a free joint's quaternion
    then has some norm below 2, which casdyn normalises), normal rates, a normal wrench on
    every body."""
    rng = np.random.default_rng(seed)
    lower, upper = robot.position_limits
    q = rng.uniform(np.where(np.isfinite(lower), lower, -1.0),
                    np.where(np.isfinite(upper), upper, 1.0))
    qd, x = rng.normal(size=(2, robot.nv))
    return q, qd, x, rng.normal(size=(robot.n_bodies, 6))


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("name", FILES)
def test_casdyn_agrees_with_pinocchio(name, floating_base, corpus_results):
    """ID with fext, M and FD (or, where casdyn refuses FD, a singular M in Pinocchio too),
    transforms and Jacobians: of every body on a fixed base; of the root link and up to five
    leaves on a floating base, whose every body's pose goes through the free joint."""
    path = ROOT / name
    key = ("floating", name) if floating_base else ("fixed", name)
    corpus_results[key] = "fails"
    try:
        pin.buildModelFromUrdf(str(path))
    except (RuntimeError, ValueError):
        corpus_results[key] = "pinocchio refuses"
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", casdyn.ModelWarning)  # named in test_loading.py
        robot = casdyn.load_urdf(path, floating_base=floating_base)
    text = path.read_text()
    reference = Reference(text, robot.joint_names, robot.body_names, floating_base=floating_base,
                          mimic_joints=robot.mimic_joints)
    assert reference.model.nv == robot.nv + len(reference.expanded), "other joints"
    q, qd, x, fext = corpus_state(robot)
    check = lambda a, b: assert_close(a, b, CORPUS_RELATIVE)  # noqa: E731
    check(robot.inverse_dynamics(q, qd, x, fext), reference.inverse_dynamics(q, qd, x, fext))
    M = reference.mass_matrix(q)
    check(robot.mass_matrix(q), M)
    try:
        qdd = robot.forward_dynamics(q, qd, x, fext)
    except casdyn.ModelError:
        # casdyn refuses FD where M is singular; Pinocchio's is indeed singular there
        assert np.linalg.eigvalsh(M).min() <= 1e-12 * max(1.0, np.abs(M).max())
    else:
        check(qdd, reference.forward_dynamics(q, qd, x, fext))
    # identification: Pinocchio's parameters, and a regressor that reproduces ID
    check(robot.inertial_parameters(), np.concatenate(
        [reference.model.inertias[j].toDynamicParameters()
         for j in reference.parameter_blocks(robot)] + [np.zeros(0)]))
    check(robot.regressor(q, qd, x) @ robot.inertial_parameters(),
          robot.inverse_dynamics(q, qd, x))
    bodies = list(enumerate(robot.body_names))
    if floating_base:
        leaves = set(robot.model.leaf_bodies()[:5])
        bodies = [(b, body) for b, body in bodies if b == 0 or body in leaves]
    for b, body in bodies:
        check(robot.get_transform(q, body), reference.body_transform(q, b))
        check(robot.geometric_jacobian(q, body), reference.jacobian(q, b))
    corpus_results[key] = "agrees"
