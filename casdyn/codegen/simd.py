"""Batched C: one SX Function evaluated on many samples at once, in SIMD lanes.

CasADi writes an SX Function as straight-line scalar C, one statement per instruction. Over a
batch, the same statements run for every sample, so they can run on blocks of samples
instead: each work variable becomes a vector of :data:`WIDTH` doubles, one lane per sample
(GCC's and Clang's vector extensions, ``vector_size``), and each instruction becomes one
vector operation. With AVX2 or AVX-512 (``-march=native``) that is four or eight samples per
instruction; elsewhere the compiler splits the vectors into what the processor has.

The C of one Function is one translation unit of its own, with one entry point::

    int <symbol>(const double** arg, const long long* stride, double** res, long long n);

It evaluates the Function on ``n`` samples (``n >= 0``). Input ``i`` of sample ``k`` is read
from ``arg[i] + k * stride[i]``: its nonzeros in CasADi's order (column-major for a
matrix), as the single-sample function reads them; ``stride[i] == 0`` gives every sample the
same input, ``arg[i] == NULL`` an input of zeros; ``stride == NULL`` means every input is
batched and contiguous (``stride[i]`` = the input's number of nonzeros). Output ``j`` of
sample ``k`` is written to ``res[j] + k * nnz_out(j)`` in the same order (``res[j] ==
NULL``: not written). In NumPy terms, C-ordered ``(n, nnz)`` arrays in and out. Returns 0
(1 if its scratch space could not be allocated, 2 if an input holds a NaN or an infinity:
the check is part of reading the inputs, so a batch is read once; the outputs are then
incomplete). The function keeps no state: calls on
disjoint outputs may run in parallel threads. Its twin ``<symbol>_dense`` (same arguments)
writes each output dense and row-major instead, structural zeros included: output ``j`` of
sample ``k`` at ``res[j] + k * rows * cols`` — NumPy's C-ordered ``(n, rows, cols)``.

Every lane computes what the scalar code computes for its sample: the same operations in
the same order, the other C library functions (atan2, exp, ...) lane by lane. Built without
contraction into fused multiply-adds (``-ffp-contract=off``, :data:`FLAGS`), the results are
those of CasADi's own evaluation of the SX graph bit for bit, except where sin and cos enter:
those are computed in the lanes (one argument reduction for both, see ``_SINCOS``) to within
one unit in the last place of the C library's, and a sample's results do not depend on the
other samples of its block or batch.
"""

from __future__ import annotations

import math

import casadi as ca

# Samples per block: eight doubles are one AVX-512 register, two AVX2 ones
WIDTH = 8

# Flags for the batched C's file, added to the library's: no contraction of a * b + c into
# a fused multiply-add, so that every lane rounds as the SX graph's evaluation does; sqrt
# without errno, so that it runs in the lanes too (its result is the same)
FLAGS = ("-ffp-contract=off", "-fno-math-errno")

