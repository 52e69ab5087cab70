"""CUDA C of SX Functions: one GPU thread per sample.

An SX Function is straight-line code: no branch, no loop, no allocation. On a GPU it runs best
as one thread per sample, every thread the same instructions on its own sample. For each
Function :func:`function_source` writes, with the symbol ``S`` it is given:

* ``S_stage<j>``: templates (``T`` = ``double`` or ``float``) holding the instructions, in
  order, in one or more stages. A graph of more than :data:`casdyn.sizes.CUDA_STAGE`
  instructions is cut into stages of about that length; a value computed in one stage and
  read in a later one goes through a scratch column (see below).
* ``__device__ void S(const T* const* arg, T* const* res)``: the Function on one sample, for
  users' own kernels. ``arg[i]`` points to input ``i``'s nonzeros (CasADi's order,
  column-major), NULL for zeros; ``res[j]`` receives output ``j``'s nonzeros, NULL: not
  written. The scratch values of a staged graph live in a local array.
* ``extern "C" __global__ void S_f64(...)`` and ``S_f32(...)`` (one of them per stage,
  ``S_f64_stage<j>``, for a staged graph, launched in order): the batched kernel, sample
  ``k = blockIdx.x * blockDim.x + threadIdx.x < n``. Its parameters, in order::

      long long n, int dense,
      const T* x0, long long x0_sample, long long x0_element,   (one triple per input)
      T* y0, long long y0_sample, long long y0_element,         (one triple per output)
      T* mid                                                    (staged graphs only)

  Nonzero ``c`` of input ``i`` of sample ``k`` is read from ``xi[k * xi_sample + c *
  xi_element]``: array of structures (``(n, nnz)`` C-ordered, NumPy's) is ``sample = nnz,
  element = 1``, structure of arrays (``(nnz, n)``, coalesced on a GPU) ``sample = 1,
  element = n``; ``sample = 0`` shares one value among all samples (an array of zeros
  with ``sample = 0`` gives an input of zeros: no pointer may be NULL, so that no access
  branches). Outputs are written the same way, at the nonzero's index ``c`` when ``dense == 0``,
  at its place in the dense row-major matrix when ``dense == 1`` (structural zeros are not
  written: the caller zeroes them). ``mid`` is the scratch of a staged graph: column ``m`` of
  sample ``k`` at ``mid[m * n + k]``, :attr:`CudaFunction.mid` columns.

The source needs only the CUDA compiler (nvcc or NVRTC, no header). Compiled as plain C++
(``g++ -x c++``) it is also its own CPU emulation: the CUDA keywords become nothing, and
``S_f64_emulate`` / ``S_f32_emulate``, with the kernel's parameters, run the kernels' stages
for every sample in a loop. The tests check the generated source that way where there is no
GPU. Every statement is the SX graph's instruction, in order, except that the sine and the
cosine of one value in one stage are computed together, by one ``sincos`` (one argument
reduction, and one call of its slow path where the compiler would otherwise keep two: on an
H200 the floating TALOS's inverse dynamics ran in 0.71 instead of 0.88 ns per sample). In
double precision the results are CasADi's up to the compiler's contraction of multiply-adds
(nvcc contracts by default) and the device's sin and cos (within 2 units in the last place,
CUDA's manual).
"""

from __future__ import annotations

import re
from typing import NamedTuple

import casadi as ca

from .. import sizes
from ..errors import ExportError
from .cuda_prelude import PRELUDE
from .schedule import live_peak, low_pressure_order
from .simd import literal, operations, substitute

PRECISIONS = {"float64": ("double", "f64"), "float32": ("float", "f32")}

# C++ for each operation, of operands x and y in the precision T
_OPERATIONS = operations("T")


class UnsupportedFunction(ExportError):
    """The Function is not one the CUDA source can be written for (not an SX Function, or
    an operation such as a call of another Function)."""


