"""casdyn.ocp refuses what it cannot use: each wrong argument of its public classes and
functions is an InputError naming the argument and the value, never a CasADi or NumPy
message, a NaN or a silently different problem; and the compiled horizon reports its build."""

from __future__ import annotations

import math
import re

import casadi as ca
import numpy as np
import pytest

import casdyn
from casdyn import InputError, progress
from casdyn.ocp import (
    ContactModel,
    ContactOCP,
    RealTimeIteration,
    TrackingCost,
    compiled,
    friction_cone,
    friction_pyramid,
)

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
NAN, INF = math.nan, math.inf


@pytest.fixture(scope="module")
def robot():
    return casdyn.load_robot("solo12", floating_base=True)


@pytest.fixture(scope="module")
def model(robot):
    return ContactModel(robot, FEET, dt=0.02, damping=10.0, mu=0.7)


@pytest.fixture(scope="module")
def cost(robot):
    return TrackingCost(np.ones(robot.nv), np.ones(robot.nv), np.ones(robot.nv - 6))


def raises(message: str):
    """``pytest.raises(InputError)`` matching ``message`` literally."""
    return pytest.raises(InputError, match=re.escape(message))


# -- ContactModel ---------------------------------------------------------------------------
@pytest.mark.parametrize(("options", "message"), [
    ({"dt": INF}, "dt must be a finite positive number, got inf"),
    ({"dt": NAN}, "dt must be a finite positive number, got nan"),
    ({"dt": 0.0}, "dt must be a finite positive number, got 0.0"),
    ({"dt": "0.01"}, "dt must be a finite positive number, got '0.01'"),
    ({"dt": None}, "dt must be a finite positive number, got None"),
    ({"dt": True}, "dt must be a finite positive number, got True"),
    ({"damping": NAN}, "damping must be a finite non-negative number, got nan"),
    ({"damping": "x"}, "damping must be a finite non-negative number, got 'x'"),
    ({"damping": -1.0}, "damping must be a finite non-negative number, got -1.0"),
    ({"mu": NAN}, "mu must be a finite non-negative number, got nan"),
    ({"mu": -0.5}, "mu must be a finite non-negative number, got -0.5"),
    ({"mu": INF}, "mu must be a finite non-negative number, got inf"),
    ({"sole": "ab"}, "sole must be 2 finite non-negative numbers, got 'ab'"),
    ({"sole": (-0.1, 0.05)}, "sole must be 2 finite non-negative numbers, got [-0.1, 0.05]"),
    ({"sole": (0.1,)}, "sole must be 2 finite non-negative numbers, got shape (1,)"),
    ({"sole": (0.1, NAN)}, "sole must be 2 finite non-negative numbers, got [0.1, nan]"),
    ({"contact": "6D"}, "contact must be 'point' or '6d', got '6D'"),
])
def test_contact_model_refuses_bad_scalars_naming_them(robot, options, message):
    arguments = {"dt": 0.02, **options}
    with raises(message):
        ContactModel(robot, FEET, **arguments)


@pytest.mark.parametrize(("feet", "message"), [
    (("FL_FOOT", "FR_FOOT", "FL_FOOT"), "feet: 'FL_FOOT' is listed twice"),
    (("FL_FOOT", "FR_FOT"), "feet: unknown body 'FR_FOT'; did you mean 'FR_FOOT'"),
    ("FL_FOOT", "feet must be a sequence of body names, got 'FL_FOOT'"),
    ((1, 2), "feet must be a sequence of body names, got (1, 2)"),
])
def test_contact_model_refuses_bad_feet(robot, feet, message):
    with raises(message):
        ContactModel(robot, feet, dt=0.02)


@pytest.mark.parametrize(("stance", "message"), [
    (True, "stance must be one flag per foot (4) or the held feet's names, got True"),
    ("FL_FOOT", "stance must be one flag per foot (4) or the held feet's names, got "
                "'FL_FOOT'"),
    ((1, 0, 2, 1), "stance: flags must be 0, 1, True or False, got 2"),
    ((1, 0, "FL_FOOT", 1), "stance: flags must be 0, 1, True or False, got 'FL_FOOT'"),
    ((1, 0, 1), "stance: expected 4 flags (one per foot), got 3"),
    (("FL_FOT",), "stance: unknown foot 'FL_FOT'; did you mean 'FL_FOOT'"),
])
def test_stance_mask_refuses_what_is_no_stance(model, stance, message):
    with raises(message):
        model.stance_mask(stance)


