"""The Functions casdyn builds: each one's name, inputs, outputs, options and builder.

A builder is an ordinary function ``build(model, symbols, options, stages) -> [outputs]``
registered next to its signature with :func:`builds` (in the ``build_*`` modules of this
package), so that a name such as ``"forward_dynamics"`` leads a reader straight to its code.
``symbols`` maps every input name to its SX symbol; ``options`` are already checked and
completed by :func:`resolve_options`; ``stages`` are the model's derived forms
(:class:`~casdyn.functions.stages.Stages`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from .. import arguments
from ..algorithms.contacts import contact_list
from ..errors import InputError, unknown_name
from ..model.tree import Model


@dataclass(frozen=True)
class Signature:
    """One Function: input and output names, accepted options with their defaults, and
    the builders of its plain and (option ``parameters=True``) parametric forms."""

    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    options: dict[str, object]
    build: Callable
    # (parametric model, symbols, stages) -> outputs: the same algorithm on a model whose
    # inertias are SX expressions of the input pi
    parametric: Callable | None = None
    loops: bool = False  # it holds the robot's closed loops: only a robot with loops has it


SIGNATURES: dict[str, Signature] = {}  # filled by the builder modules as they are imported

REFERENCE_FRAMES = ("base", "local")  # the axes of task-space vectors

# outputs that are vectors: 1-D NumPy arrays in numeric results, whatever their length
VECTOR_OUTPUTS = frozenset({"tau", "qdd", "c", "g", "h", "com", "q_next", "v", "velocity",
                            "residual", "d",
                            "acceleration", "h_G", "Adot_qd", "T", "V", "qd_plus"})


def builds(name: str, inputs: tuple[str, ...], outputs: tuple[str, ...],
           **options: object) -> Callable[[Callable], Callable]:
    """Register the decorated builder as the Function ``name`` with these input and output
    names and options (with their defaults)."""

    def register(build: Callable) -> Callable:
        SIGNATURES[name] = Signature(name, tuple(inputs), tuple(outputs), dict(options), build)
        return build

    return register


def needs_loops(build: Callable) -> Callable:
    """Mark the Function the decorated builder registers (below this decorator) as one that
    needs a robot with closed loops."""
    for name, signature in SIGNATURES.items():
        if signature.build is build:
            SIGNATURES[name] = replace(signature, loops=True)
    return build


def builds_parametric(name: str) -> Callable[[Callable], Callable]:
    """Register the decorated builder as the ``parameters=True`` form of ``name``."""

    def register(build: Callable) -> Callable:
        SIGNATURES[name] = replace(SIGNATURES[name], parametric=build)
        return build

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
    for flag in ("fext", "parameters"):
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
        from ..geometry.robot import distance_options

        resolved.update(distance_options(resolved["pairs"], resolved["obstacles"],
                                         resolved["jacobian"]))
    if "contacts" in accepted:
        if resolved["contacts"] is None:
            raise InputError(f"function {name!r} needs the option contacts=[casdyn.Contact(...)]")
        resolved["contacts"] = contact_list(resolved["contacts"])
        for contact in resolved["contacts"]:
            model.body_index(contact.body)
    return resolved
