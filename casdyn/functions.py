"""Algorithms → named ``casadi.Function`` objects, built once per model and option set.

Every function is an SX graph with the input and output names of the SPEC, so it can be
called by keyword (left-out inputs are zero), differentiated, mapped, embedded in an NLP and
exported with CasADi's code generator.
"""

from __future__ import annotations

import threading
from functools import cached_property

import casadi as ca
import numpy as np

from . import (
    arguments,
    centroidal,
    configuration,
    contacts,
    derivatives,
    dynamics,
    identification,
    kernels,
    kinematics,
    motion,
)
from .contacts import contact_list
from .errors import InputError, ModelError, unknown_name
from .factorization import TreeLDLT
from .grouping import grouped
from .joints import JOINT_TYPES
from .model import Model
from .names import function_name
from .reframe import sparsify_frames
from .spatial import SX

# name -> (input names, output names, accepted options with their defaults)
SIGNATURES: dict[str, tuple[tuple[str, ...], tuple[str, ...], dict[str, object]]] = {
    "inverse_dynamics": (("q", "qd", "qdd", "fext"), ("tau",), {"fext": True,
                                                                "parameters": False}),
    "forward_dynamics": (("q", "qd", "tau", "fext"), ("qdd",), {"fext": True,
                                                                "parameters": False}),
    "mass_matrix": (("q",), ("M",), {"parameters": False}),
    "velocity_product": (("q", "qd"), ("c",), {}),
    "gravity_torque": (("q",), ("g",), {}),
    "bias_force": (("q", "qd"), ("h",), {}),
    "geometric_jacobian": (("q",), ("J",),
        {"body": None, "point": None, "reference_frame": "base"}),
    "get_transform": (("q",), ("T",), {"body": None, "relative_to": None}),
    "center_of_mass": (("q",), ("com", "com_jacobian"), {}),
    "external_force": (("wrench", "q"), ("fext",), {"body": None}),
    "inverse_dynamics_derivatives": (
        ("q", "qd", "qdd", "fext"), ("dtau_dq", "dtau_dqd", "dtau_dqdd"), {"fext": True}
    ),
    "forward_dynamics_derivatives": (
        ("q", "qd", "tau", "fext"), ("dqdd_dq", "dqdd_dqd", "dqdd_dtau"), {"fext": True}
    ),
    "integrate": (("q", "v"), ("q_next",), {"dt": 1.0}),
    "difference": (("q0", "q1"), ("v",), {}),
    "frame_velocity": (("q", "qd"), ("velocity",),
        {"body": None, "point": None, "reference_frame": "base"}),
    "frame_acceleration": (("q", "qd", "qdd"), ("acceleration",),
        {"body": None, "point": None, "reference_frame": "base"}),
    "jacobian_time_derivative": (("q", "qd"), ("Jdot",),
        {"body": None, "point": None, "reference_frame": "base"}),
    "centroidal_momentum_matrix": (("q",), ("A_G",), {}),
    "centroidal_momentum": (("q", "qd"), ("h_G",), {}),
    "centroidal_momentum_bias": (("q", "qd"), ("Adot_qd",), {}),
    "kinetic_energy": (("q", "qd"), ("T",), {}),
    "potential_energy": (("q",), ("V",), {}),
    "contact_dynamics": (("q", "qd", "tau", "fext", "damping"), ("qdd", "forces"),
                         {"contacts": None, "fext": True}),
    "impulse_dynamics": (("q", "qd_minus", "restitution"), ("qd_plus", "impulses"),
                         {"contacts": None}),
    "regressor": (("q", "qd", "qdd"), ("Y",), {}),
}
FUNCTION_NAMES = tuple(SIGNATURES)
REFERENCE_FRAMES = ("base", "local")  # the axes of task-space vectors
# outputs that are vectors: 1-D NumPy arrays in numeric results, whatever their length
VECTOR_OUTPUTS = frozenset({"tau", "qdd", "c", "g", "h", "com", "q_next", "v", "velocity",
                            "acceleration", "h_G", "Adot_qd", "T", "V", "qd_plus"})
# outputs built by the tree-sparse algorithms, where CSE merges the poses their pieces share
_CSE = frozenset({"inverse_dynamics", "forward_dynamics", "mass_matrix", "contact_dynamics",
                  "impulse_dynamics",
                  "centroidal_momentum_matrix", "centroidal_momentum",
                  "centroidal_momentum_bias", "kinetic_energy", "jacobian_time_derivative"})


