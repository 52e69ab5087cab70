"""The Functions casdyn builds: each one's name, inputs, outputs, options and builder.

Each Function is one :class:`Signature` object, made by :func:`builds` from the builder it
decorates, ``build(model, symbols, options, stages) -> [outputs]`` (in the ``build_*``
modules of this package). The object takes the builder's name, so that the facade calls
``casdyn.functions.build_dynamics.forward_dynamics`` itself: a reader jumps from the call
to the code, and a misspelt name fails at import. ``symbols`` maps every input name to its
SX symbol (:mod:`casdyn.functions.inputs`); ``options`` are already checked and completed
by :func:`resolve_options`; ``stages`` are the model's derived forms
(:class:`~casdyn.functions.stages.Stages`). :data:`SIGNATURES` lists them by name, for
:meth:`casdyn.RigidBodyTree.function`, C export and the command line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .. import arguments
from ..algorithms.contacts import contact_list
from ..errors import InputError, unknown_name
from ..model.tree import Model
from .inputs import Input


@dataclass(frozen=True, eq=False)
class Signature:
    """One Function: its inputs (with their sizes and defaults), output names, accepted
    options with their defaults, and the builders of its plain and (option
    ``parameters=True``) parametric forms. Compared and hashed by identity: there is one
    object per Function."""

    name: str
    takes: tuple[Input, ...]
    outputs: tuple[str, ...]
    options: dict[str, object]
    build: Callable
    # (parametric model, symbols, stages) -> outputs: the same algorithm on a model whose
    # inertias are SX expressions of the input pi
    parametric: Callable | None = None
    loops: bool = False  # it holds the robot's closed loops: only a robot with loops has it
    inputs: tuple[str, ...] = field(init=False)  # the input names, in order
    # the name of its optional input (casdyn.functions.inputs.Input.optional), whose None in
    # a numeric call selects the variant with the option of that name False; None: none
    optional: str | None = field(init=False)

    def __repr__(self) -> str:
        return f"<Function {self.name}({', '.join(self.inputs)}) -> {', '.join(self.outputs)}>"

    def __post_init__(self):
        optional = [i.name for i in self.takes if i.optional]
        for name in optional:
            if self.options.get(name) is not True:
                raise TypeError(f"{self.name}: the optional input {name!r} comes with the "
                                f"option {name}=True")
        if (self.parametric is None) != ("parameters" not in self.options):
            raise TypeError(f"{self.name}: the option parameters comes with a parametric "
                            "builder")
        object.__setattr__(self, "inputs", tuple(i.name for i in self.takes))
        object.__setattr__(self, "optional", optional[0] if optional else None)


SIGNATURES: dict[str, Signature] = {}  # filled by the builder modules as they are imported

REFERENCE_FRAMES = ("base", "local")  # the axes of task-space vectors

# outputs that are vectors: 1-D NumPy arrays in numeric results, whatever their length
VECTOR_OUTPUTS = frozenset({"tau", "qdd", "c", "g", "h", "com", "q_next", "v", "velocity",
                            "residual", "d",
                            "acceleration", "h_G", "Adot_qd", "T", "V", "qd_plus"})


def builds(name: str, inputs: tuple[Input, ...], outputs: tuple[str, ...], *,
           parametric: Callable | None = None, loops: bool = False,
           **options: object) -> Callable[[Callable], Signature]:
    """Register the decorated builder as the Function ``name`` with these inputs, output
    names and options (with their defaults), and put its :class:`Signature` in its place.
    ``parametric``: the builder of its ``parameters=True`` form; ``loops``: it needs a
    robot with closed loops."""

    def register(build: Callable) -> Signature:
        signature = Signature(name, tuple(inputs), tuple(outputs), dict(options), build,
                              parametric, loops)
        SIGNATURES[name] = signature
        return signature

    return register


def describe_functions(indent: str = "") -> str:
    """One bullet line per registered Function: ``name(inputs) -> outputs``; its options with
    their defaults (``body`` and ``contacts`` are required)."""
    lines = []
    for s in SIGNATURES.values():
        options = ", ".join(f"``{k}``" if v is None else f"``{k}={v!r}``"
                            for k, v in s.options.items())
        line = f"{indent}* ``{s.name}({', '.join(s.inputs)}) -> {', '.join(s.outputs)}``"
        lines.append(f"{line}; {options}" if options else line)
    return "\n" + "\n".join(lines) + "\n"


def resolve_options(model: Model, name: str, options: dict) -> dict:
    """``options`` of the Function ``name`` checked against ``model`` and completed with the
    defaults; bodies and contacts are checked to exist, points made hashable."""
    if name not in SIGNATURES:
        raise unknown_name("function", name, tuple(SIGNATURES))
    accepted = SIGNATURES[name].options
    unknown = set(options) - set(accepted)
    if unknown:
        raise InputError(
            f"function {name!r} takes no option {sorted(unknown)[0]!r}; "
            f"its options: {', '.join(accepted) or 'none'}"
        )
    resolved = {**accepted, **options}
    if SIGNATURES[name].loops and not model.loops:
        raise InputError(f"function {name!r} holds the robot's closed loops; robot "
                         f"{model.name!r} has none (load_urdf(..., loops=[...]), or an MJCF "
                         "equality connect or weld)")
    if resolved.get("actuated") is not None:
        actuated = resolved["actuated"]
        if isinstance(actuated, str) or not all(isinstance(n, str) for n in actuated):
            raise InputError(f"option actuated of {name!r} must be a sequence of joint "
                             f"names, got {actuated!r}")
        resolved["actuated"] = tuple(actuated)
    if "body" in accepted:
        if resolved["body"] is None:
            raise InputError(f"function {name!r} needs the option body=<name of a body>")
        model.body_index(resolved["body"], allow_base=name != "external_force")
    if resolved.get("relative_to") is not None:
        model.body_index(resolved["relative_to"], allow_base=True)
    for flag in ("fext", "parameters", "switched"):
        if flag in accepted and not isinstance(resolved[flag], bool):
            raise InputError(f"option {flag} of {name!r} must be True or False")
    if "dt" in accepted:
        resolved["dt"] = arguments.finite_number(resolved["dt"], f"option dt of {name!r}")
    if "reference_frame" in accepted and resolved["reference_frame"] not in REFERENCE_FRAMES:
        raise InputError(
            f"option reference_frame of {name!r} is {resolved['reference_frame']!r}; it is "
            "'base' (base-frame axes, Pinocchio's LOCAL_WORLD_ALIGNED) or 'local' (the "
            "body's axes, Pinocchio's LOCAL)")
    if resolved.get("point") is not None:
        resolved["point"] = arguments.point(resolved["point"], f"option point of {name!r}")
        if not any(resolved["point"]):
            resolved["point"] = None  # the frame origin: the same Function as without
    if "obstacles" in accepted:
        from .geometry_distances import distance_options

        resolved.update(distance_options(resolved["pairs"], resolved["obstacles"],
                                         resolved["jacobian"]))
    if "contacts" in accepted:
        if resolved["contacts"] is None:
            raise InputError(f"function {name!r} needs the option contacts=[casdyn.Contact(...)]")
        resolved["contacts"] = contact_list(resolved["contacts"])
        for contact in resolved["contacts"]:
            model.body_index(contact.body)
    return resolved
