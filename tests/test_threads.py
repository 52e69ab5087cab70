"""Numeric calls from several threads at once give exactly the single-thread numbers."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from conftest import assert_close

import casdyn

THREADS = 8
ROUNDS = 30


def _states(robot, count=24):
    rng = np.random.default_rng(0)
    return [(robot.random_configuration(rng), *rng.normal(size=(2, robot.nq)),
             rng.normal(size=(robot.n_bodies, 6))) for _ in range(count)]


def _calls(robot, state):
    """The numeric calls each thread makes: single and batched, with and without fext."""
    q, qd, x, fext = state
    batch = np.array([q, q[::-1], -q])
    return (
        robot.inverse_dynamics(q, qd, x, fext),
        robot.inverse_dynamics(q, qd, x),
        robot.forward_dynamics(q, qd, x, fext),
        robot.mass_matrix(q),
        robot.center_of_mass(q)[0],
        robot.geometric_jacobian(q, robot.body_names[-1]),
        robot.mass_matrix(batch),
        robot.inverse_dynamics(batch, qd, x, fext),
    )


def _run_in_threads(robot, states) -> list[str]:
    expected = [_calls(robot, state) for state in states]  # one thread, first
    wrong: list[str] = []
    start = threading.Barrier(THREADS)

    def work(offset: int) -> None:
        start.wait()
        for round_ in range(ROUNDS):
            k = (offset + round_) % len(states)
            for i, (got, want) in enumerate(zip(_calls(robot, states[k]), expected[k],
                                                strict=True)):
                if not np.array_equal(got, want):
                    wrong.append(f"state {k}, call {i}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return wrong


def test_sx_path_is_exact_from_eight_threads():
    robot = casdyn.load_robot("ur5e")
    assert _run_in_threads(robot, _states(robot)) == []


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CASDYN_CACHE", str(tmp_path / "cache"))


@pytest.mark.slow
def test_compiled_path_is_exact_from_eight_threads(cache):
    robot = casdyn.load_robot("ur5e").compile()
    assert _run_in_threads(robot, _states(robot)) == []


def test_compile_in_one_thread_while_others_evaluate(cache):
    """Evaluators made before compile() are renewed in every thread, not only the one that
    compiled: afterwards all threads run the compiled code, with the same numbers."""
    robot = casdyn.load_robot("planar_2link")
    q = np.array([0.3, -0.2])
    expected = robot.mass_matrix(q)
    seen: list = []

    def evaluate():
        robot.mass_matrix(q)  # makes this thread's SX evaluator
        done.wait()
        seen.append(robot.mass_matrix(q))
        (_, _, evaluator, native), = robot._engine._workspace.single.values()
        seen.append(evaluator.function.is_a("SXFunction") or native is None)

    done = threading.Event()
    worker = threading.Thread(target=evaluate)
    worker.start()
    robot.compile(["mass_matrix"])
    done.set()
    worker.join()
    assert_close(seen[0], expected)
    assert seen[1] is False  # this thread now runs the compiled library
    assert robot.compiled_functions == ("mass_matrix",)
