"""Least-squares tracking costs in the tangent space, ``0.5 |r(x, u, p)|^2``, whose
Gauss-Newton Hessian ``J^T J`` the real-time iteration uses.

The stage parameters ``p`` (one column per knot) are, in this order: the reference
configuration ``q_ref`` (``nq``), velocity ``v_ref`` (``nv``), torques ``u_ref`` (``nu``),
then per foot its reference height ``z_ref`` (m, world) and a weight ``w_foot`` (1 on the
swing feet, 0 on the held ones).
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from casdyn.errors import InputError

from .checks import nonnegative, number


@dataclass(frozen=True)
class TrackingCost:
    """Weights (square roots of the quadratic weights) of the residual
    ``[w_q * (q ⊖ q_ref); w_v * (v - v_ref); w_u * (u - u_ref); w_foot * (z - z_ref)]``.

    ``q_weight`` and ``v_weight`` are ``nv`` vectors (tangent space: base twist in the base
    frame, angular first), ``u_weight`` an ``nu`` vector, ``foot_weight`` a scalar
    (per metre of swing-foot height error); the terminal residual drops ``u`` and scales the
    rest by ``terminal``. Every weight is finite and ``>= 0`` (a vector weight may also be
    a scalar, for every entry); the vectors' sizes are checked against the model where the
    residual is built.
    """

    q_weight: np.ndarray
    v_weight: np.ndarray
    u_weight: np.ndarray
    foot_weight: float = 0.0
    terminal: float = 1.0

    def __post_init__(self):
        for name in ("q_weight", "v_weight", "u_weight"):
            nonnegative(name, getattr(self, name))
        number("foot_weight", self.foot_weight)
        number("terminal", self.terminal)

    def parameter_size(self, model) -> int:
        """Rows of one knot's parameter column."""
        return model.nq + model.nv + model.nu + 2 * len(model.feet)

    def unpack(self, model, p):
        """``(q_ref, v_ref, u_ref, z_ref, w_foot)`` of a parameter column."""
        nq, nv, nu, nf = model.nq, model.nv, model.nu, len(model.feet)
        sizes = np.cumsum([0, nq, nv, nu, nf, nf])
        if p.shape[0] != sizes[-1]:
            raise InputError(f"cost parameters: expected {sizes[-1]} rows, got {p.shape[0]}")
        return tuple(p[sizes[i] : sizes[i + 1]] for i in range(5))

    def pack(self, model, q_ref, v_ref, u_ref, z_ref, w_foot) -> np.ndarray:
        """One parameter column (or a matrix, one column per knot, from ``(n, K)`` parts)."""
        nf = len(model.feet)
        parts = {"q_ref": (q_ref, model.nq), "v_ref": (v_ref, model.nv),
                 "u_ref": (u_ref, model.nu), "z_ref": (z_ref, nf), "w_foot": (w_foot, nf)}
        arrays = []
        for name, (value, rows) in parts.items():
            array = np.asarray(value, dtype=float)
            if array.ndim not in (1, 2) or array.shape[0] != rows:
                raise InputError(f"pack: {name} must have {rows} rows, got "
                                 f"{array.shape[0] if array.ndim else 'a scalar'}")
            arrays.append(array)
        return np.concatenate(arrays, axis=0)

    def residual(self, model, x, u, p):
        """The stage residual (``u`` None: the terminal one)."""
        q, v = x[: model.nq], x[model.nq :]
        q_ref, v_ref, u_ref, z_ref, w_foot = self.unpack(model, p)
        # sized here, where the model is known (a wrong size would broadcast or fail in CasADi)
        w_q, w_v, w_u = (nonnegative(name, getattr(self, name), n) for name, n in
                         (("q_weight", model.nv), ("v_weight", model.nv),
                          ("u_weight", model.nu)))
        parts = [w_q * model.robot.difference(q_ref, q), w_v * (v - v_ref)]
        if u is not None:
            parts.append(w_u * (u - u_ref))
        if self.foot_weight:
            z = model.foot_positions(q)[2, :].T
            parts.append(self.foot_weight * w_foot * (z - z_ref))
        r = ca.vertcat(*parts)
        return r if u is not None else self.terminal * r
