"""casdyn's CUDA kernels against MuJoCo MJX, MuJoCo Warp and adam, on one GPU, in one run.

    python benchmarks/gpu.py [--quick] [--robots NAME ...] [--functions FN ...] [--sizes N ...]
                             [--talos PATH] [--max-seconds S] [--mjx-f64] [--no-warp]
                             [--out PATH]

Per robot (UR5e; solo12 and TALOS on a floating base; a random 24-link chain), function (ID,
FD, M, d(ID), d(FD), no external forces) and batch size N, the time per sample of: casdyn's
kernels alone (CUDA events around ``GpuFunction.launch`` on arrays already on the GPU, float64
and float32); its public call on CuPy arrays and on NumPy arrays (copies both ways); MJX
(float32; float64 with --mjx-f64) and adam (float64) as ``jax.jit(jax.vmap(f))``; MuJoCo
Warp (float32) on its own batch of worlds (benchmarks/gpu_warp.py); casdyn's C on one CPU
thread at the smallest N. Medians after a warm-up; the GPU's results are first compared with
CasADi's on the CPU. Laid out for a time budget (--max-seconds): worker processes compile
every kernel (NVRTC, a fresh cache) and casdyn's C while a child process times the peers
for at most --peer-share of the budget (a full run of the peers: ``--max-seconds 900
--peer-share 0.7``); then casdyn runs alone on the GPU. What is not measured (no GPU, a peer
missing, the budget spent, ...) is "—" with the reason in a footnote.
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing as mp
import os
import queue
import shutil
import statistics
import sys
import tempfile
import time
import warnings
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_warp
import models
import peers
import results_file
from run import table

import casdyn

# JAX would take 75 % of the GPU's memory as it starts; CuPy needs its share
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

HERE = Path(__file__).resolve().parent
FUNCTIONS = {"ID": ("inverse_dynamics", {"fext": False}),
             "FD": ("forward_dynamics", {"fext": False}), "M": ("mass_matrix", {}),
             "dID": ("inverse_dynamics_derivatives", {"fext": False}),
             "dFD": ("forward_dynamics_derivatives", {"fext": False})}
PEER_FUNCTIONS = ("ID", "FD", "M")  # no peer has derivatives of its own
ROBOTS = ("UR5e", "solo12", "TALOS", "chain24")  # the deepest tree, MJX's longest compile, last
SIZES = (10_000, 100_000, 1_000_000)
PRECISIONS = {"float64": "f64", "float32": "f32"}
REPEATS = 5
# a casdyn batch's inputs and outputs at most (the public call holds its outputs twice, in
# both layouts): TALOS's derivatives stop at N = 1e5
GPU_BYTES = 16e9
ROUND_TRIP_BYTES = 4e9  # the NumPy round trip is timed up to this much data
CHECKED, TOLERANCE = 100, 1e-9  # samples compared with the CPU; float64's largest error
COLUMNS = {"f64": "casdyn f64 kernel [ns]", "f32": "casdyn f32 kernel [ns]",
           "rate": "casdyn f64 [samples/s]", "cupy": "casdyn call, CuPy f64 [ns]",
           "numpy": "casdyn call, NumPy f64 [ns]", "MJX f32": "MJX f32 [ns]",
           "MJX f64": "MJX f64 [ns]", gpu_warp.LABEL: "MuJoCo Warp f32 [ns]",
           "adam f64": "adam f64 [ns]", "mjx/casdyn": "MJX f32 / casdyn f32",
           "warp/casdyn": "MuJoCo Warp f32 / casdyn f32", "adam/casdyn": "adam / casdyn f64",
           "cpu": "casdyn C, 1 CPU thread, f64 [ns]"}
LATE = "not reached within --max-seconds"


class Results:
    """``cells[(robot, fn, N)][column]``: seconds per sample; ``compiled[(robot, fn)]``;
    ``reasons[(column, robot, fn, N)]`` (or a prefix: a whole function, robot or column)."""

    def __init__(self):
        self.cells, self.compiled, self.reasons, self.cpu_compile = {}, {}, {}, {}
        self.failures, self.jax_device = [], "(JAX did not start)"

    def cell(self, robot: str, key: str, n: int) -> dict:
        return self.cells.setdefault((robot, key, n), {})

    def why(self, column: str, *where) -> str | None:
        keys = [(column, *where[:i]) for i in range(len(where), -1, -1)]
        return next((self.reasons[k] for k in keys if k in self.reasons), None)


def median_seconds(call, finish=lambda _: None, repeats: int = REPEATS) -> float:
    """Median wall time of ``finish(call())`` over ``repeats`` runs, after one warm-up."""
    finish(call())
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        finish(call())
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def kernel_seconds(cupy, launch) -> float:
    """Median GPU time of ``launch()`` between two CUDA events, after one warm-up. A kernel
    spinning for about 5 ms first keeps the GPU busy while Python queues the launches, so
    that the events time the kernels, not the host's queuing (small N, many stages)."""
    launch()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(REPEATS):
        if (spin := _spin(cupy)) is not None:
            spin((1,), (1,), (np.int64(10_000_000),))  # clock cycles
        start.record()
        launch()
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
    return statistics.median(times)


