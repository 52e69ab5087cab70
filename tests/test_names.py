"""Any URDF name works everywhere: numbers, Functions, compile() and C export; names that
read alike once made valid for C never share a cache entry or a symbol."""

from __future__ import annotations

import subprocess

import casadi as ca
import numpy as np
import pytest
from conftest import assert_close

import casdyn
from casdyn.codegen import build, source
from casdyn.functions.names import function_name, identifier

ODD = ["a-b", "a.b", "_lead", "__xacro", "ünï", "..", "iris__/imu_link", "x" * 300, "a_b", "c",
       "trail_", "9lives", "with space"]


def odd_robot(name: str = "arm (sim)") -> casdyn.RigidBodyTree:
    """A fan of revolute joints, each carrying a link with one of the names in ODD, each at
    its own place, so that every body has different numbers."""
    inertia = '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.3"/>'
    parts = [f'<robot name="{name}"><link name="root"/>']
    for i, link in enumerate(ODD):
        parts.append(f'<link name="{link}"><inertial><mass value="{1 + i}"/>'
                     f'<origin xyz="0.1 0 0"/>{inertia}</inertial></link>'
                     f'<joint name="j{i}" type="revolute"><parent link="root"/>'
                     f'<child link="{link}"/><origin xyz="{i + 1} {i % 3} 0" rpy="0 {i} 0"/>'
                     '<axis xyz="0 0 1"/><limit lower="-2" upper="2" effort="1" velocity="1"/>'
                     "</joint>")
    return casdyn.load_urdf("".join(parts) + "</robot>")


@pytest.fixture(scope="module")
def robot():
    return odd_robot()


def test_identifiers_are_valid_casadi_names():
    x = ca.SX.sym("x")
    for text in [*ODD, "arm (sim)", "arm_", "", "___", "ä"]:
        ca.Function(identifier(text), [x], [x])  # raises for an invalid name


def test_function_names_differ_where_the_options_do():
    assert function_name("get_transform", {"body": "tool0", "relative_to": "base"}) == \
        "get_transform_tool0_base"
    pairs = [({"body": "a-b"}, {"body": "a.b"}),
             ({"body": "a", "relative_to": "b_c"}, {"body": "a_b", "relative_to": "c"}),
             ({"body": "a_b"}, {"body": "a__b"})]
    for first, second in pairs:
        assert function_name("get_transform", first) != function_name("get_transform", second)
    assert function_name("geometric_jacobian", {"body": "tool0", "reference_frame": "local"}) \
        == "geometric_jacobian_tool0_local"
    assert function_name("geometric_jacobian", {"body": "x", "reference_frame": "local"}) != \
        function_name("geometric_jacobian", {"body": "x_local", "reference_frame": "base"})
    # functions without a choice of axes keep their plain names
    assert function_name("get_transform", {"body": "x_local"}) == "get_transform_x_local"


def test_every_function_works_for_every_name(robot):
    q = robot.random_configuration(0)
    for i, body in enumerate(ODD):
        T = robot.get_transform(q, body)
        assert T.shape == (4, 4)
        J = robot.geometric_jacobian(q, body)
        assert np.count_nonzero(J[:, i]) and np.count_nonzero(J) == np.count_nonzero(J[:, i])
        fext = robot.external_force(body, np.ones(6), q)
        assert np.count_nonzero(fext[i]) and np.count_nonzero(fext) == np.count_nonzero(fext[i])
        assert_close(robot.get_transform(q, body, relative_to=ODD[i - 1]),
                     np.linalg.solve(robot.get_transform(q, ODD[i - 1]), T))