class _Stages:
    """The models the algorithms run on, derived from the URDF model, and what the
    joint-space dynamics functions share:

    * ``reframed`` (:mod:`casdyn.reframe`): joint frames turned and slid along their axes
      (DH-like or centre-of-mass-aligned) where that makes constants sparser; bodies keep
      their URDF frames, so every result is unchanged. All Functions run on it.
    * ``grouped`` (:mod:`casdyn.grouping`): inertias grouped towards the base; the same
      joint-space dynamics (``M``, ``C qd``, ``g``) from sparser constants, the body forces
      inside differ. The joint-space dynamics run on it.
    * ``rnea``: RNEA on ``grouped`` as an SX Function of (q, qd, qdd, base acceleration),
      built once and inlined (by calling it on SX arguments, where CasADi drops whatever
      constant zeros make vanish) into inverse dynamics, velocity product and gravity torque.
    """

    def __init__(self, model: Model):
        self.reframed = sparsify_frames(model)
        self.grouped = grouped(self.reframed)
        self._regular_checked = False
        self._independent: set[tuple] = set()  # contact sets found independent

    def check_mass_matrix_regular(self) -> None:
        """Refuse forward dynamics where ``M`` is singular at two random configurations: a
        motion that moves no mass although every subtree has some (e.g. a massless root link
        on a floating base with a single joint below it, whose axis the free joint repeats).
        Checked once per model (forward dynamics and its derivatives both ask)."""
        if not self._regular_checked:
            _refuse_singular_mass_matrix(self.grouped)
            self._regular_checked = True

    def check_contacts_independent(self, listed: tuple, q: SX, K: SX) -> None:
        """Refuse contacts whose constraints are redundant: the Delassus matrix
        ``K = J M^-1 J^T`` singular at two random configurations (e.g. two 6-D contacts,
        or two points, of one rigid body). Their forces would not be unique, and
        the solve would return NaN or huge numbers."""
        if listed in self._independent:
            return
        try:
            null = _null_vector(self.grouped, q, K, 1e-10)
        except _NotFinite:
            points = ", ".join(f"{c.point} on {c.body!r}" for c in listed)
            raise ModelError(
                f"the contacts' J M^-1 J^T overflows at a random configuration: a contact point "
                f"is too far from its body's origin ({points}; body frames, m)") from None
        if null is None:
            self._independent.add(listed)
            return
        # the contacts whose forces can trade off against each other: the null vector's
        at, involved = 0, []
        for contact in listed:
            if null[at : at + contact.size].max() > 0.01 * null.max():
                involved.append(f"{contact.kind} on {contact.body!r} at {contact.point}")
            at += contact.size
        raise ModelError(
            f"redundant contacts: {'; '.join(involved)} constrain some motion more than once "
            "(J M^-1 J^T is singular), so their forces are not unique; a rigid body takes "
            "one 6-D contact or one point contact (two points of it are already redundant: "
            "their velocities along the line through them are equal)"
        )

    @cached_property
    def rnea(self) -> ca.Function:
        """(q, qd, qdd, base_acceleration[6]) -> tau, without external forces."""
        model = self.grouped
        q, qd, qdd = SX.sym("q", model.nq), SX.sym("qd", model.nv), SX.sym("qdd", model.nv)
        a_base = SX.sym("a_base", 6)
        return ca.Function("rnea", [q, qd, qdd, a_base],
                           [dynamics.rnea(model, q, qd, qdd, a_base)])


class FunctionCache:
    """Builds each requested Function on first use and returns the same object afterwards.

    Functions are cached by their real key, the name and the resolved options. Their CasADi
    names (:func:`casdyn.names.function_name`) are valid C identifiers and unique within the
    cache: where two keys would still read alike, the later one gets a counter.
    """

    def __init__(self, model: Model):
        self.model = model
        self._functions: dict[tuple, ca.Function] = {}
        self._for_c: dict[tuple, ca.Function] = {}
        self._names: set[str] = set()
        self._stages = _Stages(model)
        self._lock = threading.RLock()

    def key(self, name: str, **options) -> tuple:
        """The cache key of the Function ``name`` with ``options`` (checked and completed
        with the defaults): equal keys mean the same Function."""
        return (name, *sorted(_resolve_options(self.model, name, options).items()))

    def get(self, name: str, **options) -> ca.Function:
        return self.get_key(self.key(name, **options))

    def get_key(self, key: tuple) -> ca.Function:
        """The Function of a key from :meth:`key`."""
        with self._lock:
            function = self._functions.get(key)
            if function is None:
                function = self._functions[key] = self._build(key)
            return function

    def for_c(self, key: tuple) -> ca.Function:
        """The Function of a key as its C is best generated: the Function of
        :meth:`get_key`, but for the forward-dynamics derivatives of larger models one whose
        ``M^-1`` products are C loops (:func:`casdyn.kernels.tree_solve`), with the same
        name, inputs and outputs. That one exists for the code generator only: it cannot be
        evaluated in Python."""
        function = self.get_key(key)
        name, options = key[0], dict(key[1:])
        if name != "forward_dynamics_derivatives" or not _solves_in_loops(self.model):
            return function
        with self._lock:
            if key not in self._for_c:
                if options["fext"]:
                    built = _forward_dynamics_derivatives_in_loops(self._stages.reframed,
                                                                   function, self._stages)
                else:  # from the full one's pieces with fext = 0, as in _build
                    full = self.for_c((name, *sorted({**options, "fext": True}.items())))
                    built = _without_fext_in_loops(full, function, self._stages)
                self._for_c[key] = built
            return self._for_c[key]

    def _build(self, key: tuple) -> ca.Function:
        name, options = key[0], dict(key[1:])
        readable = c_name = function_name(name, options)
        count = 1
        while c_name in self._names:
            count += 1
            c_name = f"{readable}_{count}"
        self._names.add(c_name)
        if options.get("fext") is False:
            # the variant without fext: the full function with fext = 0, inlined
            full = self.get_key((name, *sorted({**options, "fext": True}.items())))
            return without_fext(full, c_name, name)
        return _build_function(self._stages.reframed, c_name, name, options, self._stages)


