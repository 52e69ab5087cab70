"""Checking and converting user arguments: numbers in, NumPy out; symbols in, symbols out.

A value is *symbolic* if it is a CasADi ``SX`` or ``MX`` (``Opti`` variables are ``MX``);
anything else must convert to finite floats. Shapes are checked here, so that a wrong size
is reported with the argument's name instead of a CasADi dimension message.
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from .errors import InputError

SYMBOLIC = (ca.SX, ca.MX)


def symbolic_kind(values) -> type | None:
    """``ca.SX`` or ``ca.MX`` if any value is symbolic, else ``None``."""
    kinds = {type(v) for v in values if isinstance(v, SYMBOLIC)}
    if len(kinds) > 1:
        raise InputError("cannot mix SX and MX arguments in one call")
    return kinds.pop() if kinds else None


def _numeric(value, name: str) -> np.ndarray:
    if isinstance(value, ca.DM):
        value = value.full()
    try:
        array = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be numeric, got {type(value).__name__}: {exc}") from None
    if not np.all(np.isfinite(array)):
        bad = np.argwhere(~np.isfinite(array))[0].tolist()
        raise InputError(f"{name} must be finite; element {bad} is {array[tuple(bad)]}")
    return array


def vector(value, name: str, size: int):
    """A length-``size`` vector: a 1-D float array, or an ``size x 1`` CasADi column."""
    if isinstance(value, SYMBOLIC):
        if value.numel() != size or min(value.shape) > 1:
            raise InputError(
                f"{name} must be a vector of {size} elements, got a {_shape(value)} "
                f"{type(value).__name__}"
            )
        return value if value.shape[1] == 1 else value.T
    array = _numeric(value, name)
    if array.size != size or (array.ndim == 2 and min(array.shape) != 1) or array.ndim > 2:
        raise InputError(f"{name} must have {size} elements, got {_shape(array)}")
    return array.reshape(size)


def matrix(value, name: str, shape: tuple[int, int]):
    """A matrix of exactly ``shape``: a 2-D float array, or a CasADi matrix."""
    if isinstance(value, SYMBOLIC):
        if value.shape != shape:
            raise InputError(
                f"{name} must be {shape[0]}x{shape[1]}, got a {_shape(value)} "
                f"{type(value).__name__}"
            )
        return value
    array = _numeric(value, name)
    if array.shape != shape:
        raise InputError(f"{name} must be {shape[0]}x{shape[1]}, got {_shape(array)}")
    return array


def _shape(value) -> str:
    return "x".join(str(d) for d in value.shape) if value.shape else "scalar"


def to_numpy(value: ca.DM) -> np.ndarray:
    """CasADi output → NumPy: a column vector becomes 1-D, anything else stays 2-D."""
    array = value.full()
    return array.ravel() if array.shape[1] == 1 else array
