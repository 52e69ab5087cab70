"""The casdyn command: info, export, demo; bad input exits non-zero with one line."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

import casdyn
from casdyn.cli import main


def test_info_lists_joints_limits_bodies_and_mass(capsys):
    assert main(["info", "scara"]) == 0
    out = capsys.readouterr().out
    assert "scara: 4 joints, 6 bodies" in out and "12.3 kg" in out
    assert "quill                        prismatic" in out and "tool0" in out


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
