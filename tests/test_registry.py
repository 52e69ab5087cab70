"""The facade reaches its Functions through objects: each Function is one signature object
in its builder's place, its inputs carry their own sizes and defaults, the numeric engine
names no input, and a robot's geometry is fixed with the robot."""

from __future__ import annotations

import ast
import pickle
import sys
from pathlib import Path

import casadi as ca
import numpy as np
import pytest
from conftest import assert_close

import casdyn
from casdyn.functions import SIGNATURES
from casdyn.functions.inputs import FEXT, INPUTS, Q
from casdyn.functions.registry import Signature

CASDYN = Path(casdyn.__file__).parent


def test_every_function_is_the_signature_object_in_its_builders_place():
    for name, signature in SIGNATURES.items():
        module = sys.modules[signature.build.__module__]
        assert getattr(module, name) is signature, name


def _called(path: Path) -> list[ast.expr]:
    """The first arguments of the ``self._call(...)`` calls in the module at ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.args[0] for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "_call" and node.args]


def test_the_facade_calls_every_function_by_its_object_and_none_by_a_string():
    modules = [CASDYN / "tree.py", *sorted((CASDYN / "facade").glob("*.py"))]
    first = [argument for path in modules for argument in _called(path)]
    assert not [a for a in first if isinstance(a, ast.Constant)]
    assert {a.id for a in first if isinstance(a, ast.Name)} == set(SIGNATURES)


def test_the_numeric_engine_names_no_input():
    tree = ast.parse((CASDYN / "runtime" / "engine.py").read_text(encoding="utf-8"))
    strings = {node.value for node in ast.walk(tree)
               if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    assert not strings & set(INPUTS)


def test_an_optional_input_comes_with_the_option_that_leaves_it_out():
    def build(model, s, options, stages):
        return []

    with pytest.raises(TypeError, match="fext=True"):
        Signature("pushed", (Q, FEXT), ("tau",), {}, build)
    assert Signature("pushed", (Q, FEXT), ("tau",), {"fext": True}, build).optional == "fext"
    assert {s.optional for s in SIGNATURES.values()} == {None, "fext"}


def test_fext_none_is_no_external_force_by_the_variant_without_fext():
    robot = casdyn.load_robot("ur5e")
    q, qd, qdd = robot.random_configuration(0), np.full(6, 0.3), np.full(6, -0.2)
    zero = np.zeros((robot.n_bodies, 6))
    assert_close(robot.inverse_dynamics(q, qd, qdd), robot.inverse_dynamics(q, qd, qdd, zero))
    # symbolic: the expression is the graph without the fext input
    x = [ca.SX.sym(n, 6) for n in ("q", "qd", "qdd")]
    called = ca.Function("called", x, [robot.inverse_dynamics(*x)])
    lean, full = (robot.function("inverse_dynamics", fext=f) for f in (False, True))
    assert called.n_instructions() == lean.n_instructions() < full.n_instructions()


def test_input_defaults_are_the_home_configuration_zeros_and_the_models_parameters():
    robot = casdyn.load_robot("solo12", floating_base=True)
    engine = robot._engine
    assert_close(engine.default("q"), robot.home_configuration())
    assert engine.default("fext").shape == (robot.n_bodies, 6) and not engine.default("fext").any()
    assert engine.default("damping").shape == (1,)
    assert_close(engine.default("pi"), robot.inertial_parameters())
    assert not engine.default("pi").flags.writeable


def test_two_robots_of_one_model_keep_the_geometry_each_was_made_with():
    from casdyn.model.geometry import RobotGeometry
    from casdyn.model.shipped import robot_urdf

    shipped = casdyn.load_robot("ur5e")  # its URDF and its .collision.xml
    urdf_only = RobotGeometry(shipped.model, robot_urdf("ur5e"))  # no collision shapes
    bare = casdyn.RigidBodyTree(shipped.model, geometry=urdf_only)
    q = shipped.random_configuration(0)
    assert len(bare.collision_pairs) == 0 < len(shipped.collision_pairs)
    assert shipped.collision_distances(q).shape == (len(shipped.collision_pairs),)
    assert bare.collision_distances(q).shape == (0,)
    again = pickle.loads(pickle.dumps(bare))
    assert again.collision_pairs == () and again.collision_distances(q).shape == (0,)
