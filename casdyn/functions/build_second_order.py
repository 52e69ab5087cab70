"""Builders of the second-order derivatives of inverse and forward dynamics (docs:
"Derivatives"). Signatures as in :mod:`.build_dynamics`.

Each output is a tensor ``T[i, j, k]``, the derivative along the ``k``-th coordinate of the
first-order derivative's ``[i, j]`` (Pinocchio's ``ComputeRNEASecondOrderDerivatives``
layout), stored as an ``nv x nv^2`` matrix whose column ``k nv + j`` is ``T[:, j, k]``:
NumPy's ``T = out.reshape(nv, nv, nv).transpose(0, 2, 1)``. Along ``q`` means along
``q ⊕ h e_k`` (the tangent space), as for the first-order derivatives.

Inverse dynamics: the analytical first-order derivatives (:mod:`casdyn.algorithms.
derivatives`) differentiated once more, in forward mode, for the entries the tensors'
symmetries leave free only:

* ``d2tau_dq2[:, j, k] = d2tau_dq2[:, k, j]`` (second derivatives commute) unless ``j`` and
  ``k`` are two coordinates of one joint on a Lie group (a free flyer's, a planar or
  spherical joint's), whose retraction ``q ⊕ h`` does not commute: those pairs are formed
  both ways; ``d2tau_dqd2`` is symmetric throughout;
* ``d2tau_dq_dqd[:, j, k] = d/dq_j (d tau/dqd_k)``: ``d tau/dqd`` differentiated along
  ``q`` (a smaller graph than ``d tau/dq`` along ``qd``: tau is quadratic in ``qd``);
* ``d2tau_dqdd_dq[i, j, k] = dM_ij/dq_k`` from ``M``'s upper triangle.

Forward dynamics: from those, at ``qdd = FD(q, qd, tau)``, by differentiating
``ID(q, qd, FD(q, qd, tau)) = tau`` twice (the approach of Singh, Russell and Wensing,
arXiv 2302.06001, section on forward dynamics), with ``∂M_k = dM/dq_k`` and the first-order
``FD_q``, ``FD_qd``:

* ``d2qdd_dq2[:, j, k] = -M^-1 (ID_qq[:, j, k] + ∂M_k FD_q[:, j] + ∂M_j FD_q[:, k])``;
* ``d2qdd_dqd2[:, j, k] = -M^-1 ID_qdqd[:, j, k]``;
* ``d2qdd_dq_dqd[:, j, k] = -M^-1 (ID_q_qd[:, j, k] + ∂M_j FD_qd[:, k])``;
* ``d2qdd_dtau_dq[:, j, k] = -M^-1 ∂M_k M^-1[:, j]``;

``M^-1`` applied through the tree-sparse factorisation ``M = L^T D L`` of the first order,
for the columns the same symmetries leave free. (Singh et al.'s recursions for the
second-order inverse dynamics themselves are not implemented; the graph sizes of this form
against CasADi's AD applied twice are in docs/optimisation.md.)
"""

from __future__ import annotations

import casadi as ca

from ..algorithms import configuration, derivatives
from ..math.spatial import SX
from ..model.tree import Model
from .build_dynamics import forward_dynamics_pieces, inverse_dynamics_partials
from .inputs import FEXT, QD, QDD, TAU, Q
from .registry import builds
from .stages import Stages


def joint_of_column(model: Model) -> list[int]:
    """For each velocity coordinate (nv), the index of its joint among the model's
    coordinate joints."""
    owner = [0] * model.nv
    for index, joint in enumerate(model.coordinate_joints):
        owner[joint.idx_v : joint.idx_v + joint.type.nv] = [index] * joint.type.nv
    return owner


def mirrored(model: Model, by: str) -> list[list[int]]:
    """For each coordinate ``k``, the ``j`` whose ``[:, j, k]`` a tensor along ``by`` forms
    itself: ``j <= k``, and along ``q`` also every ``j`` of ``k``'s joint (the rest are
    ``[:, k, j]``)."""
    nv = model.nv
    owner = joint_of_column(model) if by == "q" else list(range(nv))
    return [[j for j in range(nv) if j <= k or owner[j] == owner[k]] for k in range(nv)]


def place(nv: int, formed: list[list[int]], columns: list[list[SX]]) -> SX:
    """The ``nv x nv^2`` tensor from ``columns[k][a]`` = ``[:, formed[k][a], k]``, each
    pair not formed taken from its mirror ``[:, k, j]``."""
    out: list[SX | None] = [None] * (nv * nv)
    for k, (js, values) in enumerate(zip(formed, columns, strict=True)):
        for j, value in zip(js, values, strict=True):
            out[k * nv + j] = value
    for k in range(nv):
        for j in range(nv):
            if out[k * nv + j] is None:
                out[k * nv + j] = out[j * nv + k]
    return ca.horzcat(*out)


