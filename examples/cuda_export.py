"""Export the UR5e's inverse dynamics as CUDA C and run it from a CUDA program of your own.

``robot.export_cuda`` writes ``ur5e.cu`` and ``ur5e.h``: nothing but the CUDA compiler is
needed to build them. This script exports them into DIR, and where ``nvcc`` is on the PATH
builds ``examples/cuda/main.cu`` against them, runs it on 1e6 samples and checks its first
sample against casdyn's CPU result.

Run:  python examples/cuda_export.py [DIR]   (default: examples_output/cuda)
"""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

import casdyn

HERE = Path(__file__).resolve().parent


def main(out: str = "examples_output/cuda") -> None:
    folder = Path(out)
    robot = casdyn.load_robot("ur5e")
    robot.export_cuda(folder, ["inverse_dynamics"])
    print(f"wrote {folder / 'ur5e.cu'} and {folder / 'ur5e.h'}")
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        print("nvcc is not on the PATH: build them with\n"
              f"  nvcc -O3 -std=c++17 -I {folder} -o ur5e_id {HERE / 'cuda' / 'main.cu'} "
              f"{folder / 'ur5e.cu'}")
        return
    program = folder / "ur5e_id"
    subprocess.run([nvcc, "-O3", "-std=c++17", "-I", str(folder), "-o", str(program),
                    str(HERE / "cuda" / "main.cu"), str(folder / "ur5e.cu")], check=True)
    run = subprocess.run([str(program), "1000000"], capture_output=True, text=True)
    if run.returncode != 0:
        if "driver" in run.stderr or "no CUDA-capable device" in run.stderr:
            print(f"built {program}; it cannot run here: {run.stderr.strip()}")
            return
        raise SystemExit(f"{program} failed: {run.stderr.strip()}")
    print(run.stdout, end="")
    tau_gpu = np.array([float(v) for v in run.stdout.split("=")[1].split("\n")[0].split()])
    # sample 0 as main.cu builds it
    q = 0.1 * np.arange(1, 7)
    tau_cpu = robot.inverse_dynamics(q, np.full(6, 0.2), np.full(6, -0.3))
    error = np.max(np.abs(tau_gpu - tau_cpu)) / max(1.0, np.max(np.abs(tau_cpu)))
    if error > 1e-12:
        raise SystemExit(f"the GPU's torques differ from the CPU's by {error:.2e}")
    print(f"sample 0 agrees with casdyn's CPU result (relative error {error:.1e})")


if __name__ == "__main__":
    main(*sys.argv[1:2])
