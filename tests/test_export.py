"""C export: compiled functions equal the SX ones; failures are clear and leave no files."""

from __future__ import annotations

import ctypes
import re

import casadi as ca
import numpy as np
import pytest
from conftest import assert_close

import casdyn
import casdyn.export
from casdyn import ExportError


def random_inputs(function, rng):
    return [rng.normal(size=function.size_in(i)) for i in range(function.n_in())]


def test_default_export_compiles_every_function_and_matches_sx(tmp_path):
    robot = casdyn.load_robot("scara")
    loaded = robot.export_c(tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "casdyn_scara.c", "casdyn_scara.h", "libcasdyn_scara.so"]
    per_body = {"geometric_jacobian", "get_transform", "external_force"}
    expected = [n for n in casdyn.FUNCTION_NAMES if n not in per_body] + [
        f"{n}_tool0" for n in ("geometric_jacobian", "get_transform", "external_force")]
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
    loaded = dict(zip(["scalar", "mapped"],
                      casdyn.export.export_functions([scalar, mapped], tmp_path, "helpers"),
                      strict=True))
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
