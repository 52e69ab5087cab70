"""Contact and impulse dynamics (SPEC "Frames, momentum, energy and contacts") against the
KKT system assembled from Pinocchio's mass matrix, bias forces, point Jacobians and
classical drifts, against ``pinocchio.constraintDynamics``, and against the physics they
stand for: held points do not accelerate, momentum changes by the contact wrenches and
gravity, impacts stop the contact points."""

from __future__ import annotations

import itertools

import casadi as ca
import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close, random_state
from pinocchio_reference import Reference, TaskSpace
from random_trees import random_urdf
from test_corpus import ROOT

import casdyn
from casdyn import Contact

CONTACT_RELATIVE = 1e-8  # the bound: the KKT solves differ in their rounding
SOLO_FEET = [Contact(f"{leg}_FOOT") for leg in ("FL", "FR", "HL", "HR")]


def _case(kind, key, contacts, floating_base=True):
    text = casdyn.robot_urdf(key) if kind == "shipped" else (
        random_urdf(key, n_links=10, multi_dof=True) if kind == "random"
        else (ROOT / key).read_text())
    robot = casdyn.load_urdf(text, floating_base=floating_base)
    reference = Reference(text, robot.joint_names, robot.body_names,
                          floating_base=floating_base, mimic_joints=robot.mimic_joints)
    return robot, TaskSpace(reference), contacts


CASES = {
    "solo12-feet": ("shipped", "solo12", SOLO_FEET),
    "solo12-offset-feet": ("shipped", "solo12",
                           [Contact(c.body, "point", (0.01, -0.02, -0.015)) for c in SOLO_FEET]),
    "solo12-two-feet-6d": ("shipped", "solo12", [Contact("FL_FOOT", "6d"), SOLO_FEET[3]]),
    "ur5e-tool-6d-fixed": ("shipped", "ur5e", [Contact("tool0", "6d")], False),
    # on branches whose joints leave the constraints independent (read off the trees)
    "random-0": ("random", 0, [Contact("link4", "6d", (0.1, 0.0, -0.05)), Contact("link7")]),
    "random-3": ("random", 3, [Contact("link6", "6d", (0.1, 0.0, -0.05)),
                               Contact("link10", "point", (0.0, 0.2, 0.0))]),
    "anymal": ("corpus", "anymal_c_simple_description/urdf/anymal.urdf",
               [Contact(f"{leg}_FOOT") for leg in ("LF", "RF", "LH", "RH")]),
    "talos-feet-6d": ("corpus", "talos_data/robots/talos_reduced.urdf",
                      [Contact("leg_left_6_link", "6d"), Contact("leg_right_6_link", "6d")]),
}


@pytest.fixture(params=list(CASES), scope="module")
def contact_case(request):
    return _case(*CASES[request.param])


def _bodies(robot, contacts):
    return [robot.body_names.index(c.body) for c in contacts]


def _stacked(forces, contacts):
    """casdyn's per-contact rows as Pinocchio's stacked multipliers."""
    return np.concatenate([row[3:] if c.kind == "point" and len(row) == 6 else row
                           for row, c in zip(forces, contacts, strict=True)])


def test_contact_dynamics_agrees_with_a_kkt_solve_from_pinocchio(contact_case):
    robot, reference, contacts = contact_case
    q, qd, tau, fext = random_state(robot, 11)
    qdd, forces = robot.contact_dynamics(q, qd, tau, contacts, fext, damping=3.0)
    expected_qdd, expected_forces = reference.contact_dynamics(
        q, qd, tau, fext, contacts, _bodies(robot, contacts), damping=3.0)
    assert_close(qdd, expected_qdd, CONTACT_RELATIVE)
    assert_close(_stacked(forces, contacts), expected_forces, CONTACT_RELATIVE)


def test_impulse_dynamics_agrees_with_a_kkt_solve_from_pinocchio(contact_case):
    robot, reference, contacts = contact_case
    q, qd_minus, _, _ = random_state(robot, 12)
    qd_plus, impulses = robot.impulse_dynamics(q, qd_minus, contacts, restitution=0.3)
    expected_qd, expected_impulses = reference.impulse_dynamics(
        q, qd_minus, contacts, _bodies(robot, contacts), restitution=0.3)
    assert_close(qd_plus, expected_qd, CONTACT_RELATIVE)
    assert_close(_stacked(impulses, contacts), expected_impulses, CONTACT_RELATIVE)


def _contact_rows(robot, contacts, quantity):
    """Each contact's constrained rows of a ``[w; v]`` quantity (a function of a Contact)."""
    return np.concatenate([quantity(c)[3:] if c.kind == "point" else quantity(c)
                           for c in contacts])


