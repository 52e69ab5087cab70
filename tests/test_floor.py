"""benchmarks/floor.py's count of a graph's operations and the length of its longest chain
of dependent ones (the floor column of benchmarks/RESULTS.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import casadi as ca

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import floor


def test_operations_calls_and_depth_of_a_small_graph():
    x, y = ca.SX.sym("x"), ca.SX.sym("y")
    # sin(x) * y + x: three operations, one a call, all on one chain; 2 * y beside it
    f = ca.Function("f", [x, y], [ca.sin(x) * y + x, 2 * y])
    assert floor.counts(f) == (4, 1, 3)


def test_the_floor_is_the_slower_of_issuing_and_the_longest_chain():
    assert floor.floor_ns(100, 10, latency=1.0, issue=0.2) == 20.0
    assert floor.floor_ns(100, 30, latency=1.0, issue=0.2) == 30.0
