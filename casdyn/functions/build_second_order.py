"""Builders of the second-order derivatives of inverse and forward dynamics (docs:
"Derivatives"). Signatures as in :mod:`.build_dynamics`.

Each output is a tensor ``T[i, j, k]``, the derivative along the ``k``-th coordinate of the
first-order derivative's ``[i, j]`` (Pinocchio's ``ComputeRNEASecondOrderDerivatives``
layout), stored as an ``nv x nv^2`` matrix whose column ``k nv + j`` is ``T[:, j, k]``:
NumPy's ``T = out.reshape(nv, nv, nv).transpose(0, 2, 1)``. Along ``q`` means along
``q ⊕ h e_k`` (the tangent space), as for the first-order derivatives.

They are the first-order derivatives' own graphs (the analytical recursions, or AD where
that graph is the smaller) differentiated once more by CasADi's AD: one AD pass over an
analytical graph instead of two over the dynamics (Singh, Russell and Wensing's analytical
second-order recursions, arXiv 2302.06001, are not implemented).
"""

from __future__ import annotations

import casadi as ca

from ..algorithms import configuration
from ..math.spatial import SX
from ..model.tree import Model
from .build_dynamics import forward_dynamics_derivatives, inverse_dynamics_partials
from .inputs import FEXT, QD, QDD, TAU, Q
from .registry import builds
from .stages import Stages


def along(model: Model, first: SX, s: dict, by: str) -> SX:
    """The tensor of the ``nv x nv`` first-order derivative ``first`` differentiated along
    the input ``by`` (``q``: in the tangent space), in the layout of this module."""
    nv = model.nv
    jacobian = ca.jacobian(ca.vec(first), s[by])
    if by == "q":
        jacobian = configuration.in_tangent_space(model, jacobian, s["q"])
    return ca.reshape(jacobian, nv, nv * nv)


@builds("inverse_dynamics_second_derivatives", (Q, QD, QDD, FEXT),
        ("d2tau_dq2", "d2tau_dqd2", "d2tau_dq_dqd", "d2tau_dqdd_dq"), fext=True)
def inverse_dynamics_second_derivatives(model: Model, s: dict, options: dict,
                                        stages: Stages) -> list[SX]:
    """``d2tau_dq2[i, j, k] = d/dq_k (d tau_i/dq_j)``, ``d2tau_dqd2`` (by ``qd`` twice),
    ``d2tau_dq_dqd[i, j, k] = d/dqd_k (d tau_i/dq_j)`` and ``d2tau_dqdd_dq[i, j, k] =
    d M_ij/dq_k``."""
    if model.nv == 0:
        return [SX(0, 0)] * 4
    dq, dqd, M = inverse_dynamics_partials(model, s, options, stages)
    return [along(model, dq, s, "q"), along(model, dqd, s, "qd"), along(model, dq, s, "qd"),
            along(model, M, s, "q")]


@builds("forward_dynamics_second_derivatives", (Q, QD, TAU, FEXT),
        ("d2qdd_dq2", "d2qdd_dqd2", "d2qdd_dq_dqd", "d2qdd_dtau_dq"), fext=True)
def forward_dynamics_second_derivatives(model: Model, s: dict, options: dict,
                                        stages: Stages) -> list[SX]:
    """The same four tensors for ``qdd = FD(q, qd, tau)``, ``tau`` in place of ``qdd``:
    ``d2qdd_dtau_dq[i, j, k] = d (M^-1)_ij / dq_k``."""
    if model.nv == 0:
        return [SX(0, 0)] * 4
    dq, dqd, dtau = forward_dynamics_derivatives.build(model, s, options, stages)
    return [along(model, dq, s, "q"), along(model, dqd, s, "qd"), along(model, dq, s, "qd"),
            along(model, dtau, s, "q")]
