"""casdyn against its peers, measured side by side in one run.

    pip install ".[bench]" && python benchmarks/run.py [--quick] [--only WORD ...]

Prints the tables and writes them, with the machine and versions, into benchmarks/RESULTS.md
(its own sections; the other scripts' are kept):
graph sizes (n_instructions) against urdf2casadi and adam; compiled speed of the dynamics and
of their derivatives against Pinocchio's C++ in one process (benchmarks/native.cpp);
Python-call latency and batches against Pinocchio from Python and the CasADi peers; scaling
over random chains; floating-base graph sizes (vs adam) and compiled speed (vs Pinocchio).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import timeit
import warnings
from pathlib import Path

import casadi as ca
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import floor
import models
import native
import peers
import results_file

import casdyn

HERE = Path(__file__).resolve().parent
OURS = [("ID", "inverse_dynamics"), ("FD", "forward_dynamics"), ("M", "mass_matrix")]


def interleaved_medians_us(calls: dict, number: int, rounds: int = 15) -> dict[str, float]:
    """Median time per call [us] of each labelled callable, the rounds taken in turn across
    all of them, so that a passing disturbance of the machine hits one round of each rather
    than every round of one."""
    samples = {label: [] for label in calls}
    for _ in range(rounds):
        for label, fn in calls.items():
            samples[label].append(timeit.timeit(fn, number=number) / number * 1e6)
    return {label: statistics.median(times) for label, times in samples.items()}


def table(header: list[str], rows: list[list]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]

    def line(cells):
        return "| " + " | ".join(str(c).rjust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|",
                      *map(line, rows)])


def graph_sizes(bench_models, with_adam_up_to: int) -> str:
    rows = []
    for name, (urdf, root, tip) in bench_models.items():
        robot = casdyn.load_urdf(urdf)
        lean = {k: robot.function(f, **({} if k == "M" else {"fext": False})).n_instructions()
                for k, f in OURS}
        full = {k: robot.function(f).n_instructions() for k, f in OURS}
        u2c = {k: f.n_instructions()
               for k, f in peers.urdf2casadi_functions(urdf, root, tip).items()}
        adam = ({k: f.n_instructions() for k, f in
                 peers.adam_functions(urdf, root, robot.joint_names).items()}
                if robot.nq <= with_adam_up_to else {})
        for k, _ in OURS:
            best = min(v for v in (u2c[k], adam.get(k)) if v is not None)
            rows.append([name, k, lean[k], full[k], u2c[k], adam.get(k, "-"),
                         f"{lean[k] / best:.2f}"])
    return table(["model", "fn", "casdyn", "casdyn (with fext)", "urdf2casadi", "adam",
                  "casdyn / best peer"], rows)


def agreement(bench_models, with_adam_up_to: int) -> str:
    """Largest relative difference of each peer's ID, FD and M from casdyn's, at a random
    state: a small graph is only worth something if it computes the right thing."""
    rows = []
    for name, (urdf, root, tip) in bench_models.items():
        robot = casdyn.load_urdf(urdf)
        u2c = peers.check_against(peers.urdf2casadi_functions(urdf, root, tip), robot)
        adam = "-"
        if robot.nq <= with_adam_up_to:
            same_gravity = casdyn.load_urdf(urdf, gravity=peers.ADAM_GRAVITY)
            functions = peers.adam_functions(urdf, root, robot.joint_names)
            adam = f"{peers.check_against(functions, same_gravity):.0e}"
        rows.append([name, f"{u2c:.0e}", adam])
    return table(["model", "urdf2casadi vs casdyn", "adam vs casdyn (g = 9.80665)"], rows)


# the derivatives of every model (the longest chain's FD derivatives, 173,000 SX instructions
# and the loops of casdyn.codegen.forms, compile at -O1 in about half a minute)
WITH_DERIVATIVES = ("UR5", "UR5e", "Panda-like", "chain6", "chain12", "chain24", "chain48")


SPEED_HEADER = ["model", "fn", "casdyn C [ns]", "Pinocchio C++ [ns]", "ratio", "max abs diff"]


def speed_rows(name: str, results: dict, label=str) -> list[list]:
    """Table rows of one model's native timings ``{fn: (ours, Pinocchio's, max |diff|)}``."""
    return [[name, label(k), f"{ours:.0f}", f"{theirs:.0f}", f"{ours / theirs:.2f}",
             f"{diff:.0e}"] for k, (ours, theirs, diff) in results.items()]


def compiled_speed(bench_models, rounds: int, calls: int) -> tuple[str, str, dict]:
    """(table of ID, FD, M; table of their derivatives; raw results)."""
    rows, derivative_rows, results = [], [], {}
    for name, (urdf, _, _) in bench_models.items():
        results[name] = native.run(name, urdf, rounds, calls, name in WITH_DERIVATIVES)
        for row in speed_rows(name, results[name]):
            (derivative_rows if row[1].startswith("d") else rows).append(row)
    return table(SPEED_HEADER, rows), table(SPEED_HEADER, derivative_rows), results


# the Function native.py exports for each quantity of its output, in its order
_KEYS = dict(zip(("ID", "FD", "M", "dID", "dFD"), native.FUNCTIONS + native.DERIVATIVES,
                 strict=True))


def floors(bench_models, results: dict) -> str:
    """Each compiled call of the speed tables against its floor (benchmarks/floor.py)."""
    latency, issue = floor.rates()
    rows = []
    for name, (urdf, _, _) in bench_models.items():
        robot = casdyn.load_urdf(urdf)
        for key, (ours, _, _) in results[name].items():
            function_name, options = (_KEYS[key], {}) if isinstance(_KEYS[key], str) \
                else _KEYS[key]
            operations, calls, depth = floor.counts(robot.function(function_name, **options))
            least = floor.floor_ns(operations, depth, latency, issue)
            rows.append([name, key, str(operations), str(calls), str(depth),
                         f"{least:.0f}", f"{ours:.0f}", f"{ours / least:.1f}"])
    return (f"Measured on this machine (benchmarks/floor.py): {latency:.3f} ns per dependent "
            f"multiply or add, {issue:.3f} ns per operation issued; the floor is max(operations "
            "x issue, depth x latency), C library calls priced as one operation; the FD "
            "derivatives' C of the longer chains solves in loops, counted here as the SX "
            "graph.\n\n"
            + table(["model", "fn", "operations", "library calls", "depth", "floor [ns]",
                     "casdyn C [ns]", "C / floor"], rows))


def python_latency(urdf: str, root: str, tip: str) -> str:
    import pinocchio as pin

    robot = casdyn.load_urdf(urdf)
    compiled = casdyn.load_urdf(urdf).compile()
    model = pin.buildModelFromXML(urdf)
    data = model.createData()
    rng = np.random.default_rng(0)
    q, qd, qdd = robot.random_configuration(rng), *rng.normal(size=(2, robot.nq))
    u2c = peers.urdf2casadi_functions(urdf, root, tip)["ID"]
    adam = peers.adam_functions(urdf, root, robot.joint_names)["ID"]
    calls = [
        ("casdyn robot.inverse_dynamics(q, qd, qdd), SX",
         lambda: robot.inverse_dynamics(q, qd, qdd)),
        ("casdyn, after robot.compile()", lambda: compiled.inverse_dynamics(q, qd, qdd)),
        ("casdyn robot.function('inverse_dynamics')(...)",
         lambda: robot.function("inverse_dynamics", fext=False)(q, qd, qdd)),
        ("pinocchio.rnea(model, data, q, v, a)", lambda: pin.rnea(model, data, q, qd, qdd)),
        ("urdf2casadi Function(q, qd, qdd)", lambda: u2c(q, qd, qdd)),
        ("adam Function(q, qd, qdd)", lambda: adam(q, qd, qdd)),
    ]
    times = interleaved_medians_us(dict(calls), 2000)
    reference = times["pinocchio.rnea(model, data, q, v, a)"]
    return table(["call (UR5e inverse dynamics, NumPy in and out)", "median [us]",
                  "x Pinocchio"],
                 [[label, f"{t:.2f}", f"{t / reference:.1f}"] for label, t in times.items()])


def batches(urdf: str, n: int = 1000) -> str:
    import pinocchio as pin

    robot = casdyn.load_urdf(urdf)
    compiled = casdyn.load_urdf(urdf).compile()
    model = pin.buildModelFromXML(urdf)
    data = model.createData()
    rng = np.random.default_rng(1)
    Q = np.array([robot.random_configuration(rng) for _ in range(n)])
    V, A = rng.normal(size=(2, n, robot.nq))

    def pinocchio_loop():
        for k in range(n):
            pin.rnea(model, data, Q[k], V[k], A[k])

    times = interleaved_medians_us({
        f"Pinocchio, Python loop over {n}": pinocchio_loop,
        f"casdyn robot.inverse_dynamics(Q, V, A), SX, N={n}":
            lambda: robot.inverse_dynamics(Q, V, A),
        f"casdyn, after robot.compile(), N={n}": lambda: compiled.inverse_dynamics(Q, V, A),
    }, 1, 11)
    times = {label: t / n for label, t in times.items()}
    reference = times[f"Pinocchio, Python loop over {n}"]
    return table(["UR5e inverse dynamics, batch", "per sample [us]", "x Pinocchio loop"],
                 [[label, f"{t:.3f}", f"{t / reference:.2f}"] for label, t in times.items()])


def scaling(bench_models, results: dict) -> str:
    """Compiled time over the random chains: the log-log exponent the issue asks for, and the
    cost each added link brings (constant for linear growth, whatever the intercept)."""
    sizes = [6, 12, 24, 48]
    fit = lambda t: np.polyfit(np.log(sizes), np.log(t), 1)[0]  # noqa: E731
    rows = []
    for k, function in OURS:
        graphs = []
        for n in sizes:
            robot = casdyn.load_urdf(bench_models[f"chain{n}"][0])
            options = {} if k == "M" else {"fext": False}
            graphs.append(robot.function(function, **options).n_instructions())
        for who, column in (("casdyn", 0), ("Pinocchio", 1)):
            t = [results[f"chain{n}"][k][column] for n in sizes]
            per_link = " / ".join(f"{(b - a) / (m - n):.0f}" for a, b, n, m in
                                  zip(t, t[1:], sizes, sizes[1:], strict=False))
            line = np.polyfit(sizes, t, 1)
            rows.append([k, who, *(f"{x:.0f}" for x in t), f"{fit(t):.2f}", per_link,
                         f"{line[1]:.0f}", f"{fit(graphs):.2f}" if who == "casdyn" else "-"])
    return table(["fn", "engine", *(f"chain{n} [ns]" for n in sizes), "exponent",
                  "ns per added link (6-12 / 12-24 / 24-48)", "intercept of a line [ns]",
                  "graph-size exponent"], rows)


_CONSTRUCTION = """
import sys, time, casdyn
urdf, names = sys.stdin.read(), sys.argv[1:]
started = time.perf_counter()
robot = casdyn.load_urdf(urdf)
for name in names:
    robot.function(name)
