"""C export: compiled functions equal the SX ones; failures are clear and leave no files."""

from __future__ import annotations

import ctypes
import re
import subprocess
import sys
from pathlib import Path

import casadi as ca
import numpy as np
import pytest
from conftest import assert_close

import casdyn
import casdyn.codegen.library
from casdyn import ExportError, sizes
from casdyn.codegen import build, store
from casdyn.functions.registry import SIGNATURES

pytestmark = pytest.mark.slow  # C export and compilation


def random_inputs(function, rng):
    return [rng.normal(size=function.size_in(i)) for i in range(function.n_in())]


def test_default_export_compiles_every_function_and_matches_sx(tmp_path):
    robot = casdyn.load_robot("scara")
    loaded = robot.export_c(tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "casdyn_scara.c", "casdyn_scara.h", "libcasdyn_scara.so"]
    # the loop functions need a robot with closed loops; scara has none; the collision
    # distances need its geometry and are exported when listed
    options = {n: SIGNATURES[n].options for n in casdyn.FUNCTION_NAMES
               if not SIGNATURES[n].loops and n != "collision_distances"}
    per_body = [n for n in options if "body" in options[n]]
    expected = [n for n in options if n not in per_body and "contacts" not in options[n]] + [
        f"{n}_tool0" for n in per_body]
    assert sorted(loaded) == sorted(expected)
    rng = np.random.default_rng(0)
    for name, compiled in loaded.items():
        base = name.partition("_tool0")[0]
        sx = robot.function(base, body="tool0") if name.endswith("_tool0") else \
            robot.function(name)
        assert compiled.name_in() == sx.name_in() and compiled.name_out() == sx.name_out()
        args = random_inputs(sx, rng)
        for ours, theirs in zip(compiled.call(args), sx.call(args), strict=True):
            assert_close(ours.full(), theirs.full())


def test_chosen_functions_with_options(tmp_path):
    robot = casdyn.load_robot("ur5e")
    loaded = robot.export_c(tmp_path, ["mass_matrix", ("get_transform", {"body": "tool0",
                                                                           "relative_to": "base"})])
    assert sorted(loaded) == ["get_transform_tool0_base", "mass_matrix"]
    q = robot.random_configuration(1)
    assert_close(loaded["get_transform_tool0_base"](q).full(),
                 robot.get_transform(q, "tool0", relative_to="base"))


def test_casadi_helpers_stay_private_to_the_library(tmp_path):
    """Every internal symbol of the generated C (CasADi's ``CASADI_PREFIX`` names: work
    functions, sparsity arrays and helpers such as ``casadi_sq``) is absent from the library,
    so the compiler inlines the helpers instead of calling them through the PLT."""
    x, y = ca.SX.sym("x", 3), ca.SX.sym("y", 3)
    scalar = ca.Function("scalar", [x, y], [x * x + ca.fmin(x, y) + ca.sign(y)])
    z = ca.MX.sym("z", 3)
    mapped = ca.Function("mapped", [z], [scalar.map(2)(ca.horzcat(z, 2 * z), z)])
    exported = casdyn.codegen.library.export_functions([scalar, mapped], tmp_path, "helpers")
    loaded = dict(zip(["scalar", "mapped"], exported, strict=True))
    source = (tmp_path / "helpers.c").read_text()
    internal = re.findall(r"#define (casadi_\w+) CASADI_PREFIX\((\w+)\)", source)
    assert {"casadi_sq", "casadi_fmin", "casadi_sign"} <= {name for name, _ in internal}
    library = ctypes.CDLL(str(tmp_path / "libhelpers.so"))
    assert hasattr(library, "scalar") and hasattr(library, "mapped")
    exported = [name for name, suffix in internal if hasattr(library, f"helpers_{suffix}")]
    assert exported == []
    args = [np.array([0.5, -2.0, 3.0]), np.array([1.0, -1.0, 0.0])]
    assert_close(loaded["scalar"](*args).full(), scalar(*args).full())
    assert_close(loaded["mapped"](args[0]).full(), mapped(args[0]).full())