# C for each operation of the operands x and y, shared with the CUDA source
# (casdyn.codegen.cuda): R(...) converts to the real type, (double) here, T there
OPERATIONS = {
    ca.OP_ADD: "x + y", ca.OP_SUB: "x - y", ca.OP_MUL: "x * y", ca.OP_DIV: "x / y",
    ca.OP_NEG: "-x", ca.OP_SQ: "x * x", ca.OP_TWICE: "x + x", ca.OP_INV: "R(1) / x",
    ca.OP_ASSIGN: "x",
    ca.OP_SIN: "sin(x)", ca.OP_COS: "cos(x)", ca.OP_TAN: "tan(x)", ca.OP_ASIN: "asin(x)",
    ca.OP_ACOS: "acos(x)", ca.OP_ATAN: "atan(x)", ca.OP_SINH: "sinh(x)", ca.OP_COSH: "cosh(x)",
    ca.OP_TANH: "tanh(x)", ca.OP_ASINH: "asinh(x)", ca.OP_ACOSH: "acosh(x)",
    ca.OP_ATANH: "atanh(x)", ca.OP_EXP: "exp(x)", ca.OP_LOG: "log(x)", ca.OP_SQRT: "sqrt(x)",
    ca.OP_FABS: "fabs(x)", ca.OP_FLOOR: "floor(x)", ca.OP_CEIL: "ceil(x)",
    ca.OP_EXPM1: "expm1(x)", ca.OP_LOG1P: "log1p(x)", ca.OP_ERF: "erf(x)",
    ca.OP_SIGN: "(x < R(0) ? R(-1) : x > R(0) ? R(1) : x)", ca.OP_NOT: "R(!x)",
    ca.OP_POW: "pow(x, y)", ca.OP_CONSTPOW: "pow(x, y)", ca.OP_ATAN2: "atan2(x, y)",
    ca.OP_FMIN: "fmin(x, y)", ca.OP_FMAX: "fmax(x, y)", ca.OP_FMOD: "fmod(x, y)",
    ca.OP_REMAINDER: "remainder(x, y)", ca.OP_HYPOT: "hypot(x, y)",
    ca.OP_COPYSIGN: "copysign(x, y)", ca.OP_LT: "R(x < y)", ca.OP_LE: "R(x <= y)",
    ca.OP_EQ: "R(x == y)", ca.OP_NE: "R(x != y)", ca.OP_AND: "R(x && y)",
    ca.OP_OR: "R(x || y)", ca.OP_IF_ELSE_ZERO: "(x ? y : R(0))",
}


def operations(real: str) -> dict[int, str]:
    """:data:`OPERATIONS` with ``R(...)`` written as ``real(...)`` (a cast or a type)."""
    return {op: text.replace("R(", f"{real}(") for op, text in OPERATIONS.items()}


# the arithmetic as vector expressions of whole blocks of samples; the rest (comparisons, C
# library functions, branches) lane by lane, as scalar expressions
_C = operations("(double)")
_VECTOR = {op: _C[op] for op in (ca.OP_ADD, ca.OP_SUB, ca.OP_MUL, ca.OP_DIV, ca.OP_NEG,
                                 ca.OP_SQ, ca.OP_TWICE, ca.OP_INV, ca.OP_ASSIGN)}
_LANE = {op: text for op, text in _C.items() if op not in _VECTOR}


class UnsupportedOperation(ValueError):
    """The SX Function has an operation the batched C does not write (a call of another
    Function, an assertion, ...)."""


def supported(function: ca.Function) -> bool:
    """Whether :func:`source` can write ``function``: an SX Function of the operations
    above, with dense-or-sparse inputs and outputs."""
    if not function.is_a("SXFunction"):
        return False
    known = {*_VECTOR, *_LANE, ca.OP_INPUT, ca.OP_OUTPUT, ca.OP_CONST, ca.OP_PARAMETER}
    return all(function.instruction_id(k) in known for k in range(function.n_instructions()))


def literal(value: float) -> str:
    """``value`` as an exact C literal (hexadecimal floating point)."""
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "-INFINITY"
    return value.hex()


