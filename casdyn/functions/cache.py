"""The cache of one robot's Functions: each built once per name and option set."""

from __future__ import annotations

import threading
from collections.abc import Callable

import casadi as ca

from ..algorithms import identification
from ..math.spatial import SX
from ..model.tree import Model
from .inputs import HELD, PI, symbols
from .names import function_name
from .registry import SIGNATURES, resolve_options
from .size_policy import sx_function
from .stages import Stages


class FunctionCache:
    """Builds each requested Function of one robot (its model and its geometry, both fixed
    for the life of the cache) on first use and returns the same object afterwards.

    Functions are cached by their real key, the name and the resolved options. Their CasADi
    names (:func:`casdyn.functions.names.function_name`) are valid C identifiers and unique
    within the cache: where two keys would still read alike, the later one gets a counter.
    """

    def __init__(self, model: Model, geometry=None):
        self.model = model
        self.stages = Stages(model, geometry)
        self._functions: dict[tuple, ca.Function] = {}
        self._derived: dict[tuple, ca.Function] = {}
        self._names: set[str] = set()
        self._lock = threading.RLock()

    def key(self, name: str, **options) -> tuple:
        """The cache key of the Function ``name`` with ``options`` (checked and completed
        with the defaults): equal keys mean the same Function."""
        return (name, *sorted(resolve_options(self.model, name, options).items()))

    def get(self, name: str, **options) -> ca.Function:
        return self.get_key(self.key(name, **options))

    def get_key(self, key: tuple) -> ca.Function:
        """The Function of a key from :meth:`key`."""
        with self._lock:
            function = self._functions.get(key)
            if function is None:
                function = self._functions[key] = self._build(key)
            return function

    def derived(self, tag: tuple, make: Callable[[], ca.Function]) -> ca.Function:
        """Another form of a Function (e.g. the one the code generator writes), made by
        ``make`` on first use and kept under ``tag``."""
        with self._lock:
            if tag not in self._derived:
                self._derived[tag] = make()
            return self._derived[tag]

    def _build(self, key: tuple) -> ca.Function:
        name, options = key[0], dict(key[1:])
        readable = c_name = function_name(name, options)
        count = 1
        while c_name in self._names:
            count += 1
            c_name = f"{readable}_{count}"
        self._names.add(c_name)
        optional = SIGNATURES[name].optional
        if optional is not None and options[optional] is False:
            # the variant without its optional input: the full function with it at zero
            full = self.get_key((name, *sorted({**options, optional: True}.items())))
            return without_input(full, optional, c_name, name)
        return _build_function(self.stages, c_name, name, options)


def _build_function(stages: Stages, c_name: str, name: str, options: dict) -> ca.Function:
    """The SX Function ``name`` for the model of ``stages``, with options already resolved,
    called ``c_name``. Variants without their optional input are not built here:
    :class:`FunctionCache` derives them from the full function with :func:`without_input`."""
    model = stages.reframed
    s = symbols(model)
    signature = SIGNATURES[name]
    inputs = list(signature.inputs)
    if options.get("parameters"):
        # the same algorithm on the model whose inertias are the input pi (link frames)
        inputs.append(PI.name)
        outputs = signature.parametric(identification.parametric(model, s[PI.name]), s, stages)
    else:
        outputs = signature.build(model, s, options, stages)
    if options.get("switched"):
        inputs.append(HELD.name)
    # the first outputs of the signature (collision_distances has J only with jacobian=)
    return sx_function(c_name, name, [s[i] for i in inputs], outputs, inputs,
                       list(signature.outputs)[: len(outputs)])


def without_input(full: ca.Function, dropped: str, c_name: str, name: str) -> ca.Function:
    """``full`` (the Function ``name``) with its input ``dropped`` fixed at zero, called
    ``c_name``: the part of the graph that input fed simplifies away as CasADi inlines the
    call (e.g. the external forces of ``fext``)."""
    inputs = [full.sx_in(i) for i in range(full.n_in()) if full.name_in(i) != dropped]
    arguments = [full.sx_in(i) if full.name_in(i) != dropped else SX.zeros(full.size_in(i))
                 for i in range(full.n_in())]
    names = [n for n in full.name_in() if n != dropped]
    return sx_function(c_name, name, inputs, full.call(arguments), names, full.name_out())

