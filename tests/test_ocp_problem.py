"""casdyn.ocp's general layer: problems on fixed and floating bases, each residual against
casdyn's own Functions, parameters changed without a rebuild, and the SQP's cold solve at
the optimum Ipopt finds for the same problem (its transcription)."""

from __future__ import annotations

import re
import warnings

import casadi as ca
import numpy as np
import pytest

import casdyn
from casdyn.errors import ConvergenceWarning, InputError
from casdyn.ocp import (
    SQP,
    Barrier,
    CenterOfMass,
    CentroidalMomentum,
    CollisionDistance,
    CollisionResidual,
    ContactForce,
    ContactModel,
    ControlResidual,
    FootHeight,
    FrameOrientation,
    FramePosition,
    FrameVelocity,
    Impulse,
    Problem,
    StateInequality,
    StateResidual,
    Transcription,
)

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
MODES = ((1, 1, 1, 1), (1, 0, 0, 1), (0, 1, 1, 0))
ARM_Q = np.array([0.0, -1.2, 1.5, -1.0, -1.57, 0.0])


def raises(message: str):
    return pytest.raises(InputError, match=re.escape(message))


@pytest.fixture(scope="module")
def solo(shipped):
    return shipped("solo12", floating_base=True)


@pytest.fixture(scope="module")
def arm(shipped):
    return shipped("ur5e")


def arm_problem(arm, N=12, effort=30.0):
    model = ContactModel(arm, dt=0.05)
    problem = Problem(
        model, N, [StateResidual(weight=np.r_[np.full(6, 1e-2), np.full(6, 1e-1)]),
                   ControlResidual(weight=1e-3), FramePosition("tool0", weight=100.0)],
        [StateResidual(weight=np.r_[np.zeros(6), np.full(6, 10.0)]),
         FramePosition("tool0", weight=1000.0)], effort_limit=effort)
    x0 = np.r_[ARM_Q, np.zeros(6)]
    parameters = problem.parameters().set("state", reference=x0)
    parameters.set("frame_position:tool0", reference=[0.25, -0.1, 0.55])
    return problem, parameters, x0


def standing(robot) -> np.ndarray:
    q = np.r_[0, 0, 0, 1, 0, 0, 0, [0.0, 0.8, -1.6] * 2 + [0.0, -0.8, 1.6] * 2]
    q[2] = 0.015 - min(robot.get_transform(q, f)[2, 3] for f in FEET)
    return np.r_[q, np.zeros(robot.nv)]


def trot_problem(robot, N=6, friction="pyramid"):
    model = ContactModel(robot, FEET, dt=0.02, damping=20.0, mu=0.6)
    qw = np.r_[[1.0, 5.0, 20.0], [20.0, 20.0, 10.0], np.full(12, 2.0)] ** 2
    vw = np.r_[[1.0, 1.0, 1.0], [5.0, 5.0, 2.0], np.full(12, 0.05)] ** 2
    problem = Problem(model, N, [StateResidual(weight=np.r_[qw, vw]),
                                 ControlResidual(weight=0.01),
                                 *[FootHeight(f, weight=0.0) for f in FEET]],
                      [StateResidual(weight=9 * np.r_[qw, vw])], modes=MODES,
                      friction=friction)
    x0 = standing(robot)
    reference = x0.copy()
    reference[0], reference[robot.nq + 3] = 0.1, 0.3  # forward, at 0.3 m/s
    parameters = problem.parameters().set("state", reference=reference)
    parameters.set("control", reference=model.standing_torques(x0[: robot.nq]))
    schedule = np.array([0, 0, 1, 1, 2, 2])[:N]
    parameters.set_modes(schedule)
    for k in range(N):
        for j, foot in enumerate(FEET):
            if not MODES[schedule[k]][j]:
                parameters.set(f"foot_height:{foot}", reference=0.05, weight=2500.0, knots=k)
    return problem, parameters, x0


def ipopt_cost(problem, parameters, x0, sqp) -> tuple[float, np.ndarray]:
    nlp = Transcription(problem, parameters.modes)
    solver = nlp.solver("ipopt", options={"ipopt": {"tol": 1e-11}})
    sqp.hold(x0)
    _, U, cost, stats = nlp.solve(solver, x0, parameters, sqp.X, sqp.U)
    assert stats["success"], stats["return_status"]
    return cost, U