def along_symmetric(model: Model, first: SX, s: dict, by: str) -> SX:
    """The tensor (this module's layout) of the ``nv x nv`` first-order derivative ``first``
    differentiated along the input ``by`` (``q``: in the tangent space), where it is
    symmetric in ``(j, k)`` except within a joint's coordinates along ``q`` (see
    :func:`mirrored`): one forward-mode pass per coordinate ``k``, over the columns ``j`` it
    forms only."""
    nv, x = model.nv, s[by]
    T = configuration.tangent_map(model, x) if by == "q" else None
    directions = ca.DM.eye(x.numel()) if T is None else T
    formed = mirrored(model, by)
    columns = []
    for k, js in enumerate(formed):
        moved = ca.jtimes(ca.vec(first[:, js]), x, directions[:, k])
        columns.append(ca.horzsplit(ca.reshape(moved, nv, len(js))))
    return place(nv, formed, columns)


def mass_matrix_along_q(model: Model, M: SX, s: dict) -> SX:
    """``dM_ij/dq_k`` (this module's layout) from the nonzeros of ``M``'s upper triangle,
    mirrored."""
    nv = model.nv
    upper = [(i, j) for j in range(nv) for i in range(j + 1) if not M[i, j].is_zero()]
    moved = configuration.tangent_jacobian(model, ca.vertcat(*(M[i, j] for i, j in upper)),
                                           s["q"])
    rows, cols, values = [], [], []
    for r, (i, j) in enumerate(upper):
        for k in range(nv):
            if moved.sparsity().has_nz(r, k):
                pairs = {(i, j), (j, i)}
                rows += [a for a, _ in pairs]
                cols += [k * nv + b for _, b in pairs]
                values += [moved[r, k]] * len(pairs)
    if not values:
        return SX(nv, nv * nv)
    return SX.triplet(rows, cols, ca.vertcat(*values), nv, nv * nv)


def swapped(nv: int, tensor: SX) -> SX:
    """``T[:, k, j]`` at ``[:, j, k]``: the tensor with its last two indices exchanged."""
    return ca.horzcat(*(tensor[:, j * nv + k] for k in range(nv) for j in range(nv)))


def inverse_tensors(model: Model, s: dict, partials: list[SX]) -> list[SX]:
    """The four tensors of inverse dynamics from its first-order ``partials``
    ``[d tau/dq, d tau/dqd, M]`` (functions of ``s``'s ``q``, ``qd``, ``qdd``)."""
    dq, dqd, M = partials
    dq_along_qd = ca.reshape(ca.jacobian(ca.vec(dq), s["qd"]), model.nv, model.nv ** 2)
    return [along_symmetric(model, dq, s, "q"), along_symmetric(model, dqd, s, "qd"),
            dq_along_qd, mass_matrix_along_q(model, M, s)]


@builds("inverse_dynamics_second_derivatives", (Q, QD, QDD, FEXT),
        ("d2tau_dq2", "d2tau_dqd2", "d2tau_dq_dqd", "d2tau_dqdd_dq"), fext=True)
def inverse_dynamics_second_derivatives(model: Model, s: dict, options: dict,
                                        stages: Stages) -> list[SX]:
    """``d2tau_dq2[i, j, k] = d/dq_k (d tau_i/dq_j)``, ``d2tau_dqd2`` (by ``qd`` twice),
    ``d2tau_dq_dqd[i, j, k] = d/dqd_k (d tau_i/dq_j)`` and ``d2tau_dqdd_dq[i, j, k] =
    d M_ij/dq_k``."""
    if model.nv == 0:
        return [SX(0, 0)] * 4
    return inverse_tensors(model, s, inverse_dynamics_partials(model, s, options, stages))


@builds("forward_dynamics_second_derivatives", (Q, QD, TAU, FEXT),
        ("d2qdd_dq2", "d2qdd_dqd2", "d2qdd_dq_dqd", "d2qdd_dtau_dq"), fext=True)
def forward_dynamics_second_derivatives(model: Model, s: dict, options: dict,
                                        stages: Stages) -> list[SX]:
    """The same four tensors for ``qdd = FD(q, qd, tau)``, ``tau`` in place of ``qdd``:
    ``d2qdd_dtau_dq[i, j, k] = d (M^-1)_ij / dq_k`` (the module's docstring says how)."""
    nv = model.nv
    if nv == 0:
        return [SX(0, 0)] * 4
    partials, ldlt, _, tensors = forward_dynamics_pieces(
        model, s, options, stages, more=lambda at, first: inverse_tensors(model, at, first))
    fd_q, fd_qd, M_inv = derivatives.forward_from_inverse(partials, ldlt)
    id_qq, id_qdqd, id_q_qd, dM = tensors
    moved = [dM[:, k * nv : (k + 1) * nv] for k in range(nv)]  # dM/dq_k

    def by(first: SX) -> SX:
        """``[:, j, k] = dM/dq_k first[:, j]``."""
        return ca.horzcat(*(ca.mtimes(m, first) for m in moved))

    by_fd_q = by(fd_q)
    sides = [(id_qq + by_fd_q + swapped(nv, by_fd_q), mirrored(model, "q")),
             (id_qdqd, mirrored(model, "qd")),
             (id_q_qd + swapped(nv, by(fd_qd)), [list(range(nv))] * nv),
             (by(M_inv), [list(range(nv))] * nv)]
    needed = [side[:, k * nv + j] for side, formed in sides
              for k, js in enumerate(formed) for j in js]
    solved = iter(ca.horzsplit(-ldlt.solve(ca.horzcat(*needed))))
    return [place(nv, formed, [[next(solved) for _ in js] for js in formed])
            for _, formed in sides]
