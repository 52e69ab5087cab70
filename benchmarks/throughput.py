"""Throughput: batches in SIMD lanes, compiled speed by default, export time; side by side
with Pinocchio in one run.

    pip install ".[bench]" && python benchmarks/throughput.py [--quick] [--section NAME]

Every number is a median over interleaved rounds; on a shared machine they are noisy, the
ratios (measured in the same rounds) less so. Sections: ``batches`` (per-sample time of
batched calls after compile(): the SIMD kernel on one thread and across threads, the
Function.map path it replaced, a single compiled call, Pinocchio from Python), ``default``
(a fresh process without compile(): the UR5e's inverse dynamics against pinocchio.rnea once
the background build is in), ``export`` (the floating TALOS's dynamics and derivatives:
building, generating, compiling).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import models
import results_file

import casdyn

HERE = Path(__file__).resolve().parent
FUNCTIONS = [("ID", "inverse_dynamics", {"fext": False}), ("FD", "forward_dynamics",
             {"fext": False}), ("M", "mass_matrix", {}),
             ("dID", "inverse_dynamics_derivatives", {"fext": False}),
             ("dFD", "forward_dynamics_derivatives", {"fext": False})]


def medians(calls: dict, number: int, rounds: int) -> dict[str, float]:
    """Median seconds per call of each callable, rounds interleaved."""
    samples: dict[str, list[float]] = {label: [] for label in calls}
    for _ in range(rounds):
        for label, fn in calls.items():
            samples[label].append(timeit.timeit(fn, number=number) / number)
    return {label: statistics.median(times) for label, times in samples.items()}


def table(header: list[str], rows: list[list]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]

    def line(cells):
        return "| " + " | ".join(str(c).rjust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|",
                      *map(line, rows)])


def robots() -> dict[str, tuple[str, bool]]:
    """name -> (URDF, floating base)."""
    from importlib.metadata import distribution

    bench = models.benchmark_models()
    root = Path(distribution("example-robot-data").locate_file(
        "cmeel.prefix/share/example-robot-data/robots"))
    return {"UR5e": (bench["UR5e"][0], False), "Panda-like": (bench["Panda-like"][0], False),
            "chain24": (bench["chain24"][0], False),
            "TALOS": ((root / "talos_data/robots/talos_reduced.urdf").read_text(), True)}


def _pinocchio(urdf: str, floating: bool):
    import pinocchio as pin

    model = pin.buildModelFromXML(urdf, pin.JointModelFreeFlyer()) if floating else \
        pin.buildModelFromXML(urdf)
    return pin, model, model.createData()


def batches(names: list[str], rounds: int, cache: Path) -> str:
    rows = []
    for name in names:
        urdf, floating = robots()[name]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", casdyn.ModelWarning)
            robot = casdyn.load_urdf(urdf, floating_base=floating)
        started = time.perf_counter()
        robot.compile([(f, o) for _, f, o in FUNCTIONS], directory=cache, progress=False,
                      batch=True)
        print(f"{name}: compiled (or loaded) in {time.perf_counter() - started:.1f} s",
              file=sys.stderr, flush=True)
        pin, model, data = _pinocchio(urdf, floating)
        engine = robot._engine
        rng = np.random.default_rng(0)
        for label, function, options in FUNCTIONS:
            n = 4096 if label in ("ID", "FD", "M") else 512
            if name == "TALOS" and label in ("dID", "dFD"):
                n = 256
            Q = np.array([robot.random_configuration(rng) for _ in range(n)])
            V, A = rng.normal(size=(2, n, robot.nv))
            args = {"ID": (Q, V, A), "FD": (Q, V, A), "M": (Q,), "dID": (Q, V, A),
                    "dFD": (Q, V, A)}[label]
            call = getattr(robot, function)
            key = robot._functions.key(function, **options)
            kernel = engine._kernels[key]
            flat = [np.ascontiguousarray(a) for a in args]
            # Pinocchio takes the free flyer's quaternion last and its linear velocity first:
            # the same work per call, the numbers do not matter for timing
            qp = [pin.neutral(model) for _ in range(min(n, 64))]
            vp = [np.asarray(v) for v in V[:64]]
            peer = {"ID": pin.rnea, "FD": pin.aba, "M": pin.crba,
                    "dID": pin.computeRNEADerivatives, "dFD": pin.computeABADerivatives}[label]
            peer_args = [(model, data, qp[k]) if label == "M" else
                         (model, data, qp[k], vp[k], vp[k]) for k in range(len(qp))]

            def pinocchio_loop(peer=peer, peer_args=peer_args):
                for a in peer_args:
                    peer(*a)

            single = [a[0] for a in args]
            saved = engine._kernels.pop(key)
            call(*args)  # the mapped Function is made on the first call
            mapped = medians({"map": lambda call=call, args=args: call(*args)}, 1, 3)["map"] / n
            engine._kernels[key] = saved
            batched = {
                "simd1": lambda kernel=kernel, flat=flat, n=n: kernel(flat, n, threads=1),
                "simd2": lambda kernel=kernel, flat=flat, n=n: kernel(flat, n, threads=2),
                "api": lambda call=call, args=args: call(*args),
            }
            for fn in batched.values():
                fn()
            times = medians(batched, 1, rounds)
            per = {k: v / n for k, v in times.items()}
            per["single"] = medians({"single": lambda call=call, single=single: call(*single)},
                                    200, rounds)["single"]
            per["pin"] = medians({"pin": pinocchio_loop}, 3, rounds)["pin"] / len(peer_args)
            rows.append([name, label, n, *(f"{per[k] * 1e9:,.0f}" for k in
                                           ("simd1", "simd2", "api")),
                         f"{mapped * 1e9:,.0f}", f"{per['single'] * 1e9:,.0f}",
                         f"{per['pin'] * 1e9:,.0f}",
                         f"{per['simd1'] / per['pin']:.3f}",
                         f"{per['simd1'] / per['single']:.3f}"])
            print(" | ".join(map(str, rows[-1])), file=sys.stderr, flush=True)
    return table(["model", "fn", "N", "SIMD 1 thread [ns]", "SIMD 2 threads [ns]",
                  "robot.fn(batch) [ns]", "Function.map (before) [ns]",
                  "single compiled call from Python [ns]", "Pinocchio Python loop [ns]",
                  "SIMD 1 thread / Pinocchio loop", "SIMD 1 thread / single call"], rows)


DEFAULT_SCRIPT = """
import sys, time, numpy as np, casdyn
from casdyn.codegen import background
robot = casdyn.load_robot("ur5e")
q, qd, qdd = np.random.default_rng(0).normal(size=(3, 6))
started = time.perf_counter()
first = robot.inverse_dynamics(q, qd, qdd)
for _ in range(background.AFTER_CALLS):
    robot.inverse_dynamics(q, qd, qdd)
