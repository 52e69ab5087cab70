"""The sines and cosines of a function's inputs computed together in the C
(casdyn.codegen.trig): what the rewrite changes in CasADi's C, and that the compiled
Functions still give the SX graph's numbers, angles beyond the lanes' range included."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest
from random_trees import random_urdf

import casdyn
from casdyn.codegen import trig

FUNCTIONS = [("inverse_dynamics", {"fext": False}), ("forward_dynamics", {"fext": False}),
             "mass_matrix", ("inverse_dynamics_derivatives", {"fext": False})]


def generated(function: ca.Function) -> str:
    generator = ca.CodeGenerator("f.c")
    generator.add(function)
    return generator.dump()


def test_the_arm_reads_its_sines_and_cosines_from_the_lanes():
    robot = casdyn.load_robot("ur5e")
    text = generated(robot.function("inverse_dynamics", fext=False))
    assert "=sin(" in text and "=cos(" in text
    rewritten = trig.hoisted(text)
    assert "=sin(" not in rewritten and "=cos(" not in rewritten
    assert rewritten.count("casdyn_trig_lanes(casdyn_x, casdyn_s, casdyn_c, 8);") == 1
    # the five angles that enter (the first joint's only turns gravity about its own axis)
    assert [f"casdyn_x[{k}] = (arg[0] ? arg[0][{k + 1}] : 0);" in rewritten
            for k in range(5)] == [True] * 5


def test_a_function_with_one_sine_of_an_input_is_left_as_it_was():
    x, y = ca.SX.sym("x"), ca.SX.sym("y")
    text = generated(ca.Function("one", [x, y], [ca.sin(x) * y + ca.cos(x * y)]))
    assert trig.hoisted(text) == text


@pytest.mark.parametrize("native", [True, False], ids=["native", "portable"])
def test_compiled_functions_give_the_graphs_numbers(tmp_path, native):
    """Every compiled Function against the SX graph's evaluation (CasADi's VM, the C
    library's sin and cos), over angles from 1 to 1e7 in magnitude: the lanes' own
    reduction below 1e5, the C library's beyond."""
    robot = casdyn.load_robot("ur5e")
    compiled = robot.export_c(tmp_path, FUNCTIONS, native=native)
    rng = np.random.default_rng(3)
    for scale in (1.0, 10.0, 1e3, 9e4, 2e5, 1e7):
        q = rng.uniform(-scale, scale, robot.nq)
        q[2] = scale  # one angle beyond the lanes' range with the others within it
        qd, x = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        for spec, (name, function) in zip(FUNCTIONS, compiled.items(), strict=True):
            graph = robot.function(*((spec[0],) if isinstance(spec, tuple) else (spec,)),
                                   **(spec[1] if isinstance(spec, tuple) else {}))
            args = (q,) if function.n_in() == 1 else (q, qd, x)
            for got, want in zip(function.call(list(args)), graph.call(list(args)),
                                 strict=True):
                got, want = np.asarray(got), np.asarray(want)
                assert np.abs(got - want).max() <= 1e-13 * max(1.0, np.abs(want).max()), name


@pytest.mark.parametrize("seed", [1, 3])
def test_angles_with_a_folded_turn_are_read_too(tmp_path, seed):
    """Random chains, whose joints' constant turns about their own axes are folded into the
    angle (``q + c``): every sine and cosine comes from the lanes, and the compiled
    Functions give the graph's numbers."""
    robot = casdyn.load_urdf(random_urdf(seed, n_links=8, chain=True))
    text = trig.hoisted(generated(robot.function("inverse_dynamics", fext=False)))
    assert "=sin(" not in text and "=cos(" not in text
    folded = [line for line in text.splitlines()
              if "casdyn_x[" in line and (" + (arg" in line or ": 0) + " in line
                                          or ": 0) - " in line)]
    assert folded
    compiled = robot.export_c(tmp_path, FUNCTIONS[:3])
    rng = np.random.default_rng(seed)
    for _ in range(5):
        q = rng.uniform(-4, 4, robot.nq)
        qd, x = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        for spec, function in zip(FUNCTIONS[:3], compiled.values(), strict=True):
            name, options = spec if isinstance(spec, tuple) else (spec, {})
            args = [q] if function.n_in() == 1 else [q, qd, x]
            got = np.asarray(function.call(args)[0])
            want = np.asarray(robot.function(name, **options).call(args)[0])
            assert np.abs(got - want).max() <= 1e-13 * max(1.0, np.abs(want).max()), name


def test_a_negative_turn_subtracted_is_written_as_a_subtraction():
    """``x - (-1.5)``, which CasADi writes as ``(a0-a1)`` with ``a1 = -1.5``: in C the
    angle must read ``x - -1.5`` (``x--1.5`` does not compile), and compiled the Function
    gives CasADi's numbers."""
    x = ca.SX.sym("x", 2)
    f = ca.Function("turned", [x], [ca.sin(x[0] - (-1.5)) * ca.cos(x[1] - (-0.25))
                                    + ca.sin(x[1])])
    prologue = [line for line in trig.hoisted(generated(f)).splitlines()
                if line.startswith("  casdyn_x[")]
    assert "  casdyn_x[0] = ((arg[0] ? arg[0][0] : 0) - -1.5000000000000000e+00);" in prologue
    compiled = casdyn.compile_function(f)
    for value in ([0.3, -2.0], [1e6, 3.0], [-7.0, 0.5]):
        assert abs(float(compiled(value)) - float(f(value))) <= 1e-15 * 4
