"""CasADi use: symbols in, symbols out; named Functions; AD, map and an Opti problem."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest
from conftest import assert_close

import casdyn

SPEC_SIGNATURES = {
    "inverse_dynamics": (["q", "qd", "qdd", "fext"], ["tau"]),
    "forward_dynamics": (["q", "qd", "tau", "fext"], ["qdd"]),
    "mass_matrix": (["q"], ["M"]),
    "velocity_product": (["q", "qd"], ["c"]),
    "gravity_torque": (["q"], ["g"]),
    "geometric_jacobian": (["q"], ["J"]),
    "get_transform": (["q"], ["T"]),
    "center_of_mass": (["q"], ["com", "com_jacobian"]),
    "external_force": (["wrench", "q"], ["fext"]),
    # SPEC "Frames, momentum, energy and contacts": inputs named as the arguments
    "frame_velocity": (["q", "qd"], ["velocity"]),
    "frame_acceleration": (["q", "qd", "qdd"], ["acceleration"]),
    "jacobian_time_derivative": (["q", "qd"], ["Jdot"]),
    "centroidal_momentum_matrix": (["q"], ["A_G"]),
    "centroidal_momentum": (["q", "qd"], ["h_G"]),
    "centroidal_momentum_bias": (["q", "qd"], ["Adot_qd"]),
    "kinetic_energy": (["q", "qd"], ["T"]),
    "potential_energy": (["q"], ["V"]),
    "contact_dynamics": (["q", "qd", "tau", "fext", "damping"], ["qdd", "forces"]),
    "impulse_dynamics": (["q", "qd_minus", "restitution"], ["qd_plus", "impulses"]),
}
PER_BODY = ("geometric_jacobian", "get_transform", "external_force", "frame_velocity",
            "frame_acceleration", "jacobian_time_derivative")


@pytest.fixture(scope="module")
def robot(shipped):
    return shipped("ur5e")


@pytest.mark.parametrize("name", SPEC_SIGNATURES)
def test_functions_have_the_spec_names(robot, name):
    options = {"body": "tool0"} if name in PER_BODY else {}
    if name in ("contact_dynamics", "impulse_dynamics"):
        options = {"contacts": [casdyn.Contact("tool0", "6d")]}
    f = robot.function(name, **options)
    assert isinstance(f, ca.Function)
    assert (f.name_in(), f.name_out()) == SPEC_SIGNATURES[name]
    assert f is robot.function(name, **options)  # cached


def test_fext_input_is_n_bodies_by_6(robot):
    f = robot.function("inverse_dynamics")
    assert f.size_in("fext") == (robot.n_bodies, 6)


def test_keyword_call_leaves_inputs_out_as_zero(robot):
    q = robot.random_configuration(0)
    out = robot.function("inverse_dynamics")(q=q)
    assert_close(out["tau"].full().ravel(), robot.gravity_torque(q))


@pytest.mark.parametrize("kind", [ca.SX, ca.MX])
def test_symbolic_arguments_give_expressions_of_the_same_kind(robot, kind):
    q, qd = kind.sym("q", robot.nq), kind.sym("qd", robot.nq)
    fext = kind.sym("fext", robot.n_bodies, 6)
    tau = robot.inverse_dynamics(q, qd, None, fext)
    assert isinstance(tau, kind) and tau.shape == (robot.nq, 1)
    f = ca.Function("f", [q, qd, fext], [tau])
    rng = np.random.default_rng(1)
    x, v, F = robot.random_configuration(rng), rng.normal(size=robot.nq), rng.normal(
        size=(robot.n_bodies, 6))
    assert_close(f(x, v, F).full().ravel(), robot.inverse_dynamics(x, v, None, F))
    com, jac = robot.center_of_mass(q)
    assert isinstance(com, kind) and jac.shape == (3, robot.nq)
    assert isinstance(robot.external_force("tool0", kind.sym("w", 6), q), kind)
    assert isinstance(robot.external_force("tool0", kind.sym("w", 6)), kind)


def test_functions_differentiate_and_map(robot):
    f = robot.function("forward_dynamics")
    rng = np.random.default_rng(2)
    q, qd, tau = robot.random_configuration(rng), *rng.normal(size=(2, robot.nq))
    fext = np.zeros((robot.n_bodies, 6))
    jac = f.jacobian()(q, qd, tau, fext, 0)
    dqdd_dtau = jac[2].full()
    assert_close(dqdd_dtau, np.linalg.inv(robot.mass_matrix(q)))
    mapped = f.map(4, "thread", 2)
    out = mapped(np.tile(q, (4, 1)).T, np.tile(qd, (4, 1)).T, np.tile(tau, (4, 1)).T,
                 np.tile(fext, (1, 4)))
    assert_close(out.full()[:, 3], robot.forward_dynamics(q, qd, tau))


def test_forward_and_reverse_mode_equal_the_derivative_functions(robot):
    """Directional derivatives by CasADi's forward mode and adjoints by its reverse mode
    equal the ready-made derivative Jacobians times the seeds."""
    f = robot.function("forward_dynamics", fext=False)
    rng = np.random.default_rng(3)
    q, qd, tau = robot.random_configuration(rng), *rng.normal(size=(2, robot.nq))
    dq, dqd, dtau = robot.forward_dynamics_derivatives(q, qd, tau)
    seeds = rng.normal(size=(3, robot.nq))
    qdd = f(q, qd, tau)
    directional = f.forward(1)(q, qd, tau, qdd, *seeds).full().ravel()
    assert_close(directional, dq @ seeds[0] + dqd @ seeds[1] + dtau @ seeds[2])
    adjoint_seed = rng.normal(size=robot.nq)
    adjoints = f.reverse(1)(q, qd, tau, qdd, adjoint_seed)
    for adjoint, jacobian in zip(adjoints, (dq, dqd, dtau), strict=True):
        assert_close(adjoint.full().ravel(), jacobian.T @ adjoint_seed)


def test_casadi_dm_arguments_are_numbers(robot):
    q = robot.random_configuration(3)
    assert_close(robot.inverse_dynamics(ca.DM(q)), robot.inverse_dynamics(q))
    assert isinstance(robot.mass_matrix(ca.DM(q)), np.ndarray)


def test_opti_problem_with_inverse_dynamics_solves(robot):
    """Find the pose, with the tool 0.4 m up, that needs the least holding torque."""
    opti = ca.Opti()
    q = opti.variable(robot.nq)
    tau = robot.inverse_dynamics(q)
    opti.minimize(ca.sumsqr(tau) + 1e-3 * ca.sumsqr(q))
    opti.subject_to(robot.get_transform(q, "tool0")[2, 3] == 0.4)
    lower, upper = robot.position_limits
    opti.subject_to(opti.bounded(lower, q, upper))
    opti.set_initial(q, [0, -1.0, 1.0, -1.0, -1.5, 0])
    opti.solver("ipopt", {"print_time": False}, {"print_level": 0, "sb": "yes"})
    solution = opti.solve()
    q_star = solution.value(q)
    assert solution.stats()["success"]
    assert abs(robot.get_transform(q_star, "tool0")[2, 3] - 0.4) < 1e-6
    home_cost = np.sum(robot.gravity_torque([0, -1.0, 1.0, -1.0, -1.5, 0]) ** 2)
    assert np.sum(robot.gravity_torque(q_star) ** 2) < home_cost
