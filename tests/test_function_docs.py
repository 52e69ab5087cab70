"""Every Function is documented: in the docs' table (written by hand, so checked here
against the registry) and in ``RigidBodyTree.function``'s docstring."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from conftest import assert_close

import casdyn
from casdyn.functions import SIGNATURES

TABLE = Path(__file__).resolve().parents[1] / "docs" / "functions.md"


def _rows() -> dict[str, list[str]]:
    """The docs table's cells by function name."""
    rows = {}
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        match = re.fullmatch(r"`(\w+)`", cells[0]) if len(cells) == 4 else None
        if match:
            rows[match.group(1)] = cells
    return rows


def test_the_docs_table_lists_every_function_with_its_inputs_outputs_and_options():
    rows = _rows()
    assert set(rows) == set(SIGNATURES)
    for name, signature in SIGNATURES.items():
        _, io, options, _ = rows[name]
        assert io == f"`({', '.join(signature.inputs)}) → {', '.join(signature.outputs)}`"
        for option in signature.options:
            assert f"`{option}" in options, (name, option)


def test_the_function_docstring_lists_every_function():
    doc = casdyn.RigidBodyTree.function.__doc__
    for name, signature in SIGNATURES.items():
        assert f"``{name}({', '.join(signature.inputs)}) ->" in doc, name


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
