"""The code-generation anchor: casdyn's compiled C against Pinocchio's own generated C.

Pinocchio's code generators (CodeGenRNEA, CodeGenABA, CodeGenCRBA, CodeGenRNEADerivatives,
CodeGenABADerivatives, from the pin wheel's headers) record each algorithm on CppAD's
CG<double> scalars and CppADCodeGen writes it as C (the cmeel-cppad and cmeel-cppadcodegen
wheels); codegen_anchor.cpp builds and loads that C and times it against casdyn's export of
the same quantities in one process (the same 16 random states, medians of interleaved
rounds, both outputs compared). Both C builds take ``-march=native``; Pinocchio's generated C
takes ``FLAGS`` (Pinocchio's own default, -Ofast, plus -march=native), casdyn's C its default
flags policy. Started under ``nice``, the harness builds at that priority and times at the
default one where it may (root): a shared machine's other work then preempts the rounds less.

    nice -n 10 python benchmarks/codegen_anchor.py [--models UR5e chain24 TALOS] [--quick]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import native
import results_file
from models import benchmark_models

import casdyn

FLAGS = "-Ofast -march=native"
QUANTITIES = ("ID", "FD", "M", "dID", "dFD")
TITLE = ("Code-generation anchor: casdyn's C vs Pinocchio's CppADCodeGen C (CodeGenRNEA, "
         "CodeGenABA, CodeGenCRBA, CodeGenRNEADerivatives, CodeGenABADerivatives), one process")


def talos_urdf() -> str:
    """TALOS (reduced) from example-robot-data, on a free flyer in the benchmark."""
    from importlib.metadata import distribution

    root = Path(distribution("example-robot-data").locate_file(
        "cmeel.prefix/share/example-robot-data/robots"))
    return (root / "talos_data/robots/talos_reduced.urdf").read_text()


def run(name: str, urdf: str, floating_base: bool = False, quantities=QUANTITIES,
        rounds: int = 15, calls: int = 2000, flags: str = FLAGS) -> dict[str, dict]:
    """{quantity: {"ours", "theirs" (ns per call), "diff", "record", "compile" (s),
    "bytes" (of Pinocchio's generated C), "export" (s, casdyn's export of all of them)}}."""
    exe = native.harness("codegen_anchor")
    directory = native.BUILD / f"{name}-codegen"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", casdyn.ModelWarning)
        robot = casdyn.load_urdf(urdf, floating_base=floating_base)
    wanted = dict(zip(QUANTITIES, native.FUNCTIONS + native.DERIVATIVES, strict=True))
    start = time.perf_counter()
    library, model_file, order = native._prepare(directory, robot, urdf,
                                                 [wanted[q] for q in quantities])
    export_s = time.perf_counter() - start
    work = directory / "pinocchio"  # emptied: its C is counted file by file
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    command = [str(exe), str(model_file), str(library), str(work), str(rounds), str(calls),
               ",".join(quantities), flags, *([str(order)] if order else [])]
    output = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True).stdout
    results: dict[str, dict] = {}
    for line in output.splitlines():
        kind, quantity, *values = line.split()
        entry = results.setdefault(quantity, {"export": export_s})
        if kind == "time":
            entry.update(zip(("ours", "theirs", "diff"), map(float, values), strict=True))
        else:
            entry.update(zip(("record", "bytes", "compile"), map(float, values), strict=True))
    return results


def table(measured: dict[str, dict], flags: str) -> str:
    header = ["model", "fn", "casdyn C [ns]", "Pinocchio codegen [ns]", "casdyn / codegen",
              "max abs diff", "codegen: record + write C [s]", "its C [kB]",
              f"gcc {flags} [s]"]
    rows = [header, ["---"] * len(header)]
    for model, results in measured.items():
        for quantity, r in results.items():
            rows.append([model, quantity, f"{r['ours']:.0f}", f"{r['theirs']:.0f}",
                         f"{r['ours'] / r['theirs']:.2f}", f"{r['diff']:.1e}",
                         f"{r['record']:.2f}", f"{r['bytes'] / 1e3:.0f}",
                         f"{r['compile']:.1f}"])
    return "\n".join("| " + " | ".join(map(str, row)) + " |" for row in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["UR5e", "chain24", "TALOS"],
                        help="UR5e, UR5, Panda-like, chain6 ... chain48 (fixed base), TALOS "
                             "(free flyer)")
    parser.add_argument("--only", nargs="+", choices=QUANTITIES, default=list(QUANTITIES))
    parser.add_argument("--flags", default=FLAGS, help="gcc flags of Pinocchio's generated C")
    parser.add_argument("--quick", action="store_true",
                        help="fewer rounds, RESULTS.md untouched (a smoke run)")
    args = parser.parse_args()
    rounds, calls = (5, 500) if args.quick else (31, 2000)
    models = benchmark_models()
    machine = results_file.machine(("casadi", "pin", "cmeel-cppad", "cmeel-cppadcodegen"))
    measured = {}
    for name in args.models:
        print(f"{name} ...", file=sys.stderr, flush=True)
        if name == "TALOS":
            measured["TALOS (free flyer)"] = run("TALOS-floating", talos_urdf(), True,
                                                 args.only, rounds, calls, args.flags)
        else:
            measured[name] = run(name, models[name][0], False, args.only, rounds, calls,
                                 args.flags)
        body = table(measured, args.flags)
        print(f"\n{TITLE}\n{body}", flush=True)
        if not args.quick:  # after each model: a long build of the next loses none of it
            path = results_file.update([(TITLE, body)], "python benchmarks/codegen_anchor.py",
                                       machine)
            print(f"written to {path}", flush=True)


if __name__ == "__main__":
    main()
