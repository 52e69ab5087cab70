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


def _numeric(value, name: str, finite: bool = True) -> np.ndarray:
    """``value`` as a float array; complex, string, object and ragged input is refused (NumPy
    would drop an imaginary part or parse a string without a word), and with ``finite`` a
    NaN or an infinity (False: the caller's kernel checks as it reads the array)."""
    if isinstance(value, ca.DM):
        value = value.full()
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be numeric, got {type(value).__name__}: {exc}") from None
    if array.dtype.kind not in "biuf":
        what = {"c": "complex numbers", "U": "strings", "S": "bytes"}.get(
            array.dtype.kind, f"{type(value).__name__} of {array.dtype} values")
        raise InputError(f"{name} must be real numbers, got {what}")
    # no copy of a float array (the callers only read it: a copy cost a batch call as much
    # as its compiled evaluation)
    array = array.astype(float, copy=False)
    if finite:
        _finite(array, name)
    return array


def _finite(array: np.ndarray, name: str) -> None:
    """An :class:`InputError` naming the first NaN or infinity of ``array``, if any."""
    # a NaN or an infinity makes the sum non-finite: one pass without a temporary array
    # (np.isfinite's took a third of a 1e6-sample batch call); a sum that overflows from
    # finite numbers is told apart by the exact test
    if not np.isfinite(array.sum()) and not np.isfinite(array).all():
        bad = np.argwhere(~np.isfinite(array))[0].tolist()
        raise InputError(f"{name} must be finite; element {bad} is {array[tuple(bad)]}")


def real_numbers(value, name: str) -> np.ndarray:
    """Real, finite numbers (a scalar or an array of any shape) as a float array: no bool,
    None, complex or string, which NumPy would convert without a word."""
    if value is None or isinstance(value, bool | np.bool_) or (
            isinstance(value, np.ndarray) and value.dtype.kind == "b"):
        raise InputError(f"{name} must be real numbers, got {value!r} (None or bool)")
    return _numeric(value, name)


def finite_number(value, name: str) -> float:
    """A real, finite scalar (not a bool) as a float."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating) \
            or not np.isfinite(value):
        raise InputError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def point(value, name: str) -> tuple[float, float, float]:
    """Three real, finite numbers (a point or offset) as a tuple of floats."""
    array = _numeric(value, name)
    if array.size != 3:
        raise InputError(f"{name} must be 3 numbers, got {_shape(array)}")
    return tuple(float(x) for x in array.reshape(3))


def items(value, one: bool, what: str) -> list:
    """``value`` as a list of items: ``[value]`` where ``one`` (the caller recognised a single
    item), else its items; an :class:`InputError` ``"{what}, got {value!r}"`` where it has
    none to give (not iterable)."""
    if one:
        return [value]
    try:
        return list(value)
    except TypeError:
        raise InputError(f"{what}, got {value!r}") from None


def flag(value, name: str) -> bool:
    """A bool (Python's or NumPy's), nothing that merely converts to one."""
    if not isinstance(value, bool | np.bool_):
        raise InputError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def vector(value, name: str, size: int, finite: bool = True):
    """A length-``size`` vector: a 1-D float array, or an ``size x 1`` CasADi column.
    ``finite=False`` leaves a batch's NaNs and infinities to the kernel that reads it (one
    value is always checked).

    A 2-D array of shape ``(N, size)`` is a batch of N vectors and is returned as such; an
    ``(size, 1)`` column (``size > 1``) is one vector. A ``casadi.DM`` row or column is one
    vector (CasADi has no 1-D arrays): batches are NumPy arrays or nested lists.
    """
    if isinstance(value, ca.DM) and min(value.shape) == 1:
        value = value.full().ravel()
    if isinstance(value, SYMBOLIC):
        if value.numel() != size or min(value.shape) > 1:
            raise InputError(
                f"{name} must be a vector of {size} elements, got a {_shape(value)} "
                f"{type(value).__name__}"
            )
        return value if value.shape[1] == 1 else value.T
    array = _numeric(value, name, finite=False)
    if array.ndim == 2 and array.shape[1] == size:  # a batch, possibly of none
        if finite:
            _finite(array, name)
        return array
    _finite(array, name)  # one value is always checked here
    if array.size != size or (array.ndim == 2 and min(array.shape) != 1) or array.ndim > 2:
        raise InputError(
            f"{name} must have {size} elements (or be an N x {size} batch), "
            f"got {_shape(array)}"
        )
    return array.reshape(size)


# a quaternion's squared norm is evaluated as is between these (its graph squares the
# entries: beyond ~1e-154 and ~1e154 the sum under- or overflows)
_SAFE_SQUARED_NORM = (1e-100, 1e100)


def quaternions(value, name: str, size: int, slots: tuple[tuple[int, str], ...]):
    """A numeric configuration ``value`` (``size``,) or a batch (N, ``size``) whose
    quaternions, ``value[start:start + 4]`` of each ``(start, joint name)`` in ``slots``, are
    nonzero: as given if their norms are moderate, else as a copy in which each quaternion
    with an entry beyond 1e50 or none above 1e-50 is scaled by a power of two to a largest
    entry in [0.5, 1) (exact, and every function depends only on the normalised quaternion).
    A zero quaternion is an :class:`InputError` naming the argument, the entries and the
    joint; other wrong input gets :func:`vector`'s messages."""
    low, high = _SAFE_SQUARED_NORM
    try:  # the common case, a 1-D array, in Python floats (the cheapest for four numbers)
        for start, _ in slots:
            w, x, y, z = value[start : start + 4].tolist()
            if not low < w * w + x * x + y * y + z * z < high:
                break
        else:
            return value
    except (AttributeError, TypeError, ValueError):  # anything else: checked below
        pass
    if isinstance(value, SYMBOLIC):
        return value
    array = vector(value, name, size)
    batch = array.reshape(-1, size)
    scaled = None
    for start, joint in slots:
        largest = np.max(np.abs(batch[:, start : start + 4]), axis=1, initial=0.0)
        if np.any(largest == 0):
            where = (f"{name}[{start}:{start + 4}]" if array.ndim == 1 else
                     f"{name}[{int(np.argmax(largest == 0))}, {start}:{start + 4}]")
            raise InputError(
                f"{where}, the quaternion [qw, qx, qy, qz] of joint {joint!r}, is zero; "
                "it may have any nonzero norm")
        exponents = np.where((largest < 1e-50) | (largest > 1e50), np.frexp(largest)[1], 0)
        if np.any(exponents):
            if scaled is None:
                scaled = batch.copy()
            scaled[:, start : start + 4] = np.ldexp(batch[:, start : start + 4],
                                                    -exponents[:, None])
    if scaled is None:
        return array
    return scaled.reshape(array.shape)