class CudaFunction(NamedTuple):
    """The CUDA C of one Function (:func:`function_source`) and what its caller needs to
    launch it."""

    symbol: str
    text: str
    stages: int  # kernels per precision, launched in order (S_f64 or S_f64_stage0, ...)
    mid: int  # scratch columns of a staged graph (0 for one stage)
    nnz_in: tuple[int, ...]
    nnz_out: tuple[int, ...]
    dense_out: tuple[int, ...]  # rows * cols of each output
    instructions: int
    stage_texts: tuple[str, ...]  # the stages' templates
    kernel_texts: dict[str, tuple[str, ...]]  # precision -> each stage's kernel
    reordered: bool = False  # instructions in codegen.schedule's order, not CasADi's

    def programs(self, precision: str) -> list[str]:
        """One translation unit per stage, each with its kernel of ``precision`` only (its
        name: :meth:`kernels`): the stages compile independently, in parallel."""
        return [PRELUDE + stage + kernel for stage, kernel in
                zip(self.stage_texts, self.kernel_texts[precision], strict=True)]

    def kernels(self, precision: str) -> list[str]:
        """The kernels' names, in launch order, for ``"float64"`` or ``"float32"``."""
        suffix = PRECISIONS[precision][1]
        if self.stages == 1:
            return [f"{self.symbol}_{suffix}"]
        return [f"{self.symbol}_{suffix}_stage{j}" for j in range(self.stages)]


def _literal(value: float) -> str:
    """``value`` as an exact C++ literal of the precision T."""
    return f"T({literal(value)})"


class _Instruction(NamedTuple):
    op: int
    target: int  # work slot written (output index for OP_OUTPUT)
    args: tuple[int, ...]  # work slots read (input index and nonzero for OP_INPUT)
    extra: float | int  # constant value, or nonzero index of an output


def _instructions(function: ca.Function) -> list[_Instruction]:
    listed = []
    for k in range(function.n_instructions()):
        op = function.instruction_id(k)
        out = function.instruction_output(k)
        args = tuple(function.instruction_input(k))
        if op == ca.OP_OUTPUT:
            listed.append(_Instruction(op, out[0], args, out[1]))
        elif op == ca.OP_CONST:
            listed.append(_Instruction(op, out[0], (), function.instruction_constant(k)))
        elif op in _OPERATIONS or op == ca.OP_INPUT:
            listed.append(_Instruction(op, out[0], args, 0))
        else:
            what = "a call of another Function (a compiled routine such as the convex " \
                "distance's GJK/EPA, which has no CUDA form)" if op == ca.OP_CALL else \
                f"CasADi operation {op}"
            raise UnsupportedFunction(
                f"{function.name()} has an operation the CUDA source does not write: "
                f"{what}; only SX Functions of arithmetic and C math functions are written")
    return listed


def _reads(instruction: _Instruction) -> tuple[int, ...]:
    """The work slots an instruction reads."""
    return () if instruction.op in (ca.OP_INPUT, ca.OP_CONST) else instruction.args


def _producers(listed: list[_Instruction]) -> list[list[int]]:
    """For each instruction, the instructions whose values it reads (CasADi reuses work
    slots: a read is of the slot's last writer)."""
    writer: dict[int, int] = {}
    operands = []
    for k, instruction in enumerate(listed):
        operands.append([writer[slot] for slot in _reads(instruction)])
        if instruction.op != ca.OP_OUTPUT:
            writer[instruction.target] = k
    return operands


def _low_pressure(listed: list[_Instruction]) -> list[_Instruction]:
    """The instructions in the order of :func:`casdyn.codegen.schedule.low_pressure_order`,
    each value in a slot of its own, where CasADi's order keeps more than
    :data:`casdyn.sizes.CUDA_REORDER_ALIVE` values alive at once in a graph of one stage (at
    most :data:`casdyn.sizes.CUDA_REORDER` instructions); else CasADi's order."""
    if len(listed) > sizes.CUDA_REORDER:
        return listed
    operands = _producers(listed)
    if live_peak(operands) <= sizes.CUDA_REORDER_ALIVE:
        return listed
    order = low_pressure_order(operands, [i.op in (ca.OP_INPUT, ca.OP_CONST) for i in listed])
    slot: dict[int, int] = {}
    reordered = []
    for k in order:
        instruction = listed[k]
        if instruction.op in (ca.OP_INPUT, ca.OP_CONST):
            args = instruction.args
        else:
            args = tuple(slot[p] for p in operands[k])
        target = instruction.target
        if instruction.op != ca.OP_OUTPUT:
            target = slot[k] = len(slot)
        reordered.append(instruction._replace(target=target, args=args))
    return reordered


