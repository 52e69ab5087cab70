"""The graph sizes at which casdyn changes how it builds, compiles or calls a Function.

One table, read by every module that takes such a decision (``sizes.NAME``, so that a test
can move one). Sizes are instructions of an SX Function (``Function.n_instructions()``;
for a Function that calls others, the sum over the SX Functions it calls). The
measurements behind each number are in ``docs/performance.md``, "Why these thresholds".
"""

from __future__ import annotations

# A large Function: a long chain's or a humanoid's derivatives (the UR5e's dynamics and
# derivatives are 400-4,000 instructions, the floating TALOS's derivatives 52,036-153,235).
LARGE = 20_000
# A huge one: the C compiler's optimisations cost minutes from here.
HUGE = 150_000

# each decision and the size it is taken at (">=": from it on, ">": above it, "<=": up to it)
DERIVATIVE_CSE_LIMIT = LARGE  # >=: derivative graphs skip CasADi's CSE (functions.size_policy)
RELEASE_GIL = LARGE  # >: numeric calls release the GIL (runtime.entry)
OWN_C_FILE = LARGE  # >=: a C file of its own and the large flags (codegen.source, .build)
LOWEST_OPTIMISATION = HUGE  # >=: the huge flags, -O1 (codegen.build)
KEEP_OBJECT = LARGE  # >=: the object of a C file is kept in the compile cache (codegen.build)
# >=: FD derivatives are FD, ID derivatives and C loops (codegen.forms); below, their SX
# graph, faster there (one process, side by side: chain12's 25,563 instructions 4.42 against
# 4.92 us, solo12's 27,603 5.05 against 5.25, chain14's 34,658 5.91 against 6.20; chain16's
# 45,740 7.65 against 7.45, chain20's 74,829 12.2 against 10.8)
COMPOSED_FROM = 40_000
BATCH_OPTIMISED_AS = LARGE  # the batched C is compiled as a file of at least this size
BATCHED_BY_DEFAULT = LARGE  # <=: compile() writes the batched C (codegen.robot)
BACKGROUND_LARGEST = LARGE  # <=: numeric calls compile in the background (codegen.background)

# Instructions times samples each thread of a batch gets at least (runtime.batch; about 0.3 ms
# of work on one core): on a busy machine a thread may wait for a core, and the batch for its
# slowest thread (UR5e ID, 20,000 samples on two threads of a loaded 2-core machine: median 48
# against 36 ns per sample on one, with outliers of 320). Batches below twice this run in the
# calling thread, straight from the compiled entry point (runtime/entry.c)
BATCH_WORK_PER_THREAD = 8_000_000

# C statements (not instructions): the length from which a function of a portable library
# is cut into parts (codegen.split), and the parts' length
SPLIT_FROM = 12_000
SPLIT_PART = 4_000

# Instructions per stage of the CUDA kernels (codegen.cuda): a graph longer than this is cut
# into stages, launched in turn, whose values meet in a scratch array in the GPU's memory.
# Measured on an H100 (docs/gpu.md): 12,000 against 5,000 runs the floating TALOS's FD in
# 6.3 instead of 11.1 ns per sample and its ID derivatives in 97 instead of 114; each stage
# is its own NVRTC program, compiled in parallel
CUDA_STAGE = 12_000
# The CUDA kernels' instructions are reordered to keep fewer values alive (codegen.schedule)
# in graphs of one stage where CasADi's order keeps more than CUDA_REORDER_ALIVE values alive
# at once. Measured on an H200, float64, N = 1e6 (docs/gpu.md): reordered, solo12's FD took
# 0.85 instead of 2.02 ns per sample, the floating TALOS's M 4.2 instead of 6.4 and its ID 0.86
# instead of 1.21; the UR5e's d(FD) (173 values alive at most, so few spill) 0.94 instead of
# 0.63. In staged graphs the new order moved more values between the stages (TALOS's ID
# derivatives: 2,745 scratch columns against 1,602), and the greedy order's time grows with
# the square of the length (0.3 s for TALOS's FD, 9,758 instructions)
CUDA_REORDER = CUDA_STAGE
CUDA_REORDER_ALIVE = 200
# A stage writing this many outputs or more writes them through an address computation NVVM
# does not see into (codegen.cuda_prelude's casdyn_mad): its strength reduction of the
# outputs' addresses takes time that grows with the square of their number (NVRTC to PTX,
# one stage of solo12's second-order ID derivatives: 2,916 outputs 53 s against 2.7 s,
# 1,956 outputs 14 s). On an H100 (docs/gpu.md), every output so written: those derivatives
# compiled in 57 instead of 174 s and ran in 105.5 against 103.6 ns per sample, the floating
# TALOS's M (688 outputs) in 3.0 instead of 8.7 s, 4.53 against 4.35 ns per sample: under
# this many, seconds of compilation are kept rather than that 4 %
CUDA_FAR_OUTPUTS = 1_000
