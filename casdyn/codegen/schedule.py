"""An order of a straight-line graph's instructions that keeps few values alive at once.

A GPU thread holds at most 255 32-bit registers (about 127 doubles); every value alive beyond
that is spilled to local memory, which for a long kernel is traffic to the GPU's memory, not
arithmetic. CasADi orders an SX graph's instructions by a depth-first search from the
outputs, which computes a shared subexpression where it is first met and keeps it alive to
its last use. :func:`low_pressure_order` reorders them greedily, one instruction at a time:
of the instructions whose operands are computed, the one that leaves the fewest values alive
(its result, less the operands it reads last), ties to the one reading the most recently
computed values. Inputs and constants are placed just before their first reader. Only the
order changes, never an operation or its operands.

A kernel gains where CasADi's order spills: on an H200 (float64, a million samples, one
run; docs/gpu.md), solo12's forward dynamics ran in 0.85 instead of 2.02 ns per sample, the
floating TALOS's mass matrix in 4.2 instead of 6.4 (287 values alive at most instead of 502)
and its inverse dynamics in 0.86 instead of 1.21 (199 instead of 379). Where few values spill
the greedy order can lose (the UR5e's FD derivatives, 173 values alive: 0.94 against 0.63),
so :mod:`casdyn.codegen.cuda` reorders only graphs whose CasADi order keeps more than
:data:`casdyn.sizes.CUDA_REORDER_ALIVE` values alive.
"""

from __future__ import annotations

from collections.abc import Sequence


def live_peak(operands: Sequence[Sequence[int]]) -> int:
    """The most values alive at once when the instructions run in their order: instruction
    ``k`` reads the values of ``operands[k]``; a value is alive from its instruction to its
    last reader."""
    last = {p: k for k, ops in enumerate(operands) for p in ops}
    ending: dict[int, int] = {}
    for k in last.values():
        ending[k] = ending.get(k, 0) + 1
    alive = peak = 0
    for k in range(len(operands)):
        alive -= ending.get(k, 0)
        if k in last:
            alive += 1
        peak = max(peak, alive)
    return peak


def low_pressure_order(operands: Sequence[Sequence[int]],
                       leaves: Sequence[bool]) -> list[int]:
    """A topological order of the graph whose instruction ``k`` reads the values of
    ``operands[k]`` (earlier instructions' indices) and is an input or constant where
    ``leaves[k]`` (see the module's docstring). Instructions that nothing reads and that
    are not leaves (outputs) are all placed; unread leaves are dropped."""
    n = len(operands)
    distinct = [sorted(set(ops)) for ops in operands]
    users: list[list[int]] = [[] for _ in range(n)]
    for k, ops in enumerate(distinct):
        for p in ops:
            users[p].append(k)
    unread = [len(u) for u in users]  # readers not yet placed, per value
    waiting = [sum(1 for p in ops if not leaves[p]) for ops in distinct]
    placed = [False] * n
    stamp = [0] * n  # when each value was computed
    order: list[int] = []
    ready = {k for k in range(n) if not leaves[k] and waiting[k] == 0}

    def place(k: int) -> None:
        placed[k] = True
        order.append(k)
        stamp[k] = len(order)

    while ready:
        best, chosen = None, -1
        for k in ready:
            freed = opened = recent = 0
            for p in distinct[k]:
                if leaves[p] and not placed[p]:
                    opened += unread[p] > 1  # the leaf stays alive for its other readers
                elif unread[p] == 1:
                    freed += 1
                recent = max(recent, stamp[p])
            key = ((1 if users[k] else 0) + opened - freed, -recent, k)
            if best is None or key < best:
                best, chosen = key, k
        ready.discard(chosen)
        for p in distinct[chosen]:
            if leaves[p] and not placed[p]:
                place(p)
            unread[p] -= 1
        place(chosen)
        for u in users[chosen]:
            waiting[u] -= 1
            if waiting[u] == 0:
                ready.add(u)
    return order
