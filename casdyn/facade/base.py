"""What every part of :class:`casdyn.RigidBodyTree` shares, declared once."""

from __future__ import annotations

from typing import Any, Protocol

from ..functions.cache import FunctionCache
from ..functions.registry import Signature
from ..model.tree import Model
from ..runtime.engine import NumericEngine


class Call(Protocol):
    """:meth:`casdyn.runtime.engine.NumericEngine.call`: the Function of ``signature``
    (an object of :mod:`casdyn.functions`, e.g. ``build_dynamics.inverse_dynamics``) with
    ``options``, evaluated on the inputs given by name."""

    def __call__(self, signature: Signature, options: dict | None = None,
                 **values: Any) -> Any: ...


class RobotParts:
    """The base of the facade's mixins (:mod:`casdyn.facade`): the state that
    :meth:`casdyn.RigidBodyTree.__init__` sets and every mixin reads. A mixin checks its
    arguments, then calls a Function by its signature object through ``_call``."""

    _model: Model  # the immutable tree
    _functions: FunctionCache  # this robot's Functions (its model and geometry)
    _engine: NumericEngine  # their numeric (and symbolic) evaluation
    _call: Call  # _engine.call, bound once