print(time.perf_counter() - started)
"""


def construction(urdf: str, repeats: int = 3) -> str:
    """Median over fresh processes (as a user would start) of URDF text -> Functions."""
    dynamics = ["inverse_dynamics", "forward_dynamics", "mass_matrix", "velocity_product",
                "gravity_torque", "center_of_mass"]
    derivatives = ["inverse_dynamics_derivatives", "forward_dynamics_derivatives"]
    rows = []
    for label, names in [("dynamics (ID, FD, M, C, g, COM)", dynamics),
                         ("dynamics + derivatives of ID and FD", dynamics + derivatives)]:
        times = [float(subprocess.run([sys.executable, "-c", _CONSTRUCTION, *names],
                                      input=urdf, capture_output=True, text=True,
                                      check=True).stdout)
                 for _ in range(repeats)]
        rows.append([label, f"{statistics.median(times):.2f}"])
    return table([f"48-link chain: URDF -> Functions (median of {repeats} fresh processes)",
                  "seconds"], rows)


def floating_models() -> dict[str, str]:
    """The floating-base benchmark robots, from example-robot-data (a test dependency)."""
    from importlib.metadata import distribution

    root = Path(distribution("example-robot-data").locate_file(
        "cmeel.prefix/share/example-robot-data/robots"))
    return {"solo12": (root / "solo_description/robots/solo12.urdf").read_text(),
            "TALOS": (root / "talos_data/robots/talos_reduced.urdf").read_text()}


def floating_graph_sizes(urdfs: dict[str, str]) -> str:
    """M, C qd + g and FD (without external forces) against adam's floating-base Functions."""
    rows = []
    for name, urdf in urdfs.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", casdyn.ModelWarning)
            robot = casdyn.load_urdf(urdf, floating_base=True)
        ours = {"M": robot.function("mass_matrix").n_instructions(),
                "h": robot.function("bias_force").n_instructions(),
                "FD": robot.function("forward_dynamics", fext=False).n_instructions()}
        adam = peers.adam_floating_sizes(urdf, robot.body_names[0], robot.joint_names[1:])
        labels = {"M": "M", "h": "C qd + g", "FD": "FD"}
        rows += [[name, labels[k], ours[k], adam[k], f"{ours[k] / adam[k]:.2f}"] for k in ours]
    return table(["model", "fn", "casdyn", "adam (body-fixed)", "casdyn / adam"], rows)