# -- the optimum ---------------------------------------------------------------------------
def test_sqp_cold_solve_reaches_ipopt_optimum_on_a_fixed_base_arm(arm):
    problem, parameters, x0 = arm_problem(arm)
    sqp = SQP(problem, compile=False)
    sqp.hold(x0)
    result = sqp.solve(x0, parameters, max_iter=400)
    assert result.converged and result.violation < 1e-7, result.message
    cost, U = ipopt_cost(problem, parameters, x0, sqp)
    assert abs(result.cost - cost) <= 1e-6 * cost
    assert np.allclose(result.U, U, atol=1e-3 * np.abs(U).max())


@pytest.mark.slow
@pytest.mark.parametrize("friction", ["pyramid", "exact"])
def test_sqp_cold_solve_reaches_ipopt_optimum_on_a_solo12_trot(solo, friction):
    problem, parameters, x0 = trot_problem(solo, friction=friction)
    sqp = SQP(problem, compile=False)
    sqp.hold(x0)
    result = sqp.solve(x0, parameters)
    assert result.converged and result.violation < 1e-7, result.message
    assert result.iterations < 40
    cost, _ = ipopt_cost(problem, parameters, x0, sqp)
    assert abs(result.cost - cost) <= 1e-6 * cost


@pytest.mark.parametrize("friction, switched", [
    ("pyramid", False), ("exact", False),
    pytest.param("pyramid", True, marks=pytest.mark.slow)])
def test_the_linearisation_is_ad_of_the_stage(solo, friction, switched):
    """The SQP's QP data from the analytical contact-dynamics derivatives equal CasADi's AD
    of the whole stage (step, residuals, friction rows) in every mode; ``switched``: the
    motion modes' one graph with the held feet an input gives each mode's numbers."""
    problem, _, x0 = trot_problem(solo, friction=friction)
    # and a touchdown, whose impulse solve the SQP differentiates by AD; residuals of the
    # forces alone, whose Hessian the SQP forms through the forces' derivatives
    cone = Barrier(ContactForce("HR_FOOT", matrix=[[0.6, 0, 1], [0, 0.6, 1], [1, 1, 0]]),
                   lower=[0.0, 0.0, -5.0], upper=[np.inf, np.inf, 5.0])
    costs = [*problem.costs, ContactForce("FL_FOOT", weight=1e-3), cone]
    problem = Problem(problem.model, problem.N, costs, problem.terminal_costs,
                      modes=[*MODES, Impulse((1, 1, 0, 1))], friction=friction)
    sqp = SQP(problem, compile=False, switched=switched)
    calls = [{f.name() for f in function.find_functions()} for function in sqp._functions]
    # switched: each motion mode calls the one graph; the touchdown keeps a graph of its own
    assert [("ocp_linear_switched" in c) for c in calls[:-1]] == \
        [switched and not impulse for impulse in problem.impulses]
    m = problem.model
    rng = np.random.default_rng(3)
    x = x0.copy()
    x[m.nq :] = rng.normal(scale=0.3, size=m.nv)
    u, p = m.standing_torques(x[: m.nq]) + rng.normal(size=m.nu), problem.parameters().stage[:, 0]
    x_next = np.asarray(m.step((1, 1, 1, 1))(x, u)[0]).ravel()
    w = ca.SX.sym("w", m.ndx + m.nu)
    for mode in range(len(problem.modes)):
        x_plus, r, _, forces = problem.stage(mode)(m.integrate_state(x, w[: m.ndx]),
                                                   u + w[m.ndx :], p)
        directions = problem.directions(problem.stage(mode)(x, u, p)[3])
        rows = problem.friction_rows(forces, directions)
        out = ca.vertcat(m.difference_state(x_next, x_plus), r, rows)
        J = np.asarray(ca.Function("J", [w], [ca.jacobian(out, w)])(np.zeros(w.numel())))
        _, A, B, H, _, _, C, D, _ = (np.asarray(v) for v in sqp._functions[mode](
            x, u, x_next, p, np.zeros(len(FEET))))
        n, nr = m.ndx, r.numel()
        scale = np.abs(J).max()
        assert np.abs(np.hstack([A, B]) - J[:n]).max() <= 1e-11 * scale
        assert np.abs(np.hstack([C, D]) - J[n + nr :]).max() <= 1e-11 * scale
        weights = np.asarray(problem.stage(mode)(x, u, p)[2]).ravel()
        Jr = J[n : n + nr]
        gauss_newton = Jr.T @ (weights[:, None] * Jr)
        assert np.abs(H - gauss_newton).max() <= 1e-10 * np.abs(gauss_newton).max()


