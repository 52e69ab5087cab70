"""Long straight-line C functions cut into parts compute what the uncut ones do."""

from __future__ import annotations

import ctypes
import re
import subprocess

import casadi as ca
import numpy as np
import pytest
from conftest import assert_close

import casdyn
from casdyn import sizes
from casdyn.codegen import build, split

pytestmark = pytest.mark.slow  # compiles C


def _generated(function: ca.Function, directory) -> str:
    generator = ca.CodeGenerator("f.c")
    generator.add(function)
    generator.generate(str(directory) + "/")
    return (directory / "f.c").read_text()


def _build(source: str, path) -> ctypes.CDLL:
    path.with_suffix(".c").write_text(source)
    subprocess.run([build.find_compiler(), "-O1", "-fPIC", "-shared", str(path.with_suffix(".c")),
                    "-o", str(path), "-lm"], check=True)
    return ctypes.CDLL(str(path))


def _call(library, name: str, function: ca.Function, inputs) -> list[np.ndarray]:
    """``function``'s outputs from the compiled ``name`` (dense in- and outputs)."""
    double_p = ctypes.POINTER(ctypes.c_double)
    args = [np.ascontiguousarray(x, dtype=float) for x in inputs]
    outs = [np.zeros(function.nnz_out(i)) for i in range(function.n_out())]
    arg = (double_p * len(args))(*(a.ctypes.data_as(double_p) for a in args))
    res = (double_p * len(outs))(*(o.ctypes.data_as(double_p) for o in outs))
    assert getattr(library, name)(arg, res, None, None, 0) == 0
    return outs


def test_a_cut_function_gives_the_uncut_ones_numbers_bit_for_bit(tmp_path):
    robot = casdyn.load_robot("ur5e")
    function = robot.function("inverse_dynamics_derivatives")
    function = ca.Function("idd", function.sx_in(), function.call(function.sx_in()))
    source = _generated(function, tmp_path)
    cut = split.split_functions(source, part=500, split_from=1_000)
    statements = len(re.findall(r"^  a\d+=", source, re.MULTILINE))
    parts = len(re.findall(r"^static CASDYN_NOINLINE void casadi_f0_part\d+\(", cut,
                           re.MULTILINE))
    assert parts == -(-statements // 500) > 2
    rng = np.random.default_rng(3)
    inputs = [rng.normal(size=function.nnz_in(i)) for i in range(function.n_in())]
    whole = _call(_build(source, tmp_path / "whole.so"), "idd", function, inputs)
    parted = _call(_build(cut, tmp_path / "cut.so"), "idd", function, inputs)
    for a, b in zip(whole, parted, strict=True):
        assert np.array_equal(a, b)  # same statements in the same order: same rounding
    sx = function.call([ca.DM(function.sparsity_in(i), x) for i, x in enumerate(inputs)])
    for a, b in zip(whole, sx, strict=True):
        assert_close(a, np.asarray(b.nonzeros()))


def test_short_functions_and_code_that_is_not_straight_line_stay_as_they_are(tmp_path):
    x = ca.SX.sym("x", 3)
    short = ca.Function("short", [x], [ca.sin(x) * x[0]])
    source = _generated(short, tmp_path)
    assert split.split_functions(source, part=2, split_from=100) == source
    # an MX function calling another one: calls and blocks are never cut
    y = ca.MX.sym("y", 3)
    caller = ca.Function("caller", [y], [short(y) + short(2 * y)])
    source = _generated(caller, tmp_path)
    cut = split.split_functions(source, part=2, split_from=2)
    assert re.search(r"static int casadi_f0\(.*\{\n(.*\n)*?.*casadi_f1\(", cut)
    assert "casadi_f0_part" not in cut


def test_export_cuts_large_functions_only_in_portable_builds(tmp_path, monkeypatch):
    monkeypatch.setattr(sizes, "OWN_C_FILE", 2_000)
    monkeypatch.setattr(sizes, "SPLIT_FROM", 2_000)
    monkeypatch.setattr(sizes, "SPLIT_PART", 1_000)
    robot = casdyn.load_robot("ur5e")
    name = "inverse_dynamics_derivatives"
    loaded = robot.export_c(tmp_path / "portable", ["gravity_torque", name])
    source = (tmp_path / "portable" / f"casdyn_ur5e_{name}.c").read_text()
    assert "casadi_f0_part1(" in source
    rng = np.random.default_rng(1)
    sx = robot.function(name)
    args = [rng.normal(size=sx.size_in(i)) for i in range(sx.n_in())]
    for ours, theirs in zip(loaded[name].call(args), sx.call(args), strict=True):
        assert_close(ours.full(), theirs.full())
    if build.native_flags(build.find_compiler()):
        robot.export_c(tmp_path / "native", ["gravity_torque", name], native=True)
        native = (tmp_path / "native" / f"casdyn_ur5e_{name}.c").read_text()
        assert "casadi_f0_part" not in native
