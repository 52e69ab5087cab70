"""Floating bases and multi-dof joints (SPEC "Floating base and joint types") against
Pinocchio's ``JointModelFreeFlyer`` / ``JointModelPlanar`` models, converted in
pinocchio_reference.py: q's quaternion scalar first (Pinocchio: last), qd's free-joint twist
angular first (Pinocchio: linear first)."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close, random_state
from pinocchio_reference import (
    Reference,
    aba_derivatives,
    assert_agrees,
    assert_center_of_mass_agrees,
    rnea_derivatives,
)
from random_trees import random_urdf

import casdyn

# a massless root link with a single joint below it: M is singular on a floating base
SINGULAR = ("torso_two_arms", "planar_2link")
CASES = ([("shipped", name) for name in casdyn.robot_names() if name not in SINGULAR]
         + [("random", seed) for seed in range(5)])


def _urdf(case) -> str:
    kind, key = case
    return casdyn.robot_urdf(key) if kind == "shipped" else random_urdf(
        key, n_links=4 + 2 * key, multi_dof=True)


def _load(case, floating_base=True):
    text = _urdf(case)
    robot = casdyn.load_urdf(text, floating_base=floating_base)
    reference = Reference(text, robot.joint_names, robot.body_names,
                          floating_base=floating_base)
    return robot, reference


def _state(robot, seed=0, scale=1.7):
    """A random state whose free-joint quaternions have norm ``scale``."""
    q, qd, x, fext = random_state(robot, seed)
    for joint in robot.model.joints:
        if joint.type.name == "free":
            q[joint.idx_q + 3 : joint.idx_q + 7] *= scale
    return q, qd, x, fext


@pytest.fixture(params=CASES, ids=lambda case: f"{case[0]}-{case[1]}", scope="module")
def floating(request):
    """A robot and its reference, shared by the module's tests (which only read them): each
    Function is built once per robot."""
    return _load(request.param)


def test_layout_follows_the_spec(floating):
    robot, _ = floating
    fixed = "universe" if robot.body_names[0] == "world" else "world"
    assert robot.floating_base and robot.base_name == fixed
    assert robot.joint_names[0] == "floating_base"
    assert robot.body_names[0] == robot.model.bodies[0].name
    assert robot.nq == robot.nv + 1 + sum(j.type.name == "free" for j in robot.model.joints[1:])
    np.testing.assert_array_equal(robot.home_configuration()[:7], [0, 0, 0, 1, 0, 0, 0])
    assert f"floating base: free joint 'floating_base' from {fixed!r}" in repr(robot)


def test_dynamics_agree_with_pinocchio(floating):
    robot, reference = floating
    for seed in range(2):
        q, qd, x, fext = _state(robot, seed)
        assert_agrees(robot, reference, (q, qd, x, fext), kinematics=False)
        no_force = np.zeros((robot.n_bodies, 6))
        assert_close(robot.bias_force(q, qd),
                     reference.inverse_dynamics(q, qd, np.zeros(robot.nv), no_force))
        assert_center_of_mass_agrees(robot, reference, q)


def test_a_wrench_on_the_root_link_agrees(floating):
    robot, reference = floating
    q, qd, qdd, _ = _state(robot, 3)
    root = robot.body_names[0]
    fext = robot.external_force(root, [0.3, -1.2, 0.5, 10.0, -4.0, 7.0], q)
    assert np.any(fext[0] != 0)
    assert_close(robot.inverse_dynamics(q, qd, qdd, fext),
                 reference.inverse_dynamics(q, qd, qdd, fext))


def test_kinematics_agree_with_pinocchio(floating):
    robot, reference = floating
    q = _state(robot, 4)[0]
    for index, body in enumerate(robot.body_names):
        assert_close(robot.get_transform(q, body), reference.body_transform(q, index))
        assert_close(robot.geometric_jacobian(q, body), reference.jacobian(q, index))
    first, last = robot.body_names[0], robot.body_names[-1]
    relative = np.linalg.solve(reference.body_transform(q, 0),
                               reference.body_transform(q, len(robot.body_names) - 1))
    assert_close(robot.get_transform(q, last, relative_to=first), relative)
    assert_close(robot.get_transform(q, first, relative_to=robot.base_name),
                 reference.body_transform(q, 0))


def test_derivatives_in_the_tangent_space_agree_with_pinocchio(floating):
    robot, reference = floating
    q, qd, x, _ = _state(robot, 5)
    for actual, expected in zip(robot.inverse_dynamics_derivatives(q, qd, x),
                                rnea_derivatives(reference, q, qd, x), strict=True):
        assert actual.shape == (robot.nv, robot.nv)
        assert_close(actual, expected)
    for actual, expected in zip(robot.forward_dynamics_derivatives(q, qd, x),
                                aba_derivatives(reference, q, qd, x), strict=True):
        assert_close(actual, expected, rtol=1e-8)


def _velocity_joints(reference: Reference) -> list[int]:
    """Pinocchio's joint of each of casdyn's velocities."""
    model = reference.model
    owner = {v: j for j in range(1, model.njoints)
             for v in range(model.idx_vs[j], model.idx_vs[j] + model.nvs[j])}
    return [owner[v] for v in reference.v_index]


def _assert_structural_zeros(function: ca.Function, pattern: np.ndarray) -> None:
    for k in range(function.n_out()):
        structural = np.array(ca.DM(function.sparsity_out(k), 1)) != 0
        assert not (structural & ~pattern).any(), function.name_out(k)


def test_the_trees_zeros_stay_structural(floating):
    """Entries that the tree makes zero are structural zeros, which the C neither computes
    nor stores: in M and the ID derivatives those between joints on different branches
    (branch-induced sparsity, Featherstone RBDA sec. 6.5), in a body's J and Jdot the
    columns of the joints that do not carry it."""
    robot, reference = floating
    supports, joints = reference.model.supports, _velocity_joints(reference)
    pattern = np.array([[a in supports[c] or c in supports[a] for c in joints]
                        for a in joints])
    for function in (robot.function("mass_matrix"),
                     robot.function("inverse_dynamics_derivatives", fext=False)):
        _assert_structural_zeros(function, pattern)
    body = robot.body_names[-1]
    carrier = reference.model.frames[reference.body_frames[-1]].parentJoint
    columns = np.array([j in supports[carrier] for j in joints])
    for name in ("geometric_jacobian", "jacobian_time_derivative"):
        _assert_structural_zeros(robot.function(name, body=body),
                                 np.tile(columns, (6, 1)))


def test_the_quaternion_norm_changes_nothing(floating):
    robot, _ = floating
    unit = _state(robot, 6, scale=1.0)
    scaled = _state(robot, 6, scale=1.7)
    for name, arguments in [("inverse_dynamics", (0, 1, 2, 3)), ("forward_dynamics", (0, 1, 2, 3)),
                            ("mass_matrix", (0,)), ("center_of_mass", (0,))]:
        method = getattr(robot, name)
        a, b = method(*[unit[i] for i in arguments]), method(*[scaled[i] for i in arguments])
        for x, y in zip(np.atleast_1d(a) if name != "center_of_mass" else a,
                        np.atleast_1d(b) if name != "center_of_mass" else b, strict=True):
            assert_close(x, y, rtol=1e-12)


def _assert_same_configuration(reference, qa, qb):
    """Equal up to a quaternion's sign and whole turns of angles: nothing between them."""
    between = pin.difference(reference.model, reference.q(qa), reference.q(qb))
    assert_close(between, np.zeros_like(between), rtol=1e-12)