def _resolve_options(model: Model, name: str, options: dict) -> dict:
    if name not in SIGNATURES:
        raise unknown_name("function", name, FUNCTION_NAMES)
    accepted = SIGNATURES[name][2]
    unknown = set(options) - set(accepted)
    if unknown:
        raise InputError(
            f"function {name!r} takes no option {sorted(unknown)[0]!r}; "
            f"its options: {', '.join(accepted) or 'none'}"
        )
    resolved = {**accepted, **options}
    if "body" in accepted:
        if resolved["body"] is None:
            raise InputError(f"function {name!r} needs the option body=<name of a body>")
        model.body_index(resolved["body"], allow_base=name != "external_force")
    if resolved.get("relative_to") is not None:
        model.body_index(resolved["relative_to"], allow_base=True)
    for flag in ("fext", "parameters"):
        if flag in accepted and not isinstance(resolved[flag], bool):
            raise InputError(f"option {flag} of {name!r} must be True or False")
    if "dt" in accepted:
        resolved["dt"] = arguments.finite_number(resolved["dt"], f"option dt of {name!r}")
    if "reference_frame" in accepted and resolved["reference_frame"] not in REFERENCE_FRAMES:
        raise InputError(
            f"option reference_frame of {name!r} is {resolved['reference_frame']!r}; it is "
            "'base' (base-frame axes, Pinocchio's LOCAL_WORLD_ALIGNED) or 'local' (the "
            "body's axes, Pinocchio's LOCAL)")
    if resolved.get("point") is not None:
        resolved["point"] = arguments.point(resolved["point"], f"option point of {name!r}")
        if not any(resolved["point"]):
            resolved["point"] = None  # the frame origin: the same Function as without
    if "contacts" in accepted:
        if resolved["contacts"] is None:
            raise InputError(f"function {name!r} needs the option contacts=[casdyn.Contact(...)]")
        resolved["contacts"] = contact_list(resolved["contacts"])
        for contact in resolved["contacts"]:
            model.body_index(contact.body)
    return resolved


def _build_function(model: Model, c_name: str, name: str, options: dict,
                    stages: _Stages) -> ca.Function:
    """The SX Function ``name`` for ``model``, with options already resolved, called
    ``c_name``. Variants with ``fext=False`` are not built here: :class:`FunctionCache`
    derives them from the full function with :func:`without_fext`."""
    nv, nb = model.nv, len(model.bodies)
    symbols = {
        "q": SX.sym("q", model.nq),
        "qd": SX.sym("qd", nv),
        "qdd": SX.sym("qdd", nv),
        "tau": SX.sym("tau", nv),
        "fext": SX.sym("fext", nb, 6),
        "wrench": SX.sym("wrench", 6),
        "v": SX.sym("v", nv),
        "q0": SX.sym("q0", model.nq),
        "q1": SX.sym("q1", model.nq),
        "damping": SX.sym("damping"),
        "qd_minus": SX.sym("qd_minus", nv),
        "restitution": SX.sym("restitution"),
        "pi": SX.sym("pi", identification.parameter_count(model)),
    }
    inputs = list(SIGNATURES[name][0])
    if options.get("parameters"):
        # the same algorithm on the model whose inertias are the input pi (link frames)
        inputs.append("pi")
        build = _PARAMETRIC[name]
        outputs = build(identification.parametric(model, symbols["pi"]), symbols, stages)
    else:
        outputs = _BUILDERS[name](model, symbols, options, stages)
    return _sx_function(c_name, name, [symbols[i] for i in inputs], outputs, inputs,
                        list(SIGNATURES[name][1]))


def without_fext(full: ca.Function, c_name: str, name: str) -> ca.Function:
    """``full`` (the Function ``name`` with an ``fext`` input) with ``fext`` fixed at zero,
    called ``c_name``: the external-force part of the graph simplifies away as CasADi
    inlines the call."""
    inputs = [full.sx_in(i) for i in range(full.n_in()) if full.name_in(i) != "fext"]
    arguments = [full.sx_in(i) if full.name_in(i) != "fext" else SX.zeros(full.size_in(i))
                 for i in range(full.n_in())]
    names = [n for n in full.name_in() if n != "fext"]
    return _sx_function(c_name, name, inputs, full.call(arguments), names,
                        full.name_out())


