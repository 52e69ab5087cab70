"""The casdyn command: info, export, demo; bad input exits non-zero with one line."""

from __future__ import annotations

import shutil
import subprocess
import sys

import casadi as ca
import numpy as np
import pytest
from conftest import assert_close

import casdyn
from casdyn import function_spec, progress
from casdyn.cli import main

pytestmark = pytest.mark.slow  # the installed console script and its exports


def test_info_lists_joints_limits_bodies_and_mass(capsys):
    assert main(["info", "scara"]) == 0
    out = capsys.readouterr().out
    assert "scara: 4 joints (nq=4, nv=4), 6 bodies" in out and "12.3 kg" in out
    assert "fixed base: root link 'base_link' welded to the world" in out
    assert "quill                        prismatic" in out and "tool0" in out


def test_info_says_when_the_base_floats(capsys):
    assert main(["info", "ur5e", "--floating-base"]) == 0
    out = capsys.readouterr().out
    assert "ur5e: 7 joints (nq=13, nv=12), 11 bodies" in out
    assert "floating base: free joint 'floating_base' from 'world' to root link 'base_link'" in out
    assert "floating_base                free          0:7" in out


def test_export_takes_the_floating_base(tmp_path, capsys):
    assert main(["export", "solo12", "--floating-base", "--out", str(tmp_path), "--no-compile",
                 "--functions", "bias_force", "integrate"]) == 0
    assert "generated 2 functions of solo12" in capsys.readouterr().out
    header = (tmp_path / "casdyn_solo12.h").read_text()
    assert "solo12_bias_force" in header and "solo12_integrate" in header


def test_info_takes_a_urdf_path(tmp_path, capsys):
    path = tmp_path / "arm.urdf"
    path.write_text(casdyn.robot_urdf("planar_2link"))
    assert main(["info", str(path)]) == 0
    assert "planar_2link: 2 joints" in capsys.readouterr().out


def test_export_writes_and_loads_chosen_functions(tmp_path, capsys):
    assert main(["export", "ur5e", "--out", str(tmp_path),
                 "--functions", "gravity_torque", "get_transform:tool0:base"]) == 0
    out = capsys.readouterr().out
    assert "compiled and loaded 2 functions" in out and "get_transform_tool0_base" in out
    assert (tmp_path / "libcasdyn_ur5e.so").is_file()


def test_demo_prints_real_numbers(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "holding torque" in out and "ur5e" in out and "round trip" in out


@pytest.mark.parametrize("argv, message", [
    (["info", "ur6"], "neither a shipped robot nor a URDF file; did you mean 'ur5e'"),
    (["export", "ur5e", "--out", "x", "--functions", "mass_matrx"], "did you mean 'mass_matrix'"),
    (["export", "ur5e", "--out", "x", "--functions", "geometric_jacobian:tool"], "'tool0'"),
    (["export", "ur5e", "--out", "x", "--functions", "inverse_dynamics:bogus=1"],
     "inverse_dynamics takes no option 'bogus'; its options: fext, parameters"),
    (["export", "ur5e", "--out", "x", "--functions", "inverse_dynamics:tool0"],
     "inverse_dynamics takes no body, got 'tool0'"),
    (["export", "ur5e", "--out", "x", "--functions", "contact_dynamics:contacts=tool0@1,2"],
     "'tool0@1' needs three coordinates X,Y,Z after '@'"),
    (["export", "ur5e", "--out", "x", "--functions", "contact_dynamics:contacts=tool1"],
     "unknown body 'tool1'"),
])
def test_bad_input_exits_non_zero_with_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_console_script_is_installed_with_help():
    exe = shutil.which("casdyn") or shutil.which("casdyn", path=str(
        __import__("pathlib").Path(sys.executable).parent))
    assert exe, "the casdyn console script is not installed"
    result = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True)
    assert "info" in result.stdout and "export" in result.stdout and "demo" in result.stdout
    result = subprocess.run([exe, "info"], capture_output=True, text=True)
    assert result.returncode != 0 and "robot" in result.stderr