asked = time.perf_counter()
calls = 0
while not robot.compiled_functions:
    robot.inverse_dynamics(q, qd, qdd)
    calls += 1
ready = time.perf_counter()
print(asked - started, ready - asked, calls)
"""


def default_speed(rounds: int) -> str:
    """A fresh process without compile(): how long until the UR5e's inverse dynamics runs
    compiled (empty cache, then the cache of the first), then per call against Pinocchio."""
    import pinocchio as pin

    rows = []
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "CASDYN_COMPILE": "1", "CASDYN_CACHE": cache}
        for label in ("empty cache", "cache of the previous process"):
            out = subprocess.run([sys.executable, "-c", DEFAULT_SCRIPT], env=env, check=True,
                                 capture_output=True, text=True).stdout.split()
            rows.append([f"time to compiled, {label} [s]", f"{float(out[1]):.2f}"])
            rows.append([f"SX calls meanwhile, {label}", out[2]])
    os.environ["CASDYN_COMPILE"] = "1"
    with tempfile.TemporaryDirectory() as cache:
        os.environ["CASDYN_CACHE"] = cache
        from casdyn.codegen import background

        robot = casdyn.load_robot("ur5e")
        plain_env = os.environ.pop("CASDYN_COMPILE")
        os.environ["CASDYN_COMPILE"] = "0"
        plain = casdyn.load_robot("ur5e")
        os.environ["CASDYN_COMPILE"] = plain_env
        q, qd, qdd = np.random.default_rng(0).normal(size=(3, 6))
        for _ in range(background.AFTER_CALLS):
            robot.inverse_dynamics(q, qd, qdd)
        background.wait()
        model = pin.buildModelFromXML(models.benchmark_models()["UR5e"][0])
        data = model.createData()
        times = medians({"auto": lambda: robot.inverse_dynamics(q, qd, qdd),
                         "sx": lambda: plain.inverse_dynamics(q, qd, qdd),
                         "pin": lambda: pin.rnea(model, data, q, qd, qdd)}, 2000, rounds)
    rows += [["robot.inverse_dynamics, no compile(), after the build [us]",
              f"{times['auto'] * 1e6:.2f}"],
             ["the same, CASDYN_COMPILE=0 (SX) [us]", f"{times['sx'] * 1e6:.2f}"],
             ["pinocchio.rnea [us]", f"{times['pin'] * 1e6:.2f}"],
             ["no compile() / Pinocchio", f"{times['auto'] / times['pin']:.2f}"],
             ["SX / Pinocchio", f"{times['sx'] / times['pin']:.2f}"]]
    return table(["UR5e inverse dynamics without compile()", "value"], rows)


EXPORT_SCRIPT = """
import sys, time, tempfile, warnings, casdyn
warnings.simplefilter("ignore")
robot = casdyn.load_urdf(sys.stdin.read(), floating_base=True)
names = ["inverse_dynamics", "forward_dynamics", "mass_matrix", "velocity_product",
         "gravity_torque", "bias_force", "inverse_dynamics_derivatives",
         "forward_dynamics_derivatives"]
