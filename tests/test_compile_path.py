"""The one compile path: one table of sizes, one flags policy, one cache key rule, and the
public compile_function."""

from __future__ import annotations

import re
from pathlib import Path

import casadi as ca
import numpy as np
import pytest

import casdyn
import casdyn.ocp
from casdyn import ExportError, sizes
from casdyn.codegen import build, store


def _compiler() -> str:
    try:
        return build.find_compiler()
    except ExportError:
        pytest.skip("no C compiler")


def test_the_flags_of_a_c_file_follow_its_size_from_the_one_table():
    cc = _compiler()
    small = ("-O3", "-fPIC", "-shared")
    if build.is_gcc(cc):
        large = ("-O2", "-fno-tree-pre", "-fno-code-hoisting", "-fvect-cost-model=dynamic",
                 "-fPIC", "-shared")
        huge = ("-O1", "-ftree-loop-vectorize", "-fPIC", "-shared")
    else:
        large, huge = ("-O2", "-fPIC", "-shared"), ("-O1", "-fPIC", "-shared")
    assert sizes.OWN_C_FILE == 20_000 and sizes.LOWEST_OPTIMISATION == 150_000
    chosen = {n: build.flags_for(n, cc) for n in (0, 19_999, 20_000, 149_999, 150_000, 10**6)}
    assert chosen == {0: small, 19_999: small, 20_000: large, 149_999: large, 150_000: huge,
                      10**6: huge}


def test_the_size_thresholds_are_declared_in_the_table_only():
    """A threshold in one place: no other module assigns a number of that size."""
    root = Path(casdyn.__file__).parent
    assignment = re.compile(r"^\s*[A-Z_]+\s*=\s*(?:20_?000|150_?000|12_?000|4_?000)\b",
                            re.MULTILINE)
    declared = [str(path.relative_to(root)) for path in root.rglob("*.py")
                if assignment.search(path.read_text())]
    assert declared == ["sizes.py"]


@pytest.mark.slow
def test_compile_function_keeps_one_library_per_c_flags_and_processor(tmp_path, monkeypatch):
    _compiler()
    x = ca.SX.sym("x", 3)
    f = ca.Function("keyed_square", [x], [x * x + 1])
    compiled = casdyn.compile_function(f, directory=tmp_path)
    assert np.allclose(np.asarray(compiled([1, 2, 3])).ravel(), [2, 5, 10], rtol=0, atol=0)
    assert compiled.name() == "keyed_square" and compiled.name_in() == f.name_in()
    casdyn.compile_function(f, directory=tmp_path)  # found: no second library
    assert casdyn.ocp.compiled is casdyn.compile_function
    assert len(list(tmp_path.glob("libkeyed_square_*.so"))) == 1
    casdyn.compile_function(f, directory=tmp_path, flags="-O1 -fPIC -shared")
    assert len(list(tmp_path.glob("libkeyed_square_*.so"))) == 2
    casdyn.compile_function(ca.Function("keyed_square", [x], [x * x + 2]), directory=tmp_path)
    assert len(list(tmp_path.glob("libkeyed_square_*.so"))) == 3
    monkeypatch.setattr(store, "cpu_identity", lambda: "another processor")
    casdyn.compile_function(f, directory=tmp_path)
    assert len(list(tmp_path.glob("libkeyed_square_*.so"))) == 4


@pytest.mark.slow
def test_compile_function_with_derivatives_gives_the_graphs_derivatives(tmp_path):
    """What nlpsol asks of a callback: the gradient (reverse mode) and the Jacobian."""
    _compiler()
    x = ca.SX.sym("x", 2)
    f = ca.Function("rosen", [x], [(1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2])
    compiled = casdyn.compile_function(f, with_derivatives=True, directory=tmp_path)
    point = [0.3, -0.2]
    assert np.allclose(np.asarray(compiled.jacobian()(point, 0)), [[33.4, -58.0]], rtol=1e-12)
    y = ca.MX.sym("y", 2)
    gradient = ca.Function("g", [y], [ca.gradient(compiled(y), y)])
    assert np.allclose(np.asarray(gradient(point)).ravel(), [33.4, -58.0], rtol=1e-12)
