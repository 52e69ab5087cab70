"""Shared fixtures: the models every cross-check runs on, and a relative comparison."""

from __future__ import annotations

import os
import tempfile
from functools import cache

# Numeric calls compile in the background by default; the tests count call paths and
# compilations, so it is off unless a test turns it on (tests/test_background.py)
os.environ["CASDYN_COMPILE"] = "0"
# compiled libraries and objects go to a directory of this run, not the user's cache
os.environ.setdefault("CASDYN_CACHE", tempfile.mkdtemp(prefix="casdyn-test-cache-"))

import numpy as np
import pytest
from random_trees import random_urdf

import casdyn

RELATIVE = 1e-9


def assert_close(actual, expected, rtol=RELATIVE):
    """``max|actual - expected| <= rtol * max(1, max|expected|)``: relative to the size of
    the quantity, absolute for quantities below one."""
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    error = np.max(np.abs(actual - expected), initial=0.0)
    scale = max(1.0, np.max(np.abs(expected), initial=0.0))
    assert error <= rtol * scale, f"error {error:.3e} > {rtol:g} * {scale:.3e}"


def random_state(robot, seed=0):
    """(q, qd, x, fext): a configuration within limits, normal rates and a third vector
    (qdd or tau), and a normal wrench on every body."""
    rng = np.random.default_rng(seed)
    q = robot.random_configuration(rng)
    qd, x = rng.normal(size=(2, robot.nv))
    return q, qd, x, rng.normal(size=(robot.n_bodies, 6))


def jacobian_rate(robot, q, qd, body: str, point=None, axes: str = "base", h: float = 1e-5):
    """``d/dt J`` along ``q ⊕ qd t`` by central differences: what ``Jdot`` must be."""
    J_at = [robot.geometric_jacobian(robot.integrate(q, qd * t), body, point, axes)
            for t in (h, -h)]
    return (J_at[0] - J_at[1]) / (2 * h)


def case_id(case) -> str:
    """``kind-key-fixed|floating`` for a ``(kind, key, floating_base)`` case."""
    kind, key, floating = case
    return f"{kind}-{key}-{'floating' if floating else 'fixed'}"


def load_case(case):
    """``(robot, Pinocchio reference)`` of a ``(kind, key, floating_base)`` case: a shipped
    robot, an example-robot-data path, or a seeded random tree with multi-dof joints."""
    from pinocchio_reference import Reference
    from test_corpus import ROOT

    kind, key, floating_base = case
    text = {"shipped": casdyn.robot_urdf, "corpus": lambda path: (ROOT / path).read_text(),
            "random": lambda seed: random_urdf(seed, n_links=4 + 2 * seed, multi_dof=True)
            }[kind](key)
    robot = casdyn.load_urdf(text, floating_base=floating_base)
    return robot, Reference(text, robot.joint_names, robot.body_names,
                            floating_base=floating_base, mimic_joints=robot.mimic_joints)


@cache
def _shipped(name: str, floating_base: bool) -> casdyn.RigidBodyTree:
    return casdyn.load_robot(name, floating_base=floating_base)


@pytest.fixture(scope="session")
def shipped():
    """``shipped(name, floating_base=False)``: a shipped robot loaded once per session (per
    pytest-xdist worker), shared by the modules whose tests only evaluate it, so that each
    of its Functions is built once. Tests that compile a robot or change it load their own."""
    return lambda name, floating_base=False: _shipped(name, floating_base)


RANDOM_SEEDS = list(range(8))
MODEL_CASES = [("shipped", name) for name in casdyn.robot_names()] + [
    ("random", seed) for seed in RANDOM_SEEDS
]


def model_urdf(case) -> str:
    kind, key = case
    if kind == "shipped":
        return casdyn.robot_urdf(key)
    return random_urdf(key, n_links=4 + key * 2)


@pytest.fixture(params=MODEL_CASES, ids=lambda case: f"{case[0]}-{case[1]}")
def urdf_text(request) -> str:
    return model_urdf(request.param)


# file -> outcome of the corpus tests, gathered where the run is reported: each test hands
# its outcome over in its report (so the count is right when pytest-xdist runs the tests in
# worker processes too)
_CORPUS: dict = {}


@pytest.fixture
def corpus_results(request):
    """file -> outcome, for the count printed after the run (test_corpus.py)."""
    results: dict = {}
    yield results
    request.node.user_properties.extend(("corpus", (*key, outcome))
                                        for key, outcome in results.items())


def pytest_runtest_logreport(report):
    if report.when == "teardown":
        for name, value in report.user_properties:
            if name == "corpus":
                kind, file, outcome = value
                _CORPUS[(kind, file)] = outcome


def pytest_terminal_summary(terminalreporter, config):
    results = _CORPUS
    for base in ("fixed", "floating"):
        outcomes = {name: outcome for (kind, name), outcome in results.items() if kind == base}
        if not outcomes:
            continue
        loaded = [name for name, outcome in outcomes.items() if outcome != "pinocchio refuses"]
        agree = sum(outcomes[name] == "agrees" for name in loaded)
        terminalreporter.write_line(
            f"example-robot-data, {base} base: casdyn agrees with Pinocchio on {agree} of the "
            f"{len(loaded)} URDFs Pinocchio loads ({len(outcomes) - len(loaded)} it refuses)")


# --- the GPU tier: tests marked gpu need an NVIDIA GPU with CuPy; CI has none ---------------
def pytest_addoption(parser):
    parser.addoption("--gpu", action="store_true",
                     help="run the tests marked gpu (an NVIDIA GPU, CuPy and NVRTC needed)")


@pytest.hookimpl(trylast=True)  # the order after pytest's own (by parametrized fixtures)
def pytest_collection_modifyitems(config, items):
    """Without --gpu, the gpu tests are deselected (not skipped), and the run says so. The
    modules that hold slow tests run first."""
    _slow_modules_first(items)
    if config.getoption("--gpu"):
        return
    gpu = [item for item in items if item.get_closest_marker("gpu")]
    if gpu:
        items[:] = [item for item in items if not item.get_closest_marker("gpu")]
        config.hook.pytest_deselected(items=gpu)
        config._casdyn_gpu_deselected = len(gpu)


def _slow_modules_first(items) -> None:
    """The modules that hold slow tests first, each kept whole (its module-scoped fixtures
    are built once per worker), then the others, in their order: pytest-xdist hands the
    tests out in this order, so a run ends on quick tests, not on one worker finishing a long
    test (a browser's page, a corpus) while the other has nothing left to do."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)  # stable: each module keeps its order


def pytest_report_header(config):
    if not config.getoption("--gpu"):
        return "tests marked gpu are deselected: pytest --gpu runs them on an NVIDIA GPU"
    return None
