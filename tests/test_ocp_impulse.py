"""casdyn.ocp's impulse knots (a touchdown: the impact that stops the landing feet) and its
barrier and mapped-force residuals (Crocoddyl's quadratic barrier and friction-cone costs),
each against casdyn's own Functions."""

from __future__ import annotations

import re

import casadi as ca
import numpy as np
import pytest

import casdyn
from casdyn.errors import InputError
from casdyn.ocp import (
    SQP,
    Barrier,
    ContactForce,
    ContactModel,
    ControlResidual,
    FramePosition,
    Impulse,
    Problem,
    StateResidual,
)

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")


def raises(message: str):
    return pytest.raises(InputError, match=re.escape(message))


@pytest.fixture(scope="module")
def solo(shipped):
    return shipped("solo12", floating_base=True)


def standing(robot) -> np.ndarray:
    q = np.r_[0, 0, 0, 1, 0, 0, 0, [0.0, 0.8, -1.6] * 2 + [0.0, -0.8, 1.6] * 2]
    q[2] = -min(robot.get_transform(q, f)[2, 3] for f in FEET)  # the feet on z = 0
    return np.r_[q, np.zeros(robot.nv)]


def random_state(robot, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.r_[robot.random_configuration(rng), rng.normal(size=robot.nv)]


# -- the impulse knot --------------------------------------------------------------------------
@pytest.mark.parametrize("stance", [(1, 0, 0, 1), (1, 1, 1, 1), ("HL_FOOT",)])
def test_an_impulse_is_casdyns_impulse_dynamics(solo, stance):
    model = ContactModel(solo, FEET, dt=0.02)
    x, u = random_state(solo, 5), np.random.default_rng(6).normal(size=model.nu)
    x_next, forces = model.impulse(stance)(x, u)
    mask = model.stance_mask(stance)
    held = [casdyn.Contact(f) for f, h in zip(FEET, mask, strict=True) if h]
    v_plus, impulses = solo.function("impulse_dynamics", contacts=held)(x[:19], x[19:], 0.0)
    expected = np.zeros((3, 4))
    expected[:, np.flatnonzero(mask)] = np.asarray(impulses).T
    assert np.allclose(np.asarray(x_next).ravel(), np.r_[x[:19], np.asarray(v_plus).ravel()],
                       rtol=0, atol=1e-12)
    assert np.allclose(np.asarray(forces), expected, rtol=0, atol=1e-12)
    # the landing feet stop; u has no effect
    for foot, h in zip(FEET, mask, strict=True):
        if h:
            velocity = solo.frame_velocity(x[:19], np.asarray(x_next)[19:, 0], foot)[3:]
            assert np.allclose(velocity, 0.0, atol=1e-10)
    assert np.array_equal(np.asarray(model.impulse(stance)(x, 0 * u)[0]), np.asarray(x_next))


def test_a_problem_with_an_impulse_knot_solves(solo):
    """Two feet swing down onto the ground, the impact stops them, the robot stands on all
    four: the SQP converges, and its plan obeys the impulse exactly at the impact knot."""
    model = ContactModel(solo, FEET, dt=0.02, damping=20.0)
    N, impact = 5, 2
    problem = Problem(model, N, [StateResidual(weight=1.0), ControlResidual(weight=1e-2),
                                 FramePosition("FR_FOOT", weight=0.0)],
                      [StateResidual(weight=10.0)],
                      modes=[(1, 0, 0, 1), Impulse((0, 1, 1, 0)), (1, 1, 1, 1)],
                      friction=None, position_limits=None)
    assert problem.impulses == (False, True, False)
    assert problem.stage(1).name() == "ocp_stage_impulse_0110"
    x0 = standing(solo)
    x0[solo.nq + 2] = -0.05  # sinking a little: the impact has a velocity to stop
    parameters = problem.parameters().set("state", reference=x0 * np.r_[np.ones(19),
                                                                         np.zeros(18)])
    parameters.set("control", reference=model.standing_torques(x0[:19]))
    parameters.set_modes([0, 0, 1, 2, 2])
    landing = solo.get_transform(x0[:19], "FR_FOOT")[:3, 3]
    parameters.set("frame_position:FR_FOOT", reference=landing, weight=1e3, knots=impact)
    sqp = SQP(problem, compile=False)
    sqp.hold(x0)
    result = sqp.solve(x0, parameters)
    assert result.converged and result.violation < 1e-7, result.message
    x_next, _ = model.impulse((0, 1, 1, 0))(result.X[:, impact], result.U[:, impact])
    assert np.allclose(result.X[:, impact + 1], np.asarray(x_next).ravel(), atol=1e-7)
    assert np.allclose(result.X[:19, impact + 1], result.X[:19, impact], atol=1e-7)
    # u at the impact is free but for its residual: the reference
    assert np.allclose(result.U[:, impact], parameters.get("control", impact)[0], atol=1e-6)


def test_impulses_refuse_bad_stances(solo):
    model = ContactModel(solo, FEET, dt=0.02)
    with raises("an impulse needs at least one foot touching down"):
        model.impulse((0, 0, 0, 0))
    with raises("stance: unknown foot 'FL'"):
        model.impulse(("FL",))
    with raises("modes[1]: an Impulse needs at least one foot touching down"):
        Problem(model, 2, [StateResidual()], modes=[(1, 1, 1, 1), Impulse((0, 0, 0, 0))])
    with raises("modes[0]: expected 4 flags (one per foot), got 3"):
        Problem(model, 2, [StateResidual()], modes=[Impulse((1, 1, 1))])


# -- the barrier and mapped-force residuals ----------------------------------------------------
CONE = np.array([[1.0, 0.0, -0.7], [-1.0, 0.0, -0.7], [0.0, 1.0, -0.7], [0.0, -1.0, -0.7],
                 [0.0, 0.0, 1.0]])


def test_a_mapped_force_and_its_barrier(solo):
    """``ContactForce(matrix=A)`` is ``A f``; its barrier is ``A f - clip(A f, lower,
    upper)``, and the barrier's Jacobian is the mapped force's on the rows outside the
    box, zero inside."""
    model = ContactModel(solo, FEET, dt=0.02, damping=5.0)
    lower, upper = np.r_[np.full(4, -np.inf), 0.0], np.r_[np.zeros(4), np.inf]
    residuals = [ContactForce("HR_FOOT", matrix=CONE),
                 Barrier(ContactForce("HR_FOOT", matrix=CONE), lower, upper)]
    problem = Problem(model, 1, residuals, modes=[(1, 0, 1, 1)])
    x = ca.SX.sym("x", model.nx)
    u = ca.SX.sym("u", model.nu)
    _, r, _, _ = problem.stage(0)(x, u, problem.parameters().stage[:, 0])
    jacobian = ca.Function("J", [x, u], [r, ca.jacobian(r, ca.vertcat(x, u))])
    _, forces = model.step((1, 0, 1, 1))(x, u)
    mapped = ca.mtimes(ca.DM(CONE), forces[:, 3])
    direct = ca.Function("direct", [x, u], [mapped, ca.jacobian(mapped, ca.vertcat(x, u))])
    rng = np.random.default_rng(8)
    for _ in range(4):
        xv, uv = random_state(solo, int(rng.integers(100))), 3 * rng.normal(size=model.nu)
        (value, J), (Af, JAf) = ([np.asarray(a) for a in f(xv, uv)]
                                 for f in (jacobian, direct))
        Af, value = Af.ravel(), value.ravel()
        assert np.allclose(value[:5], Af, rtol=1e-12, atol=1e-12)
        outside = Af - np.clip(Af, lower, upper)
        assert np.allclose(value[5:], outside, rtol=1e-12, atol=1e-12)
        on = (Af < lower) | (Af > upper)
        assert np.allclose(J[5:][on], JAf[on], rtol=1e-12, atol=1e-9)
        assert np.all(J[5:][~on] == 0.0)


def test_a_barrier_on_the_state_is_zero_inside_its_box(solo):
    model = ContactModel(solo, FEET, dt=0.02)
    zero = np.r_[solo.home_configuration(), np.zeros(solo.nv)]
    bound = np.r_[np.full(6, np.inf), np.full(12, 1.0), np.full(6, np.inf), np.full(12, 2.0)]
    problem = Problem(model, 1, [Barrier(StateResidual(), -bound, bound)])
    parameters = problem.parameters().set("barrier:state", reference=zero)
    x = random_state(solo, 2)
    _, r, _, _ = problem.stage(0)(x, np.zeros(12), parameters.stage[:, 0])
    d = np.r_[solo.difference(zero[:19], x[:19]), x[19:]]
    assert np.allclose(np.asarray(r).ravel(), d - np.clip(d, -bound, bound), atol=1e-12)


@pytest.mark.parametrize("build, message", [
    (lambda m: Barrier("state"), "Barrier wraps a casdyn.ocp residual, got 'state'"),
    (lambda m: Barrier(StateResidual(), lower="a"), "Barrier lower must be a scalar or one "
     "number per row, got 'a'"),
    (lambda m: Barrier(StateResidual(), upper=[[1.0]]), "Barrier upper must be a scalar or "
     "one number per row"),
    (lambda m: Problem(m, 1, [Barrier(StateResidual(), [0.0, 1.0])]),
     "barrier:state: lower and upper need 1 or 36 numbers, got 2 and 1"),
    (lambda m: Problem(m, 1, [Barrier(ControlResidual(), 1.0, 0.0)]),
     "barrier:control: lower > upper in rows [0, 1, 2"),
    (lambda m: ContactForce("FL_FOOT", matrix=[1.0, 2.0]), "ContactForce matrix must be a "
     "finite rows x force_size matrix"),
    (lambda m: Problem(m, 1, [ContactForce("FL_FOOT", matrix=np.eye(2))]),
     "ContactForce matrix: 2 columns, the model's forces have 3"),
])
def test_barriers_and_mapped_forces_refuse_bad_arguments(solo, build, message):
    model = ContactModel(solo, FEET, dt=0.02)
    with raises(message):
        build(model)