def test_held_points_keep_the_commanded_acceleration_and_impacts_stop_them(contact_case):
    robot, _, contacts = contact_case
    q, qd, tau, _ = random_state(robot, 13)
    qdd, _ = robot.contact_dynamics(q, qd, tau, contacts, damping=2.0)
    accelerations = _contact_rows(
        robot, contacts, lambda c: robot.frame_acceleration(q, qd, qdd, c.body, c.point))
    velocities = _contact_rows(robot, contacts,
                               lambda c: robot.frame_velocity(q, qd, c.body, c.point))
    scale = max(1.0, np.abs(qdd).max())
    assert np.abs(accelerations + 2.0 * velocities).max() <= 1e-9 * scale
    qd_plus, _ = robot.impulse_dynamics(q, qd, contacts, restitution=0.5)
    after = _contact_rows(robot, contacts,
                          lambda c: robot.frame_velocity(q, qd_plus, c.body, c.point))
    assert_close(after, -0.5 * velocities)


def test_momentum_changes_by_the_contact_wrenches_and_gravity():
    """``d h_G / dt = A_G qdd + Adot_G qd = sum of contact wrenches about the centre of mass
    + [0; m g]`` for a floating robot whose base is unactuated."""
    robot, _, contacts = _case(*CASES["solo12-two-feet-6d"])
    q, qd, tau, _ = random_state(robot, 14)
    tau[:6] = 0.0
    qdd, forces = robot.contact_dynamics(q, qd, tau, contacts)
    com, _ = robot.center_of_mass(q)
    total = np.r_[np.zeros(3), robot.mass * robot.gravity]
    for contact, row in zip(contacts, forces, strict=True):
        T = robot.get_transform(q, contact.body)
        p = T[:3, :3] @ contact.point + T[:3, 3]
        total += np.r_[row[:3] + np.cross(p - com, row[3:]), row[3:]]
    rate = robot.centroidal_momentum_matrix(q) @ qdd + robot.centroidal_momentum_bias(q, qd)
    assert_close(rate, total)


def _solo_on_four_feet():
    """solo12, its Pinocchio reference, and Pinocchio's point constraints at its four feet
    (world-aligned, as casdyn's forces), initialised for ``constraintDynamics``."""
    robot = casdyn.load_robot("solo12", floating_base=True)
    reference = Reference(casdyn.robot_urdf("solo12"), robot.joint_names, robot.body_names,
                          floating_base=True)
    model, data = reference.model, reference.data
    constraints = []
    for contact in SOLO_FEET:
        frame = model.frames[model.getFrameId(contact.body)]
        constraints.append(pin.RigidConstraintModel(
            pin.ContactType.CONTACT_3D, model, frame.parentJoint, frame.placement,
            pin.LOCAL_WORLD_ALIGNED))
    datas = [c.createData() for c in constraints]
    pin.initConstraintDynamics(model, data, constraints, datas)
    return robot, reference, constraints, datas


def test_contact_dynamics_agrees_with_pinocchio_constraint_dynamics():
    robot, reference, constraints, datas = _solo_on_four_feet()
    model, data = reference.model, reference.data
    q, qd, tau, _ = random_state(robot, 15)
    ddq = pin.constraintDynamics(model, data, reference.q(q), reference.v(qd), reference.v(tau),
                                 constraints, datas, pin.ProximalSettings(1e-14, 0.0, 1))
    qdd, forces = robot.contact_dynamics(q, qd, tau, SOLO_FEET)
    assert_close(qdd, reference.from_v(ddq), CONTACT_RELATIVE)
    assert_close(forces.reshape(-1), data.lambda_c, CONTACT_RELATIVE)


def _ad_contact_derivatives(robot, contacts, q, qd, tau, fext, damping):
    """CasADi's AD of ``contact_dynamics`` (``q`` along ``robot.integrate``): the blocks
    of ``contact_dynamics_derivatives`` by another route."""
    f = robot.function("contact_dynamics", contacts=contacts)
    dq = ca.SX.sym("dq", robot.nv)
    qd_s, tau_s = ca.SX.sym("qd", robot.nv), ca.SX.sym("tau", robot.nv)
    qdd, forces = f(robot.function("integrate")(q, dq), qd_s, tau_s, fext, damping)
    out = ca.vertcat(qdd, ca.vec(forces.T))
    blocks = ca.Function("d", [dq, qd_s, tau_s],
                         [ca.jacobian(out, v) for v in (dq, qd_s, tau_s)])
    return [np.asarray(b) for b in blocks(np.zeros(robot.nv), qd, tau)]


def test_contact_dynamics_derivatives_agree_with_ad_of_contact_dynamics(contact_case):
    """The analytical derivatives (external forces, Baumgarte damping, 6-D and offset
    contacts, fixed and floating bases, random trees) equal AD through the KKT solve."""
    robot, _, contacts = contact_case
    q, qd, tau, fext = random_state(robot, 16)
    derivatives = robot.contact_dynamics_derivatives(q, qd, tau, contacts, fext, damping=3.0)
    expected = _ad_contact_derivatives(robot, contacts, q, qd, tau, fext, 3.0)
    nv = robot.nv
    for k in range(3):
        assert_close(derivatives[k], expected[k][:nv], CONTACT_RELATIVE)
        assert_close(derivatives[3 + k], expected[k][nv:], CONTACT_RELATIVE)


