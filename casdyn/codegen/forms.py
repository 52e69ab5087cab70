"""The forms of Functions that the code generator writes better than their SX graphs.

Each form has the name, inputs, outputs and output sparsity of its cached Function but
exists for the code generator only: its C parts are CasADi ``Function.jit`` bodies made
with ``"jit": False``, inlined into the C of the Function that calls them, so it cannot be
evaluated in Python. Numeric and symbolic calls keep the SX graphs; the two are tested to
agree.

The forms are those of the forward-dynamics derivatives of large models: ``d qdd / d(q, qd,
tau)`` is ``-M^-1 [d tau/dq, d tau/dqd]`` and ``M^-1`` at ``qdd = FD(q, qd, tau)``, where ``d
tau/d(q, qd)`` and ``M = d tau/d qdd`` are the inverse-dynamics derivatives. Written as one
SX graph it repeats those derivatives (the floating TALOS: 153,235 instructions against
52,036), and for a long chain the ``n^3`` products become straight-line C that no compiler
turns into vector instructions. So:

* **Composed** (:func:`for_c`): the forward dynamics and the inverse-dynamics derivatives,
  each its own SX Function (the C functions of one file), then the linear algebra as loops
  on their numbers (:mod:`casdyn.codegen.solve_c`).
* **Linked** (:func:`linked_forms`): where a library exports the forward dynamics and the
  inverse-dynamics derivatives with the same options, the same, calling those two C
  functions instead of copies of them.
"""

from __future__ import annotations

import casadi as ca

from .. import sizes
from ..functions.build_dynamics import factorization_order
from ..functions.cache import FunctionCache
from ..functions.size_policy import velocity_pairs
from ..model.tree import Model
from . import solve_c

# the linear algebra as loops on full rows from this many velocities, where the lower
# triangle of M is at least this full: chains more than trees (measurements:
# docs/performance.md, "Why these thresholds")
DENSE_SOLVE_VELOCITIES = 16
DENSE_SOLVE_FILL = 0.75


def for_c(cache: FunctionCache, key: tuple) -> ca.Function:
    """The Function of ``key`` as its C is best generated: the cached Function, but for the
    forward-dynamics derivatives of large models the composed form, with the same name,
    inputs and outputs."""
    function = cache.get_key(key)
    if not composes(cache, key):
        return function
    return cache.derived(("for_c", key), lambda: _composed(cache, key))


def composes(cache: FunctionCache, key: tuple) -> bool:
    """Whether ``key`` is the forward-dynamics derivatives of a model whose graph has
    :data:`casdyn.sizes.COMPOSED_FROM` instructions or more (and outputs the loops take)."""
    if key[0] != "forward_dynamics_derivatives":
        return False
    function = cache.get_key(key)
    if function.n_instructions() < sizes.COMPOSED_FROM:
        return False
    idd = cache.get_key(_inverse_key(cache, key))
    return solve_c.supported(idd.sparsity_out(0), idd.sparsity_out(1),
                             [function.sparsity_out(k) for k in range(3)])


