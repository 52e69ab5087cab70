"""Closed kinematic loops (SPEC "MJCF, ball joints and loops") against Pinocchio 4's
``constraintDynamics`` with bilateral constraints between two joints (``CONTACT_3D`` for a
point, ``CONTACT_6D`` for a frame, ``LOCAL_WORLD_ALIGNED``), solved exactly (no proximal
damping, one iteration): a spatial four-bar linkage, a leg with a parallel ankle (two motors
on the shank driving the foot through rods) and two arms holding one frame; the loop
inverse dynamics against the forward one; the closure residual against MuJoCo's own
constraint errors of the MJCF equalities it is read from."""

from __future__ import annotations

import warnings
from dataclasses import replace

import mujoco
import numpy as np
import pinocchio as pin
import pytest
from ball_trees import spherical
from conftest import assert_close
from mujoco_reference import random_qpos

import casdyn
from casdyn import Contact, Loop, interop
from casdyn.model.build import build_model
from casdyn.model.loops import with_loops
from casdyn.model.urdf import read_urdf

INERTIA = 'ixx="0.012" ixy="0.001" ixz="-0.0005" iyy="0.01" iyz="0.0007" izz="0.008"'


def _link(name: str, mass: float, com: str) -> str:
    return (f'<link name="{name}"><inertial><origin xyz="{com}"/><mass value="{mass}"/>'
            f"<inertia {INERTIA}/></inertial></link>")


def _joint(name, parent, child, xyz, axis, rpy="0 0 0", kind="continuous") -> str:
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>'
            "</joint>")


# crank and coupler turn about z, the rocker about z and x (a universal joint): the
# coupler's tip held on the rocker's by a point loop (3 constraints, 1 dof left)
FOUR_BAR = "".join([
    '<robot name="four_bar"><link name="ground"/>',
    _link("crank", 1.0, "0.05 0 0"), _link("coupler", 2.0, "0.2 0 0"),
    _link("rocker_hub", 0.3, "0 0 0"), _link("rocker", 1.5, "0 0.15 0"),
    _joint("crank_joint", "ground", "crank", "0 0 0", "0 0 1"),
    _joint("coupler_joint", "crank", "coupler", "0.1 0 0", "0 0 1"),
    _joint("rocker_joint", "ground", "rocker_hub", "0.4 0 0.05", "0 0 1"),
    _joint("rocker_tilt", "rocker_hub", "rocker", "0 0 0", "1 0 0"),
    "</robot>"])
FOUR_BAR_LOOPS = [Loop("coupler", "rocker", "point", (0.4, 0.0, 0.0), (0.0, 0.3, 0.0))]

# hip and knee pitch, ankle pitch and roll; two motors on the shank, each a crank with a
# rod on a universal joint, the rod's end held on the foot by a point loop (6 constraints:
# hip, knee and the two motors drive the 4 dofs)
ANKLE = "".join([
    '<robot name="parallel_ankle"><link name="pelvis"/>',
    _link("thigh", 4.0, "0 0 -0.2"), _link("shank", 3.0, "0 0 -0.2"),
    _link("ankle_cross", 0.1, "0 0 0"), _link("foot", 1.0, "0.05 0 -0.03"),
    _joint("hip", "pelvis", "thigh", "0 0 0", "0 1 0"),
    _joint("knee", "thigh", "shank", "0 0 -0.4", "0 1 0"),
    _joint("ankle_pitch", "shank", "ankle_cross", "0 0 -0.4", "0 1 0"),
    _joint("ankle_roll", "ankle_cross", "foot", "0 0 0", "1 0 0"),
    *[part for side, y in (("left", 0.04), ("right", -0.04)) for part in (
        _link(f"{side}_crank", 0.2, "-0.02 0 0"), _link(f"{side}_rod_cross", 0.05, "0 0 0"),
        _link(f"{side}_rod", 0.1, "0 0 -0.15"),
        _joint(f"{side}_motor", "shank", f"{side}_crank", f"0 {y} -0.1", "0 1 0"),
        _joint(f"{side}_rod_pitch", f"{side}_crank", f"{side}_rod_cross", "-0.05 0 0",
               "0 1 0"),
        _joint(f"{side}_rod_roll", f"{side}_rod_cross", f"{side}_rod", "0 0 0", "1 0 0"))],
    "</robot>"])