def test_contact_dynamics_derivatives_agree_with_pinocchio():
    """Against ``pinocchio.computeConstraintDynamicsDerivatives`` (solo12 on four feet):
    Pinocchio's tangent space and velocities map to casdyn's by the same permutation."""
    robot, reference, constraints, datas = _solo_on_four_feet()
    model, data = reference.model, reference.data
    q, qd, tau, _ = random_state(robot, 17)
    pin.constraintDynamics(model, data, reference.q(q), reference.v(qd), reference.v(tau),
                           constraints, datas, pin.ProximalSettings(1e-14, 0.0, 1))
    pin.computeConstraintDynamicsDerivatives(model, data, constraints, datas)
    G = reference.G
    derivatives = robot.contact_dynamics_derivatives(q, qd, tau, SOLO_FEET)
    expected = [G.T @ data.ddq_dq @ G, G.T @ data.ddq_dv @ G, G.T @ data.ddq_dtau @ G,
                data.dlambda_dq @ G, data.dlambda_dv @ G, data.dlambda_dtau @ G]
    for got, want in zip(derivatives, expected, strict=True):
        assert_close(got, want, CONTACT_RELATIVE)


def test_contact_dynamics_derivatives_match_finite_differences():
    """Central differences of ``contact_dynamics`` along the tangent space (TALOS on its two
    soles, a humanoid's 6-D contacts)."""
    robot, _, contacts = _case(*CASES["talos-feet-6d"])
    q, qd, tau, _ = random_state(robot, 18)
    dqdd_dq, _, _, dforces_dq, _, _ = robot.contact_dynamics_derivatives(q, qd, tau, contacts)
    h, columns = 1e-6, []
    for i in range(robot.nv):
        step = np.zeros(robot.nv)
        step[i] = h
        ends = [robot.contact_dynamics(robot.integrate(q, s * step), qd, tau, contacts)
                for s in (1, -1)]
        columns.append(np.r_[ends[0][0] - ends[1][0],
                             (ends[0][1] - ends[1][1]).ravel()] / (2 * h))
    numeric = np.stack(columns, axis=1)
    scale = np.abs(numeric).max()
    assert np.abs(np.vstack([dqdd_dq, dforces_dq]) - numeric).max() <= 1e-6 * scale


@pytest.mark.slow  # several seconds: the full tier only
@pytest.mark.parametrize("case", ["solo12-two-feet-6d", "random-3"])
def test_switched_contacts_give_each_subset_its_own_dynamics(case):
    """``switched=True``: one graph whose input ``held`` (a flag per body) picks the contacts
    held. Every subset (none: forward dynamics, zero forces) gives the numbers of that
    subset's own Functions: the accelerations, the held contacts' forces (the released ones'
    zero) and all six derivatives (mixed 6-D and point contacts, external forces)."""
    robot, _, contacts = _case(*CASES[case])
    q, qd, tau, fext = random_state(robot, 23)
    dynamics = robot.function("contact_dynamics", contacts=contacts, switched=True)
    derivatives = robot.function("contact_dynamics_derivatives", contacts=contacts,
                                 switched=True)
    assert dynamics.name_in()[-1] == "held" and dynamics.size_in(5) == (robot.n_bodies, 1)
    width = max(c.size for c in contacts)
    for mask in itertools.product([0, 1], repeat=len(contacts)):
        held = np.zeros(robot.n_bodies)
        held[_bodies(robot, contacts)] = mask
        qdd, forces = (np.asarray(x) for x in dynamics(q, qd, tau, fext, 2.0, held))
        d = [np.asarray(x) for x in derivatives(q, qd, tau, fext, 2.0, held)]
        on = [c for c, m in zip(contacts, mask, strict=True) if m]
        off = [k for k, m in enumerate(mask) if not m]
        assert not forces[off].any()
        if not on:
            assert_close(qdd.ravel(), robot.forward_dynamics(q, qd, tau, fext), 1e-12)
            free = robot.forward_dynamics_derivatives(q, qd, tau, fext)
            for k in range(3):
                assert_close(d[k], free[k], 1e-12)
                assert not d[3 + k].any()
            continue
        rows = np.concatenate([np.arange(k * width, (k + 1) * width)
                               for k, m in enumerate(mask) if m])
        want_qdd, want_forces = robot.contact_dynamics(q, qd, tau, on, fext, damping=2.0)
        assert_close(qdd.ravel(), want_qdd, 1e-12)
        assert_close(forces[np.flatnonzero(mask)], want_forces.reshape(len(on), -1)
                     if width == want_forces.shape[-1] else
                     np.hstack([np.zeros((len(on), 3)), want_forces]), 1e-12)
        want = robot.contact_dynamics_derivatives(q, qd, tau, on, fext, damping=2.0)
        for k in range(3):
            assert_close(d[k], want[k], 1e-12)
            got_forces = d[3 + k][rows]
            if want[3 + k].shape[0] < got_forces.shape[0]:  # points only: no moment rows
                got_forces = got_forces[[i for i in range(len(rows)) if i % width >= 3]]
            assert_close(got_forces, want[3 + k], 1e-12)
            assert not np.delete(d[3 + k], rows, axis=0).any()


