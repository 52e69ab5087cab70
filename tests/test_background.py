"""Compiled speed without compile(): the Functions numeric calls use are compiled in the
background (casdyn.codegen.background), swapped in when ready, never waited for."""

from __future__ import annotations

import logging
import os

import numpy as np
import pytest

import casdyn
from casdyn.codegen import background, build

pytestmark = pytest.mark.slow  # background compilation


@pytest.fixture
def auto(tmp_path, monkeypatch):
    """Background compilation on, into a cache of the test's own."""
    monkeypatch.setenv("CASDYN_COMPILE", "1")
    monkeypatch.setenv("CASDYN_CACHE", str(tmp_path / "cache"))
    yield tmp_path / "cache"
    assert background.wait(120)


def _calls(robot, n):
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.normal(size=(3, robot.nv))
    return [robot.inverse_dynamics(q, qd, qdd) for _ in range(n)], (q, qd, qdd)


def test_calls_compile_in_the_background_and_then_run_compiled(auto):
    robot = casdyn.load_robot("ur5e")
    plain = casdyn.load_robot("ur5e")
    results, (q, qd, qdd) = _calls(robot, background.AFTER_CALLS - 1)
    assert background.wait(120)
    assert robot.compiled_functions == ()  # not yet asked for
    results += _calls(robot, 1)[0]
    assert background.wait(120)
    assert robot.compiled_functions == ("inverse_dynamics_nofext",)
    assert len(list(auto.glob("libcasdyn_ur5e_*.so"))) == 1
    compiled = robot.inverse_dynamics(q, qd, qdd)
    expected = plain.inverse_dynamics(q, qd, qdd)  # SX, as before the build
    assert np.array_equal(results[0], expected) and np.array_equal(results[-1], expected)
    assert np.abs(compiled - expected).max() <= 1e-13 * np.abs(expected).max()
    batch = robot.inverse_dynamics(np.array([q] * 9), np.array([qd] * 9), np.array([qdd] * 9))
    assert np.abs(batch - expected).max() <= 1e-13 * np.abs(expected).max()
    key = robot._functions.key("inverse_dynamics", fext=False)
    assert key in robot._engine._kernels  # the batched C came with it


def test_the_next_process_loads_the_cached_library(auto, monkeypatch):
    first = casdyn.load_robot("planar_2link")  # kept: a robot gone is not compiled for
    _calls(first, background.AFTER_CALLS)
    assert background.wait(120)
    assert first.compiled_functions == ("inverse_dynamics_nofext",)

    def no_compiling(*args, **kwargs):
        raise AssertionError("the cached library should have been loaded")

    monkeypatch.setattr(build, "run", no_compiling)
    robot = casdyn.load_robot("planar_2link")
    _calls(robot, background.AFTER_CALLS)
    assert background.wait(120)
    assert robot.compiled_functions == ("inverse_dynamics_nofext",)


def test_compile_0_never_compiles(tmp_path, monkeypatch):
    monkeypatch.setenv("CASDYN_COMPILE", "0")
    monkeypatch.setenv("CASDYN_CACHE", str(tmp_path / "cache"))
    robot = casdyn.load_robot("planar_2link")
    _calls(robot, 3 * background.AFTER_CALLS)
    assert background.wait(120)
    assert robot.compiled_functions == () and not (tmp_path / "cache").exists()


def _compiler(tmp_path, name: str, body: str) -> str:
    script = tmp_path / name
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return str(script)


def test_a_failing_compiler_is_logged_once_and_calls_stay_on_the_sx_path(auto, tmp_path,
                                                                         monkeypatch, caplog):
    monkeypatch.setenv("CC", _compiler(tmp_path, "broken-cc", "echo broken >&2; exit 1"))
    build.native_flags.cache_clear()
    robot = casdyn.load_robot("planar_2link")
    plain = casdyn.load_robot("planar_2link")
    with caplog.at_level(logging.DEBUG, logger="casdyn"):
        _, state = _calls(robot, background.AFTER_CALLS)
        assert background.wait(120)
        for _ in range(background.AFTER_CALLS):
            robot.mass_matrix([0.1, 0.2])
        assert background.wait(120)
    build.native_flags.cache_clear()
    assert robot.compiled_functions == ()
    assert np.array_equal(robot.inverse_dynamics(*state), plain.inverse_dynamics(*state))
    failures = [r for r in caplog.records if "background failed" in r.getMessage()]
    assert [r.levelno for r in failures] == [logging.WARNING, logging.DEBUG]


def test_calls_never_wait_for_the_compiler(auto, tmp_path, monkeypatch):
    """A compiler held until the calls are done: had a call waited for it, the test would
    hang."""
    gate = tmp_path / "gate"
    held = f'while [ ! -e "{gate}" ]; do sleep 0.05; done; exec {build.find_compiler()} "$@"'
    monkeypatch.setenv("CC", _compiler(tmp_path, "held-cc", held))
    build.native_flags.cache_clear()
    robot = casdyn.load_robot("planar_2link")
    _calls(robot, 3 * background.AFTER_CALLS)
    assert robot.compiled_functions == ()
    gate.touch()
    assert background.wait(120)
    build.native_flags.cache_clear()
    assert robot.compiled_functions == ("inverse_dynamics_nofext",)


def test_without_a_compiler_nothing_is_tried(auto, monkeypatch):
    monkeypatch.setenv("CC", "no-such-compiler-anywhere")
    monkeypatch.setattr(build, "COMPILERS", ("no-such-compiler-anywhere",))
    robot = casdyn.load_robot("planar_2link")
    _calls(robot, background.AFTER_CALLS)
    assert background.wait(120)
    assert robot.compiled_functions == () and not auto.exists()
    background._the_worker().unavailable = None  # other tests may have a compiler again


EXITS_MID_BUILD = """
import threading
import numpy as np
import casdyn
from casdyn.codegen import build as codegen_build

build = codegen_build.run


def after_exit(*args, **kwargs):
    threading.main_thread().join()  # the script has ended: the interpreter is shutting down
    return build(*args, **kwargs)


codegen_build.run = after_exit
robot = casdyn.load_robot("ur5e")
q = robot.home_configuration()
for _ in range(casdyn.codegen.background.AFTER_CALLS):
    robot.inverse_dynamics(q)
print("script done")
"""


def test_a_script_ending_during_a_background_build_exits_quietly(tmp_path):
    """The build under way meets the interpreter's shutdown (its compiler pool refuses new
    work): nothing is printed, and the next process finds the cache without half a library
    and compiles into it."""
    import subprocess
    import sys

    cache = tmp_path / "cache"
    env = {**os.environ, "CASDYN_COMPILE": "1", "CASDYN_CACHE": str(cache)}
    run = subprocess.run([sys.executable, "-c", EXITS_MID_BUILD], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "script done"
    assert run.stderr == ""
    libraries = sorted(p.name for p in cache.glob("lib*")) if cache.exists() else []
    assert all(f"{name}.sha256" in libraries for name in libraries if name.endswith(".so"))
    assert not [p for p in cache.glob(".casdyn-*")] if cache.exists() else True
    next_run = subprocess.run(
        [sys.executable, "-c", EXITS_MID_BUILD.replace("codegen_build.run = after_exit", "")
         + "casdyn.codegen.background.wait(300); print(robot.compiled_functions)"],
        env=env, capture_output=True, text=True, timeout=300)
    assert next_run.returncode == 0 and next_run.stderr == "", next_run.stderr
    assert "inverse_dynamics_nofext" in next_run.stdout