# CasADi's common-subexpression pass (CSE) saves 1-11% on the dynamics graphs (measured on
# the benchmark models; in inverse dynamics it finds the products of angular velocities that
# U and w x I w share), but nothing on the mass matrix of deep trees, built in the base frame
# (15 of 24,868 instructions on the 48-link chain, for 0.11 s), nor on the kinematics. On the
# derivative graphs it saves 9-13% on the arms in milliseconds, but 2% in 0.25 s on a 12-link
# chain and under 4% in 5-8 s on 48 links: there it runs below a size limit only.
_DERIVATIVE_CSE_LIMIT = 20_000


def _sx_function(c_name: str, name: str, inputs: list, outputs: list,
                 names_in: list, names_out: list) -> ca.Function:
    """The SX Function ``c_name`` (of kind ``name``) of ``inputs -> outputs``, with CSE
    where it pays."""
    args = (c_name, inputs, outputs, names_in, names_out)
    if name.endswith("_derivatives"):
        plain = ca.Function(*args)
        if plain.n_instructions() >= _DERIVATIVE_CSE_LIMIT:
            return plain
        cse = True
    else:
        cse = name in _CSE
    return ca.Function(*args, {"cse": cse})


def _inverse_dynamics(model: Model, s: dict, options: dict, stages: _Stages) -> list[SX]:
    tau = stages.rnea(s["q"], s["qd"], s["qdd"], dynamics.gravity_acceleration(model))
    return [tau + dynamics.friction_torque(model, s["q"], s["qd"])
            - dynamics.external_torque(model, s["q"], s["fext"])]


def _require_regular_mass_matrix(model: Model, stages: _Stages, what: str) -> None:
    """A ModelError if ``M`` is singular, which leaves ``what`` undefined."""
    massless = model.joints_moving_no_inertia()
    if massless:
        raise ModelError(
            f"{what} of {model.name!r} is undefined: joint {massless[0]!r} moves "
            "no mass or inertia, so the mass matrix is singular"
        )
    stages.check_mass_matrix_regular()


def _driving_force(model: Model, s: dict) -> SX:
    """``tau + sum_b J_b^T fext_b - friction`` (nv x 1): what drives the motion besides
    ``M qdd + C qd + g``, for forward and contact dynamics."""
    return (s["tau"] + dynamics.external_torque(model, s["q"], s["fext"])
            - dynamics.friction_torque(model, s["q"], s["qd"]))


def _forward_dynamics(model: Model, s: dict, options: dict, stages: _Stages) -> list[SX]:
    _require_regular_mass_matrix(model, stages, "forward dynamics")
    tau = _driving_force(model, s)
    qdd = dynamics.forward_dynamics(stages.grouped, s["q"], s["qd"], tau)
    if model.floating_base and not model.has_mimic_joints:
        # ABA or the factorised M: whichever graph is smaller (on solo12 the factorised one,
        # by 2 %: the legs' articulated-inertia transfers cost about what their few M
        # entries do; on TALOS's long limbs ABA, by 28 %)
        factorized = dynamics.factorized_forward_dynamics(stages.grouped, s["q"], s["qd"], tau)
        return _smallest([[qdd], [factorized]], [s[name] for name in ("q", "qd", "tau")], s)
    return [qdd]


def _null_vector(model: Model, q: SX, matrix: SX, tolerance: float) -> np.ndarray | None:
    """``|v|`` of the smallest eigenvalue of the symmetric ``matrix(q)`` if that eigenvalue is
    at most ``tolerance`` times the largest at both of two random configurations (seeded,
    bounded): the matrix is singular whatever ``q``; None where it is regular."""
    evaluate = ca.Function("matrix", [q], [matrix])
    rng = np.random.default_rng(0)
    for _ in range(2):
        value = np.array(evaluate(configuration.random(model, rng, bounded=True)))
        if not np.all(np.isfinite(value)):
            raise _NotFinite
        # scaled to a unit diagonal (same rank; no overflow in the eigen-solver, and rows of
        # very different sizes, e.g. a contact point far from its body, do not read as null)
        diagonal = np.sqrt(np.diag(value))
        scale = np.where(diagonal > 0, 1 / np.where(diagonal > 0, diagonal, 1), 1.0)
        values, vectors = np.linalg.eigh(value * scale[:, None] * scale[None, :])
        if values[0] > tolerance * max(values[-1], 1e-300):
            return None
    return np.abs(vectors[:, 0])


class _NotFinite(Exception):
    """A matrix :func:`_null_vector` was to check has a non-finite entry."""


