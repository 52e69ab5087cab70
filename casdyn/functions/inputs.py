"""The inputs a Function may take: each one's name, size and default, in one place.

A Function's signature (:mod:`casdyn.functions.registry`) lists the :class:`Input` objects
it takes; the builders get one SX symbol per input (:func:`symbols`), and the numeric
engine (:mod:`casdyn.runtime.engine`) reads sizes, defaults and checks from these objects,
so that it knows no input by name: a new input is a new line here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..algorithms import configuration, identification
from ..math.spatial import SX
from ..model.tree import Model


@dataclass(frozen=True)
class Input:
    """One input: its ``rows`` for a model, ``cols`` for a matrix (None: a vector), and what
    a numeric call that leaves it out (``None``, MATLAB's ``[]``) gets.

    * ``default``: that value for a model; zeros where None.
    * ``configuration``: a point of the configuration space, whose quaternions numeric
      calls check (:func:`casdyn.arguments.quaternions`).
    * ``optional``: left out, it is *absent*, not zero: every Function taking it has a
      boolean option of the same name (default True), and a call with ``None`` evaluates
      the variant built with that option False, without the input (its graph with the
      input at zero, simplified: smaller and faster, the same numbers). ``fext``: None is
      "no external forces", the ``*_nofext`` Functions.
    """

    name: str
    rows: Callable[[Model], int]
    cols: int | None = None
    default: Callable[[Model], np.ndarray] | None = None
    configuration: bool = False
    optional: bool = False

    def shape(self, model: Model) -> tuple[int, int]:
        """``(rows, cols)`` of its SX symbol for ``model`` (a vector is one column)."""
        return self.rows(model), 1 if self.cols is None else self.cols

    def value_shape(self, model: Model) -> tuple[int, ...]:
        """The NumPy shape of one value: ``(rows,)`` for a vector, ``(rows, cols)`` else."""
        rows = self.rows(model)
        return (rows,) if self.cols is None else (rows, self.cols)

    def default_value(self, model: Model) -> np.ndarray:
        """What ``None`` means for ``model``, read-only (shared by every call and thread)."""
        if self.default is None:
            value = np.zeros(self.value_shape(model))
        else:
            value = np.asarray(self.default(model), dtype=float)
        value.flags.writeable = False
        return value


def _nq(model: Model) -> int:
    return model.nq


def _nv(model: Model) -> int:
    return model.nv


def _one(model: Model) -> int:
    return 1


Q = Input("q", _nq, default=configuration.neutral, configuration=True)
QD = Input("qd", _nv)
QDD = Input("qdd", _nv)
TAU = Input("tau", _nv)
FEXT = Input("fext", lambda model: len(model.bodies), cols=6, optional=True)
WRENCH = Input("wrench", lambda model: 6)
V = Input("v", _nv)
Q0 = Input("q0", _nq, default=configuration.neutral, configuration=True)
Q1 = Input("q1", _nq, default=configuration.neutral, configuration=True)
DAMPING = Input("damping", _one)
QD_MINUS = Input("qd_minus", _nv)
RESTITUTION = Input("restitution", _one)
# the inertial parameters (option parameters=True); left out, the model's own
PI = Input("pi", identification.parameter_count, default=identification.inertial_parameters)
# which bodies' contacts are held (option switched=True), one flag per body as fext's rows;
# left out, all of them
HELD = Input("held", lambda model: len(model.bodies),
             default=lambda model: np.ones(len(model.bodies)))

INPUTS: dict[str, Input] = {i.name: i for i in (Q, QD, QDD, TAU, FEXT, WRENCH, V, Q0, Q1,
                                                DAMPING, QD_MINUS, RESTITUTION, PI, HELD)}


def symbols(model: Model) -> dict[str, SX]:
    """One SX symbol per input, sized for ``model``, by name (as the builders read them)."""
    return {name: SX.sym(name, *i.shape(model)) for name, i in INPUTS.items()}