def test_integrate_and_difference_agree_with_pinocchio(floating):
    robot, reference = floating
    rng = np.random.default_rng(7)
    q0 = _state(robot, 7)[0]
    v = rng.normal(size=robot.nv)
    q1 = robot.integrate(q0, v)
    expected = pin.integrate(reference.model, reference.q(q0), reference.v(v))
    assert_close(reference.q(q1), expected)
    for joint in robot.model.joints:
        if joint.type.name == "free":
            assert abs(np.linalg.norm(q1[joint.idx_q + 3 : joint.idx_q + 7]) - 1) < 1e-15
    q2 = robot.random_configuration(rng)
    v2 = robot.difference(q0, q2)
    expected_v = reference.from_v(pin.difference(reference.model, reference.q(q0),
                                                 reference.q(q2)))
    # Pinocchio wraps the angles of continuous and planar joints into [-pi, pi]; casdyn's
    # angles are plain numbers, their difference plain subtraction
    unwrapped = [k for j in robot.model.joints if j.type.name == "free" or (
        j.type.name in ("revolute", "prismatic") and not j.continuous)
        for k in range(j.idx_v, j.idx_v + (6 if j.type.name == "free" else 1))]
    assert_close(v2[unwrapped], expected_v[unwrapped])
    _assert_same_configuration(reference, robot.integrate(q0, v2), q2)
    assert_close(robot.integrate(q0, v, dt=0.25), robot.integrate(q0, 0.25 * v))
    dt = ca.SX.sym("dt")  # a symbolic step (e.g. a free final time) multiplies v as it is
    stepped = ca.Function("stepped", [dt], [robot.integrate(q0, v, dt=dt)])
    assert_close(np.array(stepped(0.25)).ravel(), robot.integrate(q0, v, dt=0.25))


