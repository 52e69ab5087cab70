"""A function with its options written on one command-line word, as ``casdyn export
--functions`` takes them (:data:`SYNTAX`), read into ``(key, name, options)``."""

from __future__ import annotations

from .algorithms.contacts import KINDS, Contact
from .errors import InputError, unknown_name
from .functions import FUNCTION_NAMES
from .functions.registry import SIGNATURES

SYNTAX = """\
function syntax: [KEY=]NAME[:BODY[:RELATIVE_TO]][:OPTION=VALUE]...
  NAME                          one of the names listed under --functions
  :BODY, :BODY:RELATIVE_TO      the body (and the frame it is relative to) of
                                geometric_jacobian, get_transform, frame_velocity, ...
  :fext=false                   inverse/forward dynamics (and derivatives) without fext
  :parameters=true              inverse/forward dynamics, mass matrix with inertias as input
  :reference_frame=local        task-space vectors in the body's axes (default: base)
  :point=X,Y,Z                  a point in the body's frame (Jacobians, velocities)
  :dt=SECONDS                   the step of integrate
  :contacts=C,C,...             contact_dynamics, its derivatives and impulse_dynamics,
                                each contact C is BODY (a point contact at its
                                origin), BODY/6d (a 6-D
                                contact), BODY@X,Y,Z (at a point in the body's frame) or
                                BODY/6d@X,Y,Z
  KEY=                          the name to export under (default: NAME, then what tells
                                variants apart, e.g. inverse_dynamics_nofext); needed
                                for two contact_dynamics with different contacts
examples:
  casdyn export solo12 --floating-base --out gen --functions \\
      contact_dynamics:contacts=FL_FOOT,FR_FOOT,HL_FOOT,HR_FOOT
  casdyn export talos.urdf --floating-base --out gen --functions \\
      double=contact_dynamics:contacts=left_sole_link/6d,right_sole_link/6d \\
      single=contact_dynamics:contacts=left_sole_link/6d
  casdyn export ur5e --out gen --functions get_transform:tool0:base \\
      geometric_jacobian:tool0:reference_frame=local inverse_dynamics:fext=false"""

_FLAGS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def parse(text: str) -> tuple[str | None, str, dict]:
    """``text`` in the :data:`SYNTAX` as ``(key or None, name, options)``; an
    :class:`InputError` that names the part at fault otherwise."""
    head, *parts = text.split(":")
    key, equals, name = head.rpartition("=")
    key = key if equals else None
    if name not in SIGNATURES:
        raise unknown_name("function", name, FUNCTION_NAMES)
    accepted = SIGNATURES[name].options
    listed = ", ".join(accepted) or "none"
    positional = iter(k for k in ("body", "relative_to") if k in accepted)
    options: dict = {}
    for part in parts:
        option, equals, value = part.partition("=")
        if not equals:
            option, value = next(positional, None), part
            if option is None and "body" not in accepted:
                raise InputError(f"{text!r}: {name} takes no body, got {part!r} (options are "
                                 f"OPTION=VALUE; those of {name}: {listed})")
            if option is None:
                raise InputError(f"{text!r}: too many ':' parts: {name} takes a body and the "
                                 f"frame it is relative to, and OPTION=VALUE ({listed})")
        elif option not in accepted:
            raise InputError(f"{text!r}: {name} takes no option {option!r}; its options: "
                             f"{listed}")
        if option in options:
            raise InputError(f"{text!r}: {option} is given twice")
        options[option] = _value(text, option, value)
    return key, name, options


def _value(text: str, option: str, value: str):
    """The option's value from its text."""
    if option in ("fext", "parameters"):
        if value.lower() not in _FLAGS:
            raise InputError(f"{text!r}: {option} takes true or false, got {value!r}")
        return _FLAGS[value.lower()]
    if option == "point":
        return _numbers(text, "point", value.split(","))
    if option == "dt":
        return _numbers(text, "dt", [value])[0]
    if option == "contacts":
        return contacts(value)
    return value


def _numbers(text: str, option: str, words: list[str]) -> tuple[float, ...]:
    try:
        return tuple(float(word) for word in words)
    except ValueError:
        raise InputError(f"{text!r}: {option} takes numbers, got {','.join(words)!r}") \
            from None


def contacts(value: str) -> tuple[Contact, ...]:
    """``BODY[/KIND][@X,Y,Z],...`` as Contacts: a point contact at the body's origin unless
    ``/6d`` (or ``/point``) and ``@X,Y,Z`` (body frame) say otherwise."""
    words = value.split(",")
    found = []
    while words:
        word = words.pop(0)
        body, at, first = word.partition("@")
        point = (0.0, 0.0, 0.0)
        if at:
            if len(words) < 2:
                raise InputError(f"contacts: {word!r} needs three coordinates X,Y,Z after '@'")
            coordinates = [first, words.pop(0), words.pop(0)]
            point = _numbers(f"contacts={value}", f"the point of {body!r}", coordinates)
        name, slash, kind = body.rpartition("/")
        if not slash or kind not in KINDS:
            name, kind = body, "point"
        if not name:
            raise InputError(f"contacts={value!r}: a contact without a body name")
        found.append(Contact(name, kind, point))
    return tuple(found)
