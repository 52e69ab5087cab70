"""Result shapes follow the quantity, not its size; odd inputs are refused, not converted."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

import casdyn
from casdyn import InputError

PENDULUM = """<robot name="pendulum"><link name="base"/>
<link name="rod"><inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.01"/></inertial></link>
<link name="tip"/>
<joint name="hinge" type="revolute"><parent link="base"/><child link="rod"/>
<axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
<joint name="tip_joint" type="fixed"><parent link="rod"/><child link="tip"/>
<origin xyz="0 0 -1"/></joint></robot>"""

# a Cartesian gantry: three prismatic axes, nothing depends on q
GANTRY = """<robot name="gantry"><link name="base"/>""" + "".join(
    f"""<link name="l{i}"><inertial><mass value="{3 - i}"/>
<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
<joint name="{axis}" type="prismatic"><parent link="{'base' if i == 0 else f'l{i - 1}'}"/>
<child link="l{i}"/><axis xyz="{' '.join('1' if k == i else '0' for k in range(3))}"/>
<limit lower="-1" upper="1" effort="100" velocity="1"/></joint>"""
    for i, axis in enumerate("xyz")) + "</robot>"


@pytest.fixture(scope="module")
def pendulum():
    return casdyn.load_urdf(PENDULUM)


def test_a_one_dof_robot_has_matrix_shaped_matrices(pendulum):
    q = [0.4]
    assert pendulum.mass_matrix(q).shape == (1, 1)
    assert pendulum.geometric_jacobian(q, "tip").shape == (6, 1)
    assert pendulum.center_of_mass(q)[0].shape == (3,)
    assert pendulum.center_of_mass(q)[1].shape == (3, 1)
    assert pendulum.inverse_dynamics(q).shape == (1,)
    assert pendulum.mass_matrix(np.array([[0.4], [0.5]])).shape == (2, 1, 1)
    # M = I_xx about the hinge: 0.1 + m d^2
    assert_close(pendulum.mass_matrix(q), [[0.1 + 2 * 0.5**2]])


def test_derivatives_of_a_one_dof_robot(pendulum):
    q, qd, qdd = [0.4], [0.7], [-0.3]
    dq, dqd, dqdd = pendulum.inverse_dynamics_derivatives(q, qd, qdd)
    assert dq.shape == dqd.shape == dqdd.shape == (1, 1)
    # tau = I qdd + m g d sin(q) for a hinge about x with the mass below it
    assert_close(dq, [[2 * 9.81 * 0.5 * np.cos(0.4)]])
    assert_close(dqd, [[0.0]])
    f_dq, f_dqd, f_dtau = pendulum.forward_dynamics_derivatives(q, qd, [1.0])
    assert_close(f_dtau, np.linalg.inv(pendulum.mass_matrix(q)))
    assert f_dqd.shape == (1, 1) and f_dq.shape == (1, 1)


def test_derivatives_with_structurally_zero_blocks():
    """On a Cartesian gantry neither M nor g depends on q: d tau/dq and d tau/dqd are
    structurally zero, and come back as zero matrices."""
    gantry = casdyn.load_urdf(GANTRY)
    q, qd, qdd = [0.1, 0.2, 0.3], [1, 2, 3], [0.5, -0.5, 1]
    dq, dqd, dqdd = gantry.inverse_dynamics_derivatives(q, qd, qdd)
    assert np.array_equal(dq, np.zeros((3, 3))) and np.array_equal(dqd, np.zeros((3, 3)))
    assert_close(dqdd, np.diag([6.0, 3.0, 1.0]))  # each axis carries the links below it
    f_dq, f_dqd, _ = gantry.forward_dynamics_derivatives(q, qd, [1, 1, 1])
    assert np.array_equal(f_dq, np.zeros((3, 3))) and np.array_equal(f_dqd, np.zeros((3, 3)))
    batch = gantry.inverse_dynamics_derivatives(np.array([q, q]), qd, qdd)
    assert batch[0].shape == (2, 3, 3)


def test_a_batch_of_none_returns_empty_results():
    robot = casdyn.load_robot("ur5e")
    none = np.zeros((0, robot.nq))
    assert robot.inverse_dynamics(none).shape == (0, 6)
    assert robot.mass_matrix(none).shape == (0, 6, 6)
    com, jacobian = robot.center_of_mass(none)
    assert com.shape == (0, 3) and jacobian.shape == (0, 3, 6)
    assert robot.get_transform(none, "tool0").shape == (0, 4, 4)
    assert robot.inverse_dynamics(none, fext=np.zeros((0, robot.n_bodies, 6))).shape == (0, 6)


def test_batches_longer_than_a_chunk_are_evaluated_whole(monkeypatch):
    import casdyn.runtime.engine

    monkeypatch.setattr(casdyn.runtime.engine, "BATCH_CHUNK", 4)
    robot = casdyn.load_robot("planar_2link")
    Q = np.random.default_rng(0).uniform(-1, 1, size=(11, 2))
    M = robot.mass_matrix(Q)
    for k in range(11):
        assert_close(M[k], robot.mass_matrix(Q[k]))


@pytest.mark.parametrize("bad, word", [
    (np.full(6, 1 + 2j), "complex"),
    (np.array(["0.1"] * 6), "strings"),
    (["0.1"] * 6, "strings"),
    (np.array([object()] * 6), "object"),
    ([0.1, [0.2, 0.3], 0, 0, 0, 0], "numeric"),
])
def test_complex_string_and_object_input_is_refused(bad, word):
    robot = casdyn.load_robot("ur5e")
    with pytest.raises(InputError, match=word):
        robot.mass_matrix(bad)
    with pytest.raises(InputError, match=word):
        robot.inverse_dynamics(robot.home_configuration(), bad)


def test_integer_and_boolean_arrays_are_numbers():
    robot = casdyn.load_robot("ur5e")
    assert_close(robot.mass_matrix(np.zeros(6, dtype=int)), robot.mass_matrix(np.zeros(6)))
    assert_close(robot.inverse_dynamics([0, 1, 0, 0, 0, 0]),
                 robot.inverse_dynamics(np.array([0.0, 1, 0, 0, 0, 0])))


def test_a_batch_of_random_configurations_keeps_to_the_limits():
    robot = casdyn.load_robot("solo12", floating_base=True)
    Q = robot.random_configuration(0, n=500)
    assert Q.shape == (500, robot.nq)
    assert np.allclose(np.linalg.norm(Q[:, 3:7], axis=1), 1.0)  # unit quaternions
    arm = casdyn.load_robot("ur5e")
    lower, upper = arm.position_limits
    Q = arm.random_configuration(1, n=500)
    assert np.all((lower <= Q) & (upper >= Q))
    assert arm.random_configuration(2, n=0).shape == (0, arm.nq)
    with pytest.raises(casdyn.InputError, match="count"):
        arm.random_configuration(3, n=-1)


def test_a_casadi_row_or_column_is_one_vector_not_a_batch():
    """``casadi.DM`` is always 2-D: a row or a column is one vector (batches are NumPy
    arrays), for wrenches without ``q`` as for configurations."""
    import casadi as ca

    robot = casdyn.load_robot("solo12", floating_base=True)
    wrench = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    expected = robot.external_force("FL_FOOT", np.array(wrench))
    for value in (ca.DM(wrench).T, ca.DM(wrench)):
        assert_close(robot.external_force("FL_FOOT", value), expected)
    q = robot.home_configuration()
    assert robot.inverse_dynamics(ca.DM(q).T).shape == (robot.nv,)
    assert robot.external_force("FL_FOOT", np.array([wrench])).shape == (1, robot.n_bodies, 6)