def test_source_only_without_compiling(tmp_path):
    robot = casdyn.load_robot("planar_2link")
    functions = robot.export_c(tmp_path, ["inverse_dynamics"], compile=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["casdyn_planar_2link.c",
                                                          "casdyn_planar_2link.h"]
    assert functions["inverse_dynamics"] is robot.function("inverse_dynamics")
    assert "inverse_dynamics" in (tmp_path / "casdyn_planar_2link.h").read_text()


def test_missing_compiler_is_a_clear_error_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("CC", raising=False)
    with pytest.raises(ExportError, match="no C compiler found"):
        casdyn.load_robot("ur5e").export_c(tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_failed_compilation_leaves_the_directory_as_it_was(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    with pytest.raises(ExportError, match=r"compiling casdyn_ur5e\.c failed"):
        casdyn.load_robot("ur5e").export_c(target, ["gravity_torque"],
                                           flags=("-O1", "--no-such-flag-for-cc"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert [p.name for p in target.iterdir()] == ["keep.txt"]


def test_bad_function_list_is_an_input_error(tmp_path):
    with pytest.raises(casdyn.InputError):
        casdyn.load_robot("ur5e").export_c(tmp_path, [42])
    with pytest.raises(casdyn.InputError, match="mass_matrix"):
        casdyn.load_robot("ur5e").export_c(tmp_path, ["mass_matrx"])
    assert list(tmp_path.iterdir()) == []


def test_a_second_export_into_the_same_directory_returns_the_new_library(tmp_path):
    """The dynamic loader caches libraries by path: re-exporting into the same directory in
    the same process must still hand back what was just built."""
    robot = casdyn.load_robot("ur5e")
    q = robot.random_configuration(0)
    first = robot.export_c(tmp_path, ["gravity_torque"])
    heavy = casdyn.load_robot("ur5e", gravity=(0, 0, -20.0))
    second = heavy.export_c(tmp_path, ["gravity_torque", "mass_matrix"])
    assert_close(first["gravity_torque"](q).full().ravel(), robot.gravity_torque(q))
    assert_close(second["gravity_torque"](q).full().ravel(), heavy.gravity_torque(q))
    assert_close(second["mass_matrix"](q).full(), heavy.mass_matrix(q))


def test_exporting_into_a_file_is_an_export_error(tmp_path):
    target = tmp_path / "taken"
    target.write_text("mine")
    with pytest.raises(ExportError, match="is a file"):
        casdyn.load_robot("planar_2link").export_c(target, ["gravity_torque"])
    with pytest.raises(ExportError, match="cannot export"):
        casdyn.load_robot("planar_2link").export_c(target / "below", ["gravity_torque"])
    assert target.read_text() == "mine" and sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_one_function_name_is_one_function_not_its_letters(tmp_path):
    loaded = casdyn.load_robot("planar_2link").export_c(tmp_path, "mass_matrix", compile=False)
    assert list(loaded) == ["mass_matrix"]
    robot = casdyn.load_robot("planar_2link").compile("gravity_torque", directory=tmp_path)
    assert robot.compiled_functions == ("gravity_torque",)


@pytest.mark.parametrize("setting", ["a file", "below a file", "in /proc"])
def test_an_unusable_compile_cache_is_an_export_error(tmp_path, monkeypatch, setting):
    blocker = tmp_path / "file"
    blocker.write_text("")
    cache = {"a file": blocker, "below a file": blocker / "cache",
             "in /proc": "/proc/casdyn-cache"}[setting]
    monkeypatch.setenv("CASDYN_CACHE", str(cache))
    with pytest.raises(ExportError, match=r"compile cache .*CASDYN_CACHE"):
        casdyn.load_robot("planar_2link").compile(["gravity_torque"])


COMPILE_IN_A_FRESH_PROCESS = """
import casdyn, numpy as np
g = (0, -9.81, 0)  # the arm moves in the x-y plane
robot = casdyn.load_robot("planar_2link", gravity=g).compile(["gravity_torque"])
sx = casdyn.load_robot("planar_2link", gravity=g).gravity_torque([0.3, -0.4])
assert np.all(np.abs(sx) > 1)
assert np.allclose(robot.gravity_torque([0.3, -0.4]), sx, rtol=1e-12, atol=1e-12)
print("ok")
"""


@pytest.mark.parametrize("damage", ["truncated", "foreign", "checksum missing"])
def test_a_damaged_cached_library_is_rebuilt(tmp_path, damage):
    """A truncated or foreign library in the compile cache once killed the process (SIGBUS)
    or failed every later compile(); now its checksum gives it away and it is rebuilt."""
    env = {**__import__("os").environ, "CASDYN_CACHE": str(tmp_path)}
    run = lambda: subprocess.run([sys.executable, "-c", COMPILE_IN_A_FRESH_PROCESS],  # noqa: E731
                                 env=env, capture_output=True, text=True, timeout=120)
    assert run().returncode == 0
    (library,) = tmp_path.glob("*.so")
    if damage == "truncated":
        library.write_bytes(library.read_bytes()[:3000])
    elif damage == "foreign":
        casdyn.load_robot("ur5e").export_c(tmp_path / "other", ["mass_matrix"])
        library.write_bytes((tmp_path / "other" / "libcasdyn_ur5e.so").read_bytes())
    else:
        library.with_name(library.name + ".sha256").unlink()
    result = run()
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def _logging_compiler(tmp_path) -> tuple[str, Path]:
    """A C compiler that appends its arguments to a log, then runs the real one."""
    log = tmp_path / "cc.log"
    script = tmp_path / "logging-cc"
    script.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec {build.find_compiler()} "$@"\n')
    script.chmod(0o755)
    return str(script), log


def test_large_functions_get_files_of_their_own_compiled_in_parallel(tmp_path, monkeypatch):
    # the UR5e's ID derivatives count as large, its FD derivatives as huge
    monkeypatch.setattr(sizes, "OWN_C_FILE", 2_000)
    monkeypatch.setattr(sizes, "LOWEST_OPTIMISATION", 4_000)
    robot = casdyn.load_robot("ur5e")
    names = ["inverse_dynamics", "mass_matrix", "inverse_dynamics_derivatives",
             "forward_dynamics_derivatives"]
    assert [robot.function(n).n_instructions() // 2_000 for n in names] == [0, 0, 1, 2]
    compiler, log = _logging_compiler(tmp_path)
    loaded = robot.export_c(tmp_path / "out", names, compiler=compiler)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "casdyn_ur5e.c", "casdyn_ur5e.h", "casdyn_ur5e_forward_dynamics_derivatives.c",
        "casdyn_ur5e_inverse_dynamics_derivatives.c", "libcasdyn_ur5e.so"]
    header = (tmp_path / "out" / "casdyn_ur5e.h").read_text()
    assert all(f"int ur5e_{n}(const casadi_real** arg" in header for n in names)
    commands = [c for c in log.read_text().splitlines() if c != "--version"]  # GCC?
    compiled = {c.split(" -c ")[1].split()[0]: c.split()[0] for c in commands if " -c " in c}
    gcc = build.is_gcc(build.find_compiler())
    assert compiled == {"casdyn_ur5e.c": "-O3", "casdyn_ur5e_inverse_dynamics_derivatives.c": "-O2",
                        "casdyn_ur5e_forward_dynamics_derivatives.c": "-O1"}
    large = next(c for c in commands if "inverse_dynamics_derivatives.c" in c)
    assert ("-fno-tree-pre -fno-code-hoisting" in large) == gcc
    assert len(commands) == 4 and "-shared" in commands[-1]  # three objects, one link
    rng = np.random.default_rng(0)
    for name in names:
        sx = robot.function(name)
        args = random_inputs(sx, rng)
        for ours, theirs in zip(loaded[name].call(args), sx.call(args), strict=True):
            assert_close(ours.full(), theirs.full())
    # given flags are used for every file
    log.unlink()
    robot.export_c(tmp_path / "again", names, compiler=compiler, flags=("-O2", "-fPIC",
                                                                         "-shared"))
    assert all(c.startswith("-O2") for c in log.read_text().splitlines() if c != "--version")


def test_a_failing_part_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(sizes, "OWN_C_FILE", 2_000)
    with pytest.raises(ExportError, match=r"compiling casdyn_ur5e\S*\.c failed"):
        casdyn.load_robot("ur5e").export_c(
            tmp_path / "out", ["gravity_torque", "inverse_dynamics_derivatives"],
            flags=("-O1", "--no-such-flag-for-cc"))
    assert list(tmp_path.iterdir()) == []


def test_compile_with_large_functions_keeps_the_entry_point(tmp_path, monkeypatch):
    monkeypatch.setattr(sizes, "OWN_C_FILE", 2_000)
    monkeypatch.setenv("CASDYN_CACHE", str(tmp_path))
    plain = casdyn.load_robot("ur5e")
    robot = casdyn.load_robot("ur5e").compile(["gravity_torque",
                                               "inverse_dynamics_derivatives"])
    assert len(robot._engine._native) == 3  # gravity; the derivatives with and without fext
    q, qd, qdd = plain.random_configuration(3), np.ones(6), np.arange(6.0)
    for ours, theirs in zip(robot.inverse_dynamics_derivatives(q, qd, qdd),
                            plain.inverse_dynamics_derivatives(q, qd, qdd), strict=True):
        assert_close(ours, theirs)


def _compiler_script(tmp_path, name: str, refuse: str) -> tuple[str, Path]:
    """A C compiler that logs its arguments and fails on ``-march=native`` when ``refuse``
    is "always", or only when building (not when asked to preprocess) for "building"; else
    it runs the real one."""
    log = tmp_path / f"{name}.log"
    script = tmp_path / name
    test = {"always": '*-march=native*) exit 1;;',
            "building": '*-march=native*-E*) ;; *-march=native*) exit 1;;', "never": ""}[refuse]
    script.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\ncase "$*" in {test} esac\n'
                      f'exec {build.find_compiler()} "$@"\n')
    script.chmod(0o755)
    return str(script), log


def _builds(log: Path) -> list[str]:
    """The logged commands that build something (not the probes)."""
    return [c for c in log.read_text().splitlines() if " -o " in c]


@pytest.mark.parametrize("refuse", ["never", "always", "building"])
def test_compile_builds_for_this_processor_where_the_compiler_can(tmp_path, monkeypatch,
                                                                  refuse):
    compiler, log = _compiler_script(tmp_path, f"cc-{refuse}", refuse)
    monkeypatch.setenv("CC", compiler)
    robot = casdyn.load_robot("ur5e").compile(["gravity_torque"], directory=tmp_path / "cache")
    builds = _builds(log)  # "building": a failed try with the flag, then one without
    native = ["-march=native" in c for c in builds]
    assert {"never": all(native), "always": not any(native),
            "building": native[0] and not native[-1]}[refuse]
    q = robot.random_configuration(7)
    assert_close(robot.gravity_torque(q), casdyn.load_robot("ur5e").gravity_torque(q))


def test_the_compile_cache_keeps_one_library_per_processor(tmp_path, monkeypatch):
    monkeypatch.setenv("CASDYN_CACHE", str(tmp_path))
    casdyn.load_robot("planar_2link").compile(["gravity_torque"])
    casdyn.load_robot("planar_2link").compile(["gravity_torque"])
    assert len(list(tmp_path.glob("*.so"))) == 1
    monkeypatch.setattr(store, "cpu_identity", lambda: "another processor")
    casdyn.load_robot("planar_2link").compile(["gravity_torque"])
    assert len(list(tmp_path.glob("*.so"))) == 2


def test_export_builds_for_this_processor_only_when_asked(tmp_path):
    compiler, log = _compiler_script(tmp_path, "cc", "never")
    robot = casdyn.load_robot("planar_2link")
    robot.export_c(tmp_path / "portable", ["mass_matrix"], compiler=compiler)
    assert not any("-march=native" in c for c in _builds(log))
    log.unlink()
    robot.export_c(tmp_path / "native", ["mass_matrix"], compiler=compiler, native=True)
    assert _builds(log) and all("-march=native" in c for c in _builds(log))
    refusing, _ = _compiler_script(tmp_path, "old-cc", "always")
    with pytest.raises(ExportError, match="does not accept -march=native"):
        robot.export_c(tmp_path / "refused", ["mass_matrix"], compiler=refusing, native=True)
    assert not (tmp_path / "refused").exists()


def test_large_files_compile_once_then_come_from_the_object_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CASDYN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(sizes, "KEEP_OBJECT", 0)  # every file counts as large here
    compiler, log = _compiler_script(tmp_path, "cc", "never")
    robot = casdyn.load_robot("planar_2link")
    functions = ["mass_matrix", "gravity_torque"]
    first = robot.export_c(tmp_path / "first", functions, compiler=compiler, batch=True)
    compiled = [c for c in _builds(log) if " -c " in c]
    assert len(compiled) == 3  # the functions' file and two batched ones
    log.unlink()
    again = robot.export_c(tmp_path / "again", functions, compiler=compiler, batch=True)
    assert not [c for c in _builds(log) if " -c " in c]  # only the link
    q = [0.3, -0.4]
    for key in functions:
        assert np.array_equal(np.array(again[key](q)), np.array(first[key](q)))
    log.unlink()
    robot.export_c(tmp_path / "other", functions, compiler=compiler, batch=True,
                    flags="-O1 -fPIC -shared")
    assert len([c for c in _builds(log) if " -c " in c]) == 3  # other flags: other objects
