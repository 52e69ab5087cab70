"""The buffer-based numeric path and compile(): same numbers, same errors, cache reuse."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest
from conftest import assert_close, random_state

import casdyn
from casdyn import InputError
from casdyn.codegen import build
from casdyn.functions import build_dynamics

pytestmark = pytest.mark.slow  # compiled libraries


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CASDYN_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_fast_path_equals_the_casadi_call():
    robot = casdyn.load_robot("torso_two_arms")
    q, qd, x, fext = random_state(robot)
    f = robot.function("inverse_dynamics")
    expected = f(q, qd, x, fext).full().ravel()
    assert_close(robot.inverse_dynamics(q, qd, x, fext), expected)
    assert_close(robot.inverse_dynamics(list(q), list(qd), list(x), fext.tolist()), expected)
    J = robot.geometric_jacobian(q, "left_tool")  # sparse output, scattered back to dense
    assert_close(J, robot.function("geometric_jacobian", body="left_tool")(q).full())
    T = robot.get_transform(q, "right_tool")
    assert T.shape == (4, 4) and T[3].tolist() == [0, 0, 0, 1]


def test_results_are_fresh_arrays():
    robot = casdyn.load_robot("ur5e")
    a = robot.gravity_torque(robot.random_configuration(1))
    b = robot.gravity_torque(robot.random_configuration(2))
    assert not np.shares_memory(a, b) and not np.array_equal(a, b)


@pytest.mark.parametrize("bad", [0.5, np.zeros(5), np.zeros((6, 5)), "abc"])
def test_fast_path_leaves_odd_input_to_the_checked_path(bad):
    with pytest.raises(InputError):
        casdyn.load_robot("ur5e").inverse_dynamics(bad)


def test_compiled_evaluation_equals_sx_and_symbolic_calls_stay_sx(cache):
    robot = casdyn.load_robot("kuka_iiwa14")
    q, qd, x, fext = random_state(robot, 3)
    expected = (robot.inverse_dynamics(q, qd, x, fext), robot.forward_dynamics(q, qd, x),
                robot.mass_matrix(q), robot.center_of_mass(q))
    assert robot.compile() is robot
    assert {"inverse_dynamics", "forward_dynamics_nofext", "mass_matrix"} <= set(
        robot.compiled_functions)
    got = (robot.inverse_dynamics(q, qd, x, fext), robot.forward_dynamics(q, qd, x),
           robot.mass_matrix(q), robot.center_of_mass(q))
    for a, b in zip(got[:3], expected[:3], strict=True):
        assert_close(a, b)
    assert_close(got[3][0], expected[3][0])  # centre of mass
    assert_close(got[3][1], expected[3][1])  # and its Jacobian
    batch = robot.mass_matrix(np.array([q, q]))  # batches use the compiled code too
    assert_close(batch[1], expected[2])
    assert isinstance(robot.inverse_dynamics(ca.SX.sym("q", 7)), ca.SX)
    with pytest.raises(InputError, match="qd must be finite"):
        robot.inverse_dynamics(q, np.full(7, np.nan))


def test_compile_of_a_name_builds_the_variants_its_calls_use(cache):
    """compile(["inverse_dynamics"]) then a call without fext must run compiled code: both
    the fext and the fext-free variants are built (the call takes the smaller one)."""
    robot = casdyn.load_robot("ur5e")
    robot.compile(["inverse_dynamics", ("forward_dynamics", {"fext": False}), "mass_matrix"])
    assert robot.compiled_functions == ("inverse_dynamics", "inverse_dynamics_nofext",
                                        "forward_dynamics_nofext", "mass_matrix")
    q, qd, x, _ = random_state(robot, 4)
    sx = robot.function("inverse_dynamics", fext=False)
    assert_close(robot.inverse_dynamics(q, qd, x), sx(q, qd, x).full().ravel())
    # the call's numbers came from the compiled Function, not from the SX graph
    _, _, evaluator, _ = robot._engine._thread_entry(build_dynamics.inverse_dynamics, None, True)
    assert evaluator.function.class_name() == "External"


@pytest.mark.parametrize("with_fext", [False, True])  # 27 numbers in (summed) / 99 (dot product)
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_fast_path_sends_non_finite_inputs_to_the_checked_path(with_fext, value):
    robot = casdyn.load_robot("torso_two_arms")
    q, qd, x, fext = random_state(robot)
    arguments = {"q": q, "qd": qd, "qdd": x, "fext": fext if with_fext else None}
    for name in ("q", "qd", "qdd", *(("fext",) if with_fext else ())):
        bad = np.array(arguments[name], dtype=float)
        bad.flat[-1] = value
        with pytest.raises(InputError, match=f"{name} must be finite"):
            robot.inverse_dynamics(**{**arguments, name: bad})


def test_compiled_library_is_cached_and_reused(cache, monkeypatch):
    casdyn.load_robot("planar_2link").compile(["gravity_torque"])
    assert len(list(cache.glob("libcasdyn_planar_2link_*.so"))) == 1

    def no_compiling(*args, **kwargs):
        raise AssertionError("the cached library should have been loaded")

    monkeypatch.setattr(build, "run", no_compiling)
    robot = casdyn.load_robot("planar_2link").compile(["gravity_torque"])
    assert robot.compiled_functions == ("gravity_torque",)
    assert_close(robot.gravity_torque([0.2, 0.3]),
                 casdyn.load_robot("planar_2link").gravity_torque([0.2, 0.3]))


def _entry_calls(q, qd, x, fext):
    """Calls covering what the compiled entry point handles: vector, matrix, sparse and
    several outputs; matrix (fext) and scalar (damping) inputs; defaults."""
    contacts = [casdyn.Contact("left_tool"), casdyn.Contact("right_tool", point=(0, 0, 0.1))]
    return {
        "inverse_dynamics": lambda r: r.inverse_dynamics(q, qd, x, fext),
        "inverse_dynamics, defaults": lambda r: r.inverse_dynamics(q),
        "forward_dynamics": lambda r: r.forward_dynamics(q, qd, x),
        "mass_matrix": lambda r: r.mass_matrix(q),
        "center_of_mass": lambda r: r.center_of_mass(q),
        "geometric_jacobian": lambda r: r.geometric_jacobian(q, "left_tool"),
        "contact_dynamics": lambda r: r.contact_dynamics(q, qd, x, contacts, fext, 2.5),
        "kinetic_energy": lambda r: r.kinetic_energy(q, qd),
    }, [("inverse_dynamics", {"fext": True}), ("inverse_dynamics", {"fext": False}),
        ("forward_dynamics", {"fext": False}), "mass_matrix", "center_of_mass",
        ("geometric_jacobian", {"body": "left_tool"}), "kinetic_energy",
        ("contact_dynamics", {"contacts": contacts})]


def test_compiled_entry_point_returns_what_the_sx_path_returns(cache):
    """After compile() numeric calls go through the library's C entry point (casdyn.runtime.entry):
    the same numbers, types, shapes and memory order as the SX path, in fresh arrays."""
    q, qd, x, fext = random_state(casdyn.load_robot("torso_two_arms"))
    calls, functions = _entry_calls(q, qd, x, fext)
    plain = casdyn.load_robot("torso_two_arms")
    robot = casdyn.load_robot("torso_two_arms").compile(functions)
    # every compiled Function has its entry point
    assert len(robot._engine._native) == len(robot.compiled_functions) >= len(functions)
    for name, call in calls.items():
        want, got = call(plain), call(robot)
        assert type(got) is type(want), name
        for a, b in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, want)),
                        strict=True):
            if isinstance(b, float):  # a scalar output (kinetic energy)
                assert_close(a, b)
                continue
            assert isinstance(a, np.ndarray) and a.shape == b.shape, name
            assert a.flags.c_contiguous and a.flags.writeable and a.flags.owndata, name
            assert_close(a, b)
    assert not np.shares_memory(robot.mass_matrix(q), robot.mass_matrix(q))


def test_compiled_entry_point_reads_strided_and_fortran_arrays(cache):
    q, qd, x, fext = random_state(casdyn.load_robot("torso_two_arms"))
    robot = casdyn.load_robot("torso_two_arms").compile([("inverse_dynamics", {"fext": True})])
    want = robot.inverse_dynamics(q, qd, x, fext)
    columns = np.array([q, qd, x]).T  # columns of a C-ordered array: strided views
    got = robot.inverse_dynamics(columns[:, 0], columns[:, 1], columns[:, 2],
                                 np.asfortranarray(fext))
    assert np.array_equal(got, want)
    # what it does not take goes to the checked path: lists, integers, other shapes
    assert_close(robot.inverse_dynamics(list(q), qd, x, fext.tolist()), want)
    assert_close(robot.inverse_dynamics(np.zeros(9, dtype=int)),
                 robot.inverse_dynamics(np.zeros(9)))
    with pytest.raises(InputError, match="fext"):
        robot.inverse_dynamics(q, qd, x, fext[:, :5])
    with pytest.raises(InputError, match="qdd must be finite"):
        robot.inverse_dynamics(q, qd, np.full(9, np.inf), fext)