def unbounded(problem):
    """``problem`` without any inequality: no friction rows, no limits."""
    return Problem(problem.model, problem.N, problem.costs, problem.terminal_costs,
                   modes=problem.modes, friction=None, effort_limit=np.inf,
                   velocity_limit=np.inf, position_limits=None)


@pytest.mark.slow  # several seconds: the full tier only
def test_without_inequalities_a_riccati_recursion_solves_each_qp(solo):
    """Nothing bounds the step: the QP's solution by one Riccati recursion is HPIPM's, and
    the SQP reaches Ipopt's optimum."""
    problem, parameters, x0 = trot_problem(solo)
    free = unbounded(problem)
    free_parameters = free.parameters()
    free_parameters.stage[:], free_parameters.terminal[:] = parameters.stage, parameters.terminal
    free_parameters.modes[:] = parameters.modes
    sqp = SQP(free, compile=False)
    sqp.hold(x0)
    args = sqp._arguments("test", x0, free_parameters)
    w, slope = sqp._qp(sqp._data(sqp.X, sqp.U, args))
    assert sqp.status == "Riccati recursion: solved"
    w_hpipm, slope_hpipm = sqp._qp(sqp._qp_data(sqp.X, sqp.U, *args, sqp._lam), hpipm=True)
    scale = np.abs(w_hpipm.full()).max()
    assert np.abs(w.full() - w_hpipm.full()).max() <= 1e-8 * scale
    assert slope == pytest.approx(slope_hpipm, rel=1e-8)
    result = sqp.solve(x0, free_parameters)
    assert result.converged, result.message
    cost, _ = ipopt_cost(free, free_parameters, x0, sqp)
    assert result.cost == pytest.approx(cost, rel=1e-6)


def test_any_bound_keeps_hpipm(solo):
    problem, _, _ = trot_problem(solo)
    torque_only = Problem(problem.model, problem.N, problem.costs, problem.terminal_costs,
                          modes=problem.modes, friction=None, velocity_limit=np.inf,
                          position_limits=None)
    assert not problem.unbounded and not torque_only.unbounded
    assert unbounded(problem).unbounded


def test_torque_limits_are_exact(arm):
    """Limits at 90 % of the unconstrained optimum's peaks: the plan rides them, never past
    them, and Ipopt agrees."""
    problem, parameters, x0 = arm_problem(arm, N=8, effort=1000.0)
    free = SQP(problem, compile=False).solve(x0, parameters, max_iter=400)
    limit = 0.9 * np.abs(free.U).max(axis=1)
    problem, parameters, x0 = arm_problem(arm, N=8, effort=limit)
    sqp = SQP(problem, compile=False)
    result = sqp.solve(x0, parameters, max_iter=400)
    assert result.converged, result.message
    peaks = np.abs(result.U).max(axis=1)
    assert np.all(peaks <= limit * (1 + 1e-9))
    assert np.sum(peaks >= limit * (1 - 1e-6)) >= 3  # active on most joints
    cost, _ = ipopt_cost(problem, parameters, x0, sqp)
    assert abs(result.cost - cost) <= 1e-6 * cost


