"""The forward-dynamics derivatives in C from functions the same library exports.

``d qdd / d(q, qd, tau)`` is ``-M^-1 [d tau/dq, d tau/dqd]`` and ``M^-1`` at ``qdd = FD(q,
qd, tau)``, where ``d tau/d(q, qd)`` and ``M = d tau/d qdd`` are the inverse-dynamics
derivatives. Written as one SX graph it repeats those derivatives (the floating TALOS:
153,235 instructions against 52,036), and compiling that C was a third of an export's time.
Where a library exports the forward dynamics and the inverse-dynamics derivatives with the
same options, the forward-dynamics derivatives call those two C functions, factorise ``M``
(a small SX graph, :class:`casdyn.math.factorization.TreeLDLT` on ``M``'s sparsity) and
solve with the loops of :func:`casdyn.codegen.kernels.tree_solve`.

The calls are CasADi ``Function.jit`` bodies made for the code generator only, like the
loops: the form cannot be evaluated in Python, only exported; numeric and symbolic calls
keep the SX graph. The two are tested to agree.
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from ..functions.build_dynamics import factorization_order
from ..functions.cache import FunctionCache
from ..math.factorization import TreeLDLT
from . import kernels

# the forward-dynamics derivatives are linked from this many instructions of their SX graph
LINKED_FROM = 20_000


def external_call(symbol: str, function: ca.Function) -> ca.Function:
    """A Function, for the code generator only, that calls the C function ``symbol`` of
    the same library: the generated C of ``function`` (an SX Function, which needs no work
    vectors), with its inputs and outputs."""
    n_in, n_out = function.n_in(), function.n_out()
    body = (
        f"{{ int {symbol}(const casadi_real** arg, casadi_real** res, casadi_int* iw, "
        f"casadi_real* w, int mem); const casadi_real* a[{n_in}]; casadi_real* r[{n_out}]; "
        + "".join(f"a[{i}] = x{i}; " for i in range(n_in))
        + "".join(f"r[{i}] = y{i}; " for i in range(n_out))
        + f"if ({symbol}(a, r, 0, 0, 0)) return 1; }}"
    )
    return ca.Function.jit(
        f"{symbol}_call", body, [f"x{i}" for i in range(n_in)], [f"y{i}" for i in range(n_out)],
        [function.sparsity_in(i) for i in range(n_in)],
        [function.sparsity_out(i) for i in range(n_out)], {"jit": False})


def forward_dynamics_derivatives(cache: FunctionCache, key: tuple, forward: tuple[str, tuple],
                                 inverse: tuple[str, tuple]) -> ca.Function:
    """The forward-dynamics derivatives of ``key`` as the code generator should write them
    in a library whose C functions ``forward = (symbol, key)`` (the forward dynamics) and
    ``inverse = (symbol, key)`` (the inverse-dynamics derivatives) have the same options:
    the name, inputs, outputs and output sparsity of the cached Function."""
    function = cache.get_key(key)
    fd, idd = cache.get_key(forward[1]), cache.get_key(inverse[1])
    nv = cache.model.nv
    M = ca.SX.sym("M", idd.sparsity_out(2))
    ldlt = TreeLDLT(M, factorization_order(cache.stages))
    name = function.name()
    factorised = ca.Function(f"{name}_ldlt", [M], [ldlt.values()], ["M"], ["ld"])
    solve = kernels.tree_solve(ldlt, 2 * nv, f"{name}_solve")
    inputs = {function.name_in(i): ca.MX.sym(function.name_in(i), function.sparsity_in(i))
              for i in range(function.n_in())}
    qdd = external_call(forward[0], fd)(*(inputs[n] for n in fd.name_in()))
    at = {**inputs, "qdd": qdd}
    dq, dqd, mass = external_call(inverse[0], idd)(*(at[n] for n in idd.name_in()))
    XT, Z = solve(ca.densify(ca.horzcat(dq, dqd)).T, factorised(mass))
    X = XT.T
    back = np.argsort(ldlt.order)  # M^-1 = Z with rows and columns in M's order
    outputs = [X[:, :nv], X[:, nv:], Z[back, back]]
    outputs = [ca.project(x, function.sparsity_out(k)) for k, x in enumerate(outputs)]
    return ca.Function(name, list(inputs.values()), outputs, list(inputs),
                       function.name_out())


def forms(cache: FunctionCache, keys: list[tuple], symbols: list[str]) -> dict[tuple, ca.Function]:
    """The linked C form of each large forward-dynamics derivatives among ``keys`` (exported
    as the C functions ``symbols``) whose forward dynamics and inverse-dynamics derivatives
    of the same options are exported too: ``{key: Function}``."""
    where = dict(zip(keys, symbols, strict=True))
    linked = {}
    for key in keys:
        if key[0] != "forward_dynamics_derivatives" or \
                cache.get_key(key).n_instructions() < LINKED_FROM:
            continue
        fext = dict(key[1:])["fext"]
        forward = cache.key("forward_dynamics", fext=fext)
        inverse = cache.key("inverse_dynamics_derivatives", fext=fext)
        if forward in where and inverse in where:
            linked[key] = forward_dynamics_derivatives(
                cache, key, (where[forward], forward), (where[inverse], inverse))
    return linked
