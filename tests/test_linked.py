"""Forward-dynamics derivatives linked to the library's own inverse-dynamics derivatives
compute what their SX graph does."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close
from random_trees import random_urdf

import casdyn
from casdyn import sizes
from casdyn.codegen import build, forms

pytestmark = pytest.mark.slow  # C export and compilation

NAMES = ["forward_dynamics", "inverse_dynamics_derivatives", "forward_dynamics_derivatives"]


@pytest.mark.parametrize("robot_name, floating_base, fext", [
    ("ur5e", False, True), ("solo12", True, True), ("torso_two_arms", False, False)])
def test_linked_derivatives_equal_the_sx_ones(tmp_path, monkeypatch, robot_name,
                                              floating_base, fext):
    monkeypatch.setattr(sizes, "COMPOSED_FROM", 0)
    robot = casdyn.load_robot(robot_name, floating_base=floating_base)
    names = [(n, {"fext": fext}) for n in NAMES]
    loaded = robot.export_c(tmp_path / "out", names)
    source = "".join(p.read_text() for p in (tmp_path / "out").glob("*.c"))
    prefix = robot.model.name
    symbol = next(n for n in loaded if n.startswith("inverse_dynamics_derivatives"))
    assert f"if ({prefix}_{symbol}(a, r, 0, 0, 0)) return 1;" in source  # linked
    sx = robot.function("forward_dynamics_derivatives", fext=fext)
    compiled = loaded[next(n for n in loaded if n.startswith("forward_dynamics_derivatives"))]
    rng = np.random.default_rng(7)
    for _ in range(3):
        args = [rng.normal(size=sx.size_in(i)) for i in range(sx.n_in())]
        args[0] = np.asarray(robot.random_configuration(rng)).reshape(sx.size_in(0))
        for ours, theirs in zip(compiled.call(args), sx.call(args), strict=True):
            assert ours.sparsity() == theirs.sparsity()
            assert_close(ours.full(), theirs.full())


def test_without_the_inverse_dynamics_derivatives_nothing_is_linked(tmp_path, monkeypatch):
    monkeypatch.setattr(sizes, "COMPOSED_FROM", 0)
    robot = casdyn.load_robot("ur5e")
    loaded = robot.export_c(tmp_path / "out", ["forward_dynamics",
                                               "forward_dynamics_derivatives"])
    source = "".join(p.read_text() for p in (tmp_path / "out").glob("*.c"))
    assert "(a, r, 0, 0, 0)" not in source
    sx = robot.function("forward_dynamics_derivatives")
    args = [np.full(sx.size_in(i), 0.3) for i in range(sx.n_in())]
    for ours, theirs in zip(loaded["forward_dynamics_derivatives"].call(args), sx.call(args),
                            strict=True):
        assert_close(ours.full(), theirs.full())


def test_compile_links_the_derivatives_too(tmp_path, monkeypatch):
    monkeypatch.setattr(sizes, "COMPOSED_FROM", 0)
    monkeypatch.setenv("CASDYN_CACHE", str(tmp_path))
    robot = casdyn.load_robot("torso_two_arms")
    sx = robot.function("forward_dynamics_derivatives")
    written = []  # the C of the library, as the compiler reads it
    run = build.run

    def recording(plan, scratch, *args):
        written.extend(path.read_text() for path in sorted(scratch.glob("*.c")))
        return run(plan, scratch, *args)

    monkeypatch.setattr(build, "run", recording)
    compiled = robot.compile(NAMES)
    library = "".join(written)
    assert f"if ({robot.function('inverse_dynamics_derivatives').name()}(a, r, 0, 0, 0))" \
        in library
    rng = np.random.default_rng(2)
    q, qd, tau = robot.random_configuration(rng), rng.normal(size=9), rng.normal(size=9)
    ours = compiled.forward_dynamics_derivatives(q, qd, tau)
    theirs = sx(q, qd, tau, np.zeros(sx.size_in(3)))
    for a, b in zip(ours, theirs, strict=True):
        assert_close(np.asarray(a), b.full())


def test_chains_and_trees_are_linked_small_models_not(monkeypatch):
    """The linked form wherever the composed one applies, from sizes.COMPOSED_FROM
    instructions: chains (full rows) and trees alike, not the UR5e."""
    small = casdyn.load_robot("ur5e")._functions
    keys = [small.key(n) for n in NAMES]
    assert forms.linked_forms(small, keys, NAMES) == {}
    monkeypatch.setattr(sizes, "COMPOSED_FROM", 0)
    chain = casdyn.load_urdf(random_urdf(3, 20, chain=True))._functions
    tree = casdyn.load_robot("torso_two_arms")._functions
    for cache in (chain, tree, small):
        keys = [cache.key(n) for n in NAMES]
        assert list(forms.linked_forms(cache, keys, NAMES)) == [keys[2]]
