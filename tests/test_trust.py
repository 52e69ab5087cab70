"""Input that used to give NaN models, raw NumPy/CasADi errors or misleading messages:
each case is refused with a casdyn error that says what is wrong, or handled exactly."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
from conftest import assert_close

import casdyn
from casdyn import InputError

INERTIAL = ('<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" '
            'izz="0.3"/></inertial>')


def _urdf(*joints: tuple[str, str, str, str]) -> str:
    """Links ``l0..ln`` and the joints ``(name, type, child index, extra XML)``, each from
    ``l0`` or the link before, with an origin so that poses differ."""
    links = "".join(f'<link name="l{i}">{INERTIAL}</link>' for i in range(len(joints) + 1))
    xml = "".join(
        f'<joint name="{name}" type="{kind}"><parent link="l{int(child) - 1}"/>'
        f'<child link="l{child}"/><origin xyz="0.1 0.2 0.3" rpy="0.1 0.2 0.3"/>{extra}</joint>'
        for name, kind, child, extra in joints)
    return f'<robot name="r">{links}{xml}</robot>'


LIMIT = '<limit lower="-2" upper="2" effort="1" velocity="1"/>'
FREE_ARM = _urdf(("free", "floating", "1", ""), ("hinge", "revolute", "2",
                                                 '<axis xyz="0 0 1"/>' + LIMIT))


# --- item: locked floating joint at a zero or tiny quaternion --------------------------------
def test_locking_a_floating_joint_at_a_zero_quaternion_is_refused():
    robot = casdyn.load_urdf(FREE_ARM)
    with pytest.raises(InputError, match=r"joint 'free'.*quaternion .*zero"):
        robot.locked({"free": [0.1, 0.2, 0.3, 0, 0, 0, 0]})


def test_locking_a_floating_joint_at_a_tiny_quaternion_uses_its_direction():
    """``[1e-200, 1e-200, 0, 0]`` is the rotation of ``[1, 1, 0, 0]``: the locked model's
    poses and mass matrix equal the unlocked model's at that quaternion."""
    robot = casdyn.load_urdf(FREE_ARM)
    locked = robot.locked({"free": [0.1, 0.2, 0.3, 1e-200, 1e-200, 0, 0]})
    q = np.array([0.1, 0.2, 0.3, 1.0, 1.0, 0.0, 0.0, 0.7])
    for body in ("l1", "l2"):
        assert_close(locked.get_transform([0.7], body), robot.get_transform(q, body),
                     rtol=1e-14)
    assert_close(locked.mass_matrix([0.7]), robot.mass_matrix(q)[6:, 6:], rtol=1e-14)