def test_state_constraints_hold_exactly_at_ipopts_optimum(arm):
    """A floor under the tool that the unconstrained reach would cross: the SQP rides it
    from the second knot on, to the optimum Ipopt finds; a ball as a collision distance."""
    q, v = ca.SX.sym("q", 6), ca.SX.sym("v", 6)
    floor = ca.Function("floor", [q, v], [arm.get_transform(q, "tool0")[2, 3] - 0.45])
    model = ContactModel(arm, dt=0.05)
    pose = np.eye(4)
    pose[:3, 3] = [0.6, 0.0, 0.75]
    ball = casdyn.geometry.Obstacle("ball", casdyn.geometry.Sphere(0.05), pose)
    problem = Problem(
        model, 10, [StateResidual(weight=np.r_[np.full(6, 1e-2), np.full(6, 1e-1)]),
                    ControlResidual(weight=1e-3), FramePosition("tool0", weight=100.0)],
        [FramePosition("tool0", weight=1000.0)], effort_limit=200.0,
        constraints=[StateInequality(floor), CollisionDistance([ball], margin=0.01, pairs=())])
    x0 = np.r_[ARM_Q, np.zeros(6)]
    parameters = problem.parameters().set("state", reference=x0)
    parameters.set("frame_position:tool0", reference=[0.45, 0.1, 0.3])
    sqp = SQP(problem, compile=False)
    result = sqp.solve(x0, parameters, max_iter=400)
    assert result.converged, result.message
    heights = [arm.get_transform(x[:6], "tool0")[2, 3] for x in result.X[:, 1:].T]
    assert min(heights) >= 0.45 - 1e-7
    assert min(heights) <= 0.45 + 1e-6  # active
    distances = [arm.collision_distances(x[:6], pairs=(), obstacles=(ball,)).min()
                 for x in result.X[:, 1:].T]
    assert min(distances) >= 0.01 - 1e-7
    cost, _ = ipopt_cost(problem, parameters, x0, sqp)
    assert abs(result.cost - cost) <= 1e-6 * cost


def test_a_terminal_set_holds_at_the_end_only(arm):
    """The tool at least 0.35 m high at the horizon's end (``at="end"``), where the cost
    pulls it down: the last state rides the set, the knots before are free, Ipopt agrees."""
    q, v = ca.SX.sym("q", 6), ca.SX.sym("v", 6)
    high = ca.Function("high", [q, v], [arm.get_transform(q, "tool0")[2, 3] - 0.35])
    problem, parameters, x0 = arm_problem(arm, N=8)
    problem = Problem(problem.model, 8, problem.costs, problem.terminal_costs,
                      constraints=[StateInequality(high, at="end")])
    parameters = problem.parameters().set("state", reference=x0)
    parameters.set("frame_position:tool0", reference=[0.45, 0.1, 0.2])
    sqp = SQP(problem, compile=False)
    result = sqp.solve(x0, parameters, max_iter=400)
    assert result.converged, result.message
    heights = [arm.get_transform(x[:6], "tool0")[2, 3] for x in result.X.T]
    assert heights[-1] == pytest.approx(0.35, abs=1e-7)
    assert min(heights[1:-1]) < 0.35  # not held along the way
    cost, _ = ipopt_cost(problem, parameters, x0, sqp)
    assert abs(result.cost - cost) <= 1e-6 * cost
    with raises("StateInequality: at must be 'all' or 'end', got 'last'"):
        StateInequality(high, at="last")


def test_compiled_stages_give_the_interpreted_numbers(arm, tmp_path, monkeypatch):
    """The QP's data from the compiled stage Functions equal CasADi's VM's."""
    monkeypatch.setenv("CASDYN_CACHE", str(tmp_path))
    problem, parameters, x0 = arm_problem(arm, N=5)
    rng = np.random.default_rng(1)
    X = np.r_[ARM_Q, np.zeros(6)][:, None] + 0.1 * rng.normal(size=(12, 6))
    U = rng.normal(size=(6, 5))
    data = []
    for compile in (False, True):
        sqp = SQP(problem, compile=compile)
        sqp.initialize(X, U)
        data.append(sqp._qp_data(X, U, *sqp._arguments("test", x0, parameters), sqp._lam))
    for interpreted, compiled in zip(*data, strict=True):
        assert np.allclose(compiled.full(), interpreted.full(), rtol=1e-12, atol=1e-12)


# -- parameters ------------------------------------------------------------------------------
@pytest.mark.slow  # several seconds: the full tier only
def test_changing_weights_references_and_modes_builds_nothing(solo, monkeypatch):
    problem, parameters, x0 = trot_problem(solo, N=4)
    sqp = SQP(problem, compile=False)
    import casdyn.codegen.library as library

    def no_build(*args, **kwargs):
        raise AssertionError("a build after the SQP was made")

    monkeypatch.setattr(library, "compile_functions", no_build)
    monkeypatch.setattr(ca, "Function", no_build)  # nor a new graph
    first = sqp.solve(x0, parameters)
    parameters.set("control", weight=1.0)
    parameters.set_modes([0, 1, 1, 0])
    second = sqp.solve(x0, parameters)
    monkeypatch.undo()
    assert first.converged and second.converged
    assert abs(first.cost - second.cost) > 1e-3 * first.cost
    cost, _ = ipopt_cost(problem, parameters, x0, sqp)  # the new problem's optimum
    assert abs(second.cost - cost) <= 1e-6 * cost