def floating_speed(urdfs: dict[str, str], rounds: int, calls: int) -> str:
    rows = []
    for name, urdf in urdfs.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", casdyn.ModelWarning)
            results = native.run(f"{name}-floating", urdf, rounds, calls, derivatives=True,
                                 floating_base=True)
        rows += speed_rows(name, results)
    return table(SPEED_HEADER, rows)


def ad_twice_size(robot, dynamics: str) -> int:
    """Instructions (with CSE) of the four second-order tensors of ``dynamics``
    (``inverse_dynamics`` or ``forward_dynamics``, without fext) by CasADi's AD applied twice,
    along ``q`` both times as casdyn defines it: the Jacobian in ``h`` at ``h = 0`` of the
    derivative at ``q ⊕ h``."""
    nv = robot.nv
    q, qd, x = ca.SX.sym("q", robot.nq), ca.SX.sym("qd", nv), ca.SX.sym("x", nv)
    h = ca.SX.sym("h", nv)
    moved = robot.function("integrate")(q, h)

    def along_q(expression):
        jacobian = ca.jacobian(ca.substitute(expression, q, moved), h)
        return ca.substitute(jacobian, h, ca.DM.zeros(nv))

    y = robot.function(dynamics, fext=False)(q, qd, x)
    by_q, by_qd, by_x = along_q(y), ca.jacobian(y, qd), ca.jacobian(y, x)
    twice = [along_q(ca.vec(by_q)), ca.jacobian(ca.vec(by_qd), qd),
             ca.jacobian(ca.vec(by_q), qd), along_q(ca.vec(by_x))]
    return ca.Function("twice", [q, qd, x], twice, {"cse": True}).n_instructions()


