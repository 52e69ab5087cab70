"""Algorithms → named ``casadi.Function`` objects, built once per model and option set.

Every Function is an SX graph with named inputs and outputs, so it can be called by
keyword (left-out inputs are zero), differentiated, mapped, embedded in an NLP and exported
with CasADi's code generator. ``registry`` holds each Function's signature and builder; the
``build_*`` modules register the builders; ``stages`` derives the sparser models they run
on; ``size_policy`` keeps graphs small; ``cache`` builds each Function once; ``names``
gives them C-friendly names.
"""

from __future__ import annotations

# the builder modules register their Functions as they are imported, in this order
from . import (  # noqa: F401
    build_contacts,
    build_dynamics,
    build_kinematics,
    build_loops,
    build_second_order,
)

# isort: split
from . import build_geometry  # noqa: F401
from .registry import SIGNATURES

FUNCTION_NAMES = tuple(SIGNATURES)
"""The names ``robot.function(name)`` accepts, one per registered CasADi Function."""
