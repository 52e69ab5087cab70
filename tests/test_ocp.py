"""casdyn.ocp: its constraints against casdyn's own contact dynamics, its NLP solved alike by
fatrop and Ipopt, and the quadruped MPC example walking in MuJoCo."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import casadi as ca
import numpy as np
import pytest

import casdyn
from casdyn import Contact
from casdyn.ocp import (
    ContactModel,
    ContactOCP,
    TrackingCost,
    compiled,
    friction_cone,
    friction_pyramid,
)

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
LEGS = [0.0, 0.8, -1.6] * 2 + [0.0, -0.8, 1.6] * 2
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture(scope="module")
def robot(shipped):
    return shipped("solo12", floating_base=True)


@pytest.fixture(scope="module")
def model(robot):
    return ContactModel(robot, FEET, dt=0.02, damping=10.0, mu=0.7)


def disturbed_state(robot, seed: int) -> np.ndarray:
    """A standing pose, tilted and bent a little, moving."""
    rng = np.random.default_rng(seed)
    q = np.r_[0.0, 0.0, 0.25, 1.0, 0.0, 0.0, 0.0, LEGS]
    q = robot.integrate(q, 0.1 * rng.standard_normal(robot.nv))
    return np.r_[q, 0.3 * rng.standard_normal(robot.nv)]


@pytest.mark.parametrize("held", [(1, 1, 1, 1), (1, 0, 0, 1), (0, 1, 1, 0)])
def test_inverse_dynamics_residual_vanishes_at_contact_dynamics(robot, model, held):
    x = disturbed_state(robot, 1)
    q, v = x[: robot.nq], x[robot.nq :]
    u = np.random.default_rng(2).uniform(-1, 1, model.nu)
    contacts = [Contact(f) for f, h in zip(FEET, held, strict=True) if h]
    qdd, f = robot.contact_dynamics(q, v, np.r_[np.zeros(6), u], contacts,
                                    damping=model.damping)
    forces = np.zeros((3, len(FEET)))
    forces[:, np.flatnonzero(held)] = np.asarray(f).T
    residual = np.asarray(ca.DM(model.inverse_dynamics_residual(q, v, qdd, u, forces))).ravel()
    scale = np.abs(robot.inverse_dynamics(q, v, qdd)).max()
    assert np.abs(residual).max() < 1e-9 * scale
    acceleration = np.asarray(ca.DM(model.foot_acceleration(q, v, qdd, held)))
    assert np.abs(acceleration).max() < 1e-9 * max(1.0, np.abs(qdd).max())
    # and with one force changed the residual is not zero
    forces[2, np.flatnonzero(held)[0]] += 1.0
    changed = np.asarray(ca.DM(model.inverse_dynamics_residual(q, v, qdd, u, forces)))
    assert np.abs(changed).max() > 1e-3


def talos():
    from importlib.metadata import distribution

    root = Path(distribution("example-robot-data").locate_file(
        "cmeel.prefix/share/example-robot-data/robots"))
    return casdyn.load_urdf((root / "talos_data/robots/talos_reduced.urdf").read_text(),
                            floating_base=True)


def test_six_d_feet_residuals_vanish_at_contact_dynamics():
    robot = talos()
    feet = ("left_sole_link", "right_sole_link")
    model = ContactModel(robot, feet, dt=0.02, damping=5.0, contact="6d")
    rng = np.random.default_rng(9)
    q = robot.integrate(robot.home_configuration(), 0.05 * rng.standard_normal(robot.nv))
    v = 0.2 * rng.standard_normal(robot.nv)
    u = rng.uniform(-5, 5, model.nu)
    qdd, f = robot.contact_dynamics(q, v, np.r_[np.zeros(6), u],
                                    [Contact(foot, "6d") for foot in feet], damping=5.0)
    forces = np.asarray(f).T  # 6 x 2, [n; f] per foot
    residual = np.asarray(ca.DM(model.inverse_dynamics_residual(q, v, qdd, u, forces)))
    assert np.abs(residual).max() < 1e-9 * np.abs(robot.inverse_dynamics(q, v, qdd)).max()
    acceleration = np.asarray(ca.DM(model.foot_acceleration(q, v, qdd, (1, 1))))
    assert acceleration.shape == (6, 2)
    assert np.abs(acceleration).max() < 1e-9 * max(1.0, np.abs(qdd).max())
    _, step_forces = model.step((1, 1))(np.r_[q, v], u)
    assert np.allclose(np.asarray(step_forces), forces, rtol=1e-10, atol=1e-9)
    # the centre of pressure rows: a wrench whose moment puts it outside the sole fails
    wrench = ca.DM([0.0, 0.0, 0.0, 0.0, 0.0, 100.0])
    assert np.all(np.asarray(model.contact_rows(wrench)) >= 0)
    wrench[1] = 100.0 * (model.sole[0] + 0.01)  # n_y: the CoP beyond the sole's length
    assert np.any(np.asarray(model.contact_rows(wrench)) < 0)


def test_step_is_semi_implicit_euler_of_contact_dynamics(robot, model):
    x = disturbed_state(robot, 3)
    q, v = x[: robot.nq], x[robot.nq :]
    u = np.random.default_rng(4).uniform(-1, 1, model.nu)
    held = (1, 0, 0, 1)
    qdd, f = robot.contact_dynamics(q, v, np.r_[np.zeros(6), u],
                                    [Contact("FL_FOOT"), Contact("HR_FOOT")],
                                    damping=model.damping)
    x_next, forces = model.step(held)(x, u)
    v_next = v + model.dt * qdd
    expected = np.r_[robot.integrate(q, model.dt * v_next), v_next]
    assert np.allclose(np.asarray(x_next).ravel(), expected, rtol=1e-10, atol=1e-12)
    forces = np.asarray(forces)
    assert np.allclose(forces[:, [0, 3]], np.asarray(f).T, rtol=1e-10, atol=1e-12)
    assert np.all(forces[:, [1, 2]] == 0)


def test_integrate_and_difference_of_states_are_inverse(robot, model):
    x = disturbed_state(robot, 5)
    dx = np.random.default_rng(6).standard_normal(model.ndx) * 0.3
    y = np.asarray(ca.DM(model.integrate_state(ca.DM(x), ca.DM(dx)))).ravel()
    assert abs(np.linalg.norm(y[3:7]) - 1) < 1e-12
    back = np.asarray(ca.DM(model.difference_state(ca.DM(x), ca.DM(y)))).ravel()
    assert np.allclose(back, dx, atol=1e-10)


@pytest.mark.slow
def test_compiled_function_matches_the_graph_and_is_cached(model, tmp_path):
    x, dx = ca.SX.sym("x", model.nx), ca.SX.sym("dx", model.ndx)
    f = ca.Function("plus_state", [x, dx], [model.integrate_state(x, dx)])
    c = compiled(f, directory=tmp_path)
    x0 = disturbed_state(model.robot, 7)
    dx0 = np.random.default_rng(8).standard_normal(model.ndx)
    assert np.allclose(np.asarray(c(x0, dx0)), np.asarray(f(x0, dx0)), rtol=1e-12, atol=1e-14)
    libraries = list(tmp_path.glob("*.so"))
    assert len(libraries) == 1
    compiled(f, directory=tmp_path)  # the second time: loaded, not built again
    assert list(tmp_path.glob("*.so")) == libraries


def test_friction_rows_are_nonnegative_exactly_inside_the_cones():
    mu = 0.5
    inside = [0.1, -0.2, 1.0]  # |f_t| = 0.22 < 0.5
    corner = [0.45, 0.45, 1.0]  # inside the pyramid (each axis < 0.5), outside the cone
    outside = [0.6, 0.0, 1.0]
    pulling = [0.0, 0.0, -1.0]

    def rows(f, kind):
        return np.asarray(ca.DM(kind(ca.DM(f), mu))).ravel()

    assert np.all(rows(inside, friction_pyramid) > 0) and np.all(rows(inside, friction_cone) > 0)
    assert np.all(rows(corner, friction_pyramid) >= 0)
    assert np.any(rows(corner, friction_cone) < 0)
    assert np.any(rows(outside, friction_pyramid) < 0) and np.any(
        rows(outside, friction_cone) < 0)
    assert np.any(rows(pulling, friction_pyramid) < 0) and np.any(
        rows(pulling, friction_cone) < 0)


def small_problem(robot, dynamics):
    model = ContactModel(robot, FEET, dt=0.03, damping=0.0, mu=0.7)
    cost = TrackingCost(q_weight=np.r_[[1.0, 5.0, 20.0], [20.0] * 3, np.full(12, 2.0)],
                        v_weight=np.r_[[1.0] * 3, [5.0] * 3, np.full(12, 0.05)],
                        u_weight=np.full(12, 0.1))
    stance = [(1, 1, 1, 1), (1, 0, 0, 1), (1, 0, 0, 1), (1, 1, 1, 1)]
    ocp = ContactOCP(model, cost, stance, dynamics=dynamics)
    q0 = np.r_[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, LEGS]
    q0[2] = -min(robot.get_transform(q0, f)[2, 3] for f in FEET)
    u0 = model.standing_torques(q0)
    x0 = np.r_[q0, np.zeros(robot.nv)]
    columns = []
    for k in range(len(stance) + 1):
        q_ref = q0.copy()
        q_ref[0] = 0.2 * 0.03 * k
        v_ref = np.zeros(robot.nv)
        v_ref[3] = 0.2
        columns.append(cost.pack(model, q_ref, v_ref, u0, np.zeros(4), np.zeros(4)))
    parameters = np.r_[x0, np.stack(columns, axis=1).ravel(order="F")]
    return ocp, parameters, ocp.guess(x0, u0)


@pytest.mark.slow
def test_fatrop_and_ipopt_reach_the_same_optimum(robot):
    ocp, parameters, guess = small_problem(robot, "inverse")
    results = {}
    for name in ("ipopt", "fatrop"):
        solver = ocp.solver(name)
        solution = solver(x0=guess, p=parameters, lbx=ocp.lbz, ubx=ocp.ubz, lbg=ocp.lbg,
                          ubg=ocp.ubg)
        g = solution["g"].full().ravel()
        assert np.max(np.r_[ocp.lbg - g, g - ocp.ubg]) < 1e-6, name
        results[name] = (float(solution["f"]), solution["x"].full().ravel())
    (f_ipopt, z_ipopt), (f_fatrop, z_fatrop) = results["ipopt"], results["fatrop"]
    assert abs(f_ipopt - f_fatrop) < 1e-6 * max(1.0, abs(f_ipopt))
    X_i, W_i = ocp.split(z_ipopt)
    X_f, W_f = ocp.split(z_fatrop)
    assert np.allclose(X_i, X_f, atol=1e-4) and np.allclose(W_i, W_f, atol=1e-3)
    # the optimum moves forward and the held feet push inside their pyramids
    assert X_i[0, -1] > 0.005
    forces = ocp.forces(X_i, W_i)
    fz = forces[:, 2, :]
    assert np.all(np.abs(forces[:, :2, :]) <= 0.7 * fz[:, None, :] + 1e-6)


@pytest.mark.slow
def test_forward_and_inverse_dynamics_problems_agree(robot):
    """With the same step and no damping the two formulations write the same equations
    (``M a + h = S^T u + J_c^T f``, ``J_c a + Jdot_c v = 0``), once with ``a`` and ``f`` as
    variables, once solved for: the same optimum."""
    results = {}
    for dynamics in ("inverse", "forward"):
        ocp, parameters, guess = small_problem(robot, dynamics)
        solver = ocp.solver("ipopt")
        solution = solver(x0=guess, p=parameters, lbx=ocp.lbz, ubx=ocp.ubz, lbg=ocp.lbg,
                          ubg=ocp.ubg)
        assert solver.stats()["success"], dynamics
        results[dynamics] = ocp.split(solution["x"].full().ravel())
    (X_i, W_i), (X_f, W_f) = results["inverse"], results["forward"]
    # (both solved to a tolerance of 1e-6)
    assert np.allclose(X_i, X_f, atol=1e-4)
    assert np.allclose(W_i[:12], W_f, atol=1e-3)


@pytest.mark.slow
def test_quadruped_mpc_quick_run_walks_without_falling(tmp_path):
    saved = tmp_path / "run.npz"
    # --interpreted: CasADi's VM instead of a one-to-two-minute gcc build (same numbers)
    result = subprocess.run([sys.executable, str(EXAMPLES / "quadruped_mpc.py"), "--quick",
                             "--json", "--interpreted", "--save", str(saved)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["plant"] == "mujoco" and not summary["fell"]
    assert summary["solves"] == round(summary["sim_time_s"] / 0.01)
    assert summary["steps_not_taken"] == 0  # every QP gave a finite step (iterate's True)
    # 0.3 s standing, then the trot at 0.35 m/s commanded
    assert summary["distance_m"] > 0.3 * (summary["sim_time_s"] - 0.3)
    data = np.load(saved)
    assert data["q"].shape == (summary["solves"], 19)
    assert data["forces"].shape == (summary["solves"], 4, 3)
    assert list(data["contacts"]) == list(FEET)


@pytest.mark.slow
def test_humanoid_mpc_walks_and_takes_the_push(tmp_path):
    """TALOS in MuJoCo: standing 1 s, then stepping forward, a 200 N sideways push at 2 s;
    every solve a usable step, both soles lifted in turn, no fall (CPU times are not
    asserted: a loaded CI machine)."""
    saved = tmp_path / "walk.npz"
    # --interpreted: CasADi's VM instead of a minute of gcc (the same numbers)
    result = subprocess.run([sys.executable, str(EXAMPLES / "humanoid_mpc.py"), "--quick",
                             "--json", "--interpreted", "--plot-dir", str(tmp_path),
                             "--save", str(saved)],
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["push_n"] == 200.0 and summary["push_at_s"] == 2.0
    assert summary["solves"] == 300 and summary["steps_not_taken"] == 0
    assert not summary["fell"]
    assert min(summary["soles_lifted_periods"]) > 20  # each sole stepped
    assert summary["speed_m_s"] > 0.07  # 0.15 m/s commanded, from standing
    assert (tmp_path / "humanoid_mpc.png").stat().st_size > 10_000
    assert np.load(saved)["q"].shape == (300, 21)


@pytest.mark.slow
def test_trot_step_example_quick_converges_with_fatrop():
    result = subprocess.run([sys.executable, str(EXAMPLES / "quadruped_trot_ocp.py"), "--quick",
                             "--solver", "fatrop", "--json"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    (run,) = json.loads(result.stdout.strip().splitlines()[-1])
    assert run["success"] and run["violation"] < 1e-6
    assert run["distance_m"] > 0.02  # the base moved forward over the step


@pytest.mark.slow
def test_humanoid_balance_quick_recovers_and_matches_contact_dynamics():
    result = subprocess.run([sys.executable, str(EXAMPLES / "humanoid_balance.py"), "--quick",
                             "--solver", "fatrop", "--json"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    (run,) = json.loads(result.stdout.strip().splitlines()[-1])
    assert run["success"]
    # casdyn's contact dynamics, driven by the optimal torques, follows the plan
    assert run["rollout_deviation"] < 1e-5
    assert run["final_base_speed"] < 0.2 / 5  # the push (0.2 m/s) is absorbed
    assert run["max_cop_x_m"] <= 0.1 + 1e-6 and run["peak_torque_ratio"] <= 1 + 1e-6