def second_order(bench_models, urdfs: dict[str, str], rounds: int, calls: int) -> str:
    """The second-order derivatives: d2(ID) compiled against Pinocchio's C++
    ComputeRNEASecondOrderDerivatives (one process), and both Functions' graphs against
    CasADi's AD applied twice."""
    cases = [("UR5e", bench_models["UR5e"][0], False),
             ("chain12", bench_models["chain12"][0], False),
             ("solo12", urdfs["solo12"], True), ("TALOS", urdfs["TALOS"], True)]
    rows = []
    for name, urdf, floating in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", casdyn.ModelWarning)
            robot = casdyn.load_urdf(urdf, floating_base=floating)
            ours, theirs, diff = native.run(f"{name}-second", urdf, rounds, calls, second=True,
                                            floating_base=floating)["d2ID"]
        sizes = []
        for dynamics in ("inverse_dynamics", "forward_dynamics"):
            if dynamics == "forward_dynamics" and robot.nv > 20:
                sizes.append("-")  # 4 nv^3 entries: not built for TALOS
                continue
            mine = robot.function(f"{dynamics}_second_derivatives", fext=False).n_instructions()
            sizes.append(f"{mine:,} / {ad_twice_size(robot, dynamics):,}")
        rows.append([name + (" (floating)" if floating else ""), robot.nv, f"{ours:.0f}",
                     f"{theirs:.0f}", f"{ours / theirs:.2f}", f"{diff:.0e}", *sizes])
    return table(["model", "nv", "casdyn d2(ID) [ns]", "Pinocchio C++ [ns]", "ratio",
                  "max abs diff", "graph d2(ID): casdyn / AD twice",
                  "graph d2(FD): casdyn / AD twice"], rows)


