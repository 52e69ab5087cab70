"""A dataset of dynamics on many random states, computed on a Dask cluster.

Inverse and forward dynamics and both their derivatives (the state-space Jacobians an MPC or
a learned model needs) of a shipped robot, evaluated on random states (uniform within the
joint limits, normal rates and torques), in chunks: each chunk is one Dask task that draws
its states from its own seed, evaluates them in batched calls of the compiled Functions
(robots pickle; the library is compiled once here and found by every worker in casdyn's
disk cache)
and writes them to ``chunk_NNNNN.npz`` in the output directory. The run is timed for each
number of workers asked for, on a ``LocalCluster`` of worker processes by default or on the
cluster at ``--scheduler``; it prints states per second and a progress line.

Needs ``pip install "casdyn[dask]"``. Run:
    python examples/dataset.py [--robot ur5e] [--states 1000000] [--workers 1 2]
                               [--scheduler tcp://host:8786] [--out DIR] [--quick]
(10^6 UR5e states take about 1.7 GB of .npz files: 210 numbers per state.)
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import casdyn

CHUNK = 50_000  # states per task
QUICK_STATES, QUICK_CHUNK = 20_000, 5_000  # --quick (the tests)
FUNCTIONS = [(name, {"fext": False}) for name in (
    "inverse_dynamics", "forward_dynamics", "inverse_dynamics_derivatives",
    "forward_dynamics_derivatives")]


def evaluate_chunk(robot: casdyn.RigidBodyTree, index: int, size: int, out: str) -> int:
    """Draw ``size`` states from seed ``index``, evaluate, write ``chunk_<index>.npz``;
    return ``size``. Runs on a worker."""
    if not robot.compiled_functions:
        robot.compile(FUNCTIONS)
    rng = np.random.default_rng(index)
    q = robot.random_configuration(rng, n=size)
    qd, x = rng.normal(size=(2, size, robot.nv))  # x: qdd for ID, tau for FD
    tau, qdd = robot.inverse_dynamics(q, qd, x), robot.forward_dynamics(q, qd, x)
    dtau_dq, dtau_dqd, _ = robot.inverse_dynamics_derivatives(q, qd, x)  # (the third is M)
    dqdd_dq, dqdd_dqd, dqdd_dtau = robot.forward_dynamics_derivatives(q, qd, x)
    np.savez(Path(out) / f"chunk_{index:05d}.npz", q=q, qd=qd, x=x, tau=tau, qdd=qdd,
             dtau_dq=dtau_dq, dtau_dqd=dtau_dqd, dqdd_dq=dqdd_dq, dqdd_dqd=dqdd_dqd,
             dqdd_dtau=dqdd_dtau)
    return size


def run(client, robot, states: int, chunk: int, out: Path) -> float:
    """Evaluate ``states`` in chunks on ``client``'s cluster; return states per second."""
    from distributed import as_completed

    robot_on_cluster = client.scatter(robot, broadcast=True)  # one copy per worker
    sizes = [min(chunk, states - start) for start in range(0, states, chunk)]
    started = time.perf_counter()
    futures = [client.submit(evaluate_chunk, robot_on_cluster, k, size, str(out), pure=False)
               for k, size in enumerate(sizes)]
    done = 0
    for future in as_completed(futures):
        done += future.result()
        bar = "#" * (30 * done // states)
        print(f"\r  [{bar:<30}] {done:>9,} / {states:,} states", end="", file=sys.stderr,
              flush=True)
    print(file=sys.stderr)
    return states / (time.perf_counter() - started)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", default="ur5e", help="a shipped robot (default ur5e)")
    parser.add_argument("--states", type=int, default=1_000_000)
    parser.add_argument("--chunk", type=int, default=CHUNK, help="states per task")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2],
                        help="worker counts of the local cluster to time (default 1 2)")
    parser.add_argument("--scheduler", help="address of a running Dask scheduler")
    parser.add_argument("--out", help="directory for the .npz chunks (default: a temporary "
                        "one, removed at the end)")
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_STATES:,} states in chunks of {QUICK_CHUNK:,} (the tests)")
    args = parser.parse_args(argv)
    from distributed import Client, LocalCluster

    states, chunk = (QUICK_STATES, QUICK_CHUNK) if args.quick else (args.states, args.chunk)
    robot = casdyn.load_robot(args.robot)
    robot.compile(FUNCTIONS)  # once here, so that the workers find it in the disk cache
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(args.out) if args.out else Path(scratch)
        out.mkdir(parents=True, exist_ok=True)
        print(f"{robot.name}: ID, FD and their derivatives (nv = {robot.nv}) on "
              f"{states:,} random states, chunks of {chunk:,}, into {out}")
        if args.scheduler:
            with Client(args.scheduler) as client:
                workers = len(client.scheduler_info()["workers"])
                rate = run(client, robot, states, chunk, out)
                print(f"{workers} workers at {args.scheduler}: {rate:,.0f} states/s")
            return
        for workers in args.workers:
            with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, Client(cluster) as client:
                rate = run(client, robot, states, chunk, out)
            print(f"{workers} worker{'s' if workers > 1 else ''}: {rate:,.0f} states/s")
        files = sorted(out.glob("chunk_*.npz"))
        with np.load(files[0]) as first:
            check = np.abs(robot.inverse_dynamics(first["q"][:100], first["qd"][:100],
                                                  first["qdd"][:100]) - first["x"][:100])
        print(f"{len(files)} files, {sum(f.stat().st_size for f in files) / 1e6:.0f} MB; "
              f"check ID(FD(tau)) = tau on the first 100: {check.max():.1e}")


if __name__ == "__main__":
    main()
