"""Algorithms → named ``casadi.Function`` objects, built once per model and option set.

Every function is an SX graph with the input and output names of the SPEC, so it can be
called by keyword (left-out inputs are zero), differentiated, mapped, embedded in an NLP and
exported with CasADi's code generator.
"""

from __future__ import annotations

import re
import threading

import casadi as ca

from . import dynamics, kinematics
from .errors import InputError, ModelError, unknown_name
from .model import Model
from .spatial import SX

# name -> (input names, output names, accepted options with their defaults)
SIGNATURES: dict[str, tuple[tuple[str, ...], tuple[str, ...], dict[str, object]]] = {
    "inverse_dynamics": (("q", "qd", "qdd", "fext"), ("tau",), {"fext": True}),
    "forward_dynamics": (("q", "qd", "tau", "fext"), ("qdd",), {"fext": True}),
    "mass_matrix": (("q",), ("M",), {}),
    "velocity_product": (("q", "qd"), ("c",), {}),
    "gravity_torque": (("q",), ("g",), {}),
    "geometric_jacobian": (("q",), ("J",), {"body": None}),
    "get_transform": (("q",), ("T",), {"body": None, "relative_to": None}),
    "center_of_mass": (("q",), ("com", "com_jacobian"), {}),
    "external_force": (("wrench", "q"), ("fext",), {"body": None}),
}
FUNCTION_NAMES = tuple(SIGNATURES)


class FunctionCache:
    """Builds each requested Function on first use and returns the same object afterwards."""

    def __init__(self, model: Model):
        self.model = model
        self._functions: dict[tuple, ca.Function] = {}
        self._lock = threading.Lock()

    def get(self, name: str, **options) -> ca.Function:
        key = (name, *sorted(_resolve_options(self.model, name, options).items()))
        with self._lock:
            if key not in self._functions:
                self._functions[key] = build_function(self.model, name, **dict(key[1:]))
            return self._functions[key]


def _resolve_options(model: Model, name: str, options: dict) -> dict:
    if name not in SIGNATURES:
        raise unknown_name("function", name, FUNCTION_NAMES)
    accepted = SIGNATURES[name][2]
    unknown = set(options) - set(accepted)
    if unknown:
        raise InputError(
            f"function {name!r} takes no option {sorted(unknown)[0]!r}; "
            f"its options: {', '.join(accepted) or 'none'}"
        )
    resolved = {**accepted, **options}
    if "body" in accepted:
        if resolved["body"] is None:
            raise InputError(f"function {name!r} needs the option body=<name of a body>")
        model.body_index(resolved["body"], allow_base=name != "external_force")
    if resolved.get("relative_to") is not None:
        model.body_index(resolved["relative_to"], allow_base=True)
    if "fext" in accepted and not isinstance(resolved["fext"], bool):
        raise InputError(f"option fext of {name!r} must be True or False")
    return resolved


def build_function(model: Model, name: str, **options) -> ca.Function:
    """Build the SX Function ``name`` (one of :data:`FUNCTION_NAMES`) for ``model``."""
    options = _resolve_options(model, name, options)
    n, nb = model.nq, len(model.bodies)
    symbols = {
        "q": SX.sym("q", n),
        "qd": SX.sym("qd", n),
        "qdd": SX.sym("qdd", n),
        "tau": SX.sym("tau", n),
        "fext": SX.sym("fext", nb, 6),
        "wrench": SX.sym("wrench", 6),
    }
    inputs = [i for i in SIGNATURES[name][0] if i != "fext" or options.get("fext", True)]
    q = symbols["q"]
    ext = (
        dynamics.external_torque(model, q, symbols["fext"])
        if "fext" in inputs
        else SX.zeros(n, 1)
    )
    if name == "inverse_dynamics":
        outputs = [dynamics.rnea(model, q, symbols["qd"], symbols["qdd"]) - ext]
    elif name == "forward_dynamics":
        massless = model.joints_moving_no_inertia()
        if massless:
            raise ModelError(
                f"forward dynamics of {model.name!r} is undefined: joint {massless[0]!r} moves "
                "no mass or inertia, so the mass matrix is singular"
            )
        outputs = [dynamics.aba(model, q, symbols["qd"], symbols["tau"] + ext)]
    elif name == "mass_matrix":
        outputs = [dynamics.crba(model, q)]
    elif name == "velocity_product":
        zero = SX.zeros(n, 1)
        outputs = [dynamics.rnea(model, q, symbols["qd"], zero, gravity=False)]
    elif name == "gravity_torque":
        zero = SX.zeros(n, 1)
        outputs = [dynamics.rnea(model, q, zero, zero)]
    elif name == "geometric_jacobian":
        outputs = [kinematics.geometric_jacobian(model, q, model.body_index(options["body"],
                                                                             allow_base=True))]
    elif name == "get_transform":
        body = model.body_index(options["body"], allow_base=True)
        reference = options["relative_to"]
        reference = -1 if reference is None else model.body_index(reference, allow_base=True)
        outputs = [kinematics.relative_transform(model, q, body, reference).matrix()]
    elif name == "center_of_mass":
        outputs = list(kinematics.center_of_mass(model, q))
    else:  # external_force
        body = model.body_index(options["body"])
        pose = kinematics.relative_transform(model, q, body, -1)
        wrench = symbols["wrench"]
        force = ca.mtimes(pose.R, wrench[3:])
        moment = ca.mtimes(pose.R, wrench[:3]) + ca.cross(pose.p, force)
        fext = SX.zeros(nb, 6)
        fext[body, :] = ca.vertcat(moment, force).T
        outputs = [fext]
    return ca.Function(
        _function_name(name, options),
        [symbols[i] for i in inputs],
        outputs,
        inputs,
        list(SIGNATURES[name][1]),
    )


def _function_name(name: str, options: dict) -> str:
    """A C identifier naming the function and its options, for code generation."""
    parts = [name]
    if options.get("fext") is False:
        parts.append("nofext")
    for option in ("body", "relative_to"):
        if options.get(option) is not None:
            parts.append(re.sub(r"\W", "_", str(options[option])))
    return "_".join(parts)
