"""How each Function's graph is kept small: where CasADi's common-subexpression pass pays,
and which of two equivalent graphs to keep. The numbers are measured, not tuned by hand:
each constant says where it comes from."""

from __future__ import annotations

import casadi as ca

from .. import sizes
from ..math.spatial import SX
from ..model.tree import Model

# outputs built by the tree-sparse algorithms, where CSE merges the poses their pieces share
CSE_FUNCTIONS = frozenset({"inverse_dynamics", "forward_dynamics", "mass_matrix",
                           "contact_dynamics", "impulse_dynamics",
                           "centroidal_momentum_matrix", "centroidal_momentum",
                           "centroidal_momentum_bias", "kinetic_energy",
                           "jacobian_time_derivative"})

# CasADi's common-subexpression pass (CSE) on the derivative graphs runs below
# casdyn.sizes.DERIVATIVE_CSE_LIMIT only (docs/performance.md, "Why these thresholds"),
# except on the second-order ones, at every size: there it merges what the forward passes
# of the tensors' pairs share (floating solo12 19 %, chain12 19 %, floating TALOS 13 % of
# the inverse-dynamics tensors' graph, in 0.2-4 s against builds of 0.3-2 s)
SECOND_ORDER = frozenset({"inverse_dynamics_second_derivatives",
                          "forward_dynamics_second_derivatives"})

# Below this many (joint velocity, velocity at or above it) pairs both derivative graphs are
# cheap to build, and the smaller is kept: AD's (with CRBA's M) on short limbs (the three
# partials without fext: UR5e 0.85, floating solo12 0.78 of the analytical graph), the
# analytical one on long chains and humanoids (chain12 0.44, floating TALOS 0.70, chain24
# 0.30 of AD's). Above it, the analytical graph.
DERIVATIVE_COMPARE_PAIRS = 400


def sx_function(c_name: str, name: str, inputs: list, outputs: list,
                names_in: list, names_out: list) -> ca.Function:
    """The SX Function ``c_name`` (of kind ``name``) of ``inputs -> outputs``, with CSE
    where it pays."""
    args = (c_name, inputs, outputs, names_in, names_out)
    if name.endswith("_derivatives") and name not in SECOND_ORDER:
        plain = ca.Function(*args)
        if plain.n_instructions() >= sizes.DERIVATIVE_CSE_LIMIT:
            return plain
        cse = True
    else:
        cse = name in CSE_FUNCTIONS or name in SECOND_ORDER
    return ca.Function(*args, {"cse": cse})


def smallest(candidates: list[list[SX]], inputs: list[SX], s: dict) -> list[SX]:
    """The candidate outputs (functions of ``inputs`` and ``s["fext"]``) with the fewest
    instructions without the external forces (the ``fext=False`` variant, the common one),
    then with them."""
    inputs = [*inputs, s["fext"]]
    no_fext = SX.zeros(s["fext"].shape)

    def size(outputs: list[SX]) -> tuple[int, int]:
        plain = ca.substitute(outputs, [s["fext"]], [no_fext])
        return (ca.Function("c", inputs, plain).n_instructions(),
                ca.Function("c", inputs, outputs).n_instructions())

    return min(candidates, key=size)


def velocity_pairs(model: Model) -> int:
    """The number of (velocity, velocity of the same or an ancestor joint) pairs."""
    nv = [joint.type.nv for joint in model.joints]
    return sum(nv[i] * sum(nv[j] for j in model.support(i)) for i in range(len(nv)))


def both_graphs_cheap(model: Model) -> bool:
    """Whether two forms of the derivatives are cheap enough to build and compare."""
    return velocity_pairs(model) <= DERIVATIVE_COMPARE_PAIRS
