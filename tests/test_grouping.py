"""Grouped inertias (casdyn.model.grouping) leave the joint-space dynamics unchanged.

The Pinocchio cross-checks already run every dynamics function on the grouped model; these
tests pin down the grouping itself: the same RNEA on both models and the zeros it promises.
(The centre of mass keeps the real inertias: the Pinocchio cross-check compares it.)
"""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest
from conftest import MODEL_CASES, assert_close, model_urdf

import casdyn
from casdyn.algorithms import dynamics
from casdyn.model.grouping import grouped
from casdyn.model.reframe import sparsify_frames
from casdyn.model.tree import Model


def _model(case) -> Model:
    """The model grouping runs on in casdyn.functions: the URDF model, reframed."""
    return sparsify_frames(casdyn.load_urdf(model_urdf(case)).model)


def _rnea(model: Model) -> ca.Function:
    q, qd, qdd = (ca.SX.sym(name, model.nq) for name in ("q", "qd", "qdd"))
    return ca.Function("rnea", [q, qd, qdd], [dynamics.rnea(model, q, qd, qdd)])


@pytest.mark.parametrize("case", MODEL_CASES, ids=lambda case: f"{case[0]}-{case[1]}")
def test_grouped_model_has_the_same_inverse_dynamics(case):
    model = _model(case)
    original, regrouped = _rnea(model), _rnea(grouped(model))
    rng = np.random.default_rng(3)
    for _ in range(3):
        state = rng.normal(size=(3, model.nq))
        assert_close(regrouped(*state), original(*state))


@pytest.mark.parametrize("case", MODEL_CASES, ids=lambda case: f"{case[0]}-{case[1]}")
def test_grouping_zeroes_what_the_joints_cannot_see(case):
    model = _model(case)
    for joint in grouped(model).joints:
        inertia = joint.inertia
        if joint.type.name == "revolute":  # massless, no first moment along, no I_yy
            assert inertia.mass == 0.0
            assert inertia.first_moment[2] == 0.0
            assert inertia.rotational[1, 1] == 0.0
        else:  # a point mass
            assert np.all(inertia.about_com == 0.0)
