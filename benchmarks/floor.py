"""The floor of one compiled call: how many arithmetic operations a Function's graph has and
how long its longest chain of dependent ones is.

A single call cannot run faster than its operations can be issued nor faster than its longest
chain of dependent operations completes, one after the other. Both rates are measured on the
machine (:func:`rates`: a C loop of dependent multiplies and adds, and twelve such chains side
by side), so the floor is ``max(operations x issue, depth x latency)``. Calls of the C library
(``sin``, ``cos``, ...) are counted apart and priced as one operation: they are what the floor
leaves out.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import casadi as ca

_LEAVES = (ca.OP_INPUT, ca.OP_CONST, ca.OP_OUTPUT)
_LIBRARY = (ca.OP_SIN, ca.OP_COS, ca.OP_TAN, ca.OP_ASIN, ca.OP_ACOS, ca.OP_ATAN, ca.OP_ATAN2,
            ca.OP_EXP, ca.OP_LOG, ca.OP_POW, ca.OP_SINH, ca.OP_COSH, ca.OP_TANH)


def counts(function: ca.Function) -> tuple[int, int, int]:
    """``(operations, library calls, depth)`` of the SX Function ``function``: its
    instructions that compute (not reading inputs or constants, not writing outputs), those
    of them that call the C library, and the most operations on one chain of dependent ones."""
    writer: dict[int, int] = {}  # work slot -> depth of the value it holds
    operations = calls = deepest = 0
    for k in range(function.n_instructions()):
        op = function.instruction_id(k)
        if op in _LEAVES:
            if op != ca.OP_OUTPUT:
                writer[function.instruction_output(k)[0]] = 0
            continue
        depth = 1 + max((writer[slot] for slot in function.instruction_input(k)), default=0)
        writer[function.instruction_output(k)[0]] = depth
        operations += 1
        calls += op in _LIBRARY
        deepest = max(deepest, depth)
    return operations, calls, deepest


_CHAINS = 12  # independent chains at once: enough to keep every pipe busy
_LOOPS = r"""
#include <stdio.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
                          return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(void) {
  volatile double seed = 1.0000001, step = 1e-9;
  double a = seed, b = step, best[2] = {1e9, 1e9}, t;
  long n = 20000000, i, r;
  for (r = 0; r < 5; ++r) {
    double x = a, DECLARED;
    t = now();
    for (i = 0; i < n; ++i) { x = x * a; x = x + b; }
    t = (now() - t) / (2.0 * n);
    if (t < best[0]) best[0] = t;
    t = now();
    for (i = 0; i < n; ++i) { CHAINS }
    t = (now() - t) / (2.0 * CHAIN_COUNT * n);
    if (t < best[1]) best[1] = t;
    if (x == 0.0 || SUM == 0.0) return 1;
  }
  printf("%.6g %.6g\n", best[0] * 1e9, best[1] * 1e9);
  return 0;
}
""".replace("DECLARED", ", ".join(f"x{j} = a + {j}" for j in range(_CHAINS))).replace(
    "CHAINS", " ".join(f"x{j} = x{j} * a; x{j} = x{j} + b;" for j in range(_CHAINS))).replace(
    "CHAIN_COUNT", str(_CHAINS)).replace("SUM", " + ".join(f"x{j}" for j in range(_CHAINS)))


def rates(compiler: str = "cc") -> tuple[float, float]:
    """``(latency, issue)`` in nanoseconds per operation on this machine: a chain of
    dependent multiplies and adds (each waits for the one before), and twelve such chains at
    once (as many as the processor overlaps), compiled without fused multiply-adds."""
    with tempfile.TemporaryDirectory() as folder:
        source, program = Path(folder) / "rates.c", Path(folder) / "rates"
        source.write_text(_LOOPS)
        subprocess.run([compiler, "-O2", "-march=native", "-ffp-contract=off",
                        "-fno-tree-vectorize", "-o", str(program), str(source)], check=True)
        latency, issue = subprocess.run([str(program)], check=True, capture_output=True,
                                        text=True).stdout.split()
    return float(latency), float(issue)


def floor_ns(operations: int, depth: int, latency: float, issue: float) -> float:
    """The floor of a call of ``operations`` whose longest chain is ``depth`` long, at the
    rates of :func:`rates` (see the module's docstring)."""
    return max(operations * issue, depth * latency)
