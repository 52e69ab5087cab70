"""A robot's Functions to C: which Functions an export or a compile() names (the export
keys), built in their C forms (:mod:`.forms`), then exported into a directory or compiled
into the cache (:mod:`.library`) for the robot's numeric calls.

A list of functions (``export_c``'s and ``compile()``'s ``functions=``) holds any of:

* ``"name"``: the function with its default options;
* ``("name", options)``: a variant, e.g. ``("inverse_dynamics", {"fext": False})``;
* ``("key", "name", options)``: a variant under a name of the caller's choosing;

or it is a dict ``{key: "name" or ("name", options)}``; one item alone may stand for the
list. The key of an item is the caller's key if given, else
:func:`casdyn.functions.names.readable_name`: the function's name, then what tells variants apart —
``nofext``, ``parametric``, the body, the frame it is ``relative_to``, ``local`` (e.g.
``inverse_dynamics_nofext``, ``get_transform_tool0_base``). Options with no readable form
(``contacts``, ``point``, ``dt``) do not show: ``contact_dynamics`` with any contacts is
``contact_dynamics``. Body names that read alike once made C identifiers (``a-b``,
``a.b``) get a short hash of the names. Two different Functions under one key are an error
that asks for keys; the same Function listed twice under one key is exported once.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import casadi as ca

from .. import arguments, sizes
from ..errors import InputError
from ..functions import FUNCTION_NAMES
from ..functions.cache import FunctionCache
from ..functions.names import identifier, readable_name
from ..functions.registry import SIGNATURES, VECTOR_OUTPUTS
from ..progress import Progress, enabled
from ..runtime.engine import NumericEngine
from . import build, library, simd, source
from .forms import for_c, linked_forms

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
    prefix = identifier(name) if prefix is None else source.checked_prefix(prefix)
    flags = build.checked_flags(flags)
    chosen = keyed(export_list(cache, functions), cache.key)
    keys = list(chosen.values())
    symbols = [f"{prefix}_{n}" if prefix else n for n in chosen]
    with Progress(name, enabled(progress)) as report:
        built = build_for_c(cache, keys, report, linked_forms(cache, keys, symbols))
        loaded = library.export_functions(
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
    :data:`casdyn.sizes.BATCHED_BY_DEFAULT` instructions (None)."""
    cache = engine.functions
    name = cache.model.name
    listed = COMPILED_BY_DEFAULT if functions is None else _called_variants(
        items(functions))
    keys = export_keys(cache, listed)
    with Progress(name, enabled(progress)) as report:
        symbols = [cache.get_key(key).name() for key in keys]  # the library's C names
        chosen = build_for_c(cache, keys, report, linked_forms(cache, keys, symbols))
        # the batched C of each from its SX graph (the C form may be an MX Function)
        batched = [sx if simd.supported(sx) and _batched(sx, batch) else None
                   for sx in map(cache.get_key, keys)]
        compiled, module, kernels = library.compile_functions(
            chosen, f"casdyn_{name}", directory=directory, vector_outputs=VECTOR_OUTPUTS,
            batched=batched, progress=report)
    engine.install(keys, compiled, module, kernels)


def _called_variants(listed: list[Item]) -> list:
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
        return function.n_instructions() <= sizes.BATCHED_BY_DEFAULT
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


def export_list(cache: FunctionCache, functions) -> list[Item]:
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
    return items(functions)


# --- the export keys ----------------------------------------------------------------------
Item = tuple[str | None, str, dict]  # (key or None, function name, options)


def _is_item(value) -> bool:
    """Whether ``value`` is one item rather than a list of them."""
    if isinstance(value, str):
        return True
    if not isinstance(value, tuple):
        return False
    return (len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], dict)) or \
        (len(value) == 3 and isinstance(value[0], str) and isinstance(value[1], str)
         and isinstance(value[2], dict))


def items(functions) -> list[Item]:
    """``functions`` (see the module) as a list of ``(key or None, name, options)``."""
    if isinstance(functions, dict):
        listed = []
        for key, value in functions.items():
            if not isinstance(key, str):
                raise InputError(f"the keys of functions must be names (strings), got {key!r}")
            if isinstance(value, str):
                listed.append((key, value, {}))
            elif _is_item(value) and len(value) == 2:
                listed.append((key, *value))
            else:
                raise InputError(f"functions[{key!r}] must be a function name or a (name, "
                                 f"options) pair, got {value!r}")
        return listed
    values = arguments.items(functions, _is_item(functions),
                             "functions must be a name, a list or a dict")
    listed = []
    for item in values:
        if not _is_item(item):
            raise InputError(
                "functions must hold names, (name, options) pairs or (key, name, options) "
                f"triples, got {item!r}")
        listed.append((None, item, {}) if isinstance(item, str) else
                      (None, *item) if len(item) == 2 else item)
    return listed


def keyed(listed: list[Item], function_key: Callable[..., tuple]) -> dict[str, tuple]:
    """Export key → Function key (``function_key(name, **options)``, the FunctionCache's)
    for the ``listed`` items, in their order; an :class:`InputError` for a key that is not
    a C identifier or that two different Functions would share."""
    chosen: dict[str, tuple] = {}
    given: dict[str, str] = {}  # key -> how the item was written, for the error message
    for key, name, options in listed:
        function = function_key(name, **options)
        if key is None:
            key = readable_name(name, dict(function[1:]))
        elif key != identifier(key, "f"):
            raise InputError(
                f"export key {key!r} is not a C identifier (ASCII letters, digits and single "
                f"underscores, starting with a letter); e.g. {identifier(key, 'f')!r}")
        described = f"{name!r} with {options}" if options else repr(name)
        if key in chosen and chosen[key] != function:
            raise InputError(
                f"{given[key]} and {described} would both be exported as {key!r}; give them "
                f"keys of your own: (key, name, options) triples or a dict {{key: (name, "
                f"options)}} (casdyn export: KEY=NAME:...)")
        chosen.setdefault(key, function)
        given.setdefault(key, described)
    return chosen
