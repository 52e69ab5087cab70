"""Frame velocities and accelerations, Jdot, centroidal momentum and energy (SPEC "Frames,
momentum, energy and contacts") against Pinocchio (``getFrameVelocity``,
``getFrameClassicalAcceleration``, ``getFrameJacobianTimeVariation`` in LOCAL_WORLD_ALIGNED,
``computeCentroidalMap`` / ``Momentum`` / ``MomentumTimeVariation``, the energies),
converted in pinocchio_reference.py, and against the identities that define them."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close, case_id, jacobian_rate, load_case, random_state
from pinocchio_reference import TaskSpace, assert_frame_motion_agrees
from random_trees import random_urdf

import casdyn

POINT = (0.05, -0.1, 0.2)  # an offset in the body frame, as a foot below its last link
CASES = ([("shipped", name, fb) for name in casdyn.robot_names() for fb in (False, True)]
         + [("random", seed, fb) for seed in range(4) for fb in (False, True)])


@pytest.fixture(params=CASES, ids=case_id, scope="module")
def loaded(request):
    robot, reference = load_case(request.param)
    return robot, TaskSpace(reference)


def _bodies(robot) -> list[int]:
    """The first body, one in the middle and the last: root, mid-chain and a leaf."""
    return sorted({0, robot.n_bodies // 2, robot.n_bodies - 1})


@pytest.mark.parametrize("axes", ["base", "local"])
def test_frame_velocity_acceleration_and_jdot_agree_with_pinocchio(loaded, axes):
    robot, reference = loaded
    q, qd, qdd, _ = random_state(robot, 3)
    for body in _bodies(robot):
        name = robot.body_names[body]
        for point in (None, POINT):
            assert_frame_motion_agrees(robot, reference, q, qd, qdd, body, point, axes)
            assert_close(robot.jacobian_time_derivative(q, qd, name, point, axes),
                         reference.jacobian_time_derivative(q, qd, body, point, axes))


def test_centroidal_momentum_and_energy_agree_with_pinocchio(loaded):
    robot, reference = loaded
    q, qd, _, _ = random_state(robot, 4)
    com, _ = robot.center_of_mass(q)
    assert_close(robot.centroidal_momentum_matrix(q),
                 reference.centroidal_momentum_matrix(q, com))
    assert_close(robot.centroidal_momentum(q, qd), reference.centroidal_momentum(q, qd, com))
    assert_close(robot.centroidal_momentum_bias(q, qd),
                 reference.centroidal_momentum_bias(q, qd, com))
    assert_close(robot.kinetic_energy(q, qd), reference.kinetic_energy(q, qd))
    assert_close(robot.potential_energy(q), reference.potential_energy(q))


def test_the_quantities_are_what_they_are_defined_from(loaded):
    """``J qd``, ``J qdd + Jdot qd``, ``A_G qd``, ``qd^T M qd / 2``, ``-m g . c``."""
    robot, _ = loaded
    q, qd, qdd, _ = random_state(robot, 5)
    name = robot.body_names[-1]
    J = robot.geometric_jacobian(q, name, POINT)
    assert_close(robot.frame_velocity(q, qd, name, POINT), J @ qd)
    assert_close(robot.frame_acceleration(q, qd, qdd, name, POINT),
                 J @ qdd + robot.jacobian_time_derivative(q, qd, name, POINT) @ qd)
    assert_close(robot.centroidal_momentum(q, qd), robot.centroidal_momentum_matrix(q) @ qd)
    assert_close(robot.kinetic_energy(q, qd), 0.5 * qd @ robot.mass_matrix(q) @ qd)
    com, _ = robot.center_of_mass(q)
    assert_close(robot.potential_energy(q), -robot.mass * robot.gravity @ com)
    # in the body's axes, which turn with it: the classical acceleration gains w x v
    J = robot.geometric_jacobian(q, name, POINT, "local")
    w, v = np.split(robot.frame_velocity(q, qd, name, POINT, "local"), 2)
    assert_close(np.r_[w, v], J @ qd)
    Jdot = robot.jacobian_time_derivative(q, qd, name, POINT, "local")
    assert_close(robot.frame_acceleration(q, qd, qdd, name, POINT, "local"),
                 J @ qdd + Jdot @ qd + np.r_[np.zeros(3), np.cross(w, v)])
    R = robot.get_transform(q, name)[:3, :3]
    assert_close(J, np.kron(np.eye(2), R.T) @ robot.geometric_jacobian(q, name, POINT))


@pytest.mark.parametrize("case", [("shipped", "ur5e", False), ("shipped", "solo12", True),
                                  ("random", 2, True)], ids=case_id)
def test_accelerations_are_time_derivatives_along_a_motion(case):
    """Central differences along ``q(t) = q ⊕ (qd t + qdd t^2 / 2)`` with rates ``qd + qdd t``
    (exact to O(t^2), which the central difference cancels): ``d/dt (J qd)`` is the frame
    acceleration, ``d/dt J`` along ``q ⊕ qd t`` (constant body rates) is ``Jdot``, and
    ``d/dt h_G`` is ``A_G qdd + Adot_G qd``."""
    kind, key, floating_base = case
    text = casdyn.robot_urdf(key) if kind == "shipped" else random_urdf(
        key, n_links=8, multi_dof=True)
    robot = casdyn.load_urdf(text, floating_base=floating_base)
    q, qd, qdd, _ = random_state(robot, 6)
    name, h = robot.body_names[-1], 1e-5

    def along(t):
        return robot.integrate(q, qd * t + qdd * t * t / 2), qd + qdd * t

    def rate(f):
        return (f(*along(h)) - f(*along(-h))) / (2 * h)

    assert_close(rate(lambda q_, v_: robot.frame_velocity(q_, v_, name, POINT)),
                 robot.frame_acceleration(q, qd, qdd, name, POINT), rtol=1e-6)
    assert_close(rate(lambda q_, v_: robot.centroidal_momentum(q_, v_)),
                 robot.centroidal_momentum_matrix(q) @ qdd
                 + robot.centroidal_momentum_bias(q, qd), rtol=1e-6)
    for axes in ("base", "local"):
        assert_close(jacobian_rate(robot, q, qd, name, POINT, axes, h),
                     robot.jacobian_time_derivative(q, qd, name, POINT, axes), rtol=1e-6)


def test_the_functions_take_symbols_and_differentiate():
    import casadi as ca

    robot = casdyn.load_robot("solo12", floating_base=True)
    f = robot.function("frame_acceleration", body="FL_FOOT", point=(0, 0, -0.01))
    assert f.name_in() == ["q", "qd", "qdd"] and f.name_out() == ["acceleration"]
    q, qd = ca.SX.sym("q", robot.nq), ca.SX.sym("qd", robot.nv)
    T = robot.kinetic_energy(q, qd)
    assert isinstance(T, ca.SX) and T.shape == (1, 1)
    # the Hessian of the kinetic energy in qd is M
    M = ca.Function("M", [q, qd], [ca.hessian(T, qd)[0]])
    x, v, _, _ = random_state(robot, 7)
    assert_close(np.array(M(x, v)), robot.mass_matrix(x))


def test_a_point_of_the_wrong_size_or_an_unknown_body_is_an_input_error():
    robot = casdyn.load_robot("ur5e")
    with pytest.raises(casdyn.InputError, match="point must be 3 numbers"):
        robot.frame_velocity(None, None, "tool0", point=(1, 2))
    with pytest.raises(casdyn.InputError, match="tool0"):
        robot.jacobian_time_derivative(None, None, "tool")
    with pytest.raises(casdyn.InputError, match="finite"):
        robot.frame_acceleration(None, None, None, "tool0", point=(0, np.nan, 0))
    with pytest.raises(casdyn.InputError, match=r"'base' .* or 'local'"):
        robot.geometric_jacobian(None, "tool0", reference_frame="world")
    with pytest.raises(casdyn.InputError, match="LOCAL_WORLD_ALIGNED"):
        robot.function("jacobian_time_derivative", body="tool0", reference_frame="LOCAL")
