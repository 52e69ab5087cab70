"""Label 1e8 random states of the UR5e on a GPU: torques, accelerations and derivatives.

A learned dynamics model, a sampling-based MPC or an identification on large logs needs the
dynamics on many states. Here every state (uniform within the joint limits, normal rates and
accelerations) gets its inverse dynamics ``tau``, the forward dynamics of that ``tau`` (which
must give back the acceleration: the check printed) and the inverse-dynamics derivatives, in
chunks of :data:`CHUNK` samples that never leave the GPU. The first :data:`SAVED` states are
saved to ``examples_output/gpu_dataset.npz``; all are reduced to the round-trip error, as a
program that trains on them would consume them instead. Without a GPU (or without CuPy) the
same program runs on the CPU, in the compiled SIMD batches, on fewer states. On an H100 the
1e8 states take about a second.

Needs ``pip install "casdyn[gpu]"`` for the GPU. Run:
    python examples/gpu_dataset.py [--states 100000000] [--out DIR] [--cpu]
"""

import argparse
import time
from pathlib import Path

import numpy as np

import casdyn

CHUNK = 1_000_000
SAVED = 10_000  # states of the first chunk saved, with every label
CPU_STATES = 200_000  # the CPU's default: the same work, 500 times fewer states
FUNCTIONS = ["inverse_dynamics", "forward_dynamics", "inverse_dynamics_derivatives"]


def _gpu():
    """CuPy where a GPU is usable, else None (the reason printed)."""
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
        return cupy
    except Exception as exc:  # no CuPy, no driver, no device
        print(f"no usable GPU ({type(exc).__name__}: {exc}); running on the CPU")
        return None


def main(states: int | None = None, out: str = "examples_output", cpu: bool = False) -> dict:
    robot = casdyn.load_robot("ur5e")
    xp = None if cpu else _gpu()
    device = "cuda" if xp is not None else "cpu"
    xp = xp or np
    states = states or (100_000_000 if device == "cuda" else CPU_STATES)
    started = time.perf_counter()
    robot.compile([(name, {"fext": False}) for name in FUNCTIONS], device=device)
    print(f"compiled {len(FUNCTIONS)} functions for the {device.upper()} in "
          f"{time.perf_counter() - started:.1f} s")
    low, high = (xp.asarray(bound) for bound in robot.position_limits)
    worst = 0.0
    started = time.perf_counter()
    for start in range(0, states, CHUNK):
        n = min(CHUNK, states - start)
        rng = xp.random.default_rng(start)
        q = low + (high - low) * rng.random((n, robot.nq))
        qd, qdd = rng.standard_normal((n, robot.nv)), rng.standard_normal((n, robot.nv))
        tau = robot.inverse_dynamics(q, qd, qdd)
        back = robot.forward_dynamics(q, qd, tau)
        dtau_dq, dtau_dqd, mass = robot.inverse_dynamics_derivatives(q, qd, qdd)
        worst = max(worst, float(xp.max(xp.abs(back - qdd))))
        if start == 0:
            host = np.asarray if xp is np else xp.asnumpy
            path = Path(out) / "gpu_dataset.npz"
            path.parent.mkdir(parents=True, exist_ok=True)
            np.savez(path, **{key: host(value[:SAVED]) for key, value in (
                ("q", q), ("qd", qd), ("qdd", qdd), ("tau", tau), ("dtau_dq", dtau_dq),
                ("dtau_dqd", dtau_dqd), ("M", mass))})
        if xp is not np:
            xp.cuda.Device().synchronize()
        done = start + n
        elapsed = time.perf_counter() - started
        print(f"\r{done:,} of {states:,} states labelled, {elapsed:.1f} s", end="", flush=True)
    elapsed = time.perf_counter() - started
    print(f"\n{states:,} states on the {device.upper()} in {elapsed:.2f} s: "
          f"{states / elapsed:,.0f} states per second (ID, FD and ID derivatives each)")
    print(f"forward dynamics of the inverse dynamics' torques gives back qdd within {worst:.1e}")
    print(f"first {min(states, SAVED):,} states saved to {path}")
    return {"states": states, "seconds": elapsed, "round_trip": worst, "device": device}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=None)
    parser.add_argument("--out", default="examples_output")
    parser.add_argument("--cpu", action="store_true", help="run on the CPU even with a GPU")
    main(**vars(parser.parse_args()))