started = time.perf_counter()
sizes = [robot.function(n).n_instructions() for n in names]
built = time.perf_counter()
with tempfile.TemporaryDirectory() as d:
    robot.export_c(d, names, progress=True)
print(built - started, time.perf_counter() - built, sum(sizes))
"""


def export_time() -> str:
    """The floating TALOS's dynamics and both derivatives exported from a fresh process
    and an empty compile cache: the Functions' building, then export_c's steps (its
    progress report)."""
    urdf = robots()["TALOS"][0]
    with tempfile.TemporaryDirectory(prefix="casdyn-cache-") as cache:  # a first export
        result = subprocess.run([sys.executable, "-c", EXPORT_SCRIPT], input=urdf,
                                capture_output=True, text=True, check=True,
                                env={**os.environ, "CASDYN_CACHE": cache})
    build, export, size = result.stdout.split()
    rows = [["instructions in all", f"{int(size):,}"],
            ["building the Functions [s]", f"{float(build):.1f}"],
            ["export_c: C, compiled, loaded [s]", f"{float(export):.1f}"],
            ["total [s]", f"{float(build) + float(export):.1f}"]]
    steps = [line.split(": ", 2)[-1] for line in result.stderr.splitlines() if "s)" in line]
    rows += [[f"  {step.rsplit(' (', 1)[0]}", step.rsplit(" (", 1)[1].rstrip(")")]
             for step in steps]
    return table(["floating TALOS: ID, FD, M, C qd, g, C qd + g, d(ID), d(FD)", "value"], rows)


def over_batch_sizes(rounds: int, cache: Path) -> str:
    """The public batched call against the SIMD kernel it runs, N = 1e3 to 1e6 (UR5e): the
    kernel on one thread and split as the call splits it, and the call itself (argument
    checks, output arrays and the thread split included)."""
    robot = casdyn.load_robot("ur5e")
    robot.compile([(f, o) for _, f, o in FUNCTIONS[:3]], directory=cache, progress=False,
                  batch=True)
    rng = np.random.default_rng(0)
    rows = []
    for label, function, options in FUNCTIONS[:3]:
        kernel = robot._engine._kernels[robot._functions.key(function, **options)]
        call = getattr(robot, function)
        for n in (1_000, 10_000, 100_000, 1_000_000):
            args = (rng.uniform(-3, 3, (n, 6)), *rng.normal(size=(2, n, 6)))[
                :1 if label == "M" else 3]
            flat = [np.ascontiguousarray(a) for a in args]
            number = max(1, 20_000 // n)
            times = medians({"one": lambda k=kernel, f=flat, n=n: k(f, n, threads=1, dense=True),
                             "split": lambda k=kernel, f=flat, n=n: k(f, n, dense=True),
                             "call": lambda c=call, a=args: c(*a)}, number, rounds)
            one, split, public = (times[k] / n * 1e9 for k in ("one", "split", "call"))
            rows.append([label, f"{n:.0e}", f"{one:.1f}", f"{split:.1f}", f"{public:.1f}",
                         f"{public / min(one, split):.2f}"])
    return table(["UR5e fn", "N", "kernel, 1 thread [ns]", "kernel, split as the call "
                  "splits [ns]", "robot.fn(batch) [ns]", "call / faster kernel"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, the UR5e only")
    parser.add_argument("--section", choices=["batches", "sizes", "default", "export"],
                        action="append")
    args = parser.parse_args()
    rounds = 5 if args.quick else 15
    sections = args.section or ["batches", "sizes", "default", "export"]
    names = ["UR5e"] if args.quick else list(robots())
    measured = []
    for section in sections:
        if section == "batches":
            title = ("Batches after compile(), per sample (SIMD lanes; medians of "
                     f"{rounds} interleaved rounds)")
            with tempfile.TemporaryDirectory(prefix="casdyn-throughput-") as cache:
                body = batches(names, rounds, Path(cache))
        elif section == "sizes":
            title = ("Batched calls against their kernel over N (UR5e; medians of "
                     f"{rounds} interleaved rounds)")
            with tempfile.TemporaryDirectory(prefix="casdyn-throughput-") as cache:
                body = over_batch_sizes(rounds, Path(cache))
        elif section == "default":
            title = "Compiled speed by default (no compile() call)"
            body = default_speed(rounds)
        else:
            title = "Export time of the floating TALOS (a fresh process, an empty compile cache)"
            body = export_time()
        print(f"\n## {title}\n\n{body}", flush=True)
        measured.append((title, body))
    if not args.quick:  # a smoke run's numbers are not results
        results_file.update(measured, "python benchmarks/throughput.py",
                            results_file.machine(("casadi", "numpy", "pin")))


if __name__ == "__main__":
    main()