def test_parameters_set_and_get(solo):
    _, parameters, _ = trot_problem(solo, N=4)
    parameters.set("foot_height:FL_FOOT", reference=[[0.1, 0.2, 0.3, 0.4]],
                   weight=[[1.0, 2.0, 3.0, 4.0]])
    assert parameters.get("foot_height:FL_FOOT", 2)[0] == pytest.approx([0.3])
    assert parameters.get("foot_height:FL_FOOT", 3)[1] == pytest.approx([4.0])
    parameters.set("state", weight=2.0, knots=4)  # the terminal one only
    assert np.all(parameters.get("state", 4)[1] == 2.0)
    assert not np.all(parameters.get("state", 3)[1] == 2.0)


@pytest.mark.parametrize(("call", "message"), [
    (lambda p: p.set("foot_hieght:FL_FOOT", weight=1.0),
     "set: unknown residual 'foot_hieght:FL_FOOT'; did you mean 'foot_height:FL_FOOT'"),
    (lambda p: p.set("control", weight=-1.0), "set 'control' weight: expected finite "
                                              "non-negative numbers"),
    (lambda p: p.set("control", reference=np.zeros(5)), "set 'control' reference: expected 12 "
                                                        "rows"),
    (lambda p: p.set("control", weight=1.0, knots=4),
     "set: 'control' is not a terminal residual (knot 4)"),
    (lambda p: p.set("control", weight=1.0, knots=[7]), "knots: indices in 0..4"),
    (lambda p: p.set_modes([0, 1, 3, 0]), "modes: one index in 0..2 per interval (4)"),
    (lambda p: p.set("state", reference=np.full(37, np.nan)),
     "set 'state' reference: expected finite numbers"),
])
def test_parameters_refuse_bad_values_naming_them(solo, call, message):
    _, parameters, _ = trot_problem(solo, N=4)
    with raises(message):
        call(parameters)


@pytest.mark.parametrize(("build", "message"), [
    (lambda m: Problem(m, 0, [ControlResidual()]), "N must be a whole number of at least 1"),
    (lambda m: Problem(m, 4, [ControlResidual(), ControlResidual()]),
     "costs: two residuals named 'control' (give one a name=...)"),
    (lambda m: Problem(m, 4, [], [ControlResidual()]),
     "terminal_costs: 'control' reads the torques or forces"),
    (lambda m: Problem(m, 4, [FramePosition("FL_FOT")]),
     "FramePosition: unknown body 'FL_FOT'; did you mean 'FL_FOOT'"),
    (lambda m: Problem(m, 4, [ContactForce("FL_LOWER_LEG")]),
     "ContactForce: unknown foot 'FL_LOWER_LEG'"),
    (lambda m: Problem(m, 4, [ControlResidual()], friction="cone"),
     "friction must be 'pyramid', 'exact' or None, got 'cone'"),
    (lambda m: Problem(m, 4, [ControlResidual(weight=np.ones(3))]),
     "control weight must be a scalar or 12 finite non-negative numbers"),
    (lambda m: Problem(m, 4, [FramePosition("FL_FOOT", name="goal")],
                       [FrameOrientation("FL_FOOT", name="goal")]),
     "terminal_costs: 'goal' names a stage residual of another size"),
])
def test_problem_refuses_bad_descriptions(solo, build, message):
    model = ContactModel(solo, FEET, dt=0.02)
    with raises(message):
        build(model).parameters()


