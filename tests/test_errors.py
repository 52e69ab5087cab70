"""Bad input gets a casdyn error that names the culprit; never a wrong number."""

from __future__ import annotations

import sys

import casadi as ca
import numpy as np
import pytest

import casdyn
from casdyn import CasdynError, InputError, ModelError, URDFError

LINKS = '<link name="a"/><link name="b"/><link name="c"/>'


def joint(name, parent, child, kind="revolute", extra='<axis xyz="0 0 1"/>'):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/>{extra}</joint>')


def load_error(text) -> URDFError:
    with pytest.raises(URDFError) as info:
        casdyn.load_urdf(text)
    assert isinstance(info.value, CasdynError) and isinstance(info.value, ValueError)
    return info.value


@pytest.fixture(scope="module")
def robot(shipped):
    return shipped("ur5e")


def test_malformed_xml_names_the_line():
    error = load_error('<robot name="r">\n<link name="a">\n</robot>')
    assert "line 3" in str(error) and "malformed" in str(error)


def test_missing_file_is_named(tmp_path):
    path = tmp_path / "nothing.urdf"
    error = load_error(path)
    assert str(path) in str(error)


def test_two_roots_are_named():
    error = load_error(f'<robot name="r">{LINKS}{joint("j", "a", "b")}</robot>')
    assert "'a'" in str(error) and "'c'" in str(error) and "root" in str(error)


def test_a_cycle_is_reported():
    text = f'<robot name="r">{LINKS}{joint("j1", "a", "b")}{joint("j2", "b", "c")}' \
           f'{joint("j3", "c", "a")}</robot>'
    assert "cycle" in str(load_error(text))


def test_a_cycle_below_a_root_is_reported():
    text = (f'<robot name="r"><link name="r0"/>{LINKS}{joint("j0", "r0", "a")}'
            f'{joint("j1", "b", "c")}{joint("j2", "c", "b")}</robot>')
    error = load_error(text)
    assert "links 'b', 'c' are not reachable from the root" in str(error)
    assert "cycle" in str(error)


@pytest.mark.parametrize("kind", ["spherical", "ball"])
def test_unsupported_joint_type_names_the_joint(kind):
    error = load_error(f'<robot name="r">{LINKS}{joint("weird", "a", "b", kind)}'
                       f'{joint("j2", "b", "c")}</robot>')
    assert "weird" in str(error) and kind in str(error) and "line 1" in str(error)


def test_zero_axis_names_the_joint():
    zero_axis = joint("j", "a", "b", extra='<axis xyz="0 0 0"/>')
    error = load_error(f'<robot name="r">{LINKS}{zero_axis}{joint("j2", "b", "c")}</robot>')
    assert "'j'" in str(error) and "axis" in str(error)


def test_unknown_link_in_joint_suggests_a_name():
    error = load_error(f'<robot name="r">{LINKS}{joint("j", "a", "bb")}</robot>')
    assert "'bb'" in str(error) and "'b'" in str(error)


def test_non_numeric_attribute_names_line_and_element():
    text = ('<robot name="r">\n<link name="a"/>\n<link name="b">\n<inertial><mass value="heavy"/>'
            '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>\n'
            f'{joint("j", "a", "b")}</robot>')
    error = load_error(text)
    assert "line 3" in str(error) and "'b'" in str(error) and "heavy" in str(error)


def test_negative_mass_and_nan_are_rejected():
    inertia = '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>'
    for mass in ("-1", "nan"):
        text = (f'<robot name="r"><link name="a"/><link name="b"><inertial><mass value="{mass}"/>'
                f'{inertia}</inertial></link>{joint("j", "a", "b")}</robot>')
        assert "mass" in str(load_error(text))


def test_duplicate_names_are_rejected():
    text = f'<robot name="r">{LINKS}<link name="b"/>{joint("j", "a", "b")}</robot>'
    assert "second link" in str(load_error(text))