def test_integrate_and_difference_have_finite_exact_gradients_at_zero(floating):
    """The rotation's exponential and logarithm near the identity: values and derivatives
    at exactly zero rotation are finite and match central differences around it."""
    robot, _ = floating
    q0 = _state(robot, 8, scale=1.0)[0]
    integrate, difference = robot.function("integrate"), robot.function("difference")
    v = ca.SX.sym("v", robot.nv)
    d_integrate = ca.Function("d", [v], [ca.jacobian(integrate(q0, v), v)])
    q1 = ca.SX.sym("q1", robot.nq)
    d_difference = ca.Function("d", [q1], [ca.jacobian(difference(q0, q1), q1)])
    for at in (0.0, 1e-9, 3e-3):
        point = np.full(robot.nv, at)
        J = np.array(d_integrate(point))
        assert np.all(np.isfinite(J))
        h = 1e-6
        columns = [(np.array(integrate(q0, point + h * e)) - np.array(integrate(q0, point - h * e)))
                   .ravel() / (2 * h) for e in np.eye(robot.nv)]
        assert_close(J, np.array(columns).T, rtol=1e-7)
        q_at = np.array(integrate(q0, point)).ravel()
        D = np.array(d_difference(q_at))
        assert np.all(np.isfinite(D))
        # difference after integrate is the identity on v: D * d_integrate = 1
        assert_close(D @ J, np.eye(robot.nv), rtol=1e-8)
    assert np.all(np.array(difference(q0, q0)) == 0)


def test_free_floating_momentum_is_conserved():
    """No gravity, no torque, no external force: the total momentum, in the world, is the
    same after 40 RK4 steps (M[0:6] qd is the momentum in the root frame)."""
    robot = casdyn.load_robot("kuka_iiwa14", floating_base=True, gravity=(0, 0, 0))
    rng = np.random.default_rng(2)
    q, v = robot.random_configuration(rng), rng.normal(size=robot.nv)
    step = casdyn.integrators.rk4_step(robot, 2e-3)

    def momentum(q, v):
        n_f = robot.mass_matrix(q)[:6] @ v
        R = robot.get_transform(q, robot.body_names[0])[:3, :3]
        p = q[:3]
        f = R @ n_f[3:]
        return np.r_[R @ n_f[:3] + np.cross(p, f), f]

    start = momentum(q, v)
    x = np.r_[q, v]
    for _ in range(40):
        x = np.array(step(x, np.zeros(robot.nv))).ravel()
    end = momentum(x[: robot.nq], x[robot.nq :])
    assert np.linalg.norm(x[robot.nq - robot.nv + 2 : 7]) > 0  # moved
    assert_close(end, start, rtol=1e-9)
    assert not np.allclose(x[:3], q[:3])


def test_multi_dof_joints_inside_a_fixed_base_tree_agree():
    for seed in range(5):
        case = ("random", seed)
        robot, reference = _load(case, floating_base=False)
        assert not robot.floating_base
        assert_agrees(robot, reference, _state(robot, seed))


def test_a_fixed_base_is_said_plainly():
    robot = casdyn.load_robot("ur5e")
    assert not robot.floating_base
    assert "fixed base: root link 'base_link' welded to the world; floating_base=True" in repr(
        robot)


def test_a_root_link_called_world_floats_under_universe():
    robot = casdyn.load_robot("kuka_iiwa14", floating_base=True)
    assert robot.base_name == "universe" and robot.body_names[0] == "world"
    assert "from 'universe' to root link 'world'" in repr(robot)