def matrix(value, name: str, shape: tuple[int, int], finite: bool = True):
    """A matrix of exactly ``shape`` (2-D), or a batch of them ``(N, *shape)``."""
    if isinstance(value, SYMBOLIC):
        if value.shape != shape:
            raise InputError(
                f"{name} must be {shape[0]}x{shape[1]}, got a {_shape(value)} "
                f"{type(value).__name__}"
            )
        return value
    array = _numeric(value, name, finite=False)
    if finite or array.ndim != 3:  # one value is always checked here
        _finite(array, name)
    if array.shape != shape and not (array.ndim == 3 and array.shape[1:] == shape):
        raise InputError(
            f"{name} must be {shape[0]}x{shape[1]} (or N x {shape[0]}x{shape[1]}), "
            f"got {_shape(array)}"
        )
    return array


def batch_size(values: dict, single_ndim: dict) -> int | None:
    """The common N of the batched arguments (arrays with one more dimension than a single
    value), or ``None`` if nothing is batched."""
    sizes = {k: v.shape[0] for k, v in values.items() if np.ndim(v) > single_ndim[k]}
    if not sizes:
        return None
    if len(set(sizes.values())) > 1:
        listed = ", ".join(f"{k}: {n}" for k, n in sizes.items())
        raise InputError(f"batched arguments must have the same number of rows; got {listed}")
    return next(iter(sizes.values()))


def fill_batch(view: np.ndarray, value: np.ndarray, single_ndim: int, n: int) -> None:
    """Write a batch (N, n) or (N, r, c), or one value shared by all N, into the input view
    of a Function mapped over N: a column-major (n, N) or (r, c*N) matrix."""
    if single_ndim == 1:
        columns = view.reshape((-1, n), order="F")  # column k is sample k
        columns[...] = value.T if np.ndim(value) == 2 else value[:, None]
        return
    rows, cols = value.shape[-2:]
    blocks = view.reshape((rows, cols, n), order="F")  # blocks[:, :, k] is sample k
    blocks[...] = value.transpose(1, 2, 0) if np.ndim(value) == 3 else value[:, :, None]


def _shape(value) -> str:
    return "x".join(str(d) for d in value.shape) if value.shape else "scalar"


def generator(rng) -> np.random.Generator:
    """``rng`` if a Generator, else NumPy's generator seeded with it (None: fresh entropy)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if not isinstance(rng, bool | float | np.floating | str | bytes):
        try:
            return np.random.default_rng(rng)
        except (TypeError, ValueError):
            pass
    raise InputError("rng must be a numpy.random.Generator, a seed (a non-negative integer "
                     f"or a sequence of them) or None, got {rng!r}")


def task_options(body: str, at, reference_frame: str) -> dict:
    """The options of a task-space function; the point ``at`` made hashable (None: the
    frame origin)."""
    return {"body": body, "point": None if at is None else point(at, "point"),
            "reference_frame": reference_frame}


def scalar(value):
    """A scalar Function output as a float (a batch: an (N,) array; symbols unchanged)."""
    if isinstance(value, np.ndarray):
        return float(value[0]) if value.ndim == 1 and value.shape == (1,) else value[..., 0]
    return value


def fext_row(index: int, n_bodies: int, wrench):
    """An ``n_bodies x 6`` ``fext`` with ``wrench`` (a base-frame spatial force, 6) in row
    ``index``: of the same kind for symbols, ``(N, n_bodies, 6)`` for a batch (N, 6)."""
    wrench = vector(wrench, "wrench", 6)
    kind = symbolic_kind([wrench])
    if kind:
        fext = kind.zeros(n_bodies, 6)
        fext[index, :] = wrench.T
        return fext
    fext = np.zeros((*wrench.shape[:-1], n_bodies, 6))  # a batch: one per wrench
    fext[..., index, :] = wrench
    return fext


def names(value, name: str) -> tuple[str, ...]:
    """A name or a sequence of names as a tuple."""
    if isinstance(value, str):
        return (value,)
    try:
        return tuple(value)
    except TypeError:
        raise InputError(f"{name} must be a sequence of joint names, got {value!r}") from None