def test_sqp_refuses_bad_calls(arm):
    problem, parameters, x0 = arm_problem(arm, N=3)
    sqp = SQP(problem, compile=False)
    with raises("iterate: set the plan first (hold(x0) or initialize(X, U))"):
        sqp.iterate(x0, parameters)
    sqp.hold(x0)
    with raises("x0: expected 12 finite numbers"):
        sqp.iterate(np.r_[x0[:-1], np.nan], parameters)
    other, _, _ = arm_problem(arm, N=3)
    with raises("iterate: parameters must come from this problem's parameters()"):
        sqp.iterate(x0, other.parameters())
    with pytest.raises(InputError, match="cost_tol"):
        sqp.solve(x0, parameters, cost_tol=-1.0)


def test_a_diverged_plan_is_reported_and_kept(arm):
    problem, parameters, x0 = arm_problem(arm, N=3)
    sqp = SQP(problem, compile=False)
    X = np.tile(x0[:, None], (1, 4))
    X[6:, 1] = 1e200  # velocities whose square overflows
    sqp.initialize(X, np.zeros((6, 3)))
    with pytest.warns(ConvergenceWarning, match="the QP's data are not finite"):
        assert not sqp.iterate(x0, parameters)
    assert np.array_equal(sqp.X, X)


# -- models: any robot ------------------------------------------------------------------------
def test_an_underactuated_arm(arm):
    """Three of the six joints driven: the others' torques are zero in every plan."""
    model = ContactModel(arm, dt=0.05, actuated=["shoulder_pan_joint", "elbow_joint",
                                                  "wrist_2_joint"])
    assert model.nu == 3 and list(model.actuated_dofs) == [0, 2, 4]
    tau = model.torque(np.array([1.0, 2.0, 3.0]))
    assert np.array_equal(tau, [1.0, 0.0, 2.0, 0.0, 3.0, 0.0])
    problem = Problem(model, 4, [StateResidual(weight=1.0), ControlResidual(weight=1e-2)])
    x0 = np.r_[ARM_Q, np.zeros(6)]
    parameters = problem.parameters().set("state", reference=x0)
    result = SQP(problem, compile=False).solve(x0, parameters)
    assert result.converged and result.U.shape == (3, 4)


@pytest.mark.parametrize(("actuated", "message"), [
    (["shoulder_pan_joint", "elbow_jiont"],
     "actuated: unknown joint 'elbow_jiont'; did you mean 'elbow_joint'"),
    (["elbow_joint", "elbow_joint"], "actuated: 'elbow_joint' is listed twice"),
    ("elbow_joint", "actuated must be a sequence of joint names, got 'elbow_joint'"),
])
def test_contact_model_refuses_bad_actuated_joints(arm, actuated, message):
    with raises(message):
        ContactModel(arm, dt=0.05, actuated=actuated)


def test_the_floating_base_is_never_actuated(solo):
    with raises("actuated: unknown joint 'floating_base'"):
        ContactModel(solo, FEET, dt=0.02, actuated=["floating_base"])


# -- each residual against casdyn's own Functions ----------------------------------------------
def test_each_residual_is_what_casdyn_computes(solo):
    frame = "FL_LOWER_LEG"
    model = ContactModel(solo, FEET, dt=0.02, damping=5.0)
    residuals = [StateResidual(), ControlResidual(), FramePosition(frame),
                 FrameOrientation(frame), FrameVelocity(frame), CenterOfMass(),
                 CentroidalMomentum(), ContactForce("HR_FOOT"), FootHeight("FR_FOOT")]
    problem = Problem(model, 1, residuals, modes=[(1, 0, 1, 1)])
    rng = np.random.default_rng(3)
    q = solo.random_configuration(rng)
    v, u = rng.normal(size=solo.nv), rng.normal(size=12)
    x = np.r_[q, v]
    parameters = problem.parameters()
    references = {label: rng.normal(size=ref.stop - ref.start)
                  for label, ref, _ in problem.stage_layout.entries}
    R_ref = solo.get_transform(solo.random_configuration(rng), "HL_LOWER_LEG")[:3, :3]
    references[f"frame_orientation:{frame}"] = R_ref.ravel()
    references["state"] = np.r_[solo.random_configuration(rng), rng.normal(size=solo.nv)]
    for label, value in references.items():
        parameters.set(label, reference=value)
    _, r, w, _ = problem.stage(0)(x, u, parameters.stage[:, 0])
    r = np.asarray(r).ravel()
    assert np.all(np.asarray(w) == 1.0)
    T = solo.get_transform(q, frame)
    E = R_ref.T @ T[:3, :3]
    _, forces = model.step((1, 0, 1, 1))(x, u)
    expected = [
        np.r_[solo.difference(references["state"][:19], q), v - references["state"][19:]],
        u - references["control"],
        T[:3, 3] - references[f"frame_position:{frame}"],
        0.5 * np.array([E[2, 1] - E[1, 2], E[0, 2] - E[2, 0], E[1, 0] - E[0, 1]]),
        solo.frame_velocity(q, v, frame) - references[f"frame_velocity:{frame}"],
        solo.center_of_mass(q)[0] - references["com"],
        solo.centroidal_momentum(q, v) - references["momentum"],
        np.asarray(forces)[:, 3] - references["force:HR_FOOT"],
        [solo.get_transform(q, "FR_FOOT")[2, 3] - references["foot_height:FR_FOOT"][0]],
    ]
    expected = np.concatenate([np.ravel(e) for e in expected])
    assert np.allclose(r, expected, rtol=1e-12, atol=1e-12)