# --- item: a huge axis is normalised, not overflowed ---------------------------------------------
def test_a_huge_joint_axis_is_normalised_without_overflow():
    plain = casdyn.load_urdf(_urdf(("j", "revolute", "1", '<axis xyz="1 1 0"/>' + LIMIT)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        huge = casdyn.load_urdf(_urdf(("j", "revolute", "1",
                                       '<axis xyz="1e300 1e300 0"/>' + LIMIT)))
    assert_close(huge.get_transform([0.4], "l1"), plain.get_transform([0.4], "l1"), rtol=1e-14)
    assert_close(huge.inverse_dynamics([0.4], [0.3], [0.2]),
                 plain.inverse_dynamics([0.4], [0.3], [0.2]), rtol=1e-14)


# --- item: a NaN or string step ------------------------------------------------------------------
@pytest.mark.parametrize("h", [float("nan"), float("inf"), "0.01", None, True, 1j])
def test_an_rk4_step_that_is_not_a_finite_number_is_refused(h):
    robot = casdyn.load_robot("ur5e")
    with pytest.raises(InputError, match=r"\bh must be a finite number"):
        casdyn.integrators.rk4_step(robot, h)


# --- item: locked(), random_configuration(), external_force() arguments -------------------------
@pytest.mark.parametrize("position, said", [(1 + 2j, "complex"), ("0.5", "string"),
                                            (True, "bool"), (None, "None"),
                                            ([0.1, 1j], "complex"), (np.array([True]), "bool")])
def test_a_locked_position_must_be_real_numbers(position, said):
    robot = casdyn.load_robot("ur5e")
    with pytest.raises(InputError, match=f"locked position of joint 'elbow_joint'.*{said}"):
        robot.locked({"elbow_joint": position})


@pytest.mark.parametrize("positions", [[("elbow_joint", 0.5)], ["elbow_joint"], "elbow_joint",
                                       None])
def test_locked_positions_must_be_a_dict(positions):
    robot = casdyn.load_robot("ur5e")
    with pytest.raises(InputError, match="positions must be a dict of joint name -> position"):
        robot.locked(positions)


@pytest.mark.parametrize("seed", [-1, 1.5, "abc", True, [1, -2]])
def test_a_random_configuration_seed_must_be_a_non_negative_integer(seed):
    robot = casdyn.load_robot("ur5e")
    with pytest.raises(InputError, match=r"rng must be a numpy\.random\.Generator, a seed"):
        robot.random_configuration(seed)
    robot.random_configuration(np.int64(3))  # NumPy integers are seeds


def test_external_force_takes_a_batch_of_wrenches_without_q():
    """A batch ``W`` (N, 6) without ``q`` gives (N, n_bodies, 6), each row stored unchanged,
    as a batch with ``q`` gives one ``fext`` per wrench."""
    robot = casdyn.load_robot("ur5e")
    W = np.random.default_rng(0).normal(size=(3, 6))
    fext = robot.external_force("tool0", W)
    assert fext.shape == (3, robot.n_bodies, 6)
    for k in range(3):
        assert_close(fext[k], robot.external_force("tool0", W[k]), rtol=0)
    q = robot.home_configuration()
    assert robot.external_force("tool0", W, q=q).shape == fext.shape
    assert robot.external_force("tool0", np.zeros((0, 6))).shape == (0, robot.n_bodies, 6)


def test_a_contact_point_far_from_its_body_gets_a_clear_error_not_linalgerror():
    """At 1e200 m the contacts' ``J M^-1 J^T`` overflows (NumPy's eigen-solver raised a raw
    LinAlgError); at 100 m, rows 100 times larger than the others, the contact is not
    mistaken for a redundant one."""
    robot = casdyn.load_robot("solo12", floating_base=True)
    with pytest.raises(casdyn.ModelError, match=r"too far from its body's origin.*'FL_FOOT'"):
        robot.contact_dynamics(contacts=[casdyn.Contact("FL_FOOT", "6d", (1e200, 0, 0))])
    far = robot.contact_dynamics(contacts=[casdyn.Contact("FL_FOOT", "6d", (100, 0, 0))])
    assert all(np.all(np.isfinite(x)) for x in far)


# --- item: messages that say what is really wrong ------------------------------------------------
def _three_joints(a: str, b_mimic: str) -> str:
    """``a`` (type given) and ``b`` (with the mimic tag given) on ``l0``, ``c`` revolute."""
    return _urdf(("a", a, "1", LIMIT), ("b", "revolute", "2", LIMIT + b_mimic),
                 ("c", "revolute", "3", LIMIT))


def test_a_mimic_of_a_fixed_joint_says_the_leader_is_fixed():
    with pytest.warns(casdyn.ModelWarning, match=r"it mimics, 'a', is fixed") as caught:
        robot = casdyn.load_urdf(_three_joints("fixed", '<mimic joint="a"/>'))
    assert "not defined" not in str(caught[0].message)
    assert robot.joint_names == ("b", "c")


def test_a_self_mimic_is_said_to_mimic_itself():
    with pytest.raises(casdyn.URDFError, match="it mimics itself") as caught:
        casdyn.load_urdf(_urdf(("a", "revolute", "1", LIMIT + '<mimic joint="a"/>')))
    assert "another joint" not in str(caught.value)


def test_locking_or_giving_armature_to_a_fixed_or_mimic_joint_says_so():
    text = _three_joints("fixed", "").replace(
        '<joint name="c" type="revolute"><parent link="l2"/>',
        '<joint name="c" type="revolute"><parent link="l2"/><mimic joint="b"/>')
    robot = casdyn.load_urdf(text)
    assert robot.mimic_joints[0][:2] == ("c", "b")
    with pytest.raises(InputError, match="joint 'a' is fixed already") as caught:
        robot.locked({"a": 0.0})
    assert "unknown" not in str(caught.value)
    with pytest.raises(InputError, match=r"armature.*'a' is fixed"):
        casdyn.load_urdf(text, armature={"a": 0.1})
    with pytest.raises(InputError, match=r"armature.*'c' mimics 'b'.*squared, to 'b'"):
        casdyn.load_urdf(text, armature={"c": 0.1})
    with pytest.raises(InputError, match="unknown joint 'bb'"):
        casdyn.load_urdf(text, armature={"bb": 0.1})


# --- item: the top-level namespace ------------------------------------------------------------
def test_the_top_level_namespace_is_exactly_all():
    """``dir(casdyn)`` and ``from casdyn import *`` give ``__all__``, every name in it is
    there, and the standard-library and ``__future__`` names casdyn uses do not leak."""
    assert sorted(dir(casdyn)) == sorted(casdyn.__all__)
    namespace: dict = {}
    exec("from casdyn import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(casdyn.__all__)
    assert all(hasattr(casdyn, name) for name in casdyn.__all__)
    importlib.import_module("casdyn.codegen.forms")  # a submodule imported later stays out too
    internal = {"os", "annotations", "arguments", "kernels", "codegen", "runtime", "tree"}
    assert not internal & set(dir(casdyn))
    assert not hasattr(casdyn, "os") and not hasattr(casdyn, "annotations")


def test_two_point_contacts_on_one_body_are_redundant_and_the_advice_says_so():
    """Two points of one rigid body: 6 rows of rank 5 (the points' velocities along the line
    through them are equal), so J M^-1 J^T is singular. The advice must not suggest three
    points; it names what holds a rigid body: one 6-D contact or one point contact."""
    robot = casdyn.load_robot("solo12", floating_base=True)
    J = np.vstack([robot.geometric_jacobian(robot.home_configuration(), "base_link", p)[3:]
                   for p in ((0.1, 0, 0), (-0.1, 0, 0))])
    assert np.linalg.matrix_rank(J) == 5
    with pytest.raises(casdyn.ModelError, match="redundant contacts") as caught:
        robot.contact_dynamics(contacts=[casdyn.Contact("base_link", "point", (0.1, 0, 0)),
                                         casdyn.Contact("base_link", "point", (-0.1, 0, 0))])
    assert "three" not in str(caught.value)
    assert "one 6-D contact or one point contact" in str(caught.value)