def test_stance_mask_reads_flags_and_names(model):
    assert model.stance_mask((1, 0, 0, 1)) == (True, False, False, True)
    assert model.stance_mask(np.array([0.0, 1.0, 1.0, 0.0])) == (False, True, True, False)
    assert model.stance_mask(["HR_FOOT", "FL_FOOT"]) == (True, False, False, True)


# -- friction rows --------------------------------------------------------------------------
@pytest.mark.parametrize("rows", [friction_pyramid, friction_cone])
@pytest.mark.parametrize(("mu", "message"), [
    (-0.5, "mu must be a finite non-negative number, got -0.5"),
    (NAN, "mu must be a finite non-negative number, got nan"),
    ("0.5", "mu must be a finite non-negative number, got '0.5'"),
])
def test_friction_rows_refuse_a_bad_mu(rows, mu, message):
    with raises(message):
        rows(ca.SX.sym("f", 3), mu)


def test_friction_rows_take_a_symbolic_mu():
    mu = ca.SX.sym("mu")
    rows = ca.Function("rows", [mu], [friction_pyramid(ca.DM([1.0, 0.0, 2.0]), mu)])
    assert np.allclose(np.asarray(rows(0.5)).ravel(), [0.0, 2.0, 1.0, 1.0])


def test_contact_rows_refuse_an_unknown_cone(model):
    with raises("cone must be 'pyramid' or 'exact', got 'Pyramid'"):
        model.contact_rows(ca.SX.sym("f", 3), "Pyramid")


# -- TrackingCost ---------------------------------------------------------------------------
@pytest.mark.parametrize(("options", "message"), [
    ({"foot_weight": NAN}, "foot_weight must be a finite non-negative number, got nan"),
    ({"foot_weight": "1"}, "foot_weight must be a finite non-negative number, got '1'"),
    ({"terminal": -1.0}, "terminal must be a finite non-negative number, got -1.0"),
    ({"q_weight": np.full(18, NAN)}, "q_weight must be a scalar or finite non-negative numbers"),
    ({"v_weight": [1.0, -2.0]}, "v_weight must be a scalar or finite non-negative numbers, "
                                "got [1.0, -2.0]"),
    ({"u_weight": "ones"}, "u_weight must be a scalar or finite non-negative numbers, "
                           "got 'ones'"),
])
def test_tracking_cost_refuses_bad_weights(options, message):
    weights = {"q_weight": np.ones(18), "v_weight": np.ones(18), "u_weight": np.ones(12),
               **options}
    with raises(message):
        TrackingCost(**weights)


def test_tracking_cost_refuses_weights_of_the_wrong_size(model):
    cost = TrackingCost(np.ones(17), np.ones(18), np.ones(12))
    x, u = ca.SX.sym("x", model.nx), ca.SX.sym("u", model.nu)
    p = ca.SX.sym("p", cost.parameter_size(model))
    with raises("q_weight must be a scalar or 18 finite non-negative numbers, got shape (17,)"):
        cost.residual(model, x, u, p)


def test_tracking_cost_pack_refuses_parts_of_the_wrong_size(model, cost):
    with raises("pack: q_ref must have 19 rows, got 18"):
        cost.pack(model, np.zeros(18), np.zeros(18), np.zeros(12), np.zeros(4), np.zeros(4))


# -- ContactOCP -----------------------------------------------------------------------------
@pytest.mark.parametrize(("options", "message"), [
    ({"effort_limit": NAN}, "effort_limit must be a scalar or 12 non-negative numbers, got nan"),
    ({"effort_limit": -1.0}, "effort_limit must be a scalar or 12 non-negative numbers, "
                             "got -1.0"),
    ({"velocity_limit": "80"}, "velocity_limit must be a scalar or 12 non-negative numbers, "
                               "got '80'"),
    ({"velocity_limit": np.ones(3)}, "velocity_limit must be a scalar or 12 non-negative "
                                     "numbers, got shape (3,)"),
    ({"position_limits": (np.zeros(12),)}, "position_limits must be (lower, upper), each a "
                                           "scalar or 12 numbers"),
    ({"position_limits": (np.ones(12), np.zeros(12))},
     "position_limits: lower must not exceed upper (joint 0: 1.0 > 0.0)"),
    ({"position_limits": (np.full(12, NAN), np.ones(12))},
     "position_limits must be (lower, upper), each a scalar or 12 numbers"),
    ({"dynamics": "Inverse"}, "dynamics must be 'forward' or 'inverse', got 'Inverse'"),
    ({"stance": [(1, 1, 1, 1), ("FL_FOT",)]}, "stance[1]: unknown foot 'FL_FOT'"),
    ({"stance": (1, 1, 1, 1)}, "stance[0] must be one flag per foot (4) or the held feet's "
                               "names, got 1"),
])
def test_contact_ocp_refuses_bad_arguments(model, cost, options, message):
    arguments = {"stance": [(1, 1, 1, 1)], **options}
    stance = arguments.pop("stance")
    with raises(message):
        ContactOCP(model, cost, stance, **arguments)