# contacts of the benchmark: solo12's four point feet, TALOS's two 6-D soles (ankle links);
# Jdot of the first of them
TASK_CONTACTS = {"solo12": [casdyn.Contact(f"{leg}_FOOT") for leg in ("FL", "FR", "HL", "HR")],
                 "TALOS": [casdyn.Contact(f"leg_{side}_6_link", "6d")
                           for side in ("left", "right")]}


def task_graph_sizes(urdfs: dict[str, str]) -> str:
    """The centroidal momentum matrix and a foot's Jdot against adam's floating-base
    Functions: body-fixed representation (Jdot in the foot's axes: casdyn's
    ``reference_frame="local"``, the like-for-like pair) and, for casdyn's base-frame Jdot,
    adam's mixed one (base-frame axes too, but the base twist in mixed form); casdyn's other
    new functions for scale."""
    rows = []
    for name, urdf in urdfs.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", casdyn.ModelWarning)
            robot = casdyn.load_urdf(urdf, floating_base=True)
        foot = TASK_CONTACTS[name][0].body
        adam = peers.adam_task_sizes(urdf, robot.body_names[0], robot.joint_names[1:], foot)
        ours = [("A_G", "centroidal_momentum_matrix", {}, "A_G", "body-fixed"),
                (f"Jdot ({foot}, local)", "jacobian_time_derivative",
                 {"body": foot, "reference_frame": "local"}, "Jdot", "body-fixed"),
                (f"Jdot ({foot}, base)", "jacobian_time_derivative", {"body": foot},
                 "Jdot mixed", "mixed")]
        for label, function, options, theirs, representation in ours:
            size = robot.function(function, **options).n_instructions()
            rows.append([name, label, size, adam[theirs], representation,
                         f"{size / adam[theirs]:.2f}"])
        contacts = TASK_CONTACTS[name]
        for label, function, options in [
                ("h_G", "centroidal_momentum", {}),
                ("Adot_G qd", "centroidal_momentum_bias", {}),
                (f"contact dynamics ({len(contacts)} {contacts[0].kind})", "contact_dynamics",
                 {"contacts": contacts, "fext": False}),
                ("impulse dynamics", "impulse_dynamics", {"contacts": contacts})]:
            rows.append([name, label, robot.function(function, **options).n_instructions(),
                         "-", "-", "-"])
    return table(["model", "fn", "casdyn", "adam", "adam's representation", "casdyn / adam"],
                 rows)


TASK_PEERS = {"A_G": "computeCentroidalMap", "contact": "constraintDynamics"}


def task_speed(urdfs: dict[str, str], rounds: int, calls: int) -> str:
    rows = []
    for name, urdf in urdfs.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", casdyn.ModelWarning)
            results = native.run_task(name, urdf, TASK_CONTACTS[name], rounds, calls)
        rows += speed_rows(name, results, lambda k: f"{k} vs {TASK_PEERS[k]}")
    return table(SPEED_HEADER, rows)


