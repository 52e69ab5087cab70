"""MuJoCo Warp (MuJoCo written in NVIDIA Warp, float32) as a peer of benchmarks/gpu.py.

MuJoCo Warp batches by itself: one ``Data`` holds ``nworld`` worlds, and each call runs its
kernels over all of them. For a batch of N states this times, per sample, the call that gives
what casdyn's Function gives: ``inverse`` (ID: ``qfrc_inverse`` from ``qpos, qvel, qacc``),
``forward`` (FD: ``qacc`` from ``qpos, qvel, qfrc_applied``, constraints, contacts, springs and
dampers disabled in the model) and ``kinematics``, ``com_pos``, ``crb`` (M: ``qM``). On a GPU the
call is captured once as a CUDA graph and the graph is replayed (MuJoCo Warp's own
benchmarks time it so: Python's launches of its many small kernels are then not timed);
Warp's CPU device, where there is no GPU, runs the call itself.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

LABEL = "MuJoCo Warp f32"


def _steps(mjw, model, data) -> dict:
    """The call of each function on ``data``'s worlds."""

    def mass() -> None:
        for step in (mjw.kinematics, mjw.com_pos, mjw.crb):
            step(model, data)

    return {"ID": lambda: mjw.inverse(model, data), "FD": lambda: mjw.forward(model, data),
            "M": mass}


def _replay(wp, call):
    """``call`` as a replay of its CUDA graph where the device is a GPU, else itself."""
    if not wp.get_device().is_cuda:
        return call
    with wp.ScopedCapture() as capture:
        call()
    return lambda: wp.capture_launch(capture.graph)


def time_warp(put, robot: str, mj_model, functions: list[str], sizes: list[int],
              host: list[np.ndarray], repeats: int = 5) -> None:
    """Time MuJoCo Warp's ID, FD and M of ``mj_model`` (a compiled ``mujoco.MjModel``) for
    each N of ``sizes``; ``host``: (q, v, x) batches in MuJoCo's coordinates. Results are
    ``put`` as benchmarks/gpu.py's peers put theirs: ("compiled", (robot, fn), LABEL, s) for
    the first call (Warp's kernel compiles), ("cells", (robot, fn, N), LABEL, s per sample)."""
    import mujoco_warp as mjw
    import warp as wp

    wp.config.quiet = True
    wp.init()
    model = mjw.put_model(mj_model)
    for key in (k for k in functions if k in ("ID", "FD", "M")):
        for n in sizes:
            data = mjw.make_data(mj_model, nworld=n, nconmax=0, njmax=0)
            q, v, x = (np.ascontiguousarray(a[:n], dtype=np.float32) for a in host)
            data.qpos.assign(q)
            data.qvel.assign(v)
            (data.qacc if key == "ID" else data.qfrc_applied).assign(x)
            call = _steps(mjw, model, data)[key]
            started = time.perf_counter()
            call()  # Warp compiles the kernels this needs (cached on disk afterwards)
            wp.synchronize()
            if n == sizes[0]:
                put(("compiled", (robot, key), LABEL, time.perf_counter() - started))
            run = _replay(wp, call)
            run()
            wp.synchronize()
            times = []
            for _ in range(repeats):
                started = time.perf_counter()
                run()
                wp.synchronize()
                times.append(time.perf_counter() - started)
            put(("cells", (robot, key, n), LABEL, statistics.median(times) / n))
            del data
