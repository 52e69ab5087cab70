"""The forms of Functions that the code generator writes better than their SX graphs.

For the forward-dynamics derivatives of chain-like models the ``M^-1`` products run as C
loops over whole rows (:func:`casdyn.codegen.kernels.tree_solve`) instead of unrolled
scalar code. Such a form has the name, inputs and outputs of its Function but exists for the
code generator only: it cannot be evaluated in Python.
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from ..functions.build_dynamics import factorization_order, forward_dynamics_pieces
from ..functions.cache import FunctionCache, without_fext
from ..functions.registry import SIGNATURES
from ..functions.size_policy import sx_function, velocity_pairs
from ..functions.stages import Stages
from ..math.spatial import SX
from ..model.tree import Model
from . import kernels

# In generated C the forward-dynamics derivatives' M^-1 products run as loops over whole
# rows (casdyn.codegen.kernels) where M is at least this full and this large: chains more
# than trees. Measured against the SX solve (compiled for this processor, same flags, before
# the vectoriser's flags of casdyn.codegen.export): 24 links 16.2 against 23.7 us, 48 links
# 187 against 282 (101 with those flags); 12 links equal (4.2 and 4.1); slower on the
# Panda-like arm (1.58 against 1.28), on 6 links and on the floating TALOS (M half full: 32
# against 28), whose zeros the SX graph skips and the loops do not.
LOOP_SOLVE_VELOCITIES = 16
LOOP_SOLVE_FILL = 0.75


def for_c(cache: FunctionCache, key: tuple) -> ca.Function:
    """The Function of ``key`` as its C is best generated: the cached Function, but for the
    forward-dynamics derivatives of larger models one whose ``M^-1`` products are C loops,
    with the same name, inputs and outputs."""
    function = cache.get_key(key)
    name, options = key[0], dict(key[1:])
    if name != "forward_dynamics_derivatives" or not solves_in_loops(cache.model):
        return function

    def make() -> ca.Function:
        if options["fext"]:
            return _forward_dynamics_derivatives_in_loops(cache.stages, function)
        # from the full one's pieces with fext = 0, as the cache derives the SX variant
        full = for_c(cache, (name, *sorted({**options, "fext": True}.items())))
        return _without_fext_in_loops(full, function, cache.stages)

    return cache.derived(("for_c", key), make)


def solves_in_loops(model: Model) -> bool:
    """Whether the forward-dynamics derivatives' ``M^-1`` products are C loops in generated
    code: from :data:`LOOP_SOLVE_VELOCITIES` velocities on, where the lower triangle of
    ``M`` is at least :data:`LOOP_SOLVE_FILL` structurally nonzero."""
    nv = model.nv
    if nv < LOOP_SOLVE_VELOCITIES:
        return False
    within = sum(k * (k - 1) // 2 for k in (j.type.nv for j in model.joints))
    return (velocity_pairs(model) - within) / (nv * (nv + 1) / 2) >= LOOP_SOLVE_FILL


def _forward_dynamics_derivatives_in_loops(stages: Stages,
                                           function: ca.Function) -> ca.Function:
    """``function`` (the forward-dynamics derivatives with ``fext``) as the code generator
    should write it: the SX graph of the pieces (inverse dynamics' partials transposed, the
    numbers of ``M = L^T D L``) and the loops of :func:`casdyn.codegen.kernels.tree_solve`
    for ``-M^-1`` times the partials and ``M^-1``."""
    model = stages.reframed
    nv = model.nv
    s = {"q": SX.sym("q", model.nq), "qd": SX.sym("qd", nv), "tau": SX.sym("tau", nv),
         "fext": SX.sym("fext", len(model.bodies), 6)}
    partials, ldlt, _ = forward_dynamics_pieces(model, s, {"fext": True}, stages)
    names = list(SIGNATURES["forward_dynamics_derivatives"].inputs)
    c_name = function.name()
    pieces = sx_function(f"{c_name}_pieces", "forward_dynamics_derivatives",
                         [s[n] for n in names],
                         [ca.densify(ca.horzcat(*partials)).T, ldlt.values()],
                         names, ["BT", "ld"])
    solve = kernels.tree_solve(ldlt, 2 * nv, f"{c_name}_solve")
    return _solved_in_loops(function, pieces, solve, ldlt.order)


def _without_fext_in_loops(full: ca.Function, function: ca.Function,
                           stages: Stages) -> ca.Function:
    """``function`` (the variant without ``fext``) from ``full``, the loops' form of the
    variant with it: its pieces with ``fext = 0`` inlined, the same loops."""
    name = full.name()
    pieces = without_fext(full.find_function(f"{name}_pieces"), f"{function.name()}_pieces",
                          "forward_dynamics_derivatives")
    return _solved_in_loops(function, pieces, full.find_function(f"{name}_solve"),
                            factorization_order(stages))


def _solved_in_loops(function: ca.Function, pieces: ca.Function, solve: ca.Function,
                     order: list[int]) -> ca.Function:
    """The MX Function ``pieces`` then ``solve`` (in the factorisation's ``order``), with
    the name, inputs, outputs and output sparsity of ``function``."""
    nv = len(order)
    inputs = [ca.MX.sym(pieces.name_in(i), pieces.sparsity_in(i)) for i in range(pieces.n_in())]
    XT, Z = solve(*pieces(*inputs))
    X = XT.T
    back = np.argsort(order)  # M^-1 = Z with rows and columns in M's order
    outputs = [X[:, :nv], X[:, nv:], Z[back, back]]
    outputs = [ca.project(x, function.sparsity_out(k)) for k, x in enumerate(outputs)]
    return ca.Function(function.name(), inputs, outputs, pieces.name_in(),
                       function.name_out())