@functools.cache
def _spin(cupy):
    try:
        kernel = cupy.RawKernel('extern "C" __global__ void spin(long long cycles) { long long '
                                "t = clock64(); while (clock64() - t < cycles) {} }", "spin")
        kernel((1,), (1,), (np.int64(1),))  # compiled now
        return kernel
    except Exception:  # CuPy cannot compile its own kernels: time without the spin
        return None


def short(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:160] if lines else ''}"


def robot_urdfs(names, talos: str | None) -> tuple[dict[str, tuple[str, bool]], list[str]]:
    """(name -> (URDF text, floating base), why the others are left out)."""
    found, missing = {}, []
    for name in (n for n in ROBOTS if n in names):  # in ROBOTS' order
        try:
            found[name] = (Path(talos or metadata.distribution("example-robot-data").locate_file(
                "cmeel.prefix/share/example-robot-data/robots/talos_data/robots/"
                "talos_reduced.urdf")).read_text(), True) if name == "TALOS" else {
                "UR5e": (casdyn.robot_urdf("ur5e"), False),
                "solo12": (casdyn.robot_urdf("solo12"), True),
                "chain24": (models.random_chain_urdf(24), False)}[name]
        except (metadata.PackageNotFoundError, OSError) as exc:
            missing.append(f"TALOS: no URDF ({short(exc)}); give --talos PATH")
    return found, missing


def load(urdf: str, floating: bool):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", casdyn.ModelWarning)
        return casdyn.load_urdf(urdf, floating_base=floating)


def random_inputs(nq: int, nv: int, floating: bool, n: int, seed: int = 0) -> list[np.ndarray]:
    """(q, v, x), ``n`` samples each: angles and positions in [-1, 1], a unit quaternion
    ``q[3:7]`` on a floating base (casdyn's and MuJoCo's free-joint layout), normal v and x."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1.0, 1.0, (n, nq))
    if floating:
        q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    return [q, rng.normal(size=(n, nv)), rng.normal(size=(n, nv))]


def bare(urdf: str) -> ET.Element:
    """The URDF without geometry (no meshes to find) and ROS's extras, for the peers."""
    tree = ET.fromstring(urdf)
    for parent in tree.iter():
        for child in [c for c in parent if c.tag in ("visual", "collision", "gazebo",
                                                     "transmission", "mujoco")]:
            parent.remove(child)
    return tree


def mujoco_model(urdf: str, floating: bool):
    """MuJoCo's compile of the URDF, for MJX and MuJoCo Warp (its own joint order): fixed
    links fused (as casdyn merges them), a free joint on the root body for a floating base
    (MuJoCo welds a URDF's root), no constraint, contact, spring or damper."""
    import mujoco

    tree = bare(urdf)
    ET.SubElement(ET.SubElement(tree, "mujoco"), "compiler", fusestatic="true",
                  discardvisual="true", balanceinertia="true")
    spec = mujoco.MjSpec.from_string(ET.tostring(tree, encoding="unicode"))
    if floating:
        spec.worldbody.first_body().add_freejoint()
    for flag in ("CONSTRAINT", "CONTACT", "SPRING", "DAMPER", "PASSIVE"):  # PASSIVE: old ones
        spec.option.disableflags |= int(getattr(mujoco.mjtDisableBit, f"mjDSBL_{flag}", 0))
    return spec.compile()


