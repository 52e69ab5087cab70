"""Progress of export_c and compile() on stderr: shown when forced, silent when quiet or when
stderr is no terminal, counted right when steps run in threads."""

from __future__ import annotations

import io
import threading

import pytest

import casdyn
from casdyn import InputError, progress


@pytest.fixture
def at_once(monkeypatch):
    """Progress printed from the first moment (no delay), $CASDYN_PROGRESS unset."""
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.delenv(progress.ENVIRONMENT, raising=False)


def test_export_reports_progress_when_asked(at_once, tmp_path, capsys):
    robot = casdyn.load_robot("planar_2link")
    robot.export_c(tmp_path / "forced", ["mass_matrix", "gravity_torque"], progress=True)
    lines = capsys.readouterr().err.splitlines()
    assert lines[:3] == ["casdyn: planar_2link: building 2 functions",
                         "casdyn: planar_2link: [1/2] mass_matrix (0.0 s)",
                         "casdyn: planar_2link: [2/2] gravity_torque (0.0 s)"]
    assert "casdyn: planar_2link: compiling 1 C file" in lines
    assert any(line.startswith("casdyn: planar_2link: [1/1] casdyn_planar_2link.c (")
               for line in lines)
    assert lines[-1].startswith("casdyn: planar_2link: done in ")
    # the default on a stream that is no terminal, and progress=False: nothing
    robot.export_c(tmp_path / "default", ["mass_matrix"])
    robot.export_c(tmp_path / "quiet", ["mass_matrix"], progress=False)
    assert capsys.readouterr().err == ""


def test_compile_reports_progress_when_asked(at_once, tmp_path, capsys, monkeypatch):
    robot = casdyn.load_robot("planar_2link")
    robot.compile(["gravity_torque"], directory=tmp_path, progress=False)
    assert capsys.readouterr().err == ""
    monkeypatch.setenv(progress.ENVIRONMENT, "1")
    robot.compile(["mass_matrix"], directory=tmp_path)
    err = capsys.readouterr().err
    # the function's C and its batched C
    assert "casdyn: planar_2link: [1/1] mass_matrix" in err and "compiling 2 C files" in err
    robot.compile(["mass_matrix"], directory=tmp_path, progress=False)  # the argument wins
    assert capsys.readouterr().err == ""


def test_nothing_is_printed_for_quick_work():
    stream = io.StringIO()
    with progress.Progress("r", shown=True, stream=stream, delay=60) as report:
        report.phase("building 1 function", 1)
        with report.step("mass_matrix"):
            pass
    assert stream.getvalue() == ""


def test_steps_in_threads_are_counted_once_each():
    stream = io.StringIO()
    with progress.Progress("r", shown=True, stream=stream, delay=0) as report:
        report.phase("compiling 40 C files", 40)

        def work(k: int) -> None:
            with report.step(f"part{k}.c"):
                pass

        threads = [threading.Thread(target=work, args=(k,)) for k in range(40)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    lines = stream.getvalue().splitlines()
    counts = sorted(int(line.split("[")[1].split("/")[0]) for line in lines if "[" in line)
    assert counts == list(range(1, 41))
    assert sorted(line.split("] ")[1].split(" (")[0] for line in lines if "[" in line) == \
        sorted(f"part{k}.c" for k in range(40))


def test_progress_must_be_true_false_or_none(tmp_path):
    with pytest.raises(InputError, match="progress must be True, False or None"):
        casdyn.load_robot("planar_2link").export_c(tmp_path, ["mass_matrix"], progress="yes")
