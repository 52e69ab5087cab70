"""A trajectory to play: sample times, configurations and, optionally, contact forces.

The file format (docs: "The viewer") is a NumPy ``.npz`` holding ``t`` (N,), ``q`` (N, nq) and
optionally ``v``, ``tau`` (not drawn), ``forces`` (N, nc, 3) or (N, 3 nc) and ``contacts``
(nc body names, or the bodies of ``casdyn.Contact`` objects when given in Python).
"""

from __future__ import annotations

import math
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..algorithms.contacts import Contact
from ..errors import InputError, unknown_name


@dataclass(frozen=True)
class Trajectory:
    """Checked samples: ``t`` (N,) increasing, ``q`` (N, nq), ``forces`` (N, nc, 3) or None,
    ``bodies`` (nc,) and ``points`` (nc, 3): where each force acts, in its body's frame."""

    t: np.ndarray
    q: np.ndarray
    forces: np.ndarray | None
    bodies: tuple[str, ...]
    points: np.ndarray

    def index(self, time: float) -> int:
        """The last sample at or before ``time`` (the first one before ``t[0]``)."""
        return max(int(np.searchsorted(self.t, time, side="right")) - 1, 0)


def trajectory(t, q, nq: int, body_names, forces=None, contacts=None) -> Trajectory:
    """Check and shape a trajectory of a robot with ``nq`` coordinates and bodies
    ``body_names``; errors name the argument, expected and given."""
    t = _finite(t, "t")
    if t.ndim != 1 or len(t) == 0:
        raise InputError(f"t must be a 1-D array of sample times, got shape {t.shape}")
    if len(t) > 1 and np.any(np.diff(t) <= 0):
        raise InputError("t must be strictly increasing")
    q = _finite(q, "q")
    if q.ndim == 1 and len(t) == 1:
        q = q.reshape(1, -1)
    if q.shape != (len(t), nq):
        raise InputError(f"q must be ({len(t)}, {nq}) (one row per sample of t), got shape "
                         f"{q.shape}")
    bodies, points = _contacts(contacts, body_names)
    if forces is None:
        return Trajectory(t, q, None, bodies, points)
    if not bodies:
        raise InputError("forces need contacts: the body (or casdyn.Contact) each force acts on")
    forces = _finite(forces, "forces")
    nc = len(bodies)
    if forces.shape == (len(t), 3 * nc):
        forces = forces.reshape(len(t), nc, 3)
    if forces.shape != (len(t), nc, 3):
        raise InputError(f"forces must be ({len(t)}, {nc}, 3) or ({len(t)}, {3 * nc}) for "
                         f"{nc} contacts (base-frame axes, N), got shape {forces.shape}")
    return Trajectory(t, q, forces, bodies, points)


def load(path: str | os.PathLike) -> dict:
    """The arrays of a trajectory file: ``t``, ``q`` and, if present, ``forces`` and
    ``contacts`` (a tuple of body names). A file that is not a ``.npz`` of numeric arrays (a
    ``.npy``, another format, arrays of Python objects) is an :class:`InputError` naming
    it."""
    name = str(path)
    where = f"trajectory file {name!r}"
    if not Path(path).is_file():
        raise InputError(f"{where} cannot be read: "
                         f"{'not a file' if Path(path).exists() else 'no such file'}")
    # checked before numpy reads it: np.load takes a .npy as one array, and calls any other
    # file pickled data
    try:
        with open(path, "rb") as file:
            magic = file.read(6)
    except OSError as error:
        raise InputError(f"{where} cannot be read: {error.strerror or error}") from None
    if magic == b"\x93NUMPY":
        raise InputError(f"{where} is a .npy (one array); a trajectory is a .npz of named "
                         f"arrays: numpy.savez(path, t=t, q=q)")
    if not zipfile.is_zipfile(path):
        raise InputError(f"{where} is not a .npz (the zip archive numpy.savez writes): "
                         f"numpy.savez(path, t=t, q=q)")
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        raise InputError(f"{where} cannot be read as .npz: {error}") from None
    with data:
        missing = [key for key in ("t", "q") if key not in data.files]
        if missing:
            raise InputError(f"{where} has no {' or '.join(missing)} "
                             f"(it holds {', '.join(data.files) or 'nothing'})")
        result = {key: _array(data, key, where) for key in ("t", "q", "forces", "contacts")
                  if key in data.files}
    if "contacts" in result:
        result["contacts"] = tuple(str(name) for name in np.atleast_1d(result["contacts"]))
    return result


def _array(data, key: str, where: str) -> np.ndarray:
    """Array ``key`` of an open ``.npz``; arrays of Python objects are refused, as
    unpickling a file can run code."""
    try:
        return data[key]
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as error:
        if isinstance(error, ValueError) and "Object arrays" in str(error):  # allow_pickle
            raise InputError(f"{where}: {key} is an array of Python objects, which is not "
                             f"read (unpickling can run code); save {key} as "
                             f"{'strings (body names)' if key == 'contacts' else 'numbers'}"
                             ) from None
        raise InputError(f"{where}: {key} cannot be read: {error}") from None


def _finite(value, what: str) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        got = (f"an array of dtype {value.dtype}" if isinstance(value, np.ndarray)
               else type(value).__name__)
        raise InputError(f"{what} must be an array of numbers, got {got}") from None
    if not np.all(np.isfinite(array)):
        raise InputError(f"{what} holds NaN or infinite values")
    return array


def _contacts(contacts, body_names) -> tuple[tuple[str, ...], np.ndarray]:
    if contacts is None:
        return (), np.zeros((0, 3))
    if isinstance(contacts, str | Contact):
        contacts = (contacts,)
    bodies, points = [], []
    for item in contacts:
        body, point = (item.body, item.point) if isinstance(item, Contact) else (item, (0, 0, 0))
        if not isinstance(body, str):
            raise InputError(f"contacts must be body names or casdyn.Contact, got {item!r}")
        if body not in body_names:
            raise unknown_name("contact body", body, body_names)
        bodies.append(body)
        points.append(point)
    return tuple(bodies), np.asarray(points, dtype=float).reshape(-1, 3)


def friction_half_angle(mu: float) -> float:
    """The half-angle (rad) of the Coulomb friction cone ``|f_t| <= mu f_n``."""
    try:
        mu = float(mu)
    except (TypeError, ValueError):
        raise InputError(f"mu must be a number, got {mu!r}") from None
    if not (math.isfinite(mu) and mu > 0):
        raise InputError(f"mu must be finite and > 0, got {mu!r}")
    return math.atan(mu)