def mjx_functions(urdf: str, floating: bool, joints=None) -> dict:
    """MJX's ID, FD and M of one sample in JAX's current precision, of
    :func:`mujoco_model` (``joints`` unused)."""
    from mujoco import mjx

    model = mujoco_model(urdf, floating)
    try:
        mx, implementation = mjx.put_model(model, impl="jax"), {"impl": "jax"}
    except TypeError:  # MJX before it had several implementations
        mx, implementation = mjx.put_model(model), {}
    start = mjx.make_data(mx, **implementation)

    def mass(q):
        data = start.replace(qpos=q)
        for step in (mjx.kinematics, mjx.com_pos, mjx.crb):
            data = step(mx, data)
        return mjx.full_m(mx, data)

    return {"ID": lambda q, v, a: mjx.inverse(mx, start.replace(qpos=q, qvel=v, qacc=a))
            .qfrc_inverse, "M": mass,
            "FD": lambda q, v, t: mjx.forward(mx, start.replace(qpos=q, qvel=v,
                                                                qfrc_applied=t)).qacc}


def adam_functions(urdf: str, floating: bool, joints: list[str]) -> dict:
    """adam's ID (M a + h), FD (M \\ (tau - h)) and M of one sample, float64. adam knows only
    floating bases: a fixed base is its identity pose at rest, the joint block kept. The pose
    is casdyn's ``q[0:7]``; adam reads ``v[0:6]`` in its own representation, not casdyn's
    body twist: the same work, other numbers."""
    import jax.numpy as jnp
    from adam.jax import KinDynComputations
    from jax.scipy.spatial.transform import Rotation

    with tempfile.NamedTemporaryFile("w", suffix=".urdf", delete=False) as f:
        f.write(peers.with_inertial_origins(ET.tostring(bare(urdf), encoding="unicode")))
    try:
        kd = KinDynComputations(f.name, list(joints))
    finally:
        os.unlink(f.name)
    # adam 0.5 gives jnp.asarray its arrays' device, which vmap's tracers refuse (JAX 0.10)
    factory = getattr(getattr(kd.rbdalgos, "math", None), "factory", None)
    if hasattr(factory, "_device"):
        factory._device = None
    block = slice(0, None) if floating else slice(6, None)

    def pose(q):
        if not floating:
            return jnp.eye(4), q
        rotation = Rotation.from_quat(jnp.roll(q[3:7], -1)).as_matrix()  # [x y z w] there
        return jnp.eye(4).at[:3, :3].set(rotation).at[:3, 3].set(q[:3]), q[7:]

    def mass(q):
        return kd.mass_matrix(*pose(q))[block, block]

    def bias(q, v):
        twist, sd = (v[:6], v[6:]) if floating else (jnp.zeros(6), v)
        return kd.bias_force(*pose(q), twist, sd)[block]

    return {"ID": lambda q, v, a: mass(q) @ a + bias(q, v),
            "FD": lambda q, v, tau: jnp.linalg.solve(mass(q), tau - bias(q, v)), "M": mass}


def time_peer(put, label: str, robot: str, key: str, function, inputs: dict) -> None:
    """Compile and time one peer's function at every N (``inputs``: N -> arguments), each
    result ``put`` as it comes. The first N's compile is timed alone, the others run at once."""
    import jax

    batched, sizes = jax.jit(jax.vmap(function)), list(inputs)
    started = time.perf_counter()
    first = batched.lower(*inputs[sizes[0]]).compile()
    put(("compiled", (robot, key), label, time.perf_counter() - started))
    with ThreadPoolExecutor(max(1, len(sizes) - 1)) as pool:
        later = [pool.submit(lambda n=n: batched.lower(*inputs[n]).compile()) for n in sizes[1:]]
    for n, compiled in zip(sizes, [first, *later], strict=True):
        try:
            run = compiled if n == sizes[0] else compiled.result()
            seconds = median_seconds(lambda run=run, n=n: run(*inputs[n]), jax.block_until_ready)
            put(("cells", (robot, key, n), label, seconds / n))
        except Exception as exc:  # out of memory at the largest N, most often
            put(("reasons", (label, robot, key, n), None, f"{label}: {short(exc)}"))