def test_floating_base_functions_compile_pickle_and_batch(tmp_path):
    import pickle

    robot = casdyn.load_robot("ur5e", floating_base=True)
    q, qd, qdd, fext = _state(robot, 9)
    expected = robot.inverse_dynamics(q, qd, qdd, fext)
    again = pickle.loads(pickle.dumps(robot))
    assert again.floating_base and again.nq == 13
    assert_close(again.inverse_dynamics(q, qd, qdd, fext), expected, rtol=1e-15)
    batch = robot.inverse_dynamics(np.stack([q, q]), qd, qdd, fext)
    assert batch.shape == (2, robot.nv)
    robot.compile(["inverse_dynamics", "integrate"], directory=tmp_path)
    assert_close(robot.inverse_dynamics(q, qd, qdd, fext), expected)
    assert_close(robot.integrate(q, qd), np.array(robot.function("integrate")(q, qd)).ravel())


@pytest.mark.parametrize("name, joint", [("torso_two_arms", "torso_yaw"),
                                         ("planar_2link", "joint1")])
def test_a_singular_floating_model_refuses_forward_dynamics(name, joint):
    """The root link is massless and has one revolute joint below it: turning the root about
    that axis against the joint moves no mass. FD and its derivatives are refused."""
    robot = casdyn.load_robot(name, floating_base=True)
    for method in (robot.forward_dynamics, robot.forward_dynamics_derivatives):
        with pytest.raises(casdyn.ModelError, match=f"'floating_base', '{joint}' together"):
            method()
    robot.inverse_dynamics()  # defined
    casdyn.load_robot(name).forward_dynamics()  # and on a fixed base, FD is


def test_bad_floating_base_input_is_named():
    """No silent coercion (the string "no" would have meant True), sizes named, dt checked
    as an option and as an argument, non-finite mimic numbers and a mimicking planar joint
    refused."""
    with pytest.raises(casdyn.InputError, match="floating_base must be True or False"):
        casdyn.load_robot("ur5e", floating_base="no")
    robot = casdyn.load_robot("ur5e", floating_base=True)
    q = robot.home_configuration()
    with pytest.raises(casdyn.InputError, match="q0 must have 13 elements"):
        robot.difference(np.zeros(12), q)
    with pytest.raises(casdyn.InputError, match="v must have 12 elements"):
        robot.integrate(q, np.zeros(13))
    for dt in (float("nan"), True, "0.1"):
        with pytest.raises(casdyn.InputError, match="dt must be a finite number"):
            robot.integrate(q, np.zeros(12), dt=dt)
        with pytest.raises(casdyn.InputError, match="option dt of 'integrate' must be a finite"):
            robot.function("integrate", dt=dt)
    joint2 = '<joint name="joint2" type="revolute">'
    text = casdyn.robot_urdf("planar_2link")
    with pytest.raises(casdyn.URDFError, match="joint2'>: mimic multiplier and offset must be"):
        casdyn.load_urdf(text.replace(joint2, joint2 + '<mimic joint="joint1" offset="inf"/>'))
    planar = '<joint name="joint2" type="planar">'
    with pytest.raises(casdyn.URDFError, match="a planar joint cannot mimic another"):
        casdyn.load_urdf(text.replace(joint2, planar + '<mimic joint="joint1"/>'))


def _chain(root: str, child: str) -> str:
    """Two links ``root`` -> ``child`` joined by a revolute joint."""
    link = ('<link name="{}"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" '
            'iyy="1" iyz="0" izz="1"/></inertial></link>')
    return (f'<robot name="r">{link.format(root)}{link.format(child)}'
            f'<joint name="j" type="revolute"><parent link="{root}"/><child link="{child}"/>'
            '<origin xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
            '</joint></robot>')