def source(function: ca.Function, symbol: str, width: int = WIDTH) -> str:
    """The C translation unit of the batched entry point ``symbol`` of the SX Function
    ``function`` (see the module's docstring), ``width`` samples per block."""
    if not function.is_a("SXFunction"):
        raise UnsupportedOperation(f"{function.name()} is not an SX Function")
    n_in, n_out = function.n_in(), function.n_out()
    nnz_in = [function.nnz_in(i) for i in range(n_in)]
    nnz_out = [function.nnz_out(i) for i in range(n_out)]
    in_offset = [sum(nnz_in[:i]) for i in range(n_in)]
    out_offset = [sum(nnz_out[:i]) for i in range(n_out)]
    body: list[str] = []
    slots = 0
    # slot -> (sine, cosine) variables of the value it holds, made by one casdyn_sincos
    trig: dict[int, tuple[str, str]] = {}
    pairs = 0
    for k in range(function.n_instructions()):
        op = function.instruction_id(k)
        out = function.instruction_output(k)
        args = function.instruction_input(k)
        if op == ca.OP_OUTPUT:
            body.append(f"  o[{out_offset[out[0]] + out[1]}] = w{args[0]};")
            continue
        target = out[0]
        slots = max(slots, target + 1)
        if op in (ca.OP_SIN, ca.OP_COS):
            if args[0] not in trig:
                trig[args[0]] = (f"s{pairs}", f"c{pairs}")
                body.append(f"  casdyn_sincos(w{args[0]}, &s{pairs}, &c{pairs});")
                pairs += 1
            value = trig[args[0]][op == ca.OP_COS]
            trig.pop(target, None)
            body.append(f"  w{target} = {value};")
            continue
        trig.pop(target, None)
        if op == ca.OP_INPUT:
            body.append(f"  w{target} = x[{in_offset[args[0]] + args[1]}];")
        elif op == ca.OP_CONST:
            value = literal(function.instruction_constant(k))
            body.append(f"  w{target} = (casdyn_v){{{', '.join([value] * width)}}};")
        elif op in _VECTOR:
            names = {"x": f"w{args[0]}", "y": f"w{args[1]}" if len(args) > 1 else ""}
            body.append(f"  w{target} = {substitute(_VECTOR[op], names)};")
        elif op in _LANE:
            names = {"x": f"w{args[0]}[l]", "y": f"w{args[1]}[l]" if len(args) > 1 else ""}
            body.append(f"  LANES(w{target}, {substitute(_LANE[op], names)});")
        else:
            raise UnsupportedOperation(
                f"{function.name()} has an operation the batched C does not write "
                f"(CasADi operation {op})")
    variables = [f"w{k}" for k in range(slots)] + \
        [f"{c}{k}" for k in range(pairs) for c in "sc"]
    declarations = f"  casdyn_v {', '.join(variables)};\n" if variables else ""
    places: list[int] = []
    for i in range(n_out):
        cols = function.size_out(i)[1]
        row, col = function.sparsity_out(i).get_triplet()
        places += [r * cols + c for r, c in zip(row, col, strict=True)]
    return _TEMPLATE.format(
        size_out=", ".join(str(function.numel_out(i)) for i in range(n_out)) or "0",
        zeros_out=", ".join(str(int(function.nnz_out(i) < function.numel_out(i)))
                            for i in range(n_out)) or "0",
        place=", ".join(map(str, places)) or "0",
        width=width, symbol=symbol, n_in=max(n_in, 1), n_out=max(n_out, 1),
        nnz_in=", ".join(str(n) for n in nnz_in) or "0",
        nnz_out=", ".join(str(n) for n in nnz_out) or "0",
        in_total=max(sum(nnz_in), 1), out_total=max(sum(nnz_out), 1),
        declarations=declarations, body="\n".join(body), sincos=sincos_routine() if pairs else "",
        name=function.name(), in_count=n_in, out_count=n_out,
    )


# sin and cos of a vector, both from one argument reduction: the reduction by pi/2 of
# Cody and Waite (pi/2 as two parts of 33 bits, whose products with the quadrant are exact
# for |x| < 2^20, and the rest) and the polynomials of fdlibm's __kernel_sin and
# __kernel_cos on [-pi/4, pi/4] (their coefficients; error under one ulp). Lanes beyond 1e5
# in magnitude, infinite or NaN take the C library's sin and cos instead, each lane's
# result independent of the others'.
def sincos_routine(name: str = "casdyn_sincos", vector: str = "casdyn_v",
                   width: int | str = "W") -> str:
    """The C of ``static inline void name(vector x, vector* sin_x, vector* cos_x)`` for a
    GCC vector type ``vector`` of ``width`` doubles (a C expression), with the integer vector
    type ``<vector>l`` it needs."""
    longs = f"{vector}l"
    typedef = (f"typedef long long {longs} __attribute__((vector_size({width} * "
               "sizeof(long long))));\n")
    return typedef + (_SINCOS.replace("NAME", name).replace("LONGS", longs)
                      .replace("VECTOR", vector).replace("WIDTH", str(width)))