def regressor_table(ur5e_urdf: str, rounds: int, calls: int) -> str:
    """The joint-torque regressor of the UR5e and TALOS's 7-dof left arm: graph size and
    compiled time against Pinocchio's computeJointTorqueRegressor (C++, same process)."""
    from importlib.metadata import distribution

    root = Path(distribution("example-robot-data").locate_file(
        "cmeel.prefix/share/example-robot-data/robots"))
    arm = (root / "talos_data/robots/talos_left_arm.urdf").read_text()
    rows = []
    for name, urdf in (("UR5e", ur5e_urdf), ("TALOS left arm", arm)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", casdyn.ModelWarning)
            robot = casdyn.load_urdf(urdf)
            size = robot.function("regressor").n_instructions()
            ours, theirs, diff = native.run(f"{name}-regressor".replace(" ", "_"), urdf,
                                            rounds, calls, regressor=True)["Y"]
        rows.append([name, f"{robot.nv} x {10 * len(robot.model.joints)}", size, f"{ours:.0f}",
                     f"{theirs:.0f}", f"{ours / theirs:.2f}", f"{diff:.0e}"])
    return table(["model", "Y", "casdyn instructions", "casdyn C [ns]", "Pinocchio C++ [ns]",
                  "ratio", "max abs diff"], rows)


EXPORTED = ("inverse_dynamics", "forward_dynamics", "mass_matrix", "velocity_product",
            "gravity_torque", "bias_force", "inverse_dynamics_derivatives",
            "forward_dynamics_derivatives")


def export_time(urdf: str) -> str:
    """Wall time of ``export_c`` (default flags) of the floating TALOS's dynamics and both
    derivative functions, from a fresh process (the Functions built there too) and an empty
    compile cache (no object compiled before)."""
    script = (
        "import sys, time, tempfile, casdyn\n"
        "robot = casdyn.load_urdf(sys.stdin.read(), floating_base=True)\n"
        f"names = {EXPORTED!r}\n"
        "started = time.perf_counter()\n"
        "sizes = [robot.function(n).n_instructions() for n in names]\n"
        "built = time.perf_counter()\n"
        "with tempfile.TemporaryDirectory() as d:\n"
        "    robot.export_c(d, names)\n"
        "print(built - started, time.perf_counter() - built, sum(sizes))\n")
    with tempfile.TemporaryDirectory(prefix="casdyn-cache-") as cache:  # a first export
        out = subprocess.run([sys.executable, "-c", script], input=urdf, capture_output=True,
                             text=True, check=True,
                             env={**os.environ, "CASDYN_CACHE": cache}).stdout.split()
    build, export, size = float(out[0]), float(out[1]), int(out[2])
    return table(["floating TALOS: ID, FD, M, C qd, g, C qd + g, d(ID), d(FD)", "value"],
                 [["instructions in all", f"{size:,}"],
                  ["building the Functions [s]", f"{build:.1f}"],
                  ["export_c: C, compiled, loaded [s]", f"{export:.1f}"]])


def realtime_mpc() -> str:
    """examples/mpc.py's closed loop (300 steps at 100 Hz): RTI with HPIPM vs Ipopt."""
    sys.path.insert(0, str(HERE.parent / "examples"))
    import mpc

    rows = []
    for solver, label in (("rti", "real-time iteration, HPIPM"),
                          ("ipopt", "Ipopt to convergence")):
        solve_ms, error = mpc.main(steps=mpc.STEPS, solver=solver)
        rows.append([label, f"{np.median(solve_ms):.2f}", f"{np.percentile(solve_ms, 95):.2f}",
                     f"{solve_ms.max():.2f}", f"{np.sum(solve_ms <= 1e3 * mpc.DT)} of "
                     f"{len(solve_ms)}", f"{np.sqrt(np.mean(error ** 2)):.4f}"])
    return table(["UR5e MPC, 100 Hz, horizon 25", "median [ms]", "p95 [ms]", "max [ms]",
                  "within 10 ms", "tracking RMS [rad]"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    parser.add_argument("--only", nargs="+", metavar="WORD",
                        help="run the sections whose titles contain one of these words")
    args = parser.parse_args()
    rounds, calls = (5, 500) if args.quick else (31, 2000)
    bench_models = models.benchmark_models()
    ur5e = bench_models["UR5e"]
    urdfs = floating_models()
    native_results: dict = {}

    def compiled(part: int):
        if not native_results:
            native_results["tables"] = compiled_speed(bench_models, rounds, calls)
        return native_results["tables"][part]

    measured = [
        ("Graph sizes (SX n_instructions, fixed base)", lambda: graph_sizes(bench_models, 24)),
        ("Peer agreement (max relative difference of ID, FD, M at a random state)",
         lambda: agreement(bench_models, 24)),
        ("Compiled speed: casdyn's C (default flags, -march=native) vs Pinocchio's C++, "
         "one process", lambda: compiled(0)),
        ("Compiled derivatives: d(ID)/d(q, qd, qdd) and d(FD)/d(q, qd, tau) vs Pinocchio's "
         "computeRNEADerivatives and computeABADerivatives", lambda: compiled(1)),
        ("Single compiled calls against their floor: operations and dependency depth",
         lambda: floors(bench_models, compiled(2))),
        ("Python call latency", lambda: python_latency(*ur5e)),
        ("Batch evaluation", lambda: batches(ur5e[0])),
        ("Scaling over random chains (compiled, per call; exponent of a log-log fit)",
         lambda: scaling(bench_models, compiled(2))),
        ("Construction time", lambda: construction(bench_models["chain48"][0])),
        ("Real-time MPC (examples/mpc.py, UR5e, 300 closed-loop steps, every solve timed)",
         realtime_mpc),
        ("Identification: the joint-torque regressor, compiled, vs Pinocchio's "
         "computeJointTorqueRegressor, one process", lambda: regressor_table(ur5e[0], rounds,
                                                                           calls)),
        ("Floating base: graph sizes (SX n_instructions) vs adam, example-robot-data models",
         lambda: floating_graph_sizes(urdfs)),
        ("Floating base: compiled speed vs Pinocchio's C++ (JointModelFreeFlyer), one process; "
         "derivatives in the tangent space", lambda: floating_speed(urdfs, rounds, calls)),
        ("Second-order derivatives: d2(ID) compiled vs Pinocchio's C++ "
         "ComputeRNEASecondOrderDerivatives, one process; graph sizes (SX n_instructions) "
         "against CasADi's AD applied twice", lambda: second_order(bench_models, urdfs, rounds,
                                                                    calls)),
        ("Export time (default flags, a fresh process, an empty compile cache; large "
         "functions in files of their own, compiled in parallel)",
         lambda: export_time(urdfs["TALOS"])),
        ("Task space and contacts: graph sizes (SX n_instructions) vs adam",
         lambda: task_graph_sizes(urdfs)),
        ("Task space and contacts: compiled speed vs Pinocchio's C++, one process (solo12: "
         "four point feet; TALOS: two 6-D feet; states the contacts allow)",
         lambda: task_speed(urdfs, rounds, calls)),
    ]
    wanted = [title for title, _ in measured
              if not args.only or any(word.lower() in title.lower() for word in args.only)]
    if not wanted:
        parser.error(f"no section title contains any of {args.only}")
    machine = results_file.machine(("casadi", "numpy", "pin", "urdf2casadi", "adam-robotics"))
    for title, make in measured:
        if title not in wanted:
            continue
        body = make()
        print(f"\n{title}\n{body}", flush=True)
        if not args.quick:  # each section kept as soon as it is measured; a smoke run's
            # numbers are not results
            path = results_file.update([(title, body)], "python benchmarks/run.py", machine)
            print(f"written to {path}", flush=True)


if __name__ == "__main__":
    main()