@pytest.mark.parametrize("root, child", [("base", "world"), ("world", "universe")])
def test_a_link_named_as_the_fixed_frame_is_refused_on_a_floating_base(root, child):
    """The fixed frame of a floating base is ``world`` (``universe`` under a root link called
    ``world``): a link of the same name would make one name mean two frames (get_transform
    read the base, external_force and Contact the body). Refused at load, the link named;
    on a fixed base, where the fixed frame is the root link, the same file loads."""
    text = _chain(root, child)
    with pytest.raises(casdyn.ModelError, match=f"link {child!r} .* rename"):
        casdyn.load_urdf(text, floating_base=True)
    robot = casdyn.load_urdf(text)
    assert robot.base_name == root and robot.body_names == (child,)
    assert_close(robot.get_transform([0.0], child)[:3, 3], [0, 0, 1])
    floating = casdyn.load_urdf(_chain(root, "tip"), floating_base=True)
    assert floating.body_names == (root, "tip")


def _with_quaternion(q, scale):
    q = np.array(q, dtype=float)
    q[..., 3:7] *= scale
    return q


def _refuses_a_zero_quaternion(robot):
    q, qd, qdd, _ = _state(robot, 2)
    zero = _with_quaternion(q, 0.0)
    message = r"q\[3:7\], the quaternion .* of joint 'floating_base', is zero"
    for call in (lambda: robot.inverse_dynamics(zero, qd, qdd),
                 lambda: robot.mass_matrix(list(zero)),
                 lambda: robot.integrate(zero, qd),
                 lambda: robot.forward_dynamics_derivatives(zero)):
        with pytest.raises(casdyn.InputError, match=message):
            call()
    with pytest.raises(casdyn.InputError, match=r"q\[1, 3:7\], the quaternion"):
        robot.mass_matrix(np.stack([q, zero]))
    with pytest.raises(casdyn.InputError, match=r"q1\[3:7\], the quaternion"):
        robot.difference(q, zero)
    symbolic = robot.mass_matrix(ca.SX.sym("q", robot.nq))  # symbols are not checked
    assert symbolic.shape == (robot.nv, robot.nv)


def _gives_the_unit_quaternions_numbers(robot):
    q, qd, qdd, fext = _state(robot, 4)
    q1 = robot.integrate(q, qd)
    for scale in (1e-300, 1e-160, 1e160, 1e300):
        scaled = _with_quaternion(q, scale)
        assert_close(robot.inverse_dynamics(scaled, qd, qdd, fext),
                     robot.inverse_dynamics(q, qd, qdd, fext), rtol=1e-12)
        assert_close(robot.forward_dynamics(scaled, qd, qdd, fext),
                     robot.forward_dynamics(q, qd, qdd, fext), rtol=1e-12)
        for a, b in zip(robot.forward_dynamics_derivatives(scaled, qd, qdd, fext),
                        robot.forward_dynamics_derivatives(q, qd, qdd, fext), strict=True):
            assert_close(a, b, rtol=1e-10)
        assert_close(robot.integrate(scaled, qd), q1, rtol=1e-12)
        assert_close(robot.difference(scaled, _with_quaternion(q1, 1 / scale)),
                     robot.difference(q, q1), rtol=1e-12)
        batch = robot.mass_matrix(np.stack([scaled, q]))
        assert_close(batch[0], robot.mass_matrix(q), rtol=1e-12)
        assert_close(robot.get_transform(scaled, "FL_FOOT"), robot.get_transform(q, "FL_FOOT"),
                     rtol=1e-12)


def test_a_zero_quaternion_is_an_input_error_naming_q_and_the_joint():
    _refuses_a_zero_quaternion(casdyn.load_robot("solo12", floating_base=True))


def test_any_nonzero_quaternion_norm_gives_the_unit_quaternions_numbers():
    """SPEC: the quaternion may have any nonzero norm. Norms from 1e-300 to 1e300 (whose
    squares under- or overflow) give the numbers of the unit quaternion, single and batched."""
    _gives_the_unit_quaternions_numbers(casdyn.load_robot("solo12", floating_base=True))


@pytest.mark.slow
def test_compiled_functions_refuse_a_zero_quaternion_and_ignore_its_norm(tmp_path):
    """The two tests above on the compiled Functions (one library for both)."""
    robot = casdyn.load_robot("solo12", floating_base=True)
    robot.compile(["inverse_dynamics", "forward_dynamics", "forward_dynamics_derivatives",
                   "mass_matrix", "integrate", "difference"], directory=tmp_path)
    _refuses_a_zero_quaternion(robot)
    _gives_the_unit_quaternions_numbers(robot)