def test_a_reader_that_goes_away_is_not_an_error():
    """`casdyn demo | head -1`: the closed pipe ends the demo quietly (BrokenPipeError is an
    OSError, which the CLI otherwise reports)."""
    exe = shutil.which("casdyn") or shutil.which("casdyn", path=str(
        __import__("pathlib").Path(sys.executable).parent))
    demo = subprocess.Popen([exe, "demo"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    demo.stdout.readline()
    demo.stdout.close()
    _, errors = demo.communicate(timeout=120)
    assert demo.returncode == 0 and b"error" not in errors, errors


@pytest.mark.parametrize("target", ["existing file", "below a file", "/proc/casdyn-out"])
def test_export_to_an_unusable_target_exits_2_with_one_line(tmp_path, capsys, target):
    existing = tmp_path / "taken.txt"
    existing.write_text("mine")
    out = {"existing file": existing, "below a file": existing / "out"}.get(target, target)
    assert main(["export", "ur5e", "--out", str(out), "--functions", "gravity_torque"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("casdyn: error: cannot export into") and err.count("\n") == 1
    assert existing.read_text() == "mine"


def test_an_over_long_argument_exits_2_with_one_line(capsys):
    assert main(["info", "u" * 300]) == 2
    err = capsys.readouterr().err
    assert "neither a shipped robot nor a URDF file" in err and err.count("\n") == 1
    assert len(err) < 300


def test_console_script_exit_code_for_bad_input(tmp_path):
    exe = shutil.which("casdyn") or str(__import__("pathlib").Path(sys.executable).parent /
                                        "casdyn")
    existing = tmp_path / "taken.txt"
    existing.write_text("")
    result = subprocess.run([exe, "export", "ur5e", "--out", str(existing)],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1


def test_export_options_choose_the_variant_without_fext_and_the_prefix(tmp_path, capsys):
    assert main(["export", "ur5e", "--out", str(tmp_path), "--prefix", "arm",
                 "--functions", "inverse_dynamics:fext=false", "get_transform:tool0:base",
                 "geometric_jacobian:body=tool0"]) == 0
    out = capsys.readouterr().out
    for name in ("inverse_dynamics_nofext", "get_transform_tool0_base", "geometric_jacobian_tool0"):
        assert name in out
    header = (tmp_path / "casdyn_ur5e.h").read_text()
    assert "int arm_inverse_dynamics_nofext(" in header


@pytest.mark.parametrize("spec, message", [
    ("inverse_dynamics:fext=maybe", "fext takes true or false"),
    ("get_transform:a:b:c", "too many"),
])
def test_bad_function_options_exit_2(spec, message, capsys):
    assert main(["export", "ur5e", "--out", "x", "--functions", spec]) == 2
    assert message in capsys.readouterr().err


def test_version_prints_the_version(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--version"])
    assert exit.value.code == 0
    assert capsys.readouterr().out.strip() == f"casdyn {casdyn.__version__}"


def test_contacts_on_the_command_line():
    key, name, options = function_spec.parse(
        "feet=contact_dynamics:contacts=FL_FOOT,FR_FOOT/6d@0,0,-0.01,HL_FOOT@1,2,3,HR/FOOT")
    assert (key, name) == ("feet", "contact_dynamics")
    assert options == {"contacts": (
        casdyn.Contact("FL_FOOT"), casdyn.Contact("FR_FOOT", "6d", (0, 0, -0.01)),
        casdyn.Contact("HL_FOOT", "point", (1, 2, 3)), casdyn.Contact("HR/FOOT"))}
    assert function_spec.parse("geometric_jacobian:tool0:point=0,0,0.1:reference_frame=local")\
        == (None, "geometric_jacobian", {"body": "tool0", "point": (0.0, 0.0, 0.1),
                                         "reference_frame": "local"})


def test_export_writes_contact_dynamics(tmp_path, capsys):
    assert main(["export", "ur5e", "--out", str(tmp_path), "--functions",
                 "contact_dynamics:contacts=tool0/6d@0,0,0.1",
                 "wrist=contact_dynamics:contacts=wrist_3_link"]) == 0
    assert "compiled and loaded 2 functions of ur5e" in capsys.readouterr().out
    header = (tmp_path / "casdyn_ur5e.h").read_text()
    assert "int ur5e_contact_dynamics(" in header and "int ur5e_wrist(" in header
    library = str(tmp_path / "libcasdyn_ur5e.so")
    robot = casdyn.load_robot("ur5e")
    q, qd, tau = robot.random_configuration(5), np.full(6, 0.2), np.full(6, 1.5)
    fext = np.zeros((robot.n_bodies, 6))
    for symbol, contact in [("ur5e_contact_dynamics", casdyn.Contact("tool0", "6d", (0, 0, 0.1))),
                            ("ur5e_wrist", casdyn.Contact("wrist_3_link"))]:
        out = ca.external(symbol, library)(q=q, qd=qd, tau=tau, fext=fext, damping=0.0)
        qdd, forces = robot.contact_dynamics(q, qd, tau, [contact])
        assert_close(out["qdd"].full().ravel(), qdd)
        assert_close(out["forces"].full(), forces)


def test_export_shows_progress_unless_quiet(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setenv(progress.ENVIRONMENT, "1")
    command = ["export", "planar_2link", "--out", str(tmp_path), "--no-compile",
               "--functions", "mass_matrix"]
    assert main([*command, "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    monkeypatch.delenv(progress.ENVIRONMENT)
    assert main([*command, "--progress"]) == 0
    assert "casdyn: planar_2link: [1/1] mass_matrix" in capsys.readouterr().err
