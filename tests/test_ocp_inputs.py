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
    TrackingCost,
    compiled,
    friction_cone,
    friction_pyramid,
)

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
NAN, INF = math.nan, math.inf


@pytest.fixture(scope="module")
def robot(shipped):
    return shipped("solo12", floating_base=True)


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


# -- the SQP's arguments ----------------------------------------------------------------------
MODES = ((1, 1, 1, 1), (1, 0, 0, 1))


@pytest.fixture(scope="module")
def problem(model):
    from casdyn.ocp import ControlResidual, Problem, StateResidual

    return Problem(model, 2, [StateResidual(), ControlResidual()], modes=MODES)


@pytest.fixture(scope="module")
def sqp(problem):
    """Two knots, interpreted, standing."""
    from casdyn.ocp import SQP

    sqp = SQP(problem, compile=False)
    q = np.r_[0.0, 0.0, 0.25, 1.0, 0.0, 0.0, 0.0, [0.0, 0.8, -1.6] * 2 + [0.0, -0.8, 1.6] * 2]
    sqp.hold(np.r_[q, np.zeros(problem.model.nv)])
    return sqp


@pytest.mark.parametrize(("options", "message"), [
    ({"N": 0}, "N must be a whole number of at least 1, got 0"),
    ({"N": 2.5}, "N must be a whole number of at least 1, got 2.5"),
    ({"N": "3"}, "N must be a whole number of at least 1, got '3'"),
    ({"modes": [(1, 1, 1, 1), 1]}, "modes[1] must be one flag per foot (4) or the held feet's "
                                   "names, got 1"),
    ({"modes": ()}, "modes must be a non-empty sequence of stance masks, got ()"),
    ({"effort_limit": np.ones(3)}, "effort_limit must be a scalar or 12 non-negative numbers, "
                                   "got shape (3,)"),
    ({"effort_limit": NAN}, "effort_limit must be a scalar or 12 non-negative numbers, "
                            "got nan"),
    ({"velocity_limit": -1.0}, "velocity_limit must be a scalar or 18 non-negative numbers"),
    ({"position_limits": (0, 1)}, "position_limits must be True (the robot's) or None"),
    ({"constraints": [1]}, "constraints must be a sequence of casdyn.ocp constraints"),
])
def test_problem_refuses_bad_arguments(model, options, message):
    from casdyn.ocp import ControlResidual, Problem

    arguments = {"N": 2, "modes": MODES, **options}
    N = arguments.pop("N")
    with raises(message):
        Problem(model, N, [ControlResidual()], **arguments)


@pytest.mark.parametrize(("options", "message"), [
    ({"x0": np.zeros(3)}, "x0: expected 37 finite numbers, got [0.0, 0.0, 0.0]"),
    ({"x0": np.full(37, NAN)}, "x0: expected 37 finite numbers"),
])
def test_iterate_refuses_a_bad_state(problem, sqp, options, message):
    arguments = {"x0": sqp.X[:, 0], "parameters": problem.parameters(), **options}
    X, U = sqp.X.copy(), sqp.U.copy()
    with raises(message):
        sqp.iterate(**arguments)
    assert np.array_equal(sqp.X, X) and np.array_equal(sqp.U, U)


def test_initialize_refuses_a_non_finite_guess_or_a_wrong_shape(sqp):
    X, U = sqp.X.copy(), sqp.U.copy()
    X[0, 1] = NAN
    with raises("initialize: X and U must be finite, got NaN or inf"):
        sqp.initialize(X, U)
    with raises("initialize: expected X (37, 3) and U (12, 2), got (37, 2) and (12, 2)"):
        sqp.initialize(X[:, :2], U)
    X[0, 1] = 0.0
    X[3:7, 2] = 0.0
    with raises("initialize: a zero quaternion in X (give a standing pose)"):
        sqp.initialize(X, U)


def test_shift_refuses_a_non_finite_fraction(sqp):
    with raises("fraction must be a finite non-negative number, got nan"):
        sqp.shift(NAN)


def test_sqp_refuses_what_is_no_problem():
    from casdyn.ocp import SQP

    with raises("SQP needs a casdyn.ocp.Problem, got str"):
        SQP("problem")


def test_sqp_refuses_a_switched_that_is_not_a_bool(problem):
    """"no" would convert to True: a flag is a bool or nothing."""
    from casdyn.ocp import SQP

    with raises("switched must be True or False, got 'no'"):
        SQP(problem, compile=False, switched="no")


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


def test_the_sqp_reports_its_compiled_stages(at_once, tmp_path, capsys, monkeypatch):
    """The stage linearisations report their build on stderr."""
    from casdyn.ocp import SQP, ContactModel, ControlResidual, Problem

    monkeypatch.setenv("CASDYN_CACHE", str(tmp_path))
    arm = casdyn.load_robot("planar_2link")
    SQP(Problem(ContactModel(arm, dt=0.01), 2, [ControlResidual()]), progress=True)
    err = capsys.readouterr().err
    assert "casdyn: ocp stages: 2 stage functions: the graph, then its C" in err
    assert "ocp_linear_free (graph)" in err and "ocp_linear_free (C)" in err
    assert re.search(r"casdyn: ocp stages: \[\d/4\] ocp_linear_end \(C\) \(\d+\.\d s\)", err), err
    assert "casdyn: ocp stages: done in " in err


def test_progress_must_be_true_false_or_none(tmp_path):
    x = ca.SX.sym("x")
    with raises("progress must be True, False or None, got 'yes'"):
        compiled(ca.Function("ocp_id", [x], [x]), directory=tmp_path, progress="yes")


def test_iterate_reports_what_hpipm_did(problem, sqp):
    sqp.initialize(sqp.X, sqp.U)
    assert sqp.iterate(sqp.X[:, 0], problem.parameters())
    assert sqp.status.startswith("HPIPM: ") and "iterations" in sqp.status