def test_a_link_with_two_parents_is_rejected():
    text = f'<robot name="r">{LINKS}{joint("j1", "a", "b")}{joint("j2", "c", "b")}</robot>'
    assert "'b'" in str(load_error(text))


def test_not_a_robot():
    assert "<robot>" in str(load_error("<sdf/>"))


def test_unknown_body_suggests_close_names(robot):
    with pytest.raises(InputError) as info:
        robot.get_transform(robot.home_configuration(), "tool")
    assert "'tool'" in str(info.value) and "'tool0'" in str(info.value)
    with pytest.raises(InputError, match="wrist_1_link"):
        robot.external_force("wrist_1", [0] * 6)
    with pytest.raises(InputError, match="base"):
        robot.external_force(robot.base_name, [0] * 6)


@pytest.mark.parametrize("method", ["inverse_dynamics", "mass_matrix", "gravity_torque"])
def test_wrong_length_q_names_both_sizes(robot, method):
    with pytest.raises(InputError) as info:
        getattr(robot, method)(np.zeros(5))
    message = str(info.value)
    assert "q" in message and "6" in message and "5" in message


def test_wrong_fext_shape_names_both_shapes(robot):
    with pytest.raises(InputError) as info:
        robot.inverse_dynamics(fext=np.zeros((6, 10)))
    assert "must be 10x6" in str(info.value) and "got 6x10" in str(info.value)


def test_wrong_symbolic_shape_is_a_casdyn_error(robot):
    with pytest.raises(InputError, match="6 elements, got a 5x1"):
        robot.inverse_dynamics(ca.SX.sym("q", 5))
    with pytest.raises(InputError, match="10x6"):
        robot.forward_dynamics(fext=ca.MX.sym("f", 10, 5))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input_is_rejected(robot, bad):
    qd = np.zeros(6)
    qd[2] = bad
    with pytest.raises(InputError, match="qd must be finite"):
        robot.inverse_dynamics(None, qd)


def test_non_numeric_input_is_rejected(robot):
    with pytest.raises(InputError, match="q must be real numbers, got strings"):
        robot.mass_matrix(["a"] * 6)


def test_mixing_sx_and_mx_is_rejected(robot):
    with pytest.raises(InputError, match="mix"):
        robot.inverse_dynamics(ca.SX.sym("q", 6), ca.MX.sym("qd", 6))


def test_unknown_function_and_options(robot):
    with pytest.raises(InputError, match="mass_matrix"):
        robot.function("mass_matrx")
    with pytest.raises(InputError, match="body="):
        robot.function("geometric_jacobian")
    with pytest.raises(InputError, match="option"):
        robot.function("mass_matrix", body="tool0")


def test_bad_gravity_is_rejected():
    with pytest.raises(InputError, match="gravity"):
        casdyn.load_robot("ur5e", gravity=(0, 0))


def test_unknown_robot_suggests_names():
    with pytest.raises(InputError, match="ur5e"):
        casdyn.load_robot("ur5")


def test_forward_dynamics_of_a_joint_moving_no_mass_is_refused():
    text = f'<robot name="r"><link name="a"/><link name="b"/>{joint("free", "a", "b")}</robot>'
    robot = casdyn.load_urdf(text)
    assert robot.inverse_dynamics([0.3]).shape == (1,)  # ID is still fine
    with pytest.raises(ModelError, match="'free'"):
        robot.forward_dynamics([0.3])


def test_random_configuration_of_unbounded_prismatic_joint_is_refused():
    extra = '<axis xyz="1 0 0"/>'
    text = (f'<robot name="r"><link name="a"/><link name="b"/>'
            f'{joint("slide", "a", "b", "prismatic", extra)}</robot>')
    with pytest.raises(InputError, match="slide"):
        casdyn.load_urdf(text).random_configuration()


def test_plots_without_matplotlib_say_how_to_install_it(monkeypatch):
    from casdyn.plotting import pyplot

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    with pytest.raises(casdyn.CasdynError, match=r"pip install 'casdyn\[plot\]'"):
        pyplot()