def dense_solve(model: Model) -> bool:
    """Whether the loops factorise and invert ``M`` on full rows (else on the tree's
    nonzeros): from :data:`DENSE_SOLVE_VELOCITIES` velocities on, where the lower triangle
    of ``M`` is at least :data:`DENSE_SOLVE_FILL` structurally nonzero."""
    nv = model.nv
    if nv < DENSE_SOLVE_VELOCITIES:
        return False
    within = sum(k * (k - 1) // 2 for k in (j.type.nv for j in model.joints))
    return (velocity_pairs(model) - within) / (nv * (nv + 1) / 2) >= DENSE_SOLVE_FILL


def _forward_key(cache: FunctionCache, key: tuple) -> tuple:
    return cache.key("forward_dynamics", fext=dict(key[1:])["fext"])


def _inverse_key(cache: FunctionCache, key: tuple) -> tuple:
    return cache.key("inverse_dynamics_derivatives", fext=dict(key[1:])["fext"])


def _solve_lines(cache: FunctionCache, idd: ca.Function) -> tuple[list[str], int]:
    """``(C lines, scratch size)`` of :func:`casdyn.codegen.solve_c.body` on the outputs of
    the inverse-dynamics derivatives ``idd``."""
    return solve_c.body(idd.sparsity_out(0), idd.sparsity_out(1), idd.sparsity_out(2),
                        factorization_order(cache.stages), dense_solve(cache.model))


def _composed(cache: FunctionCache, key: tuple) -> ca.Function:
    """The composed form of the forward-dynamics derivatives ``key``: an MX Function of the
    cached forward dynamics, the cached inverse-dynamics derivatives at its ``qdd``, and the
    loops (a ``Function.jit`` body) on their outputs."""
    function = cache.get_key(key)
    fd, idd = cache.get_key(_forward_key(cache, key)), cache.get_key(_inverse_key(cache, key))
    lines, scratch = _solve_lines(cache, idd)
    solve = ca.Function.jit(
        f"{function.name()}_solve", "\n".join(["{", *lines, "}"]), ["A", "B", "Mv"],
        ["y0", "y1", "y2", "s"], [idd.sparsity_out(k) for k in range(3)],
        [function.sparsity_out(k) for k in range(3)] + [ca.Sparsity.dense(scratch, 1)],
        {"jit": False})
    inputs = {function.name_in(i): ca.MX.sym(function.name_in(i), function.sparsity_in(i))
              for i in range(function.n_in())}
    qdd = fd(*(inputs[name] for name in fd.name_in()))
    partials = idd(*(qdd if name == "qdd" else inputs[name] for name in idd.name_in()))
    outputs = solve(*partials)[:3]
    return ca.Function(function.name(), list(inputs.values()), outputs, function.name_in(),
                       function.name_out())


# --- the linked form -------------------------------------------------------------------------
def linked_forward_dynamics_derivatives(cache: FunctionCache, key: tuple,
                                        forward: tuple[str, tuple],
                                        inverse: tuple[str, tuple]) -> ca.Function:
    """The forward-dynamics derivatives of ``key`` as the code generator should write them
    in a library whose C functions ``forward = (symbol, key)`` (the forward dynamics) and
    ``inverse = (symbol, key)`` (the inverse-dynamics derivatives) have the same options:
    the name, inputs, outputs and output sparsity of the cached Function; one C function
    (:func:`linked_body`) between the copies of its inputs and outputs."""
    function = cache.get_key(key)
    fd, idd = cache.get_key(forward[1]), cache.get_key(inverse[1])
    lines, scratch = _solve_lines(cache, idd)
    body, total = linked_body(function, fd, idd, forward[0], inverse[0], lines, scratch)
    n_in, n_out = function.n_in(), function.n_out()
    names_in = [f"x{i}" for i in range(n_in)]
    names_out = [f"y{i}" for i in range(n_out)] + ["scratch"]
    jit = ca.Function.jit(
        f"{function.name()}_linked", body, names_in, names_out,
        [function.sparsity_in(i) for i in range(n_in)],
        [function.sparsity_out(i) for i in range(n_out)] + [ca.Sparsity.dense(total, 1)],
        {"jit": False})
    inputs = [ca.MX.sym(function.name_in(i), function.sparsity_in(i)) for i in range(n_in)]
    outputs = jit(*inputs)[:n_out]
    return ca.Function(function.name(), inputs, outputs, function.name_in(),
                       function.name_out())


def linked_body(function: ca.Function, fd: ca.Function, idd: ca.Function, fd_symbol: str,
                idd_symbol: str, lines: list[str], scratch: int) -> tuple[str, int]:
    """``(C, scratch size)``: the body of the forward-dynamics derivatives ``function``
    (inputs ``x0, ...``, outputs ``y0, y1, y2``, work array ``scratch``) calling the C
    functions ``fd_symbol`` (``fd``) and ``idd_symbol`` (``idd``), then the loops ``lines``
    (:func:`casdyn.codegen.solve_c.body`, whose own scratch is ``scratch`` numbers)."""
    nv = function.size1_in(1)
    sizes_of = {"qdd": nv, "A": idd.nnz_out(0), "B": idd.nnz_out(1), "Mv": idd.nnz_out(2),
                "s": scratch}
    offsets, total = {}, 0
    for name, size in sizes_of.items():
        offsets[name] = total
        total += size
    fd_args = [f"x{function.name_in().index(name)}" for name in fd.name_in()]
    idd_args = ["qdd" if name == "qdd" else f"x{function.name_in().index(name)}"
                for name in idd.name_in()]
    signature = ("(const casadi_real** arg, casadi_real** res, casadi_int* iw, casadi_real* w, "
                 "int mem)")
    body = [
        "{",
        f"int {fd_symbol}{signature};",
        f"int {idd_symbol}{signature};",
        f"const casadi_real* a[{max(fd.n_in(), idd.n_in())}]; casadi_real* r[3];",
        *(f"casadi_real* {name} = scratch + {offset};" for name, offset in offsets.items()),
        *(f"a[{k}] = {x};" for k, x in enumerate(fd_args)),
        f"r[0] = qdd; if ({fd_symbol}(a, r, 0, 0, 0)) return 1;",
        *(f"a[{k}] = {x};" for k, x in enumerate(idd_args)),
        f"r[0] = A; r[1] = B; r[2] = Mv; if ({idd_symbol}(a, r, 0, 0, 0)) return 1;",
        "{", *lines, "}",
        "}",
    ]
    return "\n".join(body), total


def linked_forms(cache: FunctionCache, keys: list[tuple],
                 symbols: list[str]) -> dict[tuple, ca.Function]:
    """The linked C form of each composed forward-dynamics derivatives among ``keys``
    (exported as the C functions ``symbols``) whose forward dynamics and inverse-dynamics
    derivatives of the same options are exported too: ``{key: Function}``."""
    where = dict(zip(keys, symbols, strict=True))
    linked: dict[tuple, ca.Function] = {}
    for key in keys:
        if not composes(cache, key):
            continue
        forward, inverse = _forward_key(cache, key), _inverse_key(cache, key)
        if forward in where and inverse in where:
            linked[key] = linked_forward_dynamics_derivatives(
                cache, key, (where[forward], forward), (where[inverse], inverse))
    return linked