ANKLE_LOOPS = [Loop(f"{side}_rod", "foot", "point", (0.0, 0.0, -0.3), (-0.05, y, 0.0))
               for side, y in (("left", 0.04), ("right", -0.04))]
ANKLE_ACTUATED = ("hip", "knee", "left_motor", "right_motor")

# two 4-joint arms from one base whose end frames are held together (6 constraints)
TWO_ARMS = "".join([
    '<robot name="two_arms"><link name="base"/>',
    *[part for side, x in (("left", 0.3), ("right", -0.3)) for part in (
        *[_link(f"{side}{k}", 1.0 + 0.2 * k, "0.02 0.01 0.15") for k in range(4)],
        _joint(f"{side}_j0", "base", f"{side}0", f"{x} 0 0", "0 0 1"),
        _joint(f"{side}_j1", f"{side}0", f"{side}1", "0 0 0.1", "0 1 0", "0.1 0 0"),
        _joint(f"{side}_j2", f"{side}1", f"{side}2", "0 0 0.3", "0 1 0"),
        _joint(f"{side}_j3", f"{side}2", f"{side}3", "0 0 0.3", "1 0 0.3"))],
    "</robot>"])
TWO_ARMS_LOOPS = [Loop("left3", "right3", "6d", (0.0, 0.0, 0.2), (0.0, 0.05, 0.2),
                       tuple(pin.rpy.rpyToMatrix(0.0, 0.0, np.pi).ravel()))]

# the four-bar in one plane: every joint turns about z, so the point loop's z row is zero
# whatever q (3 constraints, 2 independent: the loop is redundant)
PLANAR_FOUR_BAR = "".join([
    '<robot name="planar_four_bar"><link name="ground"/>',
    _link("crank", 1.0, "0.05 0 0"), _link("coupler", 2.0, "0.2 0 0"),
    _link("rocker", 1.5, "0 0.15 0"),
    _joint("crank_joint", "ground", "crank", "0 0 0", "0 0 1"),
    _joint("coupler_joint", "crank", "coupler", "0.1 0 0", "0 0 1"),
    _joint("rocker_joint", "ground", "rocker", "0.4 0 0", "0 0 1"),
    "</robot>"])

CASES = {"four_bar": (FOUR_BAR, FOUR_BAR_LOOPS, np.array([0.3, 0.5, 1.2, 0.2])),
         "parallel_ankle": (ANKLE, ANKLE_LOOPS, np.array(
             [0.2, -0.4, 0.3, 0.1, 0.4, -0.3, 0.0, -0.2, 0.3, 0.0])),
         "two_arms": (TWO_ARMS, TWO_ARMS_LOOPS, np.array(
             [0.5, 0.8, -1.0, 0.3, -0.5, -0.8, 1.0, -0.3]))}


def closed(robot, guess: np.ndarray) -> np.ndarray:
    """A configuration near ``guess`` that closes every loop (Gauss-Newton)."""
    q = guess.astype(float)
    for _ in range(50):
        r, J = robot.loop_residual(q)
        q = robot.integrate(q, -np.linalg.lstsq(J, r, rcond=None)[0])
    assert np.max(np.abs(robot.loop_residual(q)[0])) < 1e-12
    return q


