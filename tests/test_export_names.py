"""What export_c returns and calls its C symbols: the caller's names, no hashes where
nothing clashes, clashes refused; its prefix and flags checked."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

import casdyn
from casdyn import InputError
from casdyn.codegen import export

pytestmark = pytest.mark.slow  # C export and compilation

TOOL = [casdyn.Contact("tool0")]
WRIST = [casdyn.Contact("wrist_3_link", point=(0.0, 0.0, 0.1))]


@pytest.fixture(scope="module")
def ur5e():
    return casdyn.load_robot("ur5e")


def test_contact_dynamics_is_exported_under_its_own_name(ur5e, tmp_path):
    loaded = ur5e.export_c(tmp_path, [("contact_dynamics", {"contacts": TOOL})])
    assert list(loaded) == ["contact_dynamics"]
    header = (tmp_path / "casdyn_ur5e.h").read_text()
    assert "int ur5e_contact_dynamics(" in header
    f = loaded["contact_dynamics"]
    assert f.name() == "contact_dynamics"
    assert f.name_in() == ["q", "qd", "tau", "fext", "damping"]
    q, qd, tau = ur5e.random_configuration(0), np.full(6, 0.3), np.full(6, 2.0)
    out = f(q=q, qd=qd, tau=tau, fext=np.zeros((ur5e.n_bodies, 6)), damping=0.0)
    want_qdd, want_forces = ur5e.contact_dynamics(q, qd, tau, TOOL)
    assert_close(out["qdd"].full().ravel(), want_qdd)
    assert_close(out["forces"].full(), want_forces)


def test_variants_read_apart_by_their_options(ur5e, tmp_path):
    loaded = ur5e.export_c(tmp_path, ["inverse_dynamics", ("inverse_dynamics", {"fext": False}),
                                      ("geometric_jacobian", {"body": "tool0",
                                                              "reference_frame": "local"}),
                                      ("geometric_jacobian", {"body": "tool0",
                                                              "point": (0, 0, 0.1)})],
                           compile=False)
    assert list(loaded) == ["inverse_dynamics", "inverse_dynamics_nofext",
                            "geometric_jacobian_tool0_local", "geometric_jacobian_tool0"]
    header = (tmp_path / "casdyn_ur5e.h").read_text()
    for key in loaded:
        assert f"int ur5e_{key}(" in header


def test_variants_that_read_alike_need_keys_of_their_own(ur5e, tmp_path):
    two = [("contact_dynamics", {"contacts": TOOL}), ("contact_dynamics", {"contacts": WRIST})]
    with pytest.raises(InputError, match=r"both be exported as 'contact_dynamics'.*keys"):
        ur5e.export_c(tmp_path / "refused", two, compile=False)
    assert not (tmp_path / "refused").exists()
    named = [("tool", *two[0]), ("wrist", *two[1])]
    loaded = ur5e.export_c(tmp_path / "triples", named, compile=False)
    assert list(loaded) == ["tool", "wrist"]
    assert loaded["tool"] is ur5e.function("contact_dynamics", contacts=TOOL)
    header = (tmp_path / "triples" / "casdyn_ur5e.h").read_text()
    assert "int ur5e_tool(" in header and "int ur5e_wrist(" in header
    loaded = ur5e.export_c(tmp_path / "dict", {"tool": two[0], "wrist": two[1],
                                               "M": "mass_matrix"}, compile=False, prefix="")
    assert list(loaded) == ["tool", "wrist", "M"]
    header = (tmp_path / "dict" / "casdyn_ur5e.h").read_text()
    assert "int tool(" in header and "int M(" in header
    # a key of the caller's that another item takes too
    with pytest.raises(InputError, match="'mass_matrix'"):
        ur5e.export_c(tmp_path / "x", [("mass_matrix", "gravity_torque", {}), "mass_matrix"],
                      compile=False)
    with pytest.raises(InputError, match=r"not a C identifier.*'my_key'"):
        ur5e.export_c(tmp_path / "x", [("my key", "mass_matrix", {})], compile=False)


def test_the_same_function_twice_is_exported_once(ur5e, tmp_path):
    loaded = ur5e.export_c(tmp_path, ["mass_matrix", ("mass_matrix", {})], compile=False)
    assert list(loaded) == ["mass_matrix"]


def test_prefix_must_be_a_string(ur5e, tmp_path):
    with pytest.raises(InputError, match=r"prefix must be a string.*int 3"):
        ur5e.export_c(tmp_path, ["mass_matrix"], prefix=3)


def test_flags_may_be_one_string_split_as_a_shell_would(tmp_path):
    assert export.checked_flags("-O0  -fPIC '-DNAME=a b'") == ("-O0", "-fPIC", "-DNAME=a b")
    robot = casdyn.load_robot("planar_2link")
    loaded = robot.export_c(tmp_path, ["gravity_torque"], flags="-O0 -fPIC -shared")
    q = robot.random_configuration(1)
    assert_close(loaded["gravity_torque"](q).full().ravel(), robot.gravity_torque(q))
    for bad in (5, ["-O0", 1]):
        with pytest.raises(InputError, match="flags must be a string or a sequence"):
            robot.export_c(tmp_path / "bad", ["gravity_torque"], flags=bad)