def _stage_plan(listed: list[_Instruction], operands: list[list[int]],
                stage: int) -> tuple[list[int], dict, dict, int]:
    """Cut the instructions (``operands``: :func:`_producers`) into stages of ``stage``
    instructions (instruction ``k`` in stage ``k // stage``). Returns the stages' first
    instructions, and for values that cross a stage boundary: (stage, reading instruction,
    operand position) -> scratch column, producing instruction -> column, and the number of
    columns (a column is reused once the value it held is read no more)."""
    starts = list(range(0, len(listed), stage)) or [0]
    stage_of = [k // stage for k in range(len(listed))]
    last_read: dict[int, int] = {}  # producing instruction -> last stage that reads it
    reads: list[tuple[int, int, int]] = []  # (reading instruction, position, producer)
    for k, producers in enumerate(operands):
        for position, producer in enumerate(producers):
            if stage_of[producer] != stage_of[k]:
                reads.append((k, position, producer))
                last_read[producer] = max(last_read.get(producer, 0), stage_of[k])
    # columns by interval colouring: producer's stage .. last reading stage
    column_of: dict[int, int] = {}
    free_after: list[int] = []  # column -> last stage it is read in
    for producer in sorted(last_read):
        first = stage_of[producer]
        for column, busy in enumerate(free_after):
            if busy < first:
                free_after[column] = last_read[producer]
                column_of[producer] = column
                break
        else:
            column_of[producer] = len(free_after)
            free_after.append(last_read[producer])
    loads = {(k, position): column_of[producer] for k, position, producer in reads}
    return starts, loads, column_of, len(free_after)


def _sine_pairs(listed: list[_Instruction], operands: list[list[int]],
                stage: int) -> dict[int, int]:
    """The sines and cosines of one value in one stage (as :func:`_stage_plan` cuts them),
    as first -> second of each pair (either may come first): :func:`_statements` computes
    both at the first, by one ``sincos`` (one argument reduction, one call of its slow path
    instead of two)."""
    seen: dict[tuple[int, int, int], int] = {}  # (stage, producer, op) -> instruction
    pairs: dict[int, int] = {}
    for k, (instruction, producers) in enumerate(zip(listed, operands, strict=True)):
        if instruction.op in (ca.OP_SIN, ca.OP_COS):
            other = ca.OP_COS if instruction.op == ca.OP_SIN else ca.OP_SIN
            first = seen.pop((k // stage, producers[0], other), None)
            if first is not None and first not in pairs:
                pairs[first] = k
            else:
                seen[(k // stage, producers[0], instruction.op)] = k
    return pairs


def _statements(listed: list[_Instruction], start: int, stop: int, loads: dict,
                stores: dict, dense_place: list[list[int]],
                pairs: dict[int, int]) -> tuple[list[str], int]:
    """The C++ statements of instructions ``start:stop`` and the number of work slots."""
    body: list[str] = []
    slots = 0
    seconds = {second: first for first, second in pairs.items()}
    for k in range(start, stop):
        ins = listed[k]
        operands = [f"m({loads[(k, p)]})" if (k, p) in loads else f"w{slot}"
                    for p, slot in enumerate(_reads(ins))]
        if ins.op == ca.OP_OUTPUT:
            body.append(f"  y({ins.target}, {ins.extra}, "
                        f"{dense_place[ins.target][ins.extra]}, {operands[0]});")
            continue
        slots = max(slots, ins.target + 1)
        if ins.op == ca.OP_INPUT:
            value = f"x({ins.args[0]}, {ins.args[1]})"
        elif ins.op == ca.OP_CONST:
            value = _literal(ins.extra)
        elif k in pairs:  # sin and cos of one value: s<k>, c<k>
            body.append(f"  T s{k}, c{k};\n  casdyn_sincos({operands[0]}, &s{k}, &c{k});")
            value = f"{'s' if ins.op == ca.OP_SIN else 'c'}{k}"
        elif k in seconds:
            value = f"{'s' if ins.op == ca.OP_SIN else 'c'}{seconds[k]}"
        else:
            names = {"x": operands[0], "y": operands[1] if len(operands) > 1 else ""}
            value = substitute(_OPERATIONS[ins.op], names)
        body.append(f"  w{ins.target} = {value};")
        if k in stores:
            body.append(f"  m.set({stores[k]}, w{ins.target});")
    return body, slots


def function_source(function: ca.Function, symbol: str, *,
                    stage: int | None = None) -> CudaFunction:
    """The CUDA C of the SX Function ``function`` under the symbol ``symbol`` (see the
    module's docstring): its stage templates, device function and kernels for both
    precisions (each kernel inside ``#ifndef CASDYN_NO_FLOAT64`` / ``CASDYN_NO_FLOAT32``).
    ``stage``: instructions per stage (default :data:`casdyn.sizes.CUDA_STAGE`)."""
    if not function.is_a("SXFunction"):
        raise UnsupportedFunction(
            f"{function.name()} is not an SX Function: its CUDA source cannot be written "
            "(expand it first: Function.expand())")
    casadi_order = _instructions(function)
    listed = _low_pressure(casadi_order)
    stage = stage or sizes.CUDA_STAGE
    operands = _producers(listed)
    starts, loads, stores, mid = _stage_plan(listed, operands, stage)
    pairs = _sine_pairs(listed, operands, stage)
    n_in, n_out = function.n_in(), function.n_out()
    dense_place = []
    for i in range(n_out):
        cols = function.size_out(i)[1]
        rows, columns = function.sparsity_out(i).get_triplet()
        dense_place.append([r * cols + c for r, c in zip(rows, columns, strict=True)])
    parts, far = [], []  # far: the stage writes many outputs (see PRELUDE's casdyn_mad)
    for j, first in enumerate(starts):
        stop = starts[j + 1] if j + 1 < len(starts) else len(listed)
        far.append(sum(listed[k].op == ca.OP_OUTPUT for k in range(first, stop))
                   >= sizes.CUDA_FAR_OUTPUTS)
        body, slots = _statements(listed, first, stop, loads, stores, dense_place,
                                   pairs)
        declared = f"  T {', '.join(f'w{s}' for s in range(slots))};\n" if slots else ""
        parts.append(_STAGE.format(symbol=symbol, j=j, declarations=declared,
                                   body="\n".join(body)))
    params = _parameters(n_in, n_out, mid > 0)
    text = "".join(parts) + _device_function(symbol, len(starts), n_in, n_out, mid)
    kernel_texts = {}
    for precision, (real, suffix) in PRECISIONS.items():
        guard = f"CASDYN_NO_{precision.upper()}"
        kernels = [_kernel(symbol, suffix, real, j, len(starts), n_in, n_out, mid,
                           far[j]) for j in range(len(starts))]
        kernel_texts[precision] = tuple(kernels)
        text += f"#ifndef {guard}\n" + "".join(kernels) + _launcher(
            symbol, suffix, real, len(starts), params) + _emulation(
            symbol, suffix, real, len(starts), params) + f"#endif /* {guard} */\n"
    header = (f"\n/* {function.name()}: {n_in} inputs, {n_out} outputs, "
              f"{len(listed)} instructions in {len(starts)} stage(s) */\n")
    return CudaFunction(
        symbol, header + text, len(starts), mid,
        tuple(function.nnz_in(i) for i in range(n_in)),
        tuple(function.nnz_out(i) for i in range(n_out)),
        tuple(function.numel_out(i) for i in range(n_out)), len(listed), tuple(parts),
        kernel_texts, listed is not casadi_order)


def _parameters(n_in: int, n_out: int, staged: bool) -> list[tuple[str, str]]:
    """(type with T for the precision, name) of the kernel's parameters."""
    params = [("long long", "n"), ("int", "dense")]
    for i in range(n_in):
        params += [("const T*", f"x{i}"), ("long long", f"x{i}_sample"),
                   ("long long", f"x{i}_element")]
    for i in range(n_out):
        params += [("T*", f"y{i}"), ("long long", f"y{i}_sample"),
                   ("long long", f"y{i}_element")]
    if staged:
        params.append(("T*", "mid"))
    return params


def _declare(params: list[tuple[str, str]], real: str) -> str:
    return ", ".join(f"{kind.replace('T', real)} {name}" for kind, name in params)


def _device_function(symbol: str, stages: int, n_in: int, n_out: int, mid: int) -> str:
    scratch = f"  T values[{mid}];\n  casdyn_local<T> m{{values}};\n" if mid else \
        "  casdyn_none<T> m;\n"
    calls = "".join(f"  {symbol}_stage{j}<T>(x, y, m);\n" for j in range(stages))
    return (
        f"template <typename T>\n__device__ void {symbol}(const T* const* arg, "
        f"T* const* res) {{\n  casdyn_dense_in<T> x{{arg}};\n  casdyn_dense_out<T> y{{res}};\n"
        f"{scratch}{calls}}}\n")


def _kernel(symbol: str, suffix: str, real: str, j: int, stages: int, n_in: int, n_out: int,
            mid: int, far: bool = False) -> str:
    name = f"{symbol}_{suffix}" + (f"_stage{j}" if stages > 1 else "")
    params = _declare(_parameters(n_in, n_out, mid > 0), real)
    ins = ", ".join(f"x{i}" for i in range(n_in)) or "0"
    in_strides = ", ".join(f"x{i}_sample" for i in range(n_in)) or "0"
    in_elements = ", ".join(f"x{i}_element" for i in range(n_in)) or "0"
    outs = ", ".join(f"y{i}" for i in range(n_out)) or "0"
    out_strides = ", ".join(f"y{i}_sample" for i in range(n_out)) or "0"
    out_elements = ", ".join(f"y{i}_element" for i in range(n_out)) or "0"
    scratch = f"  casdyn_global<{real}> m{{mid + k, n}};\n" if mid else \
        f"  casdyn_none<{real}> m;\n"
    return (
        f"extern \"C\" __global__ void {name}({params}) {{\n"
        "  const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (k >= n) return;\n"
        f"  const {real}* xp[{max(n_in, 1)}] = {{{ins}}};\n"
        f"  const long long xs[{max(n_in, 1)}] = {{{in_strides}}};\n"
        f"  const long long xe[{max(n_in, 1)}] = {{{in_elements}}};\n"
        f"  {real}* yp[{max(n_out, 1)}] = {{{outs}}};\n"
        f"  const long long ys[{max(n_out, 1)}] = {{{out_strides}}};\n"
        f"  const long long ye[{max(n_out, 1)}] = {{{out_elements}}};\n"
        f"  casdyn_strided_in<{real}> x{{xp, xs, xe, k}};\n"
        f"  casdyn_strided_out<{real}{', true' if far else ''}> y{{yp, ys, ye, k, dense}};\n"
        f"{scratch}  {symbol}_stage{j}<{real}>(x, y, m);\n}}\n")


def _launcher(symbol: str, suffix: str, real: str, stages: int,
              params: list[tuple[str, str]]) -> str:
    """The host function that launches the kernels of one precision (nvcc only)."""
    names = ", ".join(name for _, name in params)
    launches = "".join(
        f"  {symbol}_{suffix}{f'_stage{j}' if stages > 1 else ''}"
        f"<<<blocks, CASDYN_BLOCK, 0, stream>>>({names});\n" for j in range(stages))
    return (
        "#if defined(__CUDACC__) && !defined(__CUDACC_RTC__)\n"
        f"extern \"C\" cudaError_t {symbol}_{suffix}_launch({_declare(params, real)}, "
        "cudaStream_t stream) {\n"
        "  if (n <= 0) return cudaSuccess;\n"
        "  const unsigned blocks = (unsigned)((n + CASDYN_BLOCK - 1) / CASDYN_BLOCK);\n"
        f"{launches}  return cudaGetLastError();\n}}\n#endif\n")


def _emulation(symbol: str, suffix: str, real: str, stages: int,
               params: list[tuple[str, str]]) -> str:
    """The CPU loop that runs the kernels of one precision on every sample (C++ only)."""
    names = ", ".join(name for _, name in params)
    kernels = [f"{symbol}_{suffix}" + (f"_stage{j}" if stages > 1 else "")
               for j in range(stages)]
    launches = "".join(f"  for (k = 0; k < n; ++k) {{ blockIdx.x = (unsigned)k; "
                       f"{kernel}({names}); }}\n" for kernel in kernels)
    return (
        "#ifdef CASDYN_EMULATE\n"
        f"extern \"C\" void {symbol}_{suffix}_emulate({_declare(params, real)}) {{\n"
        "  long long k;\n  blockDim.x = 1;\n  threadIdx.x = 0;\n"
        f"{launches}}}\n#endif\n")


_STAGE = """\
template <typename T, class In, class Out, class Mid>
__device__ __forceinline__ void {symbol}_stage{j}(const In& x, const Out& y, const Mid& m) {{
{declarations}{body}
}}
"""



def file_source(functions: list[CudaFunction], precisions=("float64", "float32")) -> str:
    """One translation unit of ``functions`` with the kernels of ``precisions`` only."""
    text = "".join(f.text for f in functions)
    for precision in PRECISIONS:
        if precision not in precisions:
            guard = f"CASDYN_NO_{precision.upper()}"
            text = re.sub(rf"#ifndef {guard}\n.*?#endif /\* {guard} \*/\n", "", text,
                          flags=re.DOTALL)
    return PRELUDE + text