def peer_worker(messages, job: tuple, functions: list[str], sizes: list[int], labels) -> None:
    """A child process: MJX's and adam's results for one robot ``put`` on ``messages`` as
    they come (the parent may stop it), then None. ``job``: (robot, URDF, floating, joints,
    nq, nv)."""
    robot, urdf, floating, joints, nq, nv = job
    try:
        import jax

        device = jax.devices()[0]
        messages.put(("jax_device", None, None, f"{device.platform} ({device.device_kind})"))
    except ImportError as exc:
        for label in (label for label in labels if label != gpu_warp.LABEL):
            messages.put(("reasons", (label,), None, f"{label}: {short(exc)}"))
        labels = [label for label in labels if label == gpu_warp.LABEL]
    host = random_inputs(nq, nv, floating, max(sizes))
    for label in labels:
        if label == gpu_warp.LABEL:
            try:
                gpu_warp.time_warp(messages.put, robot, mujoco_model(urdf, floating),
                                   functions, sizes, host)
            except Exception as exc:
                messages.put(("reasons", (label, robot), None, f"{label}: {short(exc)}"))
            continue
        real = "float64" if label.endswith("f64") else "float32"
        jax.config.update("jax_enable_x64", real == "float64")  # for the whole process
        try:
            made = (adam_functions if label.startswith("adam") else mjx_functions)(
                urdf, floating, joints)
            for key in (k for k in functions if k in PEER_FUNCTIONS):
                inputs = {n: [jax.device_put(a[:n].astype(real))
                              for a in host[:1 if key == "M" else 3]] for n in sizes}
                time_peer(messages.put, label, robot, key, made[key], inputs)
                del inputs
        except Exception as exc:
            messages.put(("reasons", (label, robot), None, f"{label}: {short(exc)}"))
    messages.put(None)


def run_peers(results: Results, jobs: list, functions: list[str], sizes: list[int],
              labels: list[str], deadline: float) -> None:
    """:func:`peer_worker` in a child process per robot (JAX takes the GPU its own way; a
    compile that runs away is stopped), each given an equal share of the time left until
    ``deadline``; their messages recorded in ``results``."""
    context = mp.get_context("spawn")
    for k, job in enumerate(jobs):
        messages = context.Queue()
        child = context.Process(target=peer_worker, daemon=True,
                                args=(messages, job, functions, sizes, labels))
        child.start()
        stop = time.perf_counter() + (deadline - time.perf_counter()) / (len(jobs) - k)
        while (message := _next(messages, child, stop)) not in (None, "stop"):
            print(f"peers: {message}", file=sys.stderr, flush=True)
            kind, key, field, value = message
            if kind == "jax_device":
                results.jax_device = value
            elif kind == "reasons":
                results.reasons[key] = value
            else:
                getattr(results, kind).setdefault(key, {})[field] = value
        child.join(timeout=10 if message is None else 0)  # None: the child's last message
        if child.is_alive():
            for label in labels:
                results.reasons.setdefault((label, job[0]), f"{label}: stopped at the end of "
                                           "this robot's share of --peer-share of --max-seconds")
            child.terminate()
        elif child.exitcode:
            for label in labels:
                results.reasons.setdefault((label, job[0]), f"{label}: the peers' process "
                                           f"ended with exit code {child.exitcode}")


def _next(messages, child, stop: float):
    """The child's next message (None: its last), or "stop" once it has died or ``stop``
    has passed."""
    while time.perf_counter() < stop:
        try:
            return messages.get(timeout=min(1.0, max(0.01, stop - time.perf_counter())))
        except queue.Empty:
            if not child.is_alive():
                break
    return "stop"


