"""Export the UR5e's dynamics to C, compile, load, and compare with the SX functions.

Run:  python examples/codegen.py [--out DIR] [--quick]
"""

import argparse
import tempfile
import time

import numpy as np

import casdyn

FUNCTIONS = ["inverse_dynamics", "forward_dynamics", "mass_matrix"]
CALLS, BATCH = 2000, 1000
QUICK_CALLS = 200  # --quick (the tests): fewer timed calls


def per_call_us(function, args, calls=CALLS):
    """Median over 5 rounds of the time per call, in microseconds."""
    rounds = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(calls):
            function.call(args)
        rounds.append((time.perf_counter() - started) / calls * 1e6)
    return float(np.median(rounds))


def main(out=None, calls=CALLS):
    """Export into ``out``, or into a temporary directory removed afterwards."""
    if out is None:
        with tempfile.TemporaryDirectory(prefix="casdyn-codegen-") as scratch:
            return main(scratch, calls)
    robot = casdyn.load_robot("ur5e")
    started = time.perf_counter()
    compiled = robot.export_c(out, [(name, {"fext": False}) for name in FUNCTIONS[:2]]
                              + [FUNCTIONS[2]])
    print(f"exported, compiled (-O3) and loaded {len(compiled)} functions in "
          f"{time.perf_counter() - started:.1f} s into {out}")

    rng = np.random.default_rng(0)
    q, qd, x = robot.random_configuration(rng), *rng.normal(size=(2, robot.nq))
    print(f"\n{'function':<30}{'SX [us/call]':>14}{'C [us/call]':>13}"
          f"{'SX batch [us]':>15}{'C batch [us]':>14}{'max |diff|':>12}")
    for name, c_function in compiled.items():
        sx_function = robot.function(name.removesuffix("_nofext"),
                                     **({"fext": False} if name.endswith("_nofext") else {}))
        args = [q, qd, x][: sx_function.n_in()]
        difference = max(float(np.abs((a - b).full()).max())
                         for a, b in zip(c_function.call(args), sx_function.call(args),
                                         strict=True))
        # a batch through Function.map shows the evaluation cost without Python's call cost
        batch_args = [np.tile(np.reshape(a, (-1, 1)), (1, BATCH)) for a in args]
        rounds = max(2, calls // 100)
        sx_batch = per_call_us(sx_function.map(BATCH), batch_args, rounds) / BATCH
        c_batch = per_call_us(c_function.map(BATCH), batch_args, rounds) / BATCH
        print(f"{name:<30}{per_call_us(sx_function, args, calls):>14.2f}"
              f"{per_call_us(c_function, args, calls):>13.2f}{sx_batch:>15.3f}{c_batch:>14.3f}"
              f"{difference:>12.1e}")
    print("\nA single call from Python is dominated by CasADi's call overhead; in a batch (or "
          "inside a solver) the compiled code's speed shows.")
    return compiled


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="directory for the generated files (default: a temporary "
                        "directory, removed at the end)")
    parser.add_argument("--quick", action="store_true",
                        help=f"time {QUICK_CALLS} calls instead of {CALLS}")
    args = parser.parse_args()
    main(args.out, QUICK_CALLS if args.quick else CALLS)
