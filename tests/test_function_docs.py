"""RigidBodyTree.function() documents every Function: its inputs, outputs and options."""

from __future__ import annotations

import re

import numpy as np
from conftest import assert_close

import casdyn
from casdyn.functions import SIGNATURES


def _items(doc: str) -> dict[str, str]:
    """The docstring's bullet items, whitespace made single spaces, by the function name
    they start with."""
    text = " ".join(doc.split())
    items = {}
    for item in text.split("* ")[1:]:
        match = re.match(r"``(\w+)\(", item)
        if match:
            items[match.group(1)] = item
    return items


def test_function_docstring_lists_every_function_with_inputs_outputs_and_options():
    items = _items(casdyn.RigidBodyTree.function.__doc__)
    assert set(items) == set(SIGNATURES)
    for name, (inputs, outputs, options) in SIGNATURES.items():
        assert f"``{name}({', '.join(inputs)}) -> {', '.join(outputs)}``" in items[name], name
        for option in options:
            assert f"``{option}" in items[name], (name, option)


def test_contact_dynamics_function_has_five_named_inputs_and_takes_keywords():
    robot = casdyn.load_robot("ur5e")
    contacts = [casdyn.Contact("tool0")]
    f = robot.function("contact_dynamics", contacts=contacts)
    assert f.name_in() == ["q", "qd", "tau", "fext", "damping"]
    assert f.name_out() == ["qdd", "forces"]
    q, qd, tau = robot.random_configuration(2), np.full(6, 0.1), np.full(6, 1.0)
    out = f(q=q, qd=qd, tau=tau)  # fext and damping left out: zero
    qdd, forces = robot.contact_dynamics(q, qd, tau, contacts)
    assert_close(out["qdd"].full().ravel(), qdd)
    assert_close(out["forces"].full(), forces)