def test_collision_residual_is_casdyns_distances(arm):
    """The distances of the arm's collision pairs and of a ball against every link, minus
    the reference; as a Barrier, zero while every distance stays above the margin."""
    pose = np.eye(4)
    pose[:3, 3] = [0.6, 0.0, 0.75]
    ball = casdyn.geometry.Obstacle("ball", casdyn.geometry.Sphere(0.05), pose)
    model = ContactModel(arm, dt=0.05)
    residual = CollisionResidual(obstacles=[ball])
    problem = Problem(model, 1, [residual, Barrier(residual, lower=0.02, name="near")])
    parameters = problem.parameters()
    reference = np.linspace(0.0, 0.1, residual.size(model))
    parameters.set("collision", reference=reference)
    q = np.r_[ARM_Q[:5], 0.3]
    _, r, _, _ = problem.stage(0)(np.r_[q, np.zeros(6)], np.zeros(6), parameters.stage[:, 0])
    d = np.asarray(arm.collision_distances(q, obstacles=[ball])).ravel()
    n = len(d)
    assert np.allclose(np.asarray(r).ravel()[:n], d - reference, rtol=1e-12, atol=1e-12)
    assert np.allclose(np.asarray(r).ravel()[n:], np.minimum(d - 0.02, 0.0), atol=1e-12)


def test_orientation_residual_is_the_rotation_vector_to_first_order(solo):
    """Rotating the reference by a small angle about an axis gives that axis times the
    sine of the angle (the frame's own axes)."""
    model = ContactModel(solo, FEET, dt=0.02)
    problem = Problem(model, 1, [FrameOrientation("base_link")])
    q = solo.home_configuration()
    R = solo.get_transform(q, "base_link")[:3, :3]
    axis, angle = np.array([1.0, 2.0, 2.0]) / 3.0, 0.3
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    turn = np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K
    parameters = problem.parameters().set("frame_orientation:base_link", reference=R @ turn.T)
    _, r, _, _ = problem.stage(0)(np.r_[q, np.zeros(solo.nv)], np.zeros(12),
                                  parameters.stage[:, 0])
    assert np.allclose(np.asarray(r).ravel(), np.sin(angle) * axis, atol=1e-14)


def test_sqp_solve_warns_when_it_does_not_converge(arm):
    problem, parameters, x0 = arm_problem(arm, N=6)
    sqp = SQP(problem, compile=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = sqp.solve(x0, parameters, max_iter=1)
    assert not result.converged
    assert any(issubclass(w.category, ConvergenceWarning) for w in caught)


def test_state_constraints_refuse_bad_arguments(arm):
    model = ContactModel(arm, dt=0.05)
    with raises("margin must be a finite non-negative number, got -0.01"):
        CollisionDistance((), margin=-0.01)
    with raises("StateInequality takes a casadi.Function (q, v) -> one column"):
        StateInequality("tool above 0.3 m")
    q = ca.SX.sym("q", 7)
    wrong = ca.Function("wrong", [q, ca.SX.sym("v", 6)], [q[0]])
    with raises("StateInequality: wrong takes 7 and 6 rows, the robot's q and v have 6 and 6"):
        Problem(model, 3, [ControlResidual()], constraints=[StateInequality(wrong)])