_SINCOS = """\
static inline void NAME(VECTOR original, VECTOR* sin_x, VECTOR* cos_x) {
  VECTOR x = original;
  const double pio2_1 = 0x1.921fb544p+0, pio2_2 = 0x1.0b4611a6p-34,
               pio2_3 = 0x1.3198a2e037073p-69, shift = 0x1.8p52;
  VECTOR k, a, b, r, c, z, w, v, ps, pc, hz, sn, cs;
  LONGS n, swap, sign_s, sign_c;
  int l, far = 0;
  for (l = 0; l < WIDTH; ++l) far |= !(fabs(x[l]) <= 1e5);
  if (far) /* those lanes' results come from the C library below; 0 keeps the others' */
    for (l = 0; l < WIDTH; ++l) if (!(fabs(x[l]) <= 1e5)) x[l] = 0.0;
  k = (x * 0x1.45f306dc9c883p-1 + shift) - shift; /* x * 2/pi to the nearest integer */
  n = __builtin_convertvector(k, LONGS);
  a = x - k * pio2_1;
  b = k * pio2_2;
  r = a - b;
  c = ((a - r) - b) - k * pio2_3; /* x - k pi/2 = r + c */
  z = r * r;
  w = z * z;
  v = z * r;
  ps = 0x1.111111110f8a6p-7 + z * (-0x1.a01a019c161d5p-13 + z * (0x1.71de357b1fe7dp-19 +
       z * (-0x1.ae5e68a2b9cebp-26 + z * 0x1.5d93a5acfd57cp-33)));
  sn = r - (((z * (0.5 * c - v * ps)) - c) - v * -0x1.5555555555549p-3);
  pc = z * (0x1.555555555554cp-5 + z * (-0x1.6c16c16c15177p-10 + z * 0x1.a01a019cb159p-16)) +
       w * w * (-0x1.27e4f809c52adp-22 + z * (0x1.1ee9ebdb4b1c4p-29 + z * -0x1.8fae9be8838d4p-37));
  hz = 0.5 * z;
  w = 1.0 - hz;
  cs = w + (((1.0 - w) - hz) + (z * pc - r * c));
  /* quadrant n mod 4: sin x = sn, cs, -sn, -cs; cos x = cs, -sn, -cs, sn */
  swap = (n & 1) != 0;
  sign_s = (n & 2) << 62;
  sign_c = ((n + 1) & 2) << 62;
  *sin_x = (VECTOR)((((LONGS)cs & swap) | ((LONGS)sn & ~swap)) ^ sign_s);
  *cos_x = (VECTOR)((((LONGS)sn & swap) | ((LONGS)cs & ~swap)) ^ sign_c);
  if (far)
    for (l = 0; l < WIDTH; ++l)
      if (!(fabs(original[l]) <= 1e5)) {
        (*sin_x)[l] = sin(original[l]);
        (*cos_x)[l] = cos(original[l]);
      }
}
"""


def substitute(expression: str, names: dict[str, str]) -> str:
    """``expression`` with its operands ``x`` and ``y`` (single letters) renamed."""
    return "".join(names.get(c, c) if c in "xy" and _alone(expression, i) else c
                   for i, c in enumerate(expression))


def _alone(expression: str, i: int) -> bool:
    """Whether the letter at ``i`` is a whole word (not part of a name such as ``expm1``)."""
    before = expression[i - 1] if i > 0 else " "
    after = expression[i + 1] if i + 1 < len(expression) else " "
    return not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_")


