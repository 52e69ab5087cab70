"""The checks of ``casdyn.ocp``'s numeric arguments, in one place: each names the argument
and the value it refuses in an :class:`casdyn.errors.InputError`.

A scalar such as ``dt`` or ``mu`` is a real number (not a bool, a string nor an array: NumPy
would read ``"0.01"`` as a number and ``True`` as 1), finite, and positive or non-negative;
a vector of limits or weights is a scalar or one number per entry, non-negative, finite
unless infinity means "no limit".
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from casdyn.errors import InputError


def number(name: str, value, *, positive: bool = False) -> float:
    """``value`` as a float: finite and ``> 0`` (``positive``) or ``>= 0``."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    real = isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)
    result = float(value) if real else math.nan
    if not (math.isfinite(result) and (result > 0 if positive else result >= 0)):
        raise InputError(f"{name} must be a finite {'positive' if positive else 'non-negative'} "
                         f"number, got {value!r}")
    return result


def nonnegative(name: str, value, size: int | None = None, *, finite: bool = True,
                scalar: bool = True) -> np.ndarray:
    """``value`` as a float array of ``size`` entries (any length where None; a scalar is
    repeated where ``scalar``, kept 0-d where ``size`` is None), each ``>= 0`` and finite
    (``finite``) or up to ``+inf``."""
    expected = " ".join(part for part in (
        "a scalar or" if scalar else "", str(size) if size is not None else "",
        "finite" if finite else "", "non-negative numbers") if part)
    array = np.asarray(value) if not isinstance(value, str) else np.asarray(None)
    if array.dtype.kind not in "iuf":
        raise InputError(f"{name} must be {expected}, got {value!r}")
    array = array.astype(float)
    if not ((array.ndim == 1 and size in (None, array.shape[0])) or (array.ndim == 0 and scalar)):
        raise InputError(f"{name} must be {expected}, got shape {array.shape}")
    if np.any(np.isnan(array)) or np.any(array < 0) or (finite and np.any(np.isinf(array))):
        raise InputError(f"{name} must be {expected}, got {array.tolist()}")
    return np.full(size, float(array)) if array.ndim == 0 and size is not None else array
