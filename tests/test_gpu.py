"""The CUDA kernels on a GPU: results against casdyn's CPU numbers on the benchmark robots,
every kind of array in and out, float32, the exported source built by nvcc. Marked gpu:
deselected unless ``pytest --gpu`` (an NVIDIA GPU with CuPy and NVRTC; CI has none, and
tests/test_cuda_source.py checks the same source there, compiled as C++)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_close

import casdyn

pytestmark = pytest.mark.gpu

# the variants the calls below use (fext=None takes the variant without fext)
FUNCTIONS = [("inverse_dynamics", {"fext": False}), ("forward_dynamics", {"fext": True}),
             "mass_matrix", ("inverse_dynamics_derivatives", {"fext": False}),
             ("forward_dynamics_derivatives", {"fext": False})]


def _talos_urdf() -> str | None:
    path = os.environ.get("CASDYN_TALOS_URDF")
    if path:
        return path
    try:
        from importlib.metadata import distribution

        root = Path(distribution("example-robot-data").locate_file(
            "cmeel.prefix/share/example-robot-data/robots"))
    except Exception:
        return None
    return str(root / "talos_data/robots/talos_reduced.urdf")


def _robot(name: str):
    if name == "ur5e":
        return casdyn.load_robot("ur5e")
    if name == "solo12":
        return casdyn.load_robot("solo12", floating_base=True)
    if name == "chain24":
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from benchmarks.models import random_chain_urdf

        return casdyn.load_urdf(random_chain_urdf(24))
    return casdyn.load_urdf(_talos_urdf(), floating_base=True)


@pytest.fixture(scope="module")
def cupy():
    import cupy

    return cupy


def _batch(robot, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    q = np.array([robot.random_configuration(rng) for _ in range(n)])
    return q, rng.normal(size=(n, robot.nv)), rng.normal(size=(n, robot.nv))


@pytest.mark.parametrize("name", ["ur5e", "solo12", "chain24", "talos"])
def test_kernels_agree_with_the_cpu(name, cupy):
    robot = _robot(name)
    reference = _robot(name)
    robot.compile(FUNCTIONS, device="cuda")
    q, qd, x = _batch(robot, 300 if name != "talos" else 64)
    fext = np.random.default_rng(1).normal(size=(len(q), robot.n_bodies, 6))
    Q, QD, X, F = map(cupy.asarray, (q, qd, x, fext))
    cases = {
        "inverse_dynamics": ((Q, QD, X), (q, qd, x)),
        "forward_dynamics": ((Q, QD, X, F), (q, qd, x, fext)),
        "mass_matrix": ((Q,), (q,)),
        "inverse_dynamics_derivatives": ((Q, QD, X), (q, qd, x)),
        "forward_dynamics_derivatives": ((Q, QD, X), (q, qd, x)),
    }
    for function, (on_gpu, on_cpu) in cases.items():
        got = getattr(robot, function)(*on_gpu)
        want = getattr(reference, function)(*on_cpu)
        got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
        for g, w in zip(got, want, strict=True):
            assert isinstance(g, cupy.ndarray) and g.shape == w.shape, function
            for k in range(len(q)):  # relative to each sample's size
                assert_close(cupy.asnumpy(g[k]), w[k])


def test_second_order_kernels_agree_with_the_cpu(cupy):
    """The UR5e's (solo12's inverse-dynamics tensors are emulated on the CPU in
    tests/test_cuda_source.py: their 47,199 instructions take NVRTC about a minute on an
    H100, docs/gpu.md)."""
    functions = ["inverse_dynamics_second_derivatives", "forward_dynamics_second_derivatives"]
    robot = _robot("ur5e")
    reference = _robot("ur5e")
    robot.compile(functions, device="cuda")
    q, qd, x = _batch(robot, 100)
    for function in functions:
        got = getattr(robot, function)(*map(cupy.asarray, (q, qd, x)))
        want = getattr(reference, function)(q, qd, x)
        assert len(got) == len(want) == 4, function
        for g, w in zip(got, want, strict=True):  # (samples, nv, nv, nv) tensors
            assert isinstance(g, cupy.ndarray) and g.shape == w.shape, function
            for k in range(len(q)):
                assert_close(cupy.asnumpy(g[k]), w[k])


def test_arrays_of_every_kind_in_and_out(cupy):
    robot = casdyn.load_robot("ur5e").compile(["inverse_dynamics"], device="cuda")
    q, qd, qdd = _batch(robot, 1000)
    want = casdyn.load_robot("ur5e").inverse_dynamics(q, qd, qdd)
    got = robot.inverse_dynamics(q, qd, qdd)  # NumPy: copied over and back
    assert isinstance(got, np.ndarray)
    assert_close(got, want)
    shared = robot.inverse_dynamics(cupy.asarray(q), qd[0], cupy.asarray(qdd))
    assert_close(cupy.asnumpy(shared), casdyn.load_robot("ur5e").inverse_dynamics(
        q, np.tile(qd[0], (len(q), 1)), qdd))
    single = robot.inverse_dynamics(*(cupy.asarray(a, dtype=cupy.float32)
                                      for a in (q, qd, qdd)))
    assert single.dtype == cupy.float32
    assert_close(cupy.asnumpy(single), want, rtol=1e-4)
    torch = pytest.importorskip("torch")
    tensors = [torch.as_tensor(a, device="cuda") for a in (q, qd, qdd)]
    out = robot.inverse_dynamics(*tensors)
    assert isinstance(out, torch.Tensor) and out.is_cuda
    assert_close(out.cpu().numpy(), want)
    jax = pytest.importorskip("jax")
    if any(d.platform == "gpu" for d in jax.devices()):
        jax.config.update("jax_enable_x64", True)
        arrays = [jax.device_put(a, jax.devices("gpu")[0]) for a in (q, qd, qdd)]
        out = robot.inverse_dynamics(*arrays)
        assert type(out).__module__.startswith("jax")
        assert_close(np.asarray(out), want)


def test_a_single_sample_stays_on_the_cpu(cupy):
    robot = casdyn.load_robot("ur5e").compile(["inverse_dynamics"], device="cuda")
    tau = robot.inverse_dynamics(np.zeros(6), np.zeros(6), np.zeros(6))
    assert isinstance(tau, np.ndarray)
    with pytest.raises(casdyn.InputError, match="leading dimension"):
        robot.inverse_dynamics(cupy.zeros(6), cupy.zeros(6), cupy.zeros(6))
    with pytest.raises(casdyn.InputError, match="qd must be 6"):
        robot.inverse_dynamics(cupy.zeros((4, 6)), cupy.zeros((4, 5)), cupy.zeros((4, 6)))


def test_the_exported_source_builds_with_nvcc_and_runs(tmp_path):
    assert shutil.which("nvcc"), "the GPU tier needs CUDA's nvcc on the PATH"
    example = Path(__file__).resolve().parents[1] / "examples" / "cuda_export.py"
    run = subprocess.run([sys.executable, str(example), str(tmp_path)], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "agrees with casdyn's CPU result" in run.stdout
