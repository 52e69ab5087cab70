"""Every example runs, prints what it found, and writes its plot."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import casdyn

pytestmark = pytest.mark.slow  # the examples run end to end

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run(name: str, *args: str, env: dict | None = None) -> str:
    result = subprocess.run([sys.executable, str(EXAMPLES / name), *args],
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _vector(out: str, label: str) -> np.ndarray:
    """The numbers printed in brackets after ``label``."""
    return np.array(re.search(re.escape(label) + r"\s*\[([^\]]*)\]", out).group(1).split(),
                    float)


def test_quickstart():
    """Its numbers, against Pinocchio: the holding torques without and with the 2 kg payload
    (their difference is the payload's weight through the tool's Jacobian), the round trip,
    and the pose the optimiser found (the tool at its target)."""
    from pinocchio_reference import Reference

    out = run("quickstart.py")
    robot = casdyn.load_robot("ur5e")
    reference = Reference(casdyn.robot_urdf("ur5e"), robot.joint_names, robot.body_names)
    q = np.array([0.0, -1.2, 1.4, -1.6, -1.57, 0.3])
    zero = np.zeros(6)
    gravity = reference.inverse_dynamics(q, zero, zero, np.zeros((robot.n_bodies, 6)))
    tool = robot.body_names.index("tool0")
    weight = np.array([0.0, 0.0, 0.0, 0.0, 0.0, -2 * 9.81])  # [n; f], base axes, at tool0
    holding = gravity - reference.jacobian(q, tool).T @ weight
    assert np.allclose(_vector(out, "no payload  [N m]:"), gravity, atol=1e-4)
    assert np.allclose(_vector(out, "2 kg payload [N m]:"), holding, atol=1e-4)
    assert float(re.search(r"round trip \|ID\(FD\(tau\)\) - tau\| = (\S+)", out).group(1)) < 1e-9
    best = _vector(out, "with least torque:")
    tool_position = reference.body_transform(best, tool)[:3, 3]
    assert np.allclose(tool_position, [0.4, 0.2, 0.3], atol=1e-3)  # printed to 4 decimals


def test_external_forces_shares_equal_jacobian_transpose():
    out = run("external_forces.py")
    share = re.search(r"payload's share, tau - g\s+= \[(.*)\]", out).group(1)
    jt = re.search(r"equals -J\^T \[0; m g\] \(J of tool0\)\s+= \[(.*)\]", out).group(1)
    # printed at 3 decimals: equal numbers may differ in the sign of a printed zero
    assert np.allclose(np.array(share.split(), float), np.array(jt.split(), float), atol=2e-3)


def test_trajectory_optimization_converges_and_plots(tmp_path):
    out = run("trajectory_optimization.py", "--quick", "--plot-dir", str(tmp_path))
    assert "Solve_Succeeded" in out
    defect = float(re.search(r"finer integration: (\S+) rad", out).group(1))
    assert defect < 1e-2
    for quantity in ("tau", "qd"):  # within the data sheet's limits (printed rounded)
        peak, limit = re.search(rf"peak \|{quantity}\|\s+per joint \[[^]]*\]: \[(.*?)\] "
                                r"limits \[(.*?)\]", out, re.DOTALL).groups()
        assert np.all(np.array(peak.split(), float) <= np.array(limit.split(), float) + 0.01)
    assert (tmp_path / "trajectory_optimization.png").stat().st_size > 10_000


def test_mpc_tracks_and_plots(tmp_path):
    """The real-time iteration: every QP solved, tracking within limits (times not checked)."""
    out = run("mpc.py", "--quick", "--plot-dir", str(tmp_path))
    assert "40 of 40 solves converged" in out
    rms = float(re.search(r"RMS (\S+) rad", out).group(1))
    assert rms < 0.03
    for quantity in ("tau", "qd"):
        peak, limit = re.search(rf"peak \|{quantity}\| per joint \[[^]]*\]: \[(.*?)\] "
                                r"limits \[(.*?)\]", out, re.DOTALL).groups()
        assert np.all(np.array(peak.split(), float) <= np.array(limit.split(), float) + 0.01)
    assert (tmp_path / "mpc.png").stat().st_size > 10_000


def test_arm_obstacle_mpc_keeps_every_distance_positive(tmp_path):
    saved = tmp_path / "arm.npz"
    out = run("arm_obstacle_mpc.py", "--quick", "--plot-dir", str(tmp_path), "--save", str(saved))
    closest = float(re.search(r"smallest signed distance in the closed loop \(every plant "
                              r"substep\): (\S+) m", out).group(1))
    assert closest > 0.0
    solved, total = map(int, re.search(r"(\d+) of (\d+) QPs solved", out).groups())
    assert solved == total
    assert (tmp_path / "arm_obstacle_mpc.png").stat().st_size > 10_000
    _assert_playable(saved, casdyn.load_robot("kuka_iiwa14"), forces=False)


def test_mpc_with_ipopt_for_comparison():
    out = run("mpc.py", "--quick", "--solver", "ipopt")
    assert "Ipopt to convergence" in out and "40 of 40 solves converged" in out
    assert float(re.search(r"RMS (\S+) rad", out).group(1)) < 0.03


@pytest.mark.parametrize("into_directory", [False, True])
def test_codegen_matches_sx_and_cleans_up(tmp_path, into_directory):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    out_dir = tmp_path / "out"
    env = {**os.environ, "TMPDIR": str(scratch)}
    out = run("codegen.py", "--quick", *(["--out", str(out_dir)] if into_directory else []),
              env=env)
    diffs = [float(d) for d in re.findall(r"(\d\.\de[+-]\d+)\s*$", out, re.MULTILINE)]
    assert len(diffs) == 3 and max(diffs) < 1e-12
    assert list(scratch.iterdir()) == []  # its temporary directory is gone
    assert (out_dir / "libcasdyn_ur5e.so").is_file() == into_directory


def test_quadruped_standing_carries_the_weight_and_stays_still(tmp_path):
    out = run("quadruped_standing.py", "--plot-dir", str(tmp_path))
    assert "Solve_Succeeded" in out
    vertical, weight = map(float, re.search(
        r"sum of vertical forces (\S+) N = weight (\S+) N", out).groups())
    assert abs(vertical - weight) < 1e-6 * weight
    ratios = [float(r) for r in re.findall(r"\|f_t\| / fz = (\S+) \(mu 0.7\)", out)]
    assert len(ratios) == 4 and max(ratios) <= 0.7 + 1e-6
    qdd, differ = map(float, re.search(
        r"\|qdd\| = (\S+), forces differ by (\S+) N", out).groups())
    assert qdd < 1e-8 and differ < 1e-8
    assert (tmp_path / "quadruped_standing.png").stat().st_size > 10_000


def test_quadruped_jump_flies_lands_and_plots(tmp_path):
    saved = tmp_path / "jump.npz"
    out = run("quadruped_jump.py", "--quick", "--plot-dir", str(tmp_path), "--save", str(saved))
    assert "Solve_Succeeded" in out
    start, end, standing, apex = map(float, re.search(
        r"base: x (\S+) -> (\S+) m, height (\S+) m standing, (\S+) m at the apex", out).groups())
    assert abs(end - start - 0.2) < 1e-6 and apex > standing + 0.05
    friction = float(re.search(r"max \|f_t\|/fz = (\S+)", out).group(1))
    assert friction <= 0.7 / np.sqrt(2) + 1e-6
    drift = float(re.search(r"largest foot height while held: (\S+) mm", out).group(1))
    assert drift < 10.0  # the midpoint rule's error at 50 ms steps
    assert (tmp_path / "quadruped_jump.png").stat().st_size > 10_000
    _assert_playable(saved, casdyn.load_robot("solo12", floating_base=True), forces=True)


def test_identification_finds_the_parameters_within_the_noise(tmp_path):
    out = run("identification.py", "--quick", "--plot-dir", str(tmp_path))
    noise, true_noise = map(float, re.search(
        r"noise estimated (\S+) N m \(true (\S+)\)", out).groups())
    assert abs(noise - true_noise) < 0.1 * true_noise
    within, total = map(int, re.search(r"within (\d+) of (\d+) at 3 std", out).groups())
    assert within >= total - 1  # 3 std: 99.7 % of them
    fit = float(re.search(r"consistent fit .*?max (\S+);", out).group(1))
    assert fit < 5.0
    for name in ("least squares", "consistent"):
        rms = re.search(rf"RMS error, {name}\s*: \[(.*)\] N m", out).group(1)
        assert max(map(float, rms.split())) < 1.2 * true_noise  # the noise, nothing more
    assert (tmp_path / "identification.png").stat().st_size > 10_000


def test_dataset_runs_on_a_local_cluster_and_writes_what_it_says(tmp_path):
    import casdyn

    out = run("dataset.py", "--quick", "--workers", "1", "2", "--out", str(tmp_path))
    rates = {int(w): float(r.replace(",", "")) for w, r in re.findall(
        r"^(\d) workers?: ([\d,]+) states/s", out, re.MULTILINE)}
    assert set(rates) == {1, 2} and min(rates.values()) > 0
    files = sorted(tmp_path.glob("chunk_*.npz"))
    assert len(files) == 4  # 20,000 states in chunks of 5,000
    robot = casdyn.load_robot("ur5e")
    with np.load(files[-1]) as chunk:
        q, qd, x = chunk["q"][:5], chunk["qd"][:5], chunk["x"][:5]
        assert chunk["q"].shape == (5000, 6)
        np.testing.assert_allclose(chunk["tau"][:5], robot.inverse_dynamics(q, qd, x),
                                   atol=1e-9)
        np.testing.assert_allclose(chunk["qdd"][:5], robot.forward_dynamics(q, qd, x),
                                   atol=1e-9)
        np.testing.assert_allclose(chunk["dqdd_dtau"][0], np.linalg.inv(robot.mass_matrix(q[0])),
                                   rtol=1e-9, atol=1e-9)


def _assert_playable(path, robot, forces: bool) -> None:
    """A saved run reads as the viewer's trajectory of ``robot`` (what ``casdyn show
    --trajectory`` plays): increasing times, configurations of the robot, and, for the legged
    examples, forces on named feet whose vertical parts hold the robot up on average."""
    from casdyn.viewer.trajectory import load, trajectory

    data = load(path)
    shaped = trajectory(data["t"], data["q"], robot.nq, (robot.base_name, *robot.body_names),
                        data.get("forces"), data.get("contacts"))
    assert len(shaped.t) > 2 and np.all(np.diff(shaped.t) > 0)
    assert (shaped.forces is not None) == forces
    if forces:
        weight = robot.mass * -robot.gravity[2]
        held = shaped.forces[:, :, 2].sum(axis=1)
        assert np.all(held >= -1e-6) and held.max() > weight


def test_gpu_dataset_falls_back_to_the_cpu_and_saves_true_labels(tmp_path):
    out = run("gpu_dataset.py", "--cpu", "--states", "30000", "--out", str(tmp_path))
    assert "30,000 states on the CPU" in out
    worst = float(re.search(r"gives back qdd within ([\d.e+-]+)", out).group(1))
    assert worst < 1e-9  # forward dynamics undoes inverse dynamics
    robot = casdyn.load_robot("ur5e")
    with np.load(tmp_path / "gpu_dataset.npz") as data:
        assert data["q"].shape == (10_000, 6)
        q, qd, qdd = data["q"][:4], data["qd"][:4], data["qdd"][:4]
        np.testing.assert_allclose(data["tau"][:4], robot.inverse_dynamics(q, qd, qdd),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(data["M"][0], robot.mass_matrix(q[0]), rtol=1e-12,
                                   atol=1e-12)
        low, high = robot.position_limits
        assert np.all((data["q"] >= low) & (data["q"] <= high))


def test_cuda_export_writes_a_program_s_kernels(tmp_path):
    out = run("cuda_export.py", str(tmp_path))
    assert (tmp_path / "ur5e.cu").is_file()
    header = (tmp_path / "ur5e.h").read_text()
    assert "ur5e_inverse_dynamics_f64_launch" in header
    # without nvcc it says how to build; with nvcc and no GPU, that it built and cannot run;
    # with both, that the GPU's torques agree with the CPU's (tests/test_gpu.py)
    assert ("nvcc -O3" in out or "cannot run here" in out or
            "agrees with casdyn's CPU result" in out)