def _timed(function, *args) -> float:
    """Seconds ``function(*args)`` takes: a compile, in a worker process (NVRTC's compiles
    in threads of one process overlap only in part), its result left in the cache."""
    started = time.perf_counter()
    function(*args)
    return time.perf_counter() - started


def _compile_c(urdf: str, floating: bool, functions: list[str]) -> None:
    load(urdf, floating).compile([FUNCTIONS[k] for k in functions], batch=True, progress=False)


def start_nvrtc(cupy, pool, gpu_functions: dict) -> dict:
    """Every kernel's compile (one NVRTC program per stage) queued on ``pool`` in the order
    the rows are timed: (robot, fn, precision) -> the stages' pending seconds. The programs
    and names are those :class:`GpuFunction` compiles, so that its compile, and
    ``robot.compile(device="cuda")``'s, find them in the cache."""
    from casdyn.codegen import nvrtc
    from casdyn.codegen.gpu import architecture

    return {(*key, p): [pool.apply_async(_timed, (nvrtc.compile_cuda, text, name,
                                                  architecture(cupy)))
                        for text, name in zip(g.source.programs(p), g.source.kernels(p),
                                              strict=True)]
            for key, g in gpu_functions.items() for p in PRECISIONS}


def largest_error(function, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> float:
    """Largest ``|gpu - ref| / max(1, |ref|)`` of the GPU's ``outputs`` against CasADi's own
    evaluation of ``function``, sample by sample."""
    worst = 0.0
    for k in range(len(inputs[0])):
        for ref, got in zip(function.call([a[k] for a in inputs]), outputs, strict=True):
            ref = np.asarray(ref).reshape(got.shape[1:])
            worst = max(worst, float(np.max(np.abs(got[k] - ref) / np.maximum(1, np.abs(ref)))))
    return worst


def time_casdyn(cupy, results: Results, name: str, key: str, robot, gpu_function, data: dict,
                sizes: list[int]) -> None:
    """Check, then time, one function of one robot on the GPU; ``data``: the inputs on the
    host (``"host"``) and on the GPU (by precision)."""
    call, count = getattr(robot, FUNCTIONS[key][0]), 1 if key == "M" else 3
    host = data["host"][:count]
    for precision, column in PRECISIONS.items():
        got = call(*(cupy.asarray(a[:CHECKED], dtype=precision) for a in host))
        got = [cupy.asnumpy(g) for g in (got if isinstance(got, tuple) else (got,))]
        error = largest_error(gpu_function.function, [a[:CHECKED] for a in host], got)
        results.compiled[(name, key)][f"error {column}"] = error
        if column == "f64" and not error < TOLERANCE:
            results.failures.append(f"{name} {key}: {error:.1e}")
    source, sync = gpu_function.source, cupy.cuda.get_current_stream().synchronize
    per_sample = 8 * (sum(source.nnz_in) + sum(source.dense_out))
    for n in sizes:
        cell = results.cell(name, key, n)
        if n * per_sample > GPU_BYTES:
            results.reasons[("f64", name, key, n)] = \
                f"casdyn: inputs and outputs over {GPU_BYTES / 1e9:.0f} GB at this N: not run"
            continue
        for precision, column in PRECISIONS.items():  # structures of arrays, as the call's
            flat = [cupy.ascontiguousarray(a[:n].T) for a in data[precision][:count]]
            out = [cupy.empty((size, n), dtype=precision) for size in source.dense_out]
            cell[column] = kernel_seconds(cupy, lambda p=precision, f=flat, o=out, n=n:
                                          gpu_function.launch(cupy, p, f, [True] * count, o, n)) / n
            del flat, out
        on_gpu = [a[:n] for a in data["float64"][:count]]
        cell["cupy"] = median_seconds(lambda a=on_gpu: call(*a), lambda _: sync()) / n
        if n * per_sample <= ROUND_TRIP_BYTES:
            cell["numpy"] = median_seconds(lambda n=n: call(*(a[:n] for a in host)),
                                           repeats=3) / n
        else:
            results.reasons[("numpy", name, key, n)] = \
                f"NumPy round trip timed up to {ROUND_TRIP_BYTES / 1e9:.0f} GB of data"
        cupy.get_default_memory_pool().free_all_blocks()


def time_cpu(results: Results, name: str, urdf: tuple[str, bool], host: list, job,
             functions: list[str], n: int, deadline: float) -> None:
    """casdyn's batch kernels (C, compiled by a worker, loaded here from the cache) on one
    CPU thread; the kernel itself, as the public call spreads a batch over threads."""
    try:
        results.cpu_compile[name] = job.get(timeout=max(0.1, deadline - time.perf_counter()))
        robot = load(*urdf)
        robot.compile([FUNCTIONS[k] for k in functions], batch=True, progress=False)
    except Exception as exc:
        results.reasons[("cpu", name)] = \
            LATE if isinstance(exc, mp.TimeoutError) else f"casdyn CPU: {short(exc)}"
        return
    for key in functions:
        function_name, options = FUNCTIONS[key]
        kernel = robot._engine._kernels.get(robot._functions.key(function_name, **options))
        if kernel is None or time.perf_counter() > deadline:
            results.reasons[("cpu", name, key)] = \
                LATE if kernel is not None else "casdyn's compile made no batch kernel"
            continue
        flat = [np.ascontiguousarray(a[:n]) for a in host[:1 if key == "M" else 3]]
        results.cell(name, key, n)["cpu"] = median_seconds(
            lambda k=kernel, f=flat: k(f, n, threads=1, dense=True)) / n


def time_gpu(cupy, results: Results, name: str, robot, host: list, gpu_functions: dict,
             pending: dict, functions: list[str], sizes: list[int], deadline: float) -> None:
    """casdyn's GPU rows of one robot, each once its kernels are out of the compile pool."""
    data = {"host": host, **{p: [cupy.asarray(a, dtype=p) for a in host] for p in PRECISIONS}}
    for key in functions:
        if time.perf_counter() > deadline:
            results.reasons[("f64", name, key)] = LATE
            continue
        try:
            for p in PRECISIONS:  # seconds of the longest stage, and of all of them
                stages = [job.get(timeout=max(0.1, deadline - time.perf_counter()))
                          for job in pending[(name, key, p)]]
                results.compiled[(name, key)][f"NVRTC {p}"] = \
                    f"{max(stages):.1f} / {sum(stages):.1f}"
            robot.compile([FUNCTIONS[key]], device="cuda", progress=False)  # from the cache
            time_casdyn(cupy, results, name, key, robot, gpu_functions[(name, key)], data,
                        sizes)
        except Exception as exc:
            results.reasons[("f64", name, key)] = \
                LATE if isinstance(exc, mp.TimeoutError) else f"casdyn GPU: {short(exc)}"
        print(f"casdyn GPU: {name} {key} done", file=sys.stderr, flush=True)
    del data
    cupy.get_default_memory_pool().free_all_blocks()


def timing_table(results: Results, names, functions, sizes, columns, notes: list) -> str:
    """One row per robot, function and N; the reasons of empty cells appended to ``notes``."""
    rows = []
    for name, key, n in ((a, b, c) for a in names for b in functions for c in sizes):
        cell = results.cell(name, key, n)
        for column, peer, ours in (("mjx/casdyn", "MJX f32", "f32"),
                                   ("warp/casdyn", gpu_warp.LABEL, "f32"),
                                   ("adam/casdyn", "adam f64", "f64"), ("rate", "f64", None)):
            if peer in cell and (ours is None or ours in cell):
                cell[column] = cell[peer] / cell[ours] if ours else 1 / cell[peer]
        row = [name, key, f"{n:.0e}"]
        for column in columns:
            value = cell.get(column)
            if value is not None:
                row.append(f"{value:.2e}" if column == "rate" else f"{value:.1f}" if "/" in column
                           else f"{value * 1e9:,.0f}" if value >= 1e-7 else f"{value * 1e9:.3g}")
            elif "/" in column or (column == "cpu" and n != sizes[0]):
                row.append("")
            else:
                ours = "f64" if column in ("f32", "rate", "cupy", "numpy") else column
                why = results.why(column, name, key, n) or results.why(ours, name, key, n) \
                    or "not measured"
                notes += [why] if why not in notes else []
                row.append(f"— [{notes.index(why) + 1}]")
        rows.append(row)
    return table(["robot", "fn", "N", *(COLUMNS[c] for c in columns)], rows)


def compile_table(results: Results, names, functions, labels) -> str:
    rows = []
    for name, key in ((a, b) for a in names for b in functions):
        found = results.compiled[(name, key)]
        seconds = [found.get(c, "—") if c.startswith("NVRTC") else f"{found[c]:.1f}" if c in found
                   else "—" for c in ("NVRTC float64", "NVRTC float32", *labels)]
        errors = [f"{found[c]:.1e}" if c in found else "—" for c in ("error f64", "error f32")]
        rows.append([name, key, found["instructions"], found["stages"], *seconds[:2], *errors,
                     *seconds[2:]])
    return table(["robot", "fn", "SX instructions", "CUDA stages",
                  *(f"NVRTC {p} [s]: longest stage / all" for p in ("f64", "f32")),
                  "GPU f64 vs CPU", "GPU f32 vs CPU",
                  *(f"{label} jit [s]" for label in labels)], rows)


def versions(cupy) -> str:
    """The GPU, CUDA, NVRTC and the peers' versions, in one line."""
    parts = []
    if cupy is not None:
        from casdyn.codegen import nvrtc

        runtime, name = cupy.cuda.runtime, cupy.cuda.runtime.getDeviceProperties(0)["name"]
        try:
            compiler = "NVRTC {}.{}".format(*nvrtc.version())
        except casdyn.DeviceError:
            compiler = "no NVRTC"
        parts.append(f"GPU {name.decode() if isinstance(name, bytes) else name}, CUDA runtime "
                     f"{runtime.runtimeGetVersion()}, driver {runtime.driverGetVersion()}, "
                     f"{compiler}, CuPy {cupy.__version__}")
    installed = {d.metadata["Name"].lower(): d.version for d in metadata.distributions()}
    return "; ".join([*parts, *(f"{p} {installed.get(p, 'not installed')}" for p in
                                ("jax", "jaxlib", "mujoco", "mujoco-mjx", "mujoco-warp",
                                 "warp-lang", "adam-robotics"))])


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 1e4, UR5e and solo12 only")
    parser.add_argument("--robots", nargs="+", choices=ROBOTS)
    parser.add_argument("--functions", nargs="+", choices=list(FUNCTIONS), default=list(FUNCTIONS))
    parser.add_argument("--sizes", nargs="+", type=int, help=f"batch sizes (default {SIZES})")
    parser.add_argument("--talos", help="TALOS's URDF (default: example-robot-data's)")
    parser.add_argument("--max-seconds", type=float, default=240.0, help="the time budget")
    parser.add_argument("--mjx-f64", action="store_true", help="MJX in float64 too")
    parser.add_argument("--no-warp", action="store_true", help="without MuJoCo Warp")
    parser.add_argument("--peer-share", type=float, default=0.5,
                        help="the part of --max-seconds the peers get (JAX start-up and jit: "
                             "5-6 s for MJX's inverse dynamics on an H100)")
    parser.add_argument("--out", type=Path, default=HERE / "gpu_results.md")
    args = parser.parse_args()
    args.sizes = sorted(args.sizes or (SIZES[:1] if args.quick else SIZES))
    args.robots = args.robots or (ROBOTS[:2] if args.quick else ROBOTS)
    args.labels = ["MJX f32", *(["MJX f64"] if args.mjx_f64 else []),
                   *([] if args.no_warp else [gpu_warp.LABEL]), "adam f64"]
    return args


def main() -> None:
    args, started, results = arguments(), time.perf_counter(), Results()
    urdfs, left_out = robot_urdfs(args.robots, args.talos)
    cache = tempfile.mkdtemp(prefix="casdyn-gpu-bench-")
    os.environ["CASDYN_CACHE"] = cache  # every compile a first one: a first run's times
    from casdyn.codegen.gpu import GpuFunction, cupy_module
    from casdyn.functions.names import identifier

    try:
        cupy = cupy_module()
    except casdyn.DeviceError as exc:
        cupy, results.reasons[("f64",)] = None, f"no GPU: {exc}"
    robots, gpu_functions = {name: load(*urdf) for name, urdf in urdfs.items()}, {}
    for (name, robot), key in ((item, key) for item in robots.items() for key in args.functions):
        function = robot.function(FUNCTIONS[key][0], **FUNCTIONS[key][1])
        gpu_functions[(name, key)] = GpuFunction(  # the symbol compile(device="cuda") gives
            function, identifier(f"{robot.name}_{function.name()}"))
        results.compiled[(name, key)] = {"instructions": function.n_instructions(),
                                         "stages": gpu_functions[(name, key)].source.stages}
        for label in args.labels if key not in PEER_FUNCTIONS else ():
            results.reasons[(label, name, key)] = "the peers have no derivatives of their own"
    pool = mp.get_context("spawn").Pool(max(1, (os.cpu_count() or 2) - 2))
    try:
        cpu_jobs = {name: pool.apply_async(_timed, (_compile_c, *urdf, args.functions))
                    for name, urdf in urdfs.items()}
        pending = start_nvrtc(cupy, pool, gpu_functions) if cupy is not None else {}
        if set(args.functions) & set(PEER_FUNCTIONS):
            jobs = [(name, *urdfs[name], [j for j in r.joint_names if j != "floating_base"],
                     r.nq, r.nv) for name, r in robots.items()]
            run_peers(results, jobs, args.functions, args.sizes, args.labels,
                      started + args.max_seconds * args.peer_share)
        for name, robot in robots.items():
            deadline = started + args.max_seconds
            host = random_inputs(robot.nq, robot.nv, urdfs[name][1], max(args.sizes), seed=1)
            if cupy is not None:
                time_gpu(cupy, results, name, robot, host, gpu_functions, pending,
                         args.functions, args.sizes, deadline)
            time_cpu(results, name, urdfs[name], host, cpu_jobs[name], args.functions,
                     args.sizes[0], deadline)
    finally:
        pool.terminate()
        shutil.rmtree(cache, ignore_errors=True)
    notes: list[str] = []
    columns = [c for c in COLUMNS if (args.mjx_f64 or c != "MJX f64")
               and (not args.no_warp or c not in (gpu_warp.LABEL, "warp/casdyn"))]
    timings = timing_table(results, list(robots), args.functions, args.sizes, columns, notes)
    cpu = ", ".join(f"{n} {s:.0f} s" for n, s in results.cpu_compile.items()) or "not finished"
    text = (f"# casdyn on the GPU against MJX, MuJoCo Warp and adam\n\nMeasured by "
            f"`python benchmarks/gpu.py {' '.join(sys.argv[1:])}` on "
            f"{results_file.machine(('casadi', 'numpy'))}; "
            f"{versions(cupy)}; JAX ran on {results.jax_device}. Time per sample, medians of "
            f"{REPEATS} after a warm-up; {time.perf_counter() - started:.0f} s of a "
            f"{args.max_seconds:.0f} s budget.\n\n## Timings\n\n{timings}\n\n## Compile times "
            f"(a fresh cache, all at once on the CPU's cores) and the GPU against CasADi on "
            f"the CPU (largest |GPU - CPU| / max(1, |CPU|), {CHECKED} samples)\n\n"
            f"{compile_table(results, list(robots), args.functions, args.labels)}\n\n"
            f"casdyn's C for one CPU thread (`compile(batch=True)`): {cpu}.\n\n"
            + "".join(f"[{k + 1}] {note}  \n" for k, note in enumerate(notes))
            + "".join(f"Left out: {reason}  \n" for reason in left_out))
    print(text)
    args.out.write_text(text, encoding="utf-8")
    if results.failures:
        raise SystemExit(f"float64 GPU results differ from CasADi's by more than {TOLERANCE:g}: "
                         + ", ".join(results.failures))


if __name__ == "__main__":
    main()
