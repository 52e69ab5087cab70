"""The low-pressure order of a graph's instructions (casdyn.codegen.schedule): a topological
order of the same instructions that keeps fewer values alive than CasADi's where CasADi's
spills; the CUDA source uses it (tests/test_cuda_source.py runs the reordered kernels)."""

from __future__ import annotations

import casadi as ca
import pytest

import casdyn
from casdyn import sizes
from casdyn.codegen import cuda
from casdyn.codegen.schedule import live_peak, low_pressure_order


def _graph(function: ca.Function):
    listed = cuda._instructions(function)
    operands = cuda._producers(listed)
    leaves = [i.op in (ca.OP_INPUT, ca.OP_CONST) for i in listed]
    return listed, operands, leaves


def _renumbered(order: list[int], operands) -> list[list[int]]:
    position = {k: i for i, k in enumerate(order)}
    return [[position[p] for p in operands[k]] for k in order]


@pytest.mark.parametrize("name", ["mass_matrix", "inverse_dynamics"])
def test_the_order_is_topological_complete_and_keeps_fewer_values_alive(name):
    robot = casdyn.load_robot("solo12", floating_base=True)
    listed, operands, leaves = _graph(robot.function(name))
    order = low_pressure_order(operands, leaves)
    assert len(order) == len(set(order))
    read = {p for ops in operands for p in ops}
    assert set(order) == {k for k in range(len(listed)) if not leaves[k] or k in read}
    placed: set[int] = set()
    for k in order:
        assert set(operands[k]) <= placed, "an instruction before one of its operands"
        placed.add(k)
    before, after = live_peak(operands), live_peak(_renumbered(order, operands))
    assert after < 0.75 * before, (before, after)


def test_live_peak_counts_values_from_their_instruction_to_their_last_reader():
    # 0, 1: leaves; 2 = f(0, 1); 3 = g(0); 4 = h(2, 3): 0 is alive until 3, 1 until 2, 2
    # and 3 until 4; a result takes the place of an operand read for the last time
    assert live_peak([[], [], [0, 1], [0], [2, 3]]) == 2
    # three leaves all read by the last instruction: all three alive before it
    assert live_peak([[], [], [], [0, 1, 2]]) == 3


def test_the_cuda_source_reorders_only_graphs_that_keep_many_values_alive():
    arm = casdyn.load_robot("ur5e")
    legged = casdyn.load_robot("solo12", floating_base=True)
    small = arm.function("inverse_dynamics")
    large = legged.function("forward_dynamics")
    assert live_peak(_graph(small)[1]) <= sizes.CUDA_REORDER_ALIVE < live_peak(_graph(large)[1])
    assert not cuda.function_source(small, "arm").reordered
    source = cuda.function_source(large, "legged")
    assert source.reordered and source.instructions == large.n_instructions()
