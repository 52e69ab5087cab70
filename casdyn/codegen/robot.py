"""A robot's Functions to C: which Functions an export names, built in their C form, then
exported (:mod:`.export`) or compiled into the library cache (:mod:`.library_cache`) for a
robot's numeric calls."""

from __future__ import annotations

import os
import pickle

import casadi as ca

from ..functions import FUNCTION_NAMES
from ..functions.cache import FunctionCache
from ..functions.names import identifier
from ..functions.registry import SIGNATURES, VECTOR_OUTPUTS
from ..progress import Progress, enabled
from ..runtime.engine import NumericEngine
from . import export, library_cache, linked, selection, simd
from .loops import for_c

# what compile() builds when it is not told: the dynamics a controller calls most
COMPILED_BY_DEFAULT = [
    *((name, {"fext": f}) for name in ("inverse_dynamics", "forward_dynamics")
      for f in (True, False)),
    "mass_matrix", "velocity_product", "gravity_torque", "center_of_mass",
]


def export_robot(cache: FunctionCache, functions, directory: str | os.PathLike,
                 compile: bool, compiler: str | None, flags, prefix: str | None,
                 native: bool, progress: bool | None,
                 batch: bool = False) -> dict[str, ca.Function]:
    """:meth:`casdyn.RigidBodyTree.export_c` for the robot of ``cache``."""
    name = cache.model.name
    prefix = identifier(name) if prefix is None else export.checked_prefix(prefix)
    flags = export.checked_flags(flags)
    chosen = selection.keyed(export_list(cache, functions), cache.key)
    keys = list(chosen.values())
    symbols = [f"{prefix}_{n}" if prefix else n for n in chosen]
    with Progress(name, enabled(progress)) as report:
        built = build_for_c(cache, keys, report, linked.forms(cache, keys, symbols))
        loaded = export.export_functions(
            built, directory, f"casdyn_{name}", compile=compile, compiler=compiler,
            flags=flags, prefix=prefix, native=native, names=list(chosen), progress=report,
            batched=[cache.get_key(key) for key in chosen.values()] if batch else None,
        )
    if not compile:
        loaded = [cache.get_key(key) for key in chosen.values()]
    return dict(zip(chosen, loaded, strict=True))


def compile_robot(engine: NumericEngine, functions, directory: str | os.PathLike | None,
                  progress: bool | None, batch: bool | None = None) -> None:
    """:meth:`casdyn.RigidBodyTree.compile`: the library of ``functions`` from the cache
    (built the first time), installed in ``engine`` for every thread; with the batched C
    of each (``batch`` True), of none (False), or of those up to
    :data:`casdyn.codegen.simd.BATCHED_BY_DEFAULT` instructions (None)."""
    cache = engine.functions
    name = cache.model.name
    listed = COMPILED_BY_DEFAULT if functions is None else _called_variants(
        selection.items(functions))
    keys = export_keys(cache, listed)
    with Progress(name, enabled(progress)) as report:
        symbols = [cache.get_key(key).name() for key in keys]  # the library's C names
        chosen = build_for_c(cache, keys, report, linked.forms(cache, keys, symbols))
        # the batched C of each from its SX graph (the C form may be an MX Function)
        batched = [sx if simd.supported(sx) and _batched(sx, batch) else None
                   for sx in map(cache.get_key, keys)]
        compiled, module, kernels = library_cache.cached_library_parts(
            chosen, f"casdyn_{name}", pickle.dumps(cache.model), directory, VECTOR_OUTPUTS,
            progress=report, batched=batched)
    engine.install(keys, compiled, module, kernels)


def _called_variants(listed: list[selection.Item]) -> list:
    """The variants numeric calls of ``listed`` use: a function with an optional ``fext``
    named without that option is called with ``fext`` and without it (a call without
    ``fext`` takes the smaller variant), so compile() builds both."""
    out: list = []
    for key, name, options in listed:
        if key is None and "fext" not in options and \
                "fext" in getattr(SIGNATURES.get(name), "options", ()):
            out += [(name, {**options, "fext": True}), (name, {**options, "fext": False})]
        else:
            out.append((name, options) if key is None else (key, name, options))
    return out


def _batched(function: ca.Function, batch: bool | None) -> bool:
    """Whether compile() builds the batched C of ``function`` (see :func:`compile_robot`)."""
    if batch is None:
        return function.n_instructions() <= simd.BATCHED_BY_DEFAULT
    return batch


def build_for_c(cache: FunctionCache, keys: list[tuple], report: Progress,
                ready: dict[tuple, ca.Function] | None = None) -> list[ca.Function]:
    """The Functions of ``keys`` as their C is generated (those of ``ready`` given), each
    built (the slow part for large models) as one step of ``report``."""
    report.phase(f"building {len(keys)} function{'s' if len(keys) > 1 else ''}", len(keys))
    built = []
    for key in keys:
        with report.step(key[0]):
            built.append(ready[key] if ready and key in ready else for_c(cache, key))
    return built


def export_keys(cache: FunctionCache, functions) -> list[tuple]:
    """The keys of the distinct Functions an export list names, in its order."""
    return list(dict.fromkeys(cache.key(name, **opts)
                              for _, name, opts in export_list(cache, functions)))


def export_list(cache: FunctionCache, functions) -> list[selection.Item]:
    """``(key or None, name, options)`` of each Function an export names; None names every
    Function without contacts, the body-specific ones for each leaf body."""
    if functions is None:
        leaves = cache.model.leaf_bodies()
        # contact functions need contacts: they are exported when listed with them
        # (and loop functions a robot with loops, loop_inverse_dynamics its actuated joints,
        # collision_distances the robot's collision geometry, read from its URDF)
        options = {n: SIGNATURES[n].options for n in FUNCTION_NAMES
                   if "contacts" not in SIGNATURES[n].options
                   and "actuated" not in SIGNATURES[n].options
                   and "obstacles" not in SIGNATURES[n].options
                   and (cache.model.loops or not SIGNATURES[n].loops)}
        plain = [n for n in options if "body" not in options[n]]
        per_body = [n for n in options if "body" in options[n]]
        return [(None, n, {}) for n in plain] + \
            [(None, n, {"body": b}) for b in leaves for n in per_body]
    return selection.items(functions)
