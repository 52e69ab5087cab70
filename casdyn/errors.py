"""The exceptions casdyn raises on purpose, and help for naming a wrong name."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class CasdynError(Exception):
    """Base class of every error casdyn raises on purpose."""


class URDFError(CasdynError, ValueError):
    """A URDF that cannot be read, or that does not describe a supported kinematic tree."""


class InputError(CasdynError, ValueError):
    """An argument with the wrong shape, a non-finite value or an unknown name."""


class ModelError(CasdynError, ValueError):
    """A model that loads but cannot give the quantity asked for (e.g. singular masses)."""


class ExportError(CasdynError):
    """Code generation or compilation of exported functions failed, or its target or the
    compile cache cannot be written."""


class DeviceError(CasdynError):
    """A GPU call that cannot run: no GPU, or its driver or libraries (CuPy, NVRTC) missing;
    the message says what is missing and how to install it."""


class ModelWarning(UserWarning):
    """A URDF that loads, but says something casdyn reads differently from its letter (an
    inertia that is not positive definite, ``lower > upper`` limits, an ignored tag): the
    warning names the link or joint and what casdyn does instead."""


class CacheWarning(UserWarning):
    """The compile cache is not used as configured: a directory or file in it is owned by
    another user or writable by others (a library planted there would run in the process;
    see :mod:`casdyn.codegen.cache_dir`), so the process compiles into a private directory."""


class ConvergenceWarning(RuntimeWarning):
    """An iterative computation stopped at a capacity or iteration limit before its tolerance
    (the convex-mesh distance routine's expanding polytope): the value is a bound, and the
    warning says how far from the exact one it may be."""


def suggest(name: str, candidates: Iterable[str]) -> str:
    """A sentence proposing the candidates closest to ``name``, or listing them all if few."""
    candidates = list(candidates)
    close = difflib.get_close_matches(name, candidates, n=3, cutoff=0.5)
    if close:
        return "did you mean " + " or ".join(repr(c) for c in close) + "?"
    if len(candidates) <= 12:
        return "known: " + ", ".join(repr(c) for c in candidates)
    return f"{len(candidates)} names are known; see the model's name lists"


def unknown_name(kind: str, name: object, candidates: Iterable[str]) -> InputError:
    """An ``InputError`` for an unknown body, joint or function name, with suggestions."""
    return InputError(f"unknown {kind} {name!r}; {suggest(str(name), candidates)}")