def _refuse_singular_mass_matrix(model: Model) -> None:
    """A ModelError naming the joints of a null motion if ``M`` is singular at two random
    configurations (see :meth:`_Stages.check_mass_matrix_regular`)."""
    if model.nv == 0:
        return
    q = SX.sym("q", model.nq)
    null = _null_vector(model, q, dynamics.crba(model, q), 1e-12)
    if null is None:
        return
    names = [j.name for j in model.joints if np.any(
        null[j.idx_v : j.idx_v + JOINT_TYPES[j.kind].nv] > 0.1 * null.max())]
    raise ModelError(
        f"forward and contact dynamics of {model.name!r} are undefined: the mass matrix is "
        "singular; a "
        f"motion of joints {', '.join(map(repr, names))} together moves no mass (e.g. a "
        "massless link whose only joint repeats a motion of the joint above it)"
    )


# Below this many (joint velocity, velocity at or above it) pairs both derivative graphs are
# cheap to build, and the smaller is kept: AD's (with CRBA's M) on short limbs (the three
# partials without fext: UR5e 0.85, floating solo12 0.78 of the analytical graph), the
# analytical one on long chains and humanoids (chain12 0.44, floating TALOS 0.70, chain24
# 0.30 of AD's). Above it, the analytical graph.
_DERIVATIVE_COMPARE_PAIRS = 400


def _inverse_dynamics_partials(model: Model, s: dict, options: dict,
                               stages: _Stages) -> list[SX]:
    """d tau / dq (in the tangent space, nv columns), d tau / dqd and d tau / dqdd (the mass
    matrix) of inverse dynamics: by the analytical recursions of :mod:`casdyn.derivatives`
    (``M`` from their composite inertias) or by CasADi's AD on the SX graph of inverse
    dynamics and CRBA, whichever graph is smaller (AD only with mimic joints)."""
    (tau,) = _inverse_dynamics(model, s, options, stages)

    def by_ad() -> list[SX]:
        return [in_tangent_space(model, ca.jacobian(tau, s["q"]), s["q"]),
                ca.jacobian(tau, s["qd"]), dynamics.crba(stages.grouped, s["q"])]

    if model.has_mimic_joints:
        return by_ad()
    dq, dqd, M = derivatives.rnea_derivatives(stages.grouped, s["q"], s["qd"], s["qdd"],
                                              dynamics.gravity_acceleration(model), s["fext"])
    if model.joint_friction:
        dqd = dqd + ca.jacobian(dynamics.friction_torque(model, s["q"], s["qd"]), s["qd"])
    analytical = [dq, dqd, M]
    if _velocity_pairs(model) > _DERIVATIVE_COMPARE_PAIRS:
        return analytical
    return _smallest([by_ad(), analytical], [s[name] for name in ("q", "qd", "qdd")], s)


def _smallest(candidates: list[list[SX]], inputs: list[SX], s: dict) -> list[SX]:
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


def _velocity_pairs(model: Model) -> int:
    """The number of (velocity, velocity of the same or an ancestor joint) pairs."""
    nv = [JOINT_TYPES[joint.kind].nv for joint in model.joints]
    return sum(nv[i] * sum(nv[j] for j in model.support(i)) for i in range(len(nv)))


def in_tangent_space(model: Model, jacobian: SX, q: SX) -> SX:
    """A Jacobian with respect to ``q`` (k x nq) as the derivative along ``q ⊕ v`` at
    ``v = 0`` (k x nv): unchanged where every joint has ``nq == nv`` and plain addition."""
    T = configuration.tangent_map(model, q)
    return jacobian if T is None else ca.mtimes(jacobian, T)


def _inverse_dynamics_derivatives(model: Model, s: dict, options: dict,
                                  stages: _Stages) -> list[SX]:
    """d tau / d(q, qd, qdd), analytical or by AD (see :func:`_inverse_dynamics_partials`)."""
    return _inverse_dynamics_partials(model, s, options, stages)


def _forward_dynamics_derivatives(model: Model, s: dict, options: dict,
                                  stages: _Stages) -> list[SX]:
    """d qdd / d(q, qd, tau) from the inverse dynamics' derivatives (Carpentier & Mansard,
    "Analytical derivatives of rigid body dynamics algorithms", RSS 2018): differentiating
    ``ID(q, qd, FD(q, qd, tau)) = tau`` gives ``d qdd/dq = -M^-1 d ID/dq`` and
    ``d qdd/dqd = -M^-1 d ID/dqd`` at ``qdd = FD(...)``, and ``d qdd/dtau = M^-1``.

    ``M^-1`` times the partials is solved through the tree-sparse ``M = L^T D L`` (RBDA 6.5)
    of the partials' own mass matrix, or ``M^-1`` is formed by AD through that solve and
    multiplied out, whichever graph is smaller where both are cheap to build (the solve:
    2-17 % smaller on the shipped and benchmark robots). ``M^-1`` itself is solved for its
    upper triangle only and mirrored (6-8 % of the whole on chain24 and the floating
    TALOS)."""
    nv = model.nv
    if nv == 0:  # every joint locked: empty, as the other dynamics functions' results
        return [SX(0, 0)] * 3
    partials, ldlt, qdd = _forward_dynamics_pieces(model, s, options, stages)
    solved = ldlt.solve(ca.horzcat(*partials))
    M_inv = ca.triu(ldlt.solve(SX.eye(nv)))  # symmetric: the lower half mirrors the upper
    by_solve = [-solved[:, :nv], -solved[:, nv:], M_inv + ca.triu(M_inv, False).T]
    if _velocity_pairs(model) > _DERIVATIVE_COMPARE_PAIRS:
        return by_solve
    M_inv = ca.jacobian(qdd, s["tau"])
    by_product = [-ca.mtimes(M_inv, partials[0]), -ca.mtimes(M_inv, partials[1]), M_inv]
    return _smallest([by_product, by_solve], [s[name] for name in ("q", "qd", "tau")], s)