class Constrained:
    """Pinocchio's model of the URDF with the loops as bilateral constraints."""

    def __init__(self, robot, text: str, loops, contacts=(), model: pin.Model | None = None):
        """``contacts`` (point contacts, before the loops) hold points still; ``model``
        (default: built from ``text``) is Pinocchio's."""
        self.robot, self.model = robot, model or pin.buildModelFromXML(text)
        self.data = self.model.createData()
        self.models = pin.StdVec_RigidConstraintModel()
        self.datas = pin.StdVec_RigidConstraintData()
        for contact in contacts:
            joint, at = self._placement(contact.body, contact.point, np.eye(3))
            held = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, self.model, joint, at,
                                            pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
            self.models.append(held)
            self.datas.append(held.createData())
        for loop in loops:
            kind = pin.ContactType.CONTACT_3D if loop.kind == "point" else \
                pin.ContactType.CONTACT_6D
            joint_a, at_a = self._placement(loop.body_a, loop.point_a, np.eye(3))
            joint_b, at_b = self._placement(loop.body_b, loop.point_b,
                                            np.reshape(loop.rotation_b, (3, 3)))
            constraint = pin.RigidConstraintModel(kind, self.model, joint_a, at_a, joint_b,
                                                  at_b, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
            self.models.append(constraint)
            self.datas.append(constraint.createData())
        self.G = interop.velocity_map(robot, self.model)

    def _placement(self, body: str, point, rotation):
        frame = self.model.frames[self.model.getFrameId(body, pin.BODY)]
        return frame.parentJoint, frame.placement * pin.SE3(rotation, np.asarray(point))

    def placements(self, q) -> list[tuple[pin.SE3, pin.SE3]]:
        q_pin, _ = interop.to_pinocchio(self.robot, self.model, q)
        pin.forwardKinematics(self.model, self.data, q_pin)
        return [(self.data.oMi[c.joint1_id] * c.joint1_placement,
                 self.data.oMi[c.joint2_id] * c.joint2_placement) for c in self.models]

    def dynamics(self, q, qd, tau):
        """``(qdd, forces)``: forces one row per loop, casdyn's ``[n; f]`` order."""
        q_pin, v_pin = interop.to_pinocchio(self.robot, self.model, q, qd)
        pin.initConstraintDynamics(self.model, self.data, self.models, self.datas)
        settings = pin.ProximalSettings(1e-14, 0.0, 1)
        ddq = pin.constraintDynamics(self.model, self.data, q_pin, v_pin, self.G @ tau,
                                     self.models, self.datas, settings)
        lam, rows, at = self.data.lambda_c, [], 0
        for c in self.models:
            part = lam[at : at + c.residualSize()]
            at += c.residualSize()
            rows.append(part if c.residualSize() == 3 else np.r_[part[3:], part[:3]])
        return self.G.T @ ddq, np.array(rows)


@pytest.fixture(params=list(CASES), scope="module")
def case(request):
    text, loops, guess = CASES[request.param]
    robot = casdyn.load_urdf(text, loops=loops)
    return robot, Constrained(robot, text, loops), closed(robot, guess)


def _state(robot, q, seed=0):
    """A velocity that keeps the loops closed, and a torque."""
    rng = np.random.default_rng(seed)
    _, J = robot.loop_residual(q)
    null = np.linalg.svd(J)[2][np.linalg.matrix_rank(J):].T
    return null @ rng.normal(size=null.shape[1]), rng.normal(size=robot.nv)


def test_the_closed_configuration_closes_pinocchios_loops(case):
    _, reference, q = case
    for a, b in reference.placements(q):
        assert_close(a.translation, b.translation)
        if reference.models[0].residualSize() == 6:
            assert_close(a.rotation, b.rotation)


def test_loop_dynamics_agree_with_pinocchios_constraint_dynamics(case):
    robot, reference, q = case
    for seed in (0, 1):
        qd, tau = _state(robot, q, seed)
        qdd, forces = robot.loop_dynamics(q, qd, tau)
        expected_qdd, expected_forces = reference.dynamics(q, qd, tau)
        assert_close(qdd, expected_qdd)
        assert_close(forces, expected_forces)
        # the loops stay closed: J qdd + Jdot qd = 0, by central differences of J qd
        _, J = robot.loop_residual(q)
        h = 1e-6
        Jdot_qd = (robot.loop_residual(robot.integrate(q, h * qd))[1]
                   - robot.loop_residual(robot.integrate(q, -h * qd))[1]) @ qd / (2 * h)
        assert_close(J @ qdd + Jdot_qd, np.zeros(len(J)), rtol=1e-6)


def test_the_residual_jacobian_is_its_tangent_space_derivative(case):
    robot, _, q = case
    rng = np.random.default_rng(4)
    q = robot.integrate(q, 0.3 * rng.normal(size=robot.nv))  # away from the closure
    _, J = robot.loop_residual(q)
    h = 1e-6
    numeric = np.column_stack([
        (robot.loop_residual(robot.integrate(q, h * e))[0]
         - robot.loop_residual(robot.integrate(q, -h * e))[0]) / (2 * h)
        for e in np.eye(robot.nv)])
    assert_close(J, numeric, rtol=1e-7)


def test_inverse_dynamics_of_the_parallel_ankle_recovers_the_motor_torques():
    robot = casdyn.load_urdf(ANKLE, loops=ANKLE_LOOPS)
    q = closed(robot, CASES["parallel_ankle"][2])
    qd, _ = _state(robot, q, 3)
    actuated = [robot.joint_names.index(name) for name in ANKLE_ACTUATED]
    tau = np.zeros(robot.nv)
    tau[actuated] = np.random.default_rng(5).normal(size=len(actuated))
    qdd, forces = robot.loop_dynamics(q, qd, tau)
    tau_back, forces_back = robot.loop_inverse_dynamics(q, qd, qdd, actuated=ANKLE_ACTUATED)
    assert_close(tau_back, tau, rtol=1e-8)
    assert_close(forces_back, forces, rtol=1e-8)


def _loop_inverse_problem(robot, q, qd, qdd, actuated):
    """NumPy's ``(A, b)`` of the inverse problem ``A [tau_a; lambda] = b``:
    ``A = [S, J^T]`` with ``J`` the closure residual's Jacobian (the loops' relative
    Jacobian for point loops) and ``b`` the open tree's inverse dynamics."""
    _, J = robot.loop_residual(q)
    S = np.eye(robot.nv)[:, [robot.joint_names.index(name) for name in actuated]]
    return np.hstack([S, J.T]), robot.inverse_dynamics(q, qd, qdd)


def test_inverse_dynamics_refuses_a_redundant_loop_as_the_forward_one_does():
    """The planar four-bar's point loop has a zero row: its force along z is not unique,
    whichever joints are actuated (all: the torques trade off with the loop forces too)."""
    robot = casdyn.load_urdf(PLANAR_FOUR_BAR, loops=FOUR_BAR_LOOPS)
    q = closed(robot, np.array([0.3, 0.5, 1.2]))
    qd, qdd = np.array([0.4, -0.3, 0.2]), np.array([1.0, -2.0, 0.5])
    for actuated in (robot.joint_names, ()):
        with pytest.raises(casdyn.ModelError, match=r"redundant loops: loop point .* 'coupler'"):
            robot.loop_inverse_dynamics(q, qd, qdd, actuated=actuated)
    with pytest.raises(casdyn.ModelError, match=r"redundant constraints: loop point .* "
                       r"'coupler'.*planar linkage"):  # a loop's advice, not a contact's
        robot.loop_dynamics(q, qd, np.zeros(3))


def test_inverse_dynamics_refuses_actuation_that_leaves_the_forces_undetermined():
    """The spatial four-bar has one free motion: actuating every joint (or the tilt, which
    the loop holds still) lets torques and loop forces trade off."""
    robot = casdyn.load_urdf(FOUR_BAR, loops=FOUR_BAR_LOOPS)
    q = closed(robot, CASES["four_bar"][2])
    qd, _ = _state(robot, q)
    for actuated, named in ((robot.joint_names, "'crank_joint', 'coupler_joint'"),
                            (["rocker_tilt"], "'rocker_tilt'")):
        with pytest.raises(casdyn.InputError,
                           match=rf"actuated=\[{named}.*\] leaves the forces undetermined"):
            robot.loop_inverse_dynamics(q, qd, np.zeros(4), actuated=actuated)


def test_inverse_dynamics_without_actuation_are_the_passive_motions_loop_forces():
    robot = casdyn.load_urdf(FOUR_BAR, loops=FOUR_BAR_LOOPS)
    q = closed(robot, CASES["four_bar"][2])
    qd, _ = _state(robot, q)
    qdd, forces = robot.loop_dynamics(q, qd, np.zeros(4))
    tau, forces_back = robot.loop_inverse_dynamics(q, qd, qdd, actuated=())
    assert_close(tau, np.zeros(4))
    assert_close(forces_back, forces, rtol=1e-8)


def test_inverse_dynamics_at_a_singular_configuration_is_the_least_norm_solution():
    """The spatial four-bar at its dead point for the rocker (crank and coupler in line:
    turning them together leaves the rocker still, so ``A = [S, J^T]`` is singular): the
    least-squares solution of least norm, NumPy's, which for a reachable ``qdd`` is exact
    (the forward dynamics of its torque give ``qdd`` back)."""
    robot = casdyn.load_urdf(FOUR_BAR, loops=FOUR_BAR_LOOPS)
    q = np.array([0.3, 0.0, 1.2, -0.2])  # coupler_joint = 0: crank and coupler in line
    free = [0, 2, 3]
    for _ in range(50):
        r, J = robot.loop_residual(q)
        q[free] -= np.linalg.solve(J[:, free], r)
    assert np.max(np.abs(robot.loop_residual(q)[0])) < 1e-12
    actuated = ["rocker_joint"]
    rocker = robot.joint_names.index("rocker_joint")
    qd, _ = _state(robot, q)
    tau = np.zeros(4)
    tau[rocker] = 0.7
    qdd, _ = robot.loop_dynamics(q, qd, tau)
    A, b = _loop_inverse_problem(robot, q, qd, qdd, actuated)
    assert np.linalg.svd(A, compute_uv=False)[-1] < 1e-12
    for motion in (qdd, np.array([1.0, -2.0, 0.5, 0.3])):  # reachable, and not
        A, b = _loop_inverse_problem(robot, q, qd, motion, actuated)
        expected = np.linalg.lstsq(A, b, rcond=1e-10)[0]
        tau_back, forces_back = robot.loop_inverse_dynamics(q, qd, motion, actuated=actuated)
        # along the singular direction the solve stays at zero to about 1e-6 (its damping)
        assert_close(tau_back[rocker], expected[0], rtol=1e-5)
        assert_close(np.delete(tau_back, rocker), np.zeros(3))
        assert_close(forces_back[0], expected[1:], rtol=1e-5)
        if motion is qdd:  # that direction moves nothing: the motion comes back exactly
            qdd_back, forces = robot.loop_dynamics(q, qd, tau_back)
            assert_close(qdd_back, qdd, rtol=1e-10)
            assert_close(forces, forces_back, rtol=1e-10)


def test_contacts_and_loops_are_held_together():
    """The parallel-ankle leg with its foot's toe held too: one KKT solve with the contact's
    rows and the loops', as Pinocchio's with the three constraints."""
    robot = casdyn.load_urdf(ANKLE, loops=ANKLE_LOOPS)
    q = closed(robot, CASES["parallel_ankle"][2])
    qd, tau = _state(robot, q, 2)
    contact = Contact("foot", "point", (0.12, 0.01, -0.05))
    qdd, forces = robot.contact_dynamics(q, qd, tau, [contact])
    reference = Constrained(robot, ANKLE, ANKLE_LOOPS, [contact])
    expected_qdd, expected = reference.dynamics(q, qd, tau)
    assert_close(qdd, expected_qdd)
    assert_close(forces, expected[:1])
    with pytest.raises(casdyn.ModelError, match="redundant"):  # the four-bar: 1 dof only
        four_bar = casdyn.load_urdf(FOUR_BAR, loops=FOUR_BAR_LOOPS)
        four_bar.contact_dynamics(np.zeros(4), np.zeros(4), np.zeros(4), [Contact("rocker")])


def test_mjcf_equalities_are_the_loops_mujoco_holds():
    """A connect and a weld between bodies and between sites, and a connect to the world:
    the closure residual's positions are MuJoCo's constraint errors (``efc_pos``) and its
    rotations the same angles (MuJoCo writes the axis times the sine of half the angle,
    casdyn the axis times the angle)."""
    xml = """<mujoco><worldbody>
      <body name="a" pos="0 0 1"><joint axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.03"/>
        <site name="sa" pos="0.5 0 0" euler="10 20 30"/>
        <body name="a2" pos="0.5 0 0"><joint type="ball"/>
          <geom type="capsule" fromto="0 0 0 0.3 0.1 0" size="0.03"/></body></body>
      <body name="b" pos="0.6 0 1" euler="0 0 40"><joint axis="0 1 0"/><joint axis="1 0 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.03"/><site name="sb" pos="0 0 -0.4"/>
      </body></worldbody>
      <equality><connect body1="a2" body2="b" anchor="0.3 0.1 0"/>
        <weld body1="a" body2="b" anchor="0.1 0.2 0.3"/><connect site1="sa" site2="sb"/>
        <weld site1="sa" site2="sb"/><connect body1="a2" body2="world" anchor="0.1 0 0"/>
      </equality></mujoco>"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", casdyn.ModelWarning)
        robot = casdyn.load_mjcf(xml)
    assert [loop.kind for loop in robot.loops] == ["point", "6d", "point", "6d", "point"]
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(1)
    for q in (m.qpos0, random_qpos(m, rng)):
        d.qpos[:] = q
        mujoco.mj_forward(m, d)
        theirs = d.efc_pos[d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY]
        ours, _ = robot.loop_residual(q)
        # casdyn: a weld's rotation first, MuJoCo's last
        for mine, mj in [(slice(0, 3), slice(0, 3)), (slice(6, 9), slice(3, 6)),
                         (slice(9, 12), slice(9, 12)), (slice(15, 18), slice(12, 15)),
                         (slice(18, 21), slice(18, 21))]:
            assert_close(ours[mine], theirs[mj])
        for mine, mj in [(slice(3, 6), slice(6, 9)), (slice(12, 15), slice(15, 18))]:
            assert_close(np.linalg.norm(ours[mine]), 2 * np.arcsin(np.linalg.norm(theirs[mj])))


def test_loops_are_checked_and_kept():
    with pytest.raises(casdyn.InputError, match="unknown body"):
        casdyn.load_urdf(FOUR_BAR, loops=[Loop("coupler", "rocker_arm")])
    with pytest.raises(casdyn.InputError, match="kind"):
        Loop("coupler", "rocker", "hinge")
    with pytest.raises(casdyn.InputError, match="has none"):
        casdyn.load_urdf(FOUR_BAR).loop_dynamics(np.zeros(4), np.zeros(4), np.zeros(4))
    robot = casdyn.load_urdf(FOUR_BAR, loops=FOUR_BAR_LOOPS)
    assert robot.locked({"rocker_tilt": 0.0}).loops == robot.loops


def test_a_loops_rotation_b_is_a_proper_rotation():
    """A reflection (determinant -1) is orthonormal but no motion reaches the mirrored
    frame: it is refused, naming the loop."""
    mirror = tuple(np.diag([1.0, 1.0, -1.0]).ravel())
    with pytest.raises(casdyn.InputError,
                       match=r"loop 'knee'.*rotation_b must be a proper rotation.*reflection"):
        Loop("coupler", "rocker", "6d", rotation_b=mirror, name="knee")
    with pytest.raises(casdyn.InputError, match=r"loop 'knee'.*rotation_b must be a 3x3"):
        Loop("coupler", "rocker", "6d", rotation_b="identity", name="knee")
    turned = pin.rpy.rpyToMatrix(0.1, -0.2, 0.3)
    assert Loop("coupler", "rocker", "6d", rotation_b=turned).rotation_b == \
        tuple(turned.ravel())


def test_loop_functions_export_to_c(tmp_path):
    robot = casdyn.load_urdf(FOUR_BAR, loops=FOUR_BAR_LOOPS)
    names = ["loop_dynamics", "loop_residual"]
    compiled = robot.export_c(tmp_path, names)
    q = closed(robot, CASES["four_bar"][2])
    qd, tau = _state(robot, q)
    for name, args in (("loop_dynamics", [q, qd, tau, np.zeros((robot.n_bodies, 6))]),
                       ("loop_residual", [q])):
        for ours, theirs in zip(compiled[name].call(args), robot.function(name).call(args),
                                strict=True):
            assert_close(np.asarray(ours), np.asarray(theirs))


def test_equalities_with_bodies_fixed_to_the_world_of_a_floating_robot():
    """A floating robot leaves the world's other bodies out: an equality with one of them
    holds the robot on the world frame at that body's place (a weld from it is turned
    round: body 1 becomes the held side), one between two of them holds nothing."""
    xml = """<mujoco><worldbody>
      <body name="post" pos="1 0 0.5" euler="0 30 20"><geom size="0.1"/>
        <body name="cap" pos="0 0 0.3" euler="10 0 0"><geom size="0.05"/></body></body>
      <body name="torso" pos="0 0 1"><freejoint/><geom size="0.2"/>
        <body name="arm" pos="0.3 0 0"><joint axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.03"/></body></body>
      </worldbody><equality>
      <weld body1="cap" body2="arm" anchor="0.5 0 0"/>
      <connect body1="arm" body2="cap" anchor="0.5 0 0"/>
      <weld body1="arm" body2="cap" relpose="0.1 0.2 0.3 0.9 0.1 0.2 0.3"/>
      <connect body1="post" body2="cap" anchor="0 0 0"/></equality></mujoco>"""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        robot = casdyn.load_mjcf(xml)
    said = " ".join(str(w.message) for w in record)
    assert "left out: 'post', 'cap'" in said and "between bodies fixed to the world" in said
    assert robot.floating_base
    assert [(loop.body_a, loop.body_b) for loop in robot.loops] == [("arm", "world")] * 3
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    for q in (m.qpos0, random_qpos(m, np.random.default_rng(1))):
        d.qpos[:] = q
        mujoco.mj_forward(m, d)
        theirs = d.efc_pos[d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY]
        ours, _ = robot.loop_residual(q)
        assert_close(ours[3:6], -theirs[0:3])  # turned round
        assert_close(ours[6:9], theirs[6:9])
        assert_close(ours[12:15], theirs[9:12])
        for mine, mj in [(slice(0, 3), slice(3, 6)), (slice(9, 12), slice(12, 15))]:
            assert_close(np.linalg.norm(ours[mine]), 2 * np.arcsin(np.linalg.norm(theirs[mj])))


def test_a_parallel_ankle_with_ball_jointed_rods_agrees_with_pinocchio():
    """The rods on ball joints (each free to spin about itself: 12 dofs, 6 constraints) in
    casdyn's description and as Pinocchio's JointModelSpherical."""
    text = ANKLE.replace('<link name="left_rod_cross">', '<link name="unused_l">').replace(
        '<link name="right_rod_cross">', '<link name="unused_r">')
    for side in ("left", "right"):
        text = text.replace(f'<child link="{side}_rod_cross"/>', f'<child link="{side}_rod"/>')
        start = text.index(f'<joint name="{side}_rod_roll"')
        text = text[:start] + text[text.index("</joint>", start) + len("</joint>"):]
    for side in ("l", "r"):  # the unused links go: a tree has one root
        start = text.index(f'<link name="unused_{side}">')
        text = text[:start] + text[text.index("</link>", start) + len("</link>"):]
    balls = {"left_rod_pitch", "right_rod_pitch"}
    description = read_urdf(text)
    description = replace(description, joints=tuple(
        replace(j, type="ball") if j.name in balls else j for j in description.joints))
    robot = casdyn.RigidBodyTree(with_loops(build_model(description), ANKLE_LOOPS))
    reference = Constrained(robot, text, ANKLE_LOOPS,
                            model=spherical(pin.buildModelFromXML(text), balls))
    guess = robot.home_configuration()
    guess[robot.joint_names.index("hip")] = 0.2
    q = closed(robot, guess)
    assert robot.nv == 12
    for seed in (0, 1):
        qd, tau = _state(robot, q, seed)
        qdd, forces = robot.loop_dynamics(q, qd, tau)
        expected_qdd, expected_forces = reference.dynamics(q, qd, tau)
        assert_close(qdd, expected_qdd)
        assert_close(forces, expected_forces)