def test_redundant_contacts_are_refused_with_their_names(shipped):
    robot = shipped("solo12", floating_base=True)
    corners = [Contact("base_link", "point", (x, y, 0.0)) for x in (-0.1, 0.1)
               for y in (-0.05, 0.05)]
    with pytest.raises(casdyn.ModelError, match=r"redundant.*base_link"):
        robot.contact_dynamics(None, None, None, corners)
    with pytest.raises(casdyn.ModelError, match="redundant"):
        robot.impulse_dynamics(None, None, [Contact("FL_FOOT", "6d"), Contact("FL_FOOT")])


@pytest.mark.slow
def test_contact_functions_are_casadi_functions_that_differentiate_and_export(tmp_path):
    robot = casdyn.load_robot("solo12", floating_base=True)
    f = robot.function("contact_dynamics", contacts=SOLO_FEET)
    assert f.name_in() == ["q", "qd", "tau", "fext", "damping"]
    assert f.name_out() == ["qdd", "forces"] and f.size_out(1) == (4, 3)
    g = robot.function("impulse_dynamics", contacts=SOLO_FEET[:2])
    assert g.name_in() == ["q", "qd_minus", "restitution"] and g.size_out(1) == (2, 3)
    q, qd, tau, _ = random_state(robot, 16)
    # d forces / d tau by AD equals central differences
    tau_sym = ca.SX.sym("tau", robot.nv)
    forces = f(q=q, qd=qd, tau=tau_sym)["forces"]
    dF = ca.Function("dF", [tau_sym], [ca.jacobian(ca.vec(forces), tau_sym)])(tau).full()
    h, k = 1e-6, 7
    step = np.eye(robot.nv)[k] * h
    fd = (robot.contact_dynamics(q, qd, tau + step, SOLO_FEET)[1]
          - robot.contact_dynamics(q, qd, tau - step, SOLO_FEET)[1]) / (2 * h)
    assert_close(dF[:, k], fd.reshape(-1, order="F"), 1e-6)
    exported = robot.export_c(tmp_path, [("contact_dynamics", {"contacts": SOLO_FEET})])
    (compiled,) = exported.values()
    assert_close(np.array(compiled(q, qd, tau, np.zeros((robot.n_bodies, 6)), 0.0)[1]),
                 robot.contact_dynamics(q, qd, tau, SOLO_FEET)[1])


def test_batches_of_states_give_each_state_its_own_result(shipped):
    robot = shipped("solo12", floating_base=True)
    states = [random_state(robot, seed) for seed in range(3)]
    q, qd, tau = (np.array([s[i] for s in states]) for i in range(3))
    qdd, forces = robot.contact_dynamics(q, qd, tau, SOLO_FEET)
    assert qdd.shape == (3, robot.nv) and forces.shape == (3, 4, 3)
    for k in range(3):
        single = robot.contact_dynamics(q[k], qd[k], tau[k], SOLO_FEET)
        assert_close(qdd[k], single[0])
        assert_close(forces[k], single[1])


@pytest.mark.parametrize("contacts, message", [
    ([Contact("FL_FOT")], "FL_FOOT"),
    ([], "at least one"),
    ([Contact("world")], "base"),
])
def test_bad_contacts_are_input_errors(contacts, message, shipped):
    robot = shipped("solo12", floating_base=True)
    with pytest.raises(casdyn.InputError, match=message):
        robot.contact_dynamics(None, None, None, contacts)


def test_switched_must_be_a_bool(shipped):
    robot = shipped("solo12", floating_base=True)
    with pytest.raises(casdyn.InputError, match="option switched of 'contact_dynamics' must "
                                                "be True or False"):
        robot.function("contact_dynamics", contacts=SOLO_FEET, switched=1)


def test_a_contact_with_a_bad_kind_or_point_is_refused_when_made():
    with pytest.raises(casdyn.InputError, match="'point' or '6d'"):
        Contact("FL_FOOT", "line")
    with pytest.raises(casdyn.InputError, match="3 finite numbers"):
        Contact("FL_FOOT", "point", (0.0, 1.0))