# In generated C the forward-dynamics derivatives' M^-1 products run as loops over whole
# rows (casdyn.kernels) where M is at least this full and this large: chains more than
# trees. Measured against the SX solve (compiled for this processor, same flags, before the
# vectoriser's flags of casdyn.export): 24 links 16.2 against 23.7 us, 48 links 187 against
# 282 (101 with those flags); 12 links equal (4.2 and 4.1); slower on the Panda-like arm
# (1.58 against 1.28), on 6 links and on the floating TALOS (M half full: 32 against 28),
# whose zeros the SX graph skips and the loops do not.
_LOOP_SOLVE_VELOCITIES = 16
_LOOP_SOLVE_FILL = 0.75


def _solves_in_loops(model: Model) -> bool:
    """Whether the forward-dynamics derivatives' ``M^-1`` products are C loops in generated
    code: from :data:`_LOOP_SOLVE_VELOCITIES` velocities on, where the lower triangle of
    ``M`` is at least :data:`_LOOP_SOLVE_FILL` structurally nonzero."""
    nv = model.nv
    if nv < _LOOP_SOLVE_VELOCITIES:
        return False
    within = sum(k * (k - 1) // 2 for k in (JOINT_TYPES[j.kind].nv for j in model.joints))
    return (_velocity_pairs(model) - within) / (nv * (nv + 1) / 2) >= _LOOP_SOLVE_FILL


def _forward_dynamics_derivatives_in_loops(model: Model, function: ca.Function,
                                           stages: _Stages) -> ca.Function:
    """``function`` (the forward-dynamics derivatives with ``fext``) as the code generator
    should write it: the SX graph of the pieces (inverse dynamics' partials transposed, the
    numbers of ``M = L^T D L``) and the loops of :func:`casdyn.kernels.tree_solve` for
    ``-M^-1`` times the partials and ``M^-1``."""
    nv = model.nv
    s = {"q": SX.sym("q", model.nq), "qd": SX.sym("qd", nv), "tau": SX.sym("tau", nv),
         "fext": SX.sym("fext", len(model.bodies), 6)}
    partials, ldlt, _ = _forward_dynamics_pieces(model, s, {"fext": True}, stages)
    names = list(SIGNATURES["forward_dynamics_derivatives"][0])
    c_name = function.name()
    pieces = _sx_function(f"{c_name}_pieces", "forward_dynamics_derivatives",
                          [s[n] for n in names],
                          [ca.densify(ca.horzcat(*partials)).T, ldlt.values()],
                          names, ["BT", "ld"])
    solve = kernels.tree_solve(ldlt, 2 * nv, f"{c_name}_solve")
    return _solved_in_loops(function, pieces, solve, ldlt.order)


def _without_fext_in_loops(full: ca.Function, function: ca.Function,
                           stages: _Stages) -> ca.Function:
    """``function`` (the variant without ``fext``) from ``full``, the loops' form of the
    variant with it: its pieces with ``fext = 0`` inlined, the same loops."""
    name = full.name()
    pieces = without_fext(full.find_function(f"{name}_pieces"), f"{function.name()}_pieces",
                          "forward_dynamics_derivatives")
    return _solved_in_loops(function, pieces, full.find_function(f"{name}_solve"),
                            _factorization_order(stages))


def _solved_in_loops(function: ca.Function, pieces: ca.Function, solve: ca.Function,
                     order: list[int]) -> ca.Function:
    """The MX Function ``pieces`` then ``solve`` (:func:`casdyn.kernels.tree_solve` in the
    factorisation's ``order``), with the name, inputs, outputs and output sparsity of
    ``function``."""
    nv = len(order)
    inputs = [ca.MX.sym(pieces.name_in(i), pieces.sparsity_in(i)) for i in range(pieces.n_in())]
    XT, Z = solve(*pieces(*inputs))
    X = XT.T
    back = np.argsort(order)  # M^-1 = Z with rows and columns in M's order
    outputs = [X[:, :nv], X[:, nv:], Z[back, back]]
    outputs = [ca.project(x, function.sparsity_out(k)) for k, x in enumerate(outputs)]
    return ca.Function(function.name(), inputs, outputs, pieces.name_in(),
                       function.name_out())


def _factorization_order(stages: _Stages) -> list[int]:
    """The order in which the forward-dynamics derivatives factorise ``M = L^T D L``."""
    return dynamics.velocity_order(stages.grouped)


def _forward_dynamics_pieces(model: Model, s: dict, options: dict,
                             stages: _Stages) -> tuple[list[SX], TreeLDLT, SX]:
    """What the forward-dynamics derivatives are made of: inverse dynamics' partials
    ``[d ID/dq, d ID/dqd]`` (nv x nv each) at ``qdd = FD(q, qd, tau)``, the factorisation
    ``M = L^T D L`` and that ``qdd``."""
    _require_regular_mass_matrix(model, stages, "forward dynamics")
    at = {**s, "qdd": SX.sym("at_qdd", model.nv)}  # ID at a free qdd, then qdd = FD(...)
    *partials, M = _inverse_dynamics_partials(model, at, options, stages)
    ldlt = TreeLDLT(M, _factorization_order(stages))
    # FD itself through the same factorisation: smaller than ABA next to it (3-12 % of the
    # whole on TALOS, chain24, chain12, UR5e)
    qdd = dynamics.factorized_forward_dynamics(stages.grouped, s["q"], s["qd"],
                                               _driving_force(model, s), ldlt)
    return ca.substitute(partials, [at["qdd"]], [qdd]), ldlt, qdd


def _velocity_product(model: Model, s: dict, options: dict, stages: _Stages) -> list[SX]:
    zero = SX.zeros(model.nv, 1)
    return [stages.rnea(s["q"], s["qd"], zero, SX.zeros(6, 1))]


def _gravity_torque(model: Model, s: dict, options: dict, stages: _Stages) -> list[SX]:
    zero = SX.zeros(model.nv, 1)
    return [stages.rnea(s["q"], zero, zero, dynamics.gravity_acceleration(model))]


def _bias_force(model: Model, s: dict, options: dict, stages: _Stages) -> list[SX]:
    zero = SX.zeros(model.nv, 1)
    return [stages.rnea(s["q"], s["qd"], zero, dynamics.gravity_acceleration(model))
            + dynamics.friction_torque(model, s["q"], s["qd"])]


def _at_the_origin(model: Model, q: SX) -> SX:
    """``q`` with the positions of free root joints set to zero. A body's Jacobian, its time
    derivative and its frame velocity and acceleration (base-frame axes) use the positions
    along its chain only through differences, which a common shift leaves unchanged:
    without the root's position the graph does not add it to every position and subtract it
    again."""
    for joint in model.joints:
        if joint.parent < 0 and joint.kind == "free":
            q = ca.vertcat(q[: joint.idx_q], SX.zeros(3, 1), q[joint.idx_q + 3 :])
    return q


def _local(options: dict) -> bool:
    """Whether a task-space function's vectors have the body's axes."""
    return options["reference_frame"] == "local"


def _geometric_jacobian(model: Model, s: dict, options: dict, stages: _Stages) -> list[SX]:
    body = model.body_index(options["body"], allow_base=True)
    q = _at_the_origin(model, s["q"])
    return [kinematics.geometric_jacobian(model, q, body, options["point"],
                                          _local(options))]


def _frame_velocity(model: Model, s: dict, options: dict, stages: _Stages) -> list[SX]:
    body = model.body_index(options["body"], allow_base=True)
    q = _at_the_origin(model, s["q"])
    return [motion.frame_velocity(model, q, s["qd"], body, options["point"],
                                  _local(options))]


def _frame_acceleration(model: Model, s: dict, options: dict, stages: _Stages) -> list[SX]:
    body = model.body_index(options["body"], allow_base=True)
    q = _at_the_origin(model, s["q"])
    return [motion.frame_acceleration(model, q, s["qd"], s["qdd"], body, options["point"],
                                      _local(options))]


def _jacobian_time_derivative(model: Model, s: dict, options: dict,
                              stages: _Stages) -> list[SX]:
    body = model.body_index(options["body"], allow_base=True)
    q = _at_the_origin(model, s["q"])
    return [motion.jacobian_time_derivative(model, q, s["qd"], body, options["point"],
                                            _local(options))]


def _contact_system(model: Model, s: dict, qd: SX, options: dict, stages: _Stages,
                    what: str) -> contacts.ContactSystem:
    """The contacts of ``options`` at ``(q, qd)``, refused where ``M`` is singular or the
    contacts are redundant (their forces would not be unique)."""
    _require_regular_mass_matrix(model, stages, what)
    listed = options["contacts"]
    bodies = [model.body_index(contact.body) for contact in listed]
    M = dynamics.crba(stages.grouped, s["q"])
    system = contacts.ContactSystem(model, M, s["q"], qd, listed, bodies)
    stages.check_contacts_independent(listed, s["q"], system.K)
    return system


def _contact_dynamics(model: Model, s: dict, options: dict, stages: _Stages) -> list[SX]:
    system = _contact_system(model, s, s["qd"], options, stages, "contact dynamics")
    h = stages.rnea(s["q"], s["qd"], SX.zeros(model.nv, 1), dynamics.gravity_acceleration(model))
    qdd, forces = contacts.contact_dynamics(system, _driving_force(model, s) - h, s["qd"],
                                            s["damping"])
    return [qdd, system.per_contact(forces)]


def _impulse_dynamics(model: Model, s: dict, options: dict, stages: _Stages) -> list[SX]:
    system = _contact_system(model, s, s["qd_minus"], options, stages, "impulse dynamics")
    qd_plus, impulses = contacts.impulse_dynamics(system, s["qd_minus"], s["restitution"])
    return [qd_plus, system.per_contact(impulses)]


def _get_transform(model: Model, s: dict, options: dict, stages: _Stages) -> list[SX]:
    body = model.body_index(options["body"], allow_base=True)
    reference = options["relative_to"]
    reference = -1 if reference is None else model.body_index(reference, allow_base=True)
    return [kinematics.relative_transform(model, s["q"], body, reference).matrix()]


def _external_force(model: Model, s: dict, options: dict, stages: _Stages) -> list[SX]:
    """Row = [R n + p x (R f); R f]: a body-frame wrench as a base-frame spatial force."""
    body = model.body_index(options["body"])
    pose = kinematics.relative_transform(model, s["q"], body, -1)
    wrench = s["wrench"]
    force = ca.mtimes(pose.R, wrench[3:])
    moment = ca.mtimes(pose.R, wrench[:3]) + ca.cross(pose.p, force)
    fext = SX.zeros(len(model.bodies), 6)
    fext[body, :] = ca.vertcat(moment, force).T
    return [fext]


def _integrate(model: Model, s: dict, options: dict, stages: _Stages) -> list[SX]:
    return [configuration.integrate(model, s["q"], s["v"] * options["dt"])]


def _difference(model: Model, s: dict, options: dict, stages: _Stages) -> list[SX]:
    return [configuration.difference(model, s["q0"], s["q1"])]


def _regressor(model: Model, s: dict, options: dict, stages: _Stages) -> list[SX]:
    """``Y = d tau / d pi`` of the parametric inverse dynamics (no external force): exact,
    as tau is linear in pi, and free of pi."""
    pi = SX.sym("pi", identification.parameter_count(model))
    no_force = {**s, "fext": SX.zeros(s["fext"].shape)}
    (tau,) = _PARAMETRIC["inverse_dynamics"](identification.parametric(model, pi), no_force,
                                             stages)
    return [ca.jacobian(tau, pi)]


# the parametric variants (option parameters=True): the algorithms on a model whose
# inertias are SX expressions of pi; no grouping (it would need numbers)
_PARAMETRIC = {
    "inverse_dynamics": lambda m, s, stages: [
        dynamics.rnea(m, s["q"], s["qd"], s["qdd"]) + dynamics.friction_torque(m, s["q"], s["qd"])
        - dynamics.external_torque(m, s["q"], s["fext"])],
    "forward_dynamics": lambda m, s, stages: [dynamics.forward_dynamics(
        m, s["q"], s["qd"], _driving_force(m, s))],
    "mass_matrix": lambda m, s, stages: [dynamics.crba(m, s["q"])],
}


_BUILDERS = {
    "inverse_dynamics": _inverse_dynamics,
    "forward_dynamics": _forward_dynamics,
    "mass_matrix": lambda model, s, options, stages: [dynamics.crba(stages.grouped, s["q"])],
    "velocity_product": _velocity_product,
    "gravity_torque": _gravity_torque,
    "bias_force": _bias_force,
    "geometric_jacobian": _geometric_jacobian,
    "get_transform": _get_transform,
    "center_of_mass": lambda model, s, options, stages: list(
        kinematics.center_of_mass(model, s["q"])
    ),
    "external_force": _external_force,
    "inverse_dynamics_derivatives": _inverse_dynamics_derivatives,
    "forward_dynamics_derivatives": _forward_dynamics_derivatives,
    "integrate": _integrate,
    "difference": _difference,
    "frame_velocity": _frame_velocity,
    "frame_acceleration": _frame_acceleration,
    "jacobian_time_derivative": _jacobian_time_derivative,
    "centroidal_momentum_matrix": lambda model, s, options, stages: [
        centroidal.centroidal_momentum_matrix(model, s["q"])],
    "centroidal_momentum": lambda model, s, options, stages: [
        centroidal.centroidal_momentum(model, s["q"], s["qd"])],
    "centroidal_momentum_bias": lambda model, s, options, stages: [
        centroidal.centroidal_momentum_bias(model, s["q"], s["qd"])],
    "kinetic_energy": lambda model, s, options, stages: [
        centroidal.kinetic_energy(model, s["q"], s["qd"])],
    "potential_energy": lambda model, s, options, stages: [
        centroidal.potential_energy(model, s["q"])],
    "contact_dynamics": _contact_dynamics,
    "impulse_dynamics": _impulse_dynamics,
    "regressor": _regressor,
}