@pytest.mark.parametrize(("x_init", "u_guess", "message"), [
    (np.zeros(19), np.zeros(12), "x_init: expected 37 finite numbers, got shape (19,)"),
    (np.full(37, NAN), np.zeros(12), "x_init: expected 37 finite numbers, got NaN or inf"),
    (None, np.zeros(18), "u_guess: expected 12 torques, got shape (18,)"),
])
def test_contact_ocp_guess_refuses_a_bad_start(model, cost, x_init, u_guess, message):
    ocp = ContactOCP(model, cost, [(1, 1, 1, 1)])
    if x_init is None:
        x_init = np.r_[0.0, 0.0, 0.25, 1.0, np.zeros(33)]
    with raises(message):
        ocp.guess(x_init, u_guess)


# -- RealTimeIteration ----------------------------------------------------------------------
MODES = ((1, 1, 1, 1), (1, 0, 0, 1))


@pytest.mark.parametrize(("options", "message"), [
    ({"N": 0}, "N must be a whole number of at least 1, got 0"),
    ({"N": 2.5}, "N must be a whole number of at least 1, got 2.5"),
    ({"N": "3"}, "N must be a whole number of at least 1, got '3'"),
    ({"modes": (1, 1, 1, 1)}, "modes[0] must be one flag per foot (4) or the held feet's "
                              "names, got 1"),
    ({"modes": ()}, "modes: give at least one stance mask"),
    ({"effort_limit": np.ones(3)}, "effort_limit must be a scalar or 12 non-negative numbers, "
                                   "got shape (3,)"),
    ({"effort_limit": NAN}, "effort_limit must be a scalar or 12 non-negative numbers, "
                            "got nan"),
    ({"barrier": (NAN, 0.5)}, "barrier must be 2 finite positive numbers (mu, delta), "
                              "got (nan, 0.5)"),
    ({"torque_barrier": (0.1, 0.0)}, "torque_barrier must be 2 finite positive numbers "
                                     "(mu, delta), got (0.1, 0.0)"),
    ({"barrier": 1.0}, "barrier must be 2 finite positive numbers (mu, delta), got 1.0"),
    ({"constraints": "soft"}, "constraints must be 'hard' or 'barrier', got 'soft'"),
])
def test_real_time_iteration_refuses_bad_arguments(model, cost, options, message):
    arguments = {"N": 2, "modes": MODES, **options}
    N, modes = arguments.pop("N"), arguments.pop("modes")
    with raises(message):
        RealTimeIteration(model, cost, N, modes, compile=False, **arguments)


@pytest.fixture(scope="module")
def rti(model, cost):
    """Two knots, interpreted, standing."""
    rti = RealTimeIteration(model, cost, 2, MODES, compile=False)
    q = np.r_[0.0, 0.0, 0.25, 1.0, 0.0, 0.0, 0.0, [0.0, 0.8, -1.6] * 2 + [0.0, -0.8, 1.6] * 2]
    x = np.r_[q, np.zeros(model.nv)]
    rti.initialize(np.tile(x[:, None], (1, 3)), np.zeros((model.nu, 2)))
    return rti


def iterate_arguments(model, cost, rti):
    P = np.zeros((cost.parameter_size(model), 3))
    P[3] = 1.0  # the reference quaternion
    return {"x0": rti.X[:, 0], "P": P, "mode": [0, 1], "held": np.ones((4, 2))}


@pytest.mark.parametrize(("options", "message"), [
    ({"mode": [0, 2]}, "mode: each knot's index into the 2 modes (0 to 1), got [0.0, 2.0]"),
    ({"mode": [0, 0.5]}, "mode: each knot's index into the 2 modes (0 to 1), got [0.0, 0.5]"),
    ({"mode": [0]}, "mode: expected 2 values (one per interval), got shape (1,)"),
    ({"held": np.full((4, 2), 2.0)}, "held: 0 or 1 per foot and interval"),
    ({"held": np.ones((4, 3))}, "held: expected shape (4, 2), got (4, 3)"),
    # q_ref 19, v_ref 18, u_ref 12, then a height and a weight per foot: 57 rows
    ({"P": np.zeros((5, 3))}, "P: expected shape (57, 3), got (5, 3)"),
    ({"x0": np.zeros(3)}, "x0: expected 37 finite numbers, got shape (3,)"),
    ({"x0": np.full(37, NAN)}, "x0: expected 37 finite numbers"),
])
def test_iterate_refuses_a_bad_schedule_or_state(model, cost, rti, options, message):
    arguments = {**iterate_arguments(model, cost, rti), **options}
    X, U = rti.X.copy(), rti.U.copy()
    with raises(message):
        rti.iterate(**arguments)
    assert np.array_equal(rti.X, X) and np.array_equal(rti.U, U)


