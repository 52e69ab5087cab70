"""casdyn.ocp.FramePlacement: Crocoddyl's frame-placement residual ``log6(M_ref^-1 M(q))``,
its value against Pinocchio's ``log6`` and its Jacobian against finite differences, at
generic placements and where the frame sits on (or next to) its reference."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pinocchio as pin
import pytest

from casdyn.ocp import ContactModel, FramePlacement
from casdyn.ocp.residuals import Knot

FRAME = "FL_LOWER_LEG"


@pytest.fixture(scope="module")
def solo(shipped):
    return shipped("solo12", floating_base=True)


@pytest.fixture(scope="module")
def residual(solo):
    """``r(q, dq, ref)``: the residual at ``q ⊕ dq`` (``dq`` a tangent vector, ``nv``)."""
    model = ContactModel(solo, dt=0.01)
    q, dq, ref = ca.SX.sym("q", solo.nq), ca.SX.sym("dq", solo.nv), ca.SX.sym("ref", 12)
    x = ca.vertcat(solo.function("integrate")(q, dq), ca.SX.zeros(solo.nv))
    r = FramePlacement(FRAME).value(Knot(model, x, None, None), ref)
    return ca.Function("r", [q, dq, ref], [r, ca.jacobian(r, dq)])


def reference_of(T: np.ndarray) -> np.ndarray:
    """The reference of the placement ``T`` (4 x 4): its position, its rotation row by row."""
    return np.r_[T[:3, 3], T[:3, :3].ravel()]


def pinocchio_log6(T_ref: np.ndarray, T: np.ndarray) -> np.ndarray:
    M_ref, M = (pin.SE3(A[:3, :3], A[:3, 3]) for A in (T_ref, T))
    return pin.log6(M_ref.inverse() * M).vector  # [linear; angular]


def nearby(T: np.ndarray, angle: float, rng) -> np.ndarray:
    """``T`` turned by ``angle`` about a random axis and moved by a few centimetres."""
    axis = rng.normal(size=3)
    turn = pin.exp3(angle * axis / np.linalg.norm(axis))
    return np.block([[T[:3, :3] @ turn, T[:3, 3:] + 0.03 * rng.normal(size=(3, 1))],
                     [np.zeros((1, 3)), np.ones((1, 1))]])


@pytest.mark.parametrize("angle", [2.5, 0.7, 1e-3, 1e-6, 0.0])
def test_frame_placement_is_pinocchios_log6(solo, residual, angle):
    rng = np.random.default_rng(7)
    for _ in range(3):
        q = solo.random_configuration(rng)
        T = solo.get_transform(q, FRAME)
        T_ref = nearby(T, angle, rng)
        r, _ = residual(q, np.zeros(solo.nv), reference_of(T_ref))
        np.testing.assert_allclose(np.asarray(r).ravel(), pinocchio_log6(T_ref, T),
                                   rtol=1e-12, atol=1e-12)


def test_frame_placement_is_zero_on_its_reference(solo, residual):
    q = solo.random_configuration(np.random.default_rng(8))
    r, _ = residual(q, np.zeros(solo.nv), reference_of(solo.get_transform(q, FRAME)))
    assert np.max(np.abs(np.asarray(r))) < 1e-15


@pytest.mark.parametrize("angle", [1.2, 1e-3, 0.0])
def test_frame_placement_jacobian_is_its_derivative(solo, residual, angle):
    """Central differences in the tangent space, including where the rotation vanishes (the
    series branch, whose derivative must be finite and right)."""
    rng = np.random.default_rng(9)
    q = solo.random_configuration(rng)
    T = solo.get_transform(q, FRAME)
    ref = reference_of(T if angle == 0.0 else nearby(T, angle, rng))
    _, J = residual(q, np.zeros(solo.nv), ref)
    J = np.asarray(J)
    assert np.all(np.isfinite(J))
    h, numeric = 1e-6, np.empty_like(J)
    for i in range(solo.nv):
        step = np.zeros(solo.nv)
        step[i] = h
        plus, minus = (np.asarray(residual(q, s, ref)[0]).ravel() for s in (step, -step))
        numeric[:, i] = (plus - minus) / (2 * h)
    np.testing.assert_allclose(J, numeric, atol=1e-7)


def test_frame_placement_default_reference_is_the_world(solo):
    model = ContactModel(solo, dt=0.01)
    residual = FramePlacement(FRAME)
    assert residual.label() == f"frame_placement:{FRAME}"
    assert residual.size(model) == 6 and residual.reference_size(model) == 12
    np.testing.assert_array_equal(residual.default_reference(model),
                                  np.r_[np.zeros(3), np.eye(3).ravel()])