_TEMPLATE = """\
/* Batched evaluation of {name} ({in_count} inputs, {out_count} outputs), {width} samples per
 * block in SIMD lanes; generated by casdyn (casdyn.codegen.simd). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef double casdyn_v __attribute__((vector_size({width} * sizeof(double))));
#define W {width}
#define LANES(t, e) do {{ int l; for (l = 0; l < W; ++l) (t)[l] = (e); }} while (0)
{sincos}
/* one block: x[j] holds input nonzero j of the W samples (inputs one after the other),
 * o[j] receives output nonzero j */
static void {symbol}_block(const casdyn_v* restrict x, casdyn_v* restrict o) {{
{declarations}{body}
}}

static int {symbol}_run(const double** arg, const long long* stride, double** res, long long n,
                        int dense) {{
  static const long long nnz_in[{n_in}] = {{{nnz_in}}};
  static const long long nnz_out[{n_out}] = {{{nnz_out}}};
  /* per output: its dense size and whether it has structural zeros; per nonzero: its place
     in the dense matrix, row-major */
  static const long long size_out[{n_out}] = {{{size_out}}};
  static const char zeros_out[{n_out}] = {{{zeros_out}}};
  static const long long place[{out_total}] = {{{place}}};
  const long long* s = stride ? stride : nnz_in;
  long long k, i, j, l, m, lane[W];
  size_t bytes = ({in_total} + {out_total}) * sizeof(casdyn_v);
  casdyn_v *x, *o;
  double *xd, *od;
  int bad = 0;
  if (n <= 0) return 0;
  x = (casdyn_v*)aligned_alloc(sizeof(casdyn_v), bytes);
  if (!x) return 1;
  o = x + {in_total};
  xd = (double*)x;
  od = (double*)o;
  /* inputs that are the same for every sample (zeros, shared) are laid out once */
  for (i = 0, j = 0; i < {in_count}; j += nnz_in[i], ++i)
    if (!arg[i] || s[i] == 0)
      for (k = 0; k < nnz_in[i] * W; ++k) {{
        xd[j * W + k] = arg[i] ? arg[i][k / W] : 0.0;
        bad |= !isfinite(xd[j * W + k]);
      }}
  for (k = 0; k < n; k += W) {{
    m = n - k < W ? n - k : W;
    for (l = 0; l < W; ++l) lane[l] = k + (l < m ? l : m - 1); /* padding repeats the last */
    for (i = 0, j = 0; i < {in_count}; j += nnz_in[i], ++i) {{
      const double* p = arg[i];
      long long c, si = s[i];
      if (!p || si == 0) continue;
      /* nonzero by nonzero, the lanes' W reads from W rows, one contiguous write */
      for (c = 0; c < nnz_in[i]; ++c)
        for (l = 0; l < W; ++l) {{
          xd[(j + c) * W + l] = p[lane[l] * si + c];
          bad |= !isfinite(xd[(j + c) * W + l]);
        }}
    }}
    if (bad) break; /* a NaN or an infinity in the inputs: no result, status 2 */
    {symbol}_block(x, o);
    for (i = 0, j = 0; i < {out_count}; j += nnz_out[i], ++i) {{
      double* p = res[i];
      long long c, so = dense ? size_out[i] : nnz_out[i];
      if (!p) continue;
      if (dense && zeros_out[i])
        for (l = 0; l < m; ++l) memset(p + (k + l) * so, 0, (size_t)so * sizeof(double));
      /* nonzero by nonzero: one contiguous read, a write to each lane's row */
      for (c = 0; c < nnz_out[i]; ++c) {{
        long long at = dense ? place[j + c] : c;
        if (m == W)
          for (l = 0; l < W; ++l) p[(k + l) * so + at] = od[(j + c) * W + l];
        else
          for (l = 0; l < m; ++l) p[(k + l) * so + at] = od[(j + c) * W + l];
      }}
    }}
  }}
  free(x);
  return bad ? 2 : 0;
}}

int {symbol}(const double** arg, const long long* stride, double** res, long long n) {{
  return {symbol}_run(arg, stride, res, n, 0);
}}

int {symbol}_dense(const double** arg, const long long* stride, double** res, long long n) {{
  return {symbol}_run(arg, stride, res, n, 1);
}}
"""