def test_initialize_refuses_a_non_finite_guess(rti):
    X, U = rti.X.copy(), rti.U.copy()
    X[0, 1] = NAN
    with raises("initialize: X and U must be finite, got NaN or inf"):
        rti.initialize(X, U)


def test_shift_refuses_a_non_finite_fraction(rti):
    with raises("fraction must be a finite non-negative number, got nan"):
        rti.shift(NAN)


# -- progress of the compiled horizon -------------------------------------------------------
@pytest.fixture
def at_once(monkeypatch):
    """Progress printed from the first moment (no delay), $CASDYN_PROGRESS unset."""
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.delenv(progress.ENVIRONMENT, raising=False)


def test_compiled_reports_its_build_when_asked(at_once, tmp_path, capsys, monkeypatch):
    x = ca.SX.sym("x", 2)
    f = ca.Function("ocp_square", [x], [x * x])
    compiled(f, directory=tmp_path, progress=True)
    lines = capsys.readouterr().err.splitlines()
    assert "casdyn: ocp_square: compiling 1 C file" in lines
    assert any(re.fullmatch(r"casdyn: ocp_square: \[1/1\] ocp_square\.c \(\d+\.\d s\)", line)
               for line in lines), lines
    assert lines[-1].startswith("casdyn: ocp_square: done in ")
    # quiet when told, and by default where stderr is no terminal
    g = ca.Function("ocp_cube", [x], [x * x * x])
    compiled(g, directory=tmp_path, progress=False)
    compiled(ca.Function("ocp_double", [x], [2 * x]), directory=tmp_path)
    assert capsys.readouterr().err == ""
    # $CASDYN_PROGRESS=1 turns it on where nothing is said
    monkeypatch.setenv(progress.ENVIRONMENT, "1")
    compiled(ca.Function("ocp_half", [x], [x / 2]), directory=tmp_path)
    assert "casdyn: ocp_half: [1/1] ocp_half.c (" in capsys.readouterr().err


def test_real_time_iteration_reports_its_compiled_horizon(at_once, model, cost, tmp_path,
                                                          capsys, monkeypatch):
    """Each of the horizon's compiled Functions reports, whatever program builds them."""
    from casdyn.ocp import rti as rti_module

    monkeypatch.setenv("CASDYN_CACHE", str(tmp_path))
    # the horizon's own C takes gcc minutes: compile a stand-in of each, report included
    stand_in = ca.SX.sym("x")

    def small(function, **options):
        compiled(ca.Function(function.name(), [stand_in], [2 * stand_in]), **options)
        return function

    monkeypatch.setattr(rti_module, "compile_function", small)
    RealTimeIteration(model, cost, 1, MODES[:1], progress=True)
    err = capsys.readouterr().err
    for name in ("rti_qp_data", "rti_update", "rti_shift"):
        assert f"casdyn: {name}: [1/1] {name}.c (" in err


def test_progress_must_be_true_false_or_none(tmp_path):
    x = ca.SX.sym("x")
    with raises("progress must be True, False or None, got 'yes'"):
        compiled(ca.Function("ocp_id", [x], [x]), directory=tmp_path, progress="yes")


def test_iterate_reports_what_hpipm_did(model, cost, rti):
    rti.initialize(rti.X, rti.U)
    assert rti.iterate(**iterate_arguments(model, cost, rti))
    assert rti.status.startswith("HPIPM: ") and "iterations" in rti.status


def test_a_diverged_plan_is_reported_and_kept_not_handed_to_hpipm(model, cost, rti):
    """A plan whose QP data overflow (here velocities of 1e200) used to reach HPIPM, whose
    assertion on NaN bounds ends the process; now the call returns False, warns, and the
    plan stays as it was."""
    X, U = rti.X.copy(), rti.U.copy()
    diverged = X.copy()
    diverged[model.nq:, :] = 1e200
    rti.initialize(diverged, U)
    with pytest.warns(casdyn.ConvergenceWarning, match="not finite: the plan diverged"):
        assert rti.iterate(**iterate_arguments(model, cost, rti)) is False
    assert "diverged" in rti.status
    assert np.array_equal(rti.X, diverged) and np.array_equal(rti.U, U)
    rti.initialize(X, U)
