"""The body-force formulas of casdyn.math.spatial against Featherstone's spatial form, in NumPy.

RNEA's classical forward pass, ABA and the grouped (massless) bodies rely on these identities; the
reference here is the textbook ``f = I a + v x* I v`` with the 6x6 inertia (RBDA eq. 2.63).
"""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest
from conftest import assert_close

from casdyn.math.spatial import BodyInertia, FrameMotion, RigidInertia, Transform, reciprocal
from casdyn.model.tree import Inertia


def _skew(x):
    return np.array([[0, -x[2], x[1]], [x[2], 0, -x[0]], [-x[1], x[0], 0]])


def _spatial_inertia(m, h, I):  # noqa: E741
    return np.block([[I, _skew(h)], [_skew(h).T, m * np.eye(3)]])


def _cross_force(v):
    """``v x*``: the 6x6 force cross product."""
    w, u = v[:3], v[3:]
    return np.block([[_skew(w), _skew(u)], [np.zeros((3, 3)), _skew(w)]])


def _evaluate(expression) -> np.ndarray:
    return np.array(ca.evalf(expression)).ravel()


def _bodies(rng):
    """A body with mass, and a massless one with a first moment (a grouped remainder)."""
    A = rng.normal(size=(3, 3))
    I = A @ A.T + np.eye(3)  # noqa: E741
    h = rng.normal(size=3)
    return [BodyInertia(Inertia(2.5, h, I)),
            BodyInertia(Inertia(0.0, np.array([h[0], h[1], 0.0]), I))]


@pytest.mark.parametrize("seed", range(3))
def test_point_acceleration_is_alpha_cross_r_plus_centripetal(seed):
    rng = np.random.default_rng(seed)
    w, alpha, origin, r = rng.normal(size=(4, 3))
    motion = FrameMotion(ca.SX(w), ca.SX(alpha), ca.SX(origin))
    expected = origin + np.cross(alpha, r) + np.cross(w, np.cross(w, r))
    assert_close(_evaluate(motion.point(ca.SX(r))), expected)


@pytest.mark.parametrize("seed", range(3))
def test_force_of_classical_motion_is_the_spatial_equation_of_motion(seed):
    rng = np.random.default_rng(seed)
    v, a = rng.normal(size=(2, 6))
    w, u = v[:3], v[3:]
    # the classical acceleration of the origin is the spatial one plus w x u
    motion = FrameMotion(ca.SX(w), ca.SX(a[:3]), ca.SX(a[3:] + np.cross(w, u)))
    for body in _bodies(rng):
        b = body.inertia
        inertia = _spatial_inertia(b.mass, b.first_moment, b.rotational)
        expected = inertia @ a + _cross_force(v) @ inertia @ v
        assert_close(_evaluate(body.force(motion)), expected)
        # ABA's classical bias: the spatial v x* I v less I [0; w x u]
        at_rest = FrameMotion(ca.SX(w), ca.SX.zeros(3), ca.SX.zeros(3))
        assert_close(_evaluate(body.force(at_rest)),
                     _cross_force(v) @ inertia @ v
                     - inertia @ np.concatenate([np.zeros(3), np.cross(w, u)]))


def _motion_transform(R, p):
    """RBDA's ``X`` (6x6) taking parent motion coordinates to a child frame at pose (R, p)."""
    return np.block([[R.T, np.zeros((3, 3))], [-R.T @ _skew(p), R.T]])


@pytest.mark.parametrize("seed", range(3))
def test_inertia_transforms_are_x_transpose_i_x(seed):
    """``articulated_to_parent`` (any symmetric 6x6, as ABA hands on) and
    ``rigid_inertia_to_parent`` against ``X^T I X``, for a general pose and for the
    double-angle forms of a turn about z."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(6, 6))
    articulated = A @ A.T
    m, h = 1.7, rng.normal(size=3)
    B = rng.normal(size=(3, 3))
    I = B @ B.T + np.eye(3)  # noqa: E741
    angle = rng.uniform(-np.pi, np.pi)
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    p = rng.normal(size=3)
    turn = Transform.rotation_z(ca.SX(np.cos(angle)), ca.SX(np.sin(angle)))
    for transform, R, t in ((Transform.constant(Q, p), Q, p),
                            (turn, _evaluate(turn.R).reshape(3, 3), np.zeros(3))):
        X = _motion_transform(R, t)
        got = np.array(ca.evalf(transform.articulated_to_parent(ca.SX(articulated))))
        assert_close(got, X.T @ articulated @ X)
        rigid = transform.rigid_inertia_to_parent(RigidInertia(m, ca.SX(h), ca.SX(I)))
        got = _spatial_inertia(m, _evaluate(rigid.h), _evaluate(rigid.I).reshape(3, 3))
        assert_close(got, X.T @ _spatial_inertia(m, h, I) @ X)


def test_the_reciprocal_is_one_over_d_to_the_bit_and_stays_a_product():
    """``reciprocal(d)`` is the number ``1 / d`` (scaling ``2 / d`` by a half is exact), and
    a product by it stays a product: CasADi rewrites ``x * (1 / d)`` into ``x / d``."""
    d, x = ca.SX.sym("d"), ca.SX.sym("x")
    r = reciprocal(d)
    product = ca.Function("p", [x, d], [x * r, r])
    ops = [product.instruction_id(k) for k in range(product.n_instructions())]
    assert ops.count(ca.OP_DIV) == 1 and ca.OP_MUL in ops
    rng = np.random.default_rng(0)
    for value in np.concatenate([rng.normal(size=50) * 10.0 ** rng.integers(-30, 30, 50),
                                 [3.0, -7.0, 1e-300, 1e300]]):
        assert float(product(1.0, value)[1]) == 1.0 / value


def test_forward_dynamics_divides_once_per_joint():
    """ABA's quotients by a joint's ``D`` are products by its reciprocal: one division per
    joint by a computed number (the GPU's division has a slow path whose call spills
    registers; on TALOS this took its forward dynamics from 5.3 to 4.5 ns per sample)."""
    import casdyn
    from casdyn.codegen import cuda

    for name, floating in (("ur5e", False), ("kuka_iiwa14", False), ("solo12", False)):
        robot = casdyn.load_robot(name, floating_base=floating)
        f = robot.function("forward_dynamics", fext=False)
        listed = cuda._instructions(f)
        computed = sum(1 for ins, operands in zip(listed, cuda._producers(listed), strict=True)
                       if ins.op == ca.OP_DIV and listed[operands[1]].op != ca.OP_CONST)
        assert 0 < computed <= robot.nv, name  # a last body's D may be a constant