def test_bodies_whose_names_read_alike_keep_their_own_numbers(robot):
    q = robot.random_configuration(1)
    Q = np.array([q, q])
    for a, b in [("a-b", "a.b"), ("a.b", "a_b")]:
        Ta, Tb = robot.get_transform(q, a), robot.get_transform(q, b)
        assert not np.allclose(Ta, Tb)
        # batch evaluators are cached per Function, not per sanitised name
        assert_close(robot.get_transform(Q, a)[1], Ta)
        assert_close(robot.get_transform(Q, b)[1], Tb)
    # get_transform of a relative to b_c vs a_b relative to c, on a robot with such links
    text = ('<robot name="r"><link name="root"/>' + "".join(
        f'<link name="{n}"/><joint name="j{n}" type="revolute"><parent link="root"/>'
        f'<child link="{n}"/><origin xyz="{k} {k * k} 0"/><axis xyz="0 0 1"/></joint>'
        for k, n in enumerate(["a", "b_c", "a_b", "c"], start=1)) + "</robot>")
    small = casdyn.load_urdf(text)
    x = np.array([0.1, 0.2, 0.3, 0.4])
    first = small.get_transform(x, "a", relative_to="b_c")
    second = small.get_transform(x, "a_b", relative_to="c")
    assert not np.allclose(first, second)
    assert_close(first, np.linalg.solve(small.get_transform(x, "b_c"), small.get_transform(x, "a")))


def test_compiled_functions_are_cached_per_function(robot, tmp_path):
    q = robot.random_configuration(2)
    functions = [("geometric_jacobian", {"body": body}) for body in ("a-b", "a.b", "a_b")]
    expected = [robot.geometric_jacobian(q, options["body"]) for _, options in functions]
    robot.compile(functions, directory=tmp_path)
    assert len(robot.compiled_functions) == 3
    for (_, options), want in zip(functions, expected, strict=True):
        assert_close(robot.geometric_jacobian(q, options["body"]), want)


@pytest.mark.slow
def test_export_and_compile_with_odd_robot_and_body_names(tmp_path):
    for name in ("arm (sim)", "arm_", "ünï", "y" * 300):
        robot = odd_robot(name)
        q = robot.random_configuration(3)
        loaded = robot.export_c(tmp_path / identifier(name)[:20],
                                [("geometric_jacobian", {"body": body}) for body in ODD])
        assert len(loaded) == len(ODD)
        for body in ODD:
            f = robot.function("geometric_jacobian", body=body)
            assert_close(loaded[f.name()](q).full(), robot.geometric_jacobian(q, body))
    robot.compile(["mass_matrix", ("get_transform", {"body": "__xacro", "relative_to": ".."})],
                  directory=tmp_path / "cache")
    assert_close(robot.mass_matrix(q), odd_robot().mass_matrix(q))


def test_two_robots_link_into_one_library(tmp_path):
    """C symbols carry a prefix (default: the robot's name), so two robots' C files with the
    same functions compile into one library; the loaded Functions keep their names."""
    sources = []
    for name in ("ur5e", "kuka_iiwa14"):
        robot = casdyn.load_robot(name)
        loaded = robot.export_c(tmp_path / name, ["inverse_dynamics"], compile=name == "ur5e")
        assert list(loaded) == ["inverse_dynamics"]
        assert loaded["inverse_dynamics"].name() == "inverse_dynamics"
        sources.append(str(tmp_path / name / f"casdyn_{robot.name}.c"))
    header = (tmp_path / "ur5e" / "casdyn_ur5e.h").read_text()
    assert "int ur5e_inverse_dynamics(" in header
    command = [build.find_compiler(), "-shared", "-fPIC", *sources, "-o",
               str(tmp_path / "libboth.so"), "-lm"]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    ur5e = casdyn.load_robot("ur5e")
    both = ca.external("ur5e_inverse_dynamics", str(tmp_path / "libboth.so"))
    q = ur5e.random_configuration(4)
    assert_close(both(q, q, q, np.zeros((ur5e.n_bodies, 6))).full().ravel(),
                 ur5e.inverse_dynamics(q, q, q))


def test_prefixed_export_keeps_the_graph():
    robot = casdyn.load_robot("ur5e")
    f = robot.function("inverse_dynamics")
    assert source.renamed(f, "ur5e_inverse_dynamics").n_instructions() == f.n_instructions()
