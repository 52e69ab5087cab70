"""Crocoddyl's own gait problems (``crocoddyl.utils.quadruped``'s generator, as its
``examples/quadrupedal_gaits_fwddyn.py`` uses it: ANYmal from example-robot-data walking,
trotting, pacing, bounding and jumping; ``crocoddyl.utils.biped``'s, as
``examples/bipedal_gaits_fwddyn.py`` uses it: TALOS's legs walking and jumping,
:mod:`ocp_gaits_biped`) solved by Crocoddyl's FDDP and, the same problems written with
``casdyn.ocp``, by casdyn's SQP; one process, one thread each.

Crocoddyl's side is the generator's ``ShootingProblem`` itself, solved as the example solves
it (``SolverFDDP``, from ``xs = [x0] * (T + 1)`` and ``problem.quasiStatic``, at most 100
iterations, ``is_feasible=False``). casdyn's side is read off that problem knot by knot
(:func:`knot_terms`): its contacts (ANYmal's ``ContactModel3D``, damping gains ``[0, 50]``:
casdyn's ``damping=50``; TALOS's ``ContactModel6D``, ``LOCAL_WORLD_ALIGNED``, ``[0, 30]``:
casdyn's ``contact="6d"``), its impulse knots (:class:`casdyn.ocp.Impulse`), and each cost
with its reference and weight — state regularisation (weighted quadratic), torques, centre
of mass, swing-foot positions (ANYmal) or placements (TALOS:
:class:`casdyn.ocp.FramePlacement`), friction or wrench cones and state bounds (quadratic
barriers: :class:`casdyn.ocp.Barrier` of :class:`casdyn.ocp.ContactForce` mapped by the
cone's matrix, :func:`cone_matrix`, and of the state), running weights times ``dt`` as
Crocoddyl's Euler integrator takes them, the impulse and terminal knots' not. casdyn's
problem has no other constraint (no friction rows, torque or joint limits: FDDP has none).
Where a cost term has no casdyn counterpart the translation raises, so a problem that
reaches the solvers is the same problem; each trajectory's cost is evaluated by casdyn's
function and by Crocoddyl's ``problem.calc`` (they must agree) and reported.

The impulse knots have no control in Crocoddyl; casdyn's ``u`` there has no effect and a
torque residual of weight :data:`IMPULSE_CONTROL_WEIGHT` keeps it at zero (no cost at the
optimum).

Warm MPC: a window of ``T - steps`` knots slides along the gait one knot per solve, each
solver warm-started from its previous plan shifted by one knot (both from their cold
solution), one iteration (casdyn: ``SQP.shift(1)`` and ``SQP.iterate``; Crocoddyl: one FDDP
iteration; building either side's window is not timed), the state moved along each solver's
own plan.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np

import casdyn
from casdyn.ocp import (
    SQP,
    Barrier,
    CenterOfMass,
    ContactForce,
    ContactModel,
    ControlResidual,
    FramePosition,
    Impulse,
    Problem,
    StateResidual,
)

# the example's phases (crocoddyl examples/quadrupedal_gaits_fwddyn.py): generator method,
# then (stepLength, stepHeight, timeStep, stepKnots, supportKnots) or (jumpHeight,
# jumpLength, timeStep, groundKnots, flyingKnots)
ANYMAL_GAITS = {
    "walking": ("createWalkingProblem", (0.25, 0.15, 1e-2, 25, 2)),
    "trotting": ("createTrottingProblem", (0.15, 0.1, 1e-2, 25, 2)),
    "pacing": ("createPacingProblem", (0.15, 0.1, 1e-2, 25, 5)),
    "bounding": ("createBoundingProblem", (0.15, 0.1, 1e-2, 25, 5)),
    "jumping": ("createJumpingProblem", (0.15, (0.0, 0.3, 0.0), 1e-2, 10, 20)),
}
# the biped example's (crocoddyl examples/bipedal_gaits_fwddyn.py), each from standing
TALOS_GAITS = {
    "talos walking": ("createWalkingProblem", (0.6, 0.1, 0.03, 15, 4)),
    "talos jumping": ("createJumpingProblem", (0.1, (0.0, 0.3, 0.0), 0.03, 9, 6)),
}
GAITS = {**ANYMAL_GAITS, **TALOS_GAITS}  # the names --gaits takes
MU = 0.7
IMPULSE_CONTROL_WEIGHT = 1e-3
# Crocoddyl writes "no bound" as the largest double
UNBOUNDED = 1e300


# -- conventions ---------------------------------------------------------------------------
class Conventions:
    """Pinocchio's state, tangent and torque order -> casdyn's: the quaternion's w last ->
    first, the base twist linear first -> angular first, and the joints in each one's
    order (e.g. Pinocchio's ANYmal: LF, LH, RF, RH; casdyn's URDF order: LF, RF, LH, RH)."""

    def __init__(self, pin_model, robot):
        names = [j.name for j in robot.model.coordinate_joints[1:]]
        pin_names = list(pin_model.names)[2:]
        self.joints = np.array([pin_names.index(n) for n in names])  # casdyn j <- pin
        self.nq, self.nv = robot.nq, robot.nv

    def x_from_pin(self, x: np.ndarray) -> np.ndarray:
        q, v = x[: self.nq], x[self.nq :]
        return np.r_[q[:3], q[6], q[3:6], q[7:][self.joints],
                     v[3:6], v[:3], v[6:][self.joints]]

    def x_to_pin(self, x: np.ndarray) -> np.ndarray:
        q, v = x[: self.nq], x[self.nq :]
        qj, vj = np.empty(len(self.joints)), np.empty(len(self.joints))
        qj[self.joints], vj[self.joints] = q[7:], v[6:]
        return np.r_[q[:3], q[4:7], q[3], qj, v[3:6], v[:3], vj]

    def tangent_from_pin(self, t: np.ndarray) -> np.ndarray:
        """A ``2 nv`` tangent vector (or its weights)."""
        nv = self.nv
        return np.r_[t[3:6], t[:3], t[6:nv][self.joints],
                     t[nv + 3 : nv + 6], t[nv : nv + 3], t[nv + 6 :][self.joints]]

    def u_from_pin(self, u: np.ndarray) -> np.ndarray:
        return u[self.joints]

    def u_to_pin(self, u: np.ndarray) -> np.ndarray:
        out = np.empty(len(self.joints))
        out[self.joints] = u
        return out


# -- Crocoddyl's problem, knot by knot -------------------------------------------------------
@dataclass
class Knot:
    """One knot of a Crocoddyl problem in casdyn's terms: the held (or landing) feet, whether
    it is an impulse, and ``terms``: residual label -> (reference, weights), casdyn's
    conventions (the labels of :func:`residuals`)."""

    held: tuple[bool, ...]
    impulse: bool
    terms: dict


def _activation_weights(cost, size: int) -> np.ndarray:
    import crocoddyl

    activation = cost.activation
    if isinstance(activation, crocoddyl.ActivationModelWeightedQuad):
        return np.asarray(activation.weights, dtype=float)
    if isinstance(activation, crocoddyl.ActivationModelQuad | \
                  crocoddyl.ActivationModelQuadraticBarrier):
        return np.ones(size)
    raise NotImplementedError(f"no casdyn counterpart of {type(activation).__name__}")


def _term(name: str, cost, frames, conventions: Conventions):
    """``(label, reference, unscaled weights)`` of one Crocoddyl cost (the activation's
    weights; the barrier's bounds are read by :func:`bounds`). A frame placement's
    reference: its translation, then its rotation row by row (:class:`FramePlacement`'s)."""
    import crocoddyl

    residual = cost.residual
    barrier = isinstance(cost.activation, crocoddyl.ActivationModelQuadraticBarrier)
    w = _activation_weights(cost, residual.nr)
    if isinstance(residual, crocoddyl.ResidualModelState):
        label = "state_bounds" if barrier else "state"
        return label, conventions.x_from_pin(np.asarray(residual.reference)), \
            conventions.tangent_from_pin(w)
    cones = (crocoddyl.ResidualModelContactFrictionCone,
             crocoddyl.ResidualModelContactWrenchCone)
    if barrier and not isinstance(residual, cones):
        raise NotImplementedError(f"{name}: no casdyn barrier of {type(residual).__name__}")
    if isinstance(residual, crocoddyl.ResidualModelControl):
        return "control", conventions.u_from_pin(np.asarray(residual.reference)), \
            conventions.u_from_pin(w)
    if isinstance(residual, crocoddyl.ResidualModelCoMPosition):
        return "com", np.asarray(residual.reference), w
    if isinstance(residual, crocoddyl.ResidualModelFrameTranslation):
        return f"foot:{frames[residual.id].name}", np.asarray(residual.reference), w
    if isinstance(residual, crocoddyl.ResidualModelFramePlacement):
        placement = residual.reference
        return f"placement:{frames[residual.id].name}", \
            np.r_[placement.translation, placement.rotation.ravel()], w
    if isinstance(residual, cones):
        return f"cone:{frames[residual.id].name}", np.zeros(len(w)), w
    raise NotImplementedError(f"{name}: no casdyn counterpart of {type(residual).__name__}")


def knot_terms(model, legged: Legged, *, terminal: bool = False) -> Knot:
    """The casdyn terms of one Crocoddyl action model of ``legged``'s problems: an
    ``IntegratedActionModelEuler`` of contact forward dynamics (running: weights times
    ``dt``; ``terminal``: as Crocoddyl's ``calc(x)``, unscaled and without the terms that
    read ``u`` or the forces) or an ``ActionModelImpulseFwdDynamics`` (unscaled)."""
    import crocoddyl

    conventions, frames = legged.conventions, legged.pin_model.frames
    impulse = isinstance(model, crocoddyl.ActionModelImpulseFwdDynamics)
    if impulse:
        held = {name.removesuffix("_impulse") for name in model.impulses.impulses.todict()}
        costs, scale = model.costs.costs.todict(), 1.0
    else:
        if not isinstance(model, crocoddyl.IntegratedActionModelEuler):
            raise NotImplementedError(f"no casdyn counterpart of {type(model).__name__}")
        contacts = model.differential.contacts.contacts.todict()
        held = {name.removesuffix("_contact") for name in contacts}
        for contact in contacts.values():
            legged.check_contact(contact.contact)
        costs = model.differential.costs.costs.todict()
        scale = 1.0 if terminal else model.dt
    terms = {}
    for name, item in costs.items():
        label, reference, w = _term(name, item.cost, frames, conventions)
        if terminal and (label == "control" or label.startswith("cone:")):
            continue  # Crocoddyl's calc(x) leaves out the terms of u and of the forces
        if item.active:
            terms[label] = (reference, item.weight * scale * w)
    if impulse and not terminal:
        terms["control"] = (np.zeros(len(conventions.joints)),
                            np.full(len(conventions.joints), IMPULSE_CONTROL_WEIGHT))
    return Knot(tuple(foot in held for foot in legged.feet), impulse, terms)


def cone_matrix(A: np.ndarray) -> np.ndarray:
    """Crocoddyl's cone matrix in casdyn's force order: a friction cone's (on the force,
    world axes) as it is; a wrench cone's (on ``[f; tau]`` about the foot's origin, in the
    axes of a ``LOCAL_WORLD_ALIGNED`` contact: the world's) with its columns permuted to act
    on casdyn's wrench ``[n; f]`` (the same axes and point)."""
    return A if A.shape[1] == 3 else A[:, [3, 4, 5, 0, 1, 2]]


def bounds(problem, conventions: Conventions) -> dict:
    """The problem's barriers: ``"state"``: ``(lower, upper)``, ``"cone"``: ``(matrix,
    lower, upper)`` (casdyn's order; ``inf`` for Crocoddyl's largest double), where it has
    them, each the same at every knot (else NotImplementedError)."""
    found = {}
    for model in problem.runningModels:
        if not hasattr(model, "differential"):
            continue
        for item in model.differential.costs.costs.todict().values():
            cost = item.cost
            if not hasattr(cost.activation, "bounds"):
                continue
            lb, ub = (np.asarray(b, dtype=float) for b in (cost.activation.bounds.lb,
                                                           cost.activation.bounds.ub))
            lb[lb <= -UNBOUNDED], ub[ub >= UNBOUNDED] = -np.inf, np.inf
            if cost.activation.bounds.beta != 1.0:
                raise NotImplementedError("a barrier with beta != 1")
            if hasattr(cost.residual, "reference") and hasattr(cost.residual.reference, "A"):
                value = (cone_matrix(np.asarray(cost.residual.reference.A)), lb, ub)
                key = "cone"
            else:
                value = (conventions.tangent_from_pin(lb), conventions.tangent_from_pin(ub))
                key = "state"
            if key in found and not all(np.array_equal(a, b)
                                        for a, b in zip(found[key], value, strict=True)):
                raise NotImplementedError(f"{key} barriers that differ between knots")
            found[key] = value
    return found


# -- casdyn's problem ----------------------------------------------------------------------------
def residuals(legged: Legged, barriers: dict):
    """casdyn's stage and terminal residuals of ``legged``'s gaits, every weight 0 until
    the knots set theirs: the feet's :attr:`Legged.foot_task` and the ``barriers`` of
    :func:`bounds`."""
    task, label = legged.foot_task
    common = [StateResidual(weight=0.0, name="state"), CenterOfMass(weight=0.0, name="com"),
              *(task(f, weight=0.0, name=f"{label}:{f}") for f in legged.feet)]
    if "state" in barriers:
        common.append(Barrier(StateResidual(), *barriers["state"], weight=0.0,
                              name="state_bounds"))
    cone, lower, upper = barriers["cone"]
    cones = [Barrier(ContactForce(f, matrix=cone), lower, upper, weight=0.0,
                     name=f"cone:{f}") for f in legged.feet]
    return [*common, ControlResidual(weight=0.0, name="control"), *cones], common


@dataclass
class Gait:
    """One gait on both sides: Crocoddyl's ``problem`` and its initial guess ``(xs, us)``,
    casdyn's ``knots`` (:class:`Knot`, one per running model), ``ends`` (each model read
    as a terminal one, the problem's terminal model last) and the initial state ``x0``."""

    name: str
    problem: object
    xs: list
    us: list
    knots: list[Knot]
    ends: list[Knot]
    x0: np.ndarray

    def window(self, start: int, length: int) -> tuple[list[Knot], Knot]:
        """The knots ``start .. start + length - 1`` and the terminal one after them."""
        return self.knots[start : start + length], self.ends[start + length]


class Legged:
    """A robot of Crocoddyl's gait generators on both sides: Pinocchio's ``pin_model`` (the
    generator's), casdyn's ``robot`` (the same bodies, inertias and joints), their
    :class:`Conventions`, the standing state ``x0_pin``; and casdyn's problems of ``N`` knots
    with every mode of the gaits (one compiled library for them all). A subclass names its
    ``gaits`` (as :data:`GAITS`), ``feet``, contact kind and gains, and foot task (a
    residual class and its label) and builds its ``generator``."""

    gaits: dict
    feet: tuple[str, ...]
    prefix: str  # the robot's name in the rows
    contact = "point"
    gains = (0.0, 50.0)  # the generator's contact gains: casdyn's damping is the second
    foot_task = (FramePosition, "foot")

    def __init__(self, pin_model, robot, x0_pin: np.ndarray):
        self.pin_model, self.robot, self.x0_pin = pin_model, robot, x0_pin
        self.conventions = Conventions(pin_model, robot)
        self.dt = next(iter(self.gaits.values()))[1][2]

    def generator(self):  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def check_contact(self, contact) -> None:
        """Refuse a Crocoddyl contact that casdyn's model is not (NotImplementedError)."""
        if not np.allclose(contact.gains, self.gains):
            raise NotImplementedError(f"contact gains {contact.gains}")

    def gait(self, name: str) -> Gait:
        """The example's phase ``name`` from standing (a fresh generator: the first step of
        a walk is the example's half step)."""
        method, arguments = self.gaits[name]
        arguments = [list(a) if isinstance(a, tuple) else a for a in arguments]  # mutated
        problem = getattr(self.generator(), method)(self.x0_pin.copy(), *arguments)
        problem.nthreads = 1
        models = [*problem.runningModels, problem.terminalModel]
        knots = [knot_terms(m, self) for m in models[:-1]]
        ends = [knot_terms(m, self, terminal=True) for m in models]
        xs = [self.x0_pin.copy()] * (problem.T + 1)
        us = list(problem.quasiStatic([self.x0_pin.copy()] * problem.T))
        return Gait(name, problem, xs, us, knots, ends, self.conventions.x_from_pin(self.x0_pin))

    def problem(self, N: int, modes, barriers: dict) -> Problem:
        model = ContactModel(self.robot, self.feet, dt=self.dt, damping=self.gains[1], mu=MU,
                             contact=self.contact)
        stage, terminal = residuals(self, barriers)
        return Problem(model, N, stage, terminal, modes=modes, friction=None,
                       effort_limit=np.inf, velocity_limit=np.inf, position_limits=None)


class Quadruped(Legged):
    """ANYmal, as ``crocoddyl.utils.quadruped``'s generator builds its problems."""

    gaits = ANYMAL_GAITS
    feet = ("LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT")
    prefix = "anymal"

    def __init__(self):
        import example_robot_data

        anymal = example_robot_data.load("anymal")
        q0 = anymal.model.referenceConfigurations["standing"]
        super().__init__(anymal.model, casdyn.load_urdf(anymal.urdf, floating_base=True),
                         np.r_[q0, np.zeros(anymal.model.nv)])

    def generator(self):
        from crocoddyl.utils.quadruped import SimpleQuadrupedalGaitProblem

        return SimpleQuadrupedalGaitProblem(self.pin_model, *self.feet)


def modes_of(gaits: list[Gait]) -> list:
    """Every distinct mode of the gaits' running knots, in a fixed order (stances, then
    impulses, each by its mask)."""
    keys = sorted({(k.impulse, k.held) for g in gaits for k in g.knots})
    return [Impulse(held) if impulse else held for impulse, held in keys]


def parameters_of(problem: Problem, modes: list, knots: list[Knot], terminal: Knot):
    """casdyn's parameters of ``knots`` (one per interval) ending at ``terminal``."""
    parameters = problem.parameters()
    index = {(isinstance(m, Impulse), m.stance if isinstance(m, Impulse) else m): i
             for i, m in enumerate(modes)}
    parameters.set_modes([index[(k.impulse, k.held)] for k in knots])
    for j, knot in enumerate(knots):
        for label, (reference, weight) in knot.terms.items():
            parameters.set(label, reference=reference, weight=weight, knots=j)
    for label, (reference, weight) in terminal.terms.items():
        parameters.set(label, reference=reference, weight=weight, knots=problem.N)
    return parameters



# -- the solves ------------------------------------------------------------------------------
def to_casdyn(conventions: Conventions, xs, us) -> tuple[np.ndarray, np.ndarray]:
    """Crocoddyl's ``(xs, us)`` as casdyn's ``(X, U)`` (an impulse knot's empty control:
    zero torques)."""
    X = np.stack([conventions.x_from_pin(np.asarray(x)) for x in xs], axis=1)
    U = np.stack([conventions.u_from_pin(np.asarray(u)) if len(u) else
                  np.zeros(len(conventions.joints)) for u in us], axis=1)
    return X, U


def crocoddyl_cost(problem, conventions: Conventions, X, U) -> float:
    """Crocoddyl's ``problem.calc`` of casdyn's trajectory ``(X, U)``."""
    xs = [conventions.x_to_pin(x) for x in X.T]
    us = [conventions.u_to_pin(u) if m.nu else np.zeros(0)
          for u, m in zip(U.T, problem.runningModels, strict=True)]
    return float(problem.calc(xs, us))


@dataclass
class Solved:
    """One cold solve: iterations, the fastest wall time (ms), whether it converged, the
    plan ``(X, U)`` (casdyn's conventions) and Crocoddyl's ``(xs, us)`` where it made it."""

    iterations: int
    ms: float
    converged: bool
    X: np.ndarray
    U: np.ndarray
    plan: tuple | None = None


def cold_fddp(gait: Gait, conventions: Conventions, repeats: int,
              max_iter: int = 100) -> Solved:
    """Crocoddyl's FDDP as the example runs it."""
    import crocoddyl

    best = None
    for _ in range(repeats):
        fddp = crocoddyl.SolverFDDP(gait.problem)
        started = time.perf_counter()
        converged = fddp.solve(list(gait.xs), list(gait.us), max_iter, False)
        ms = 1e3 * (time.perf_counter() - started)
        if best is None or ms < best[1]:
            best = (fddp, ms, converged)
    fddp, ms, converged = best
    X, U = to_casdyn(conventions, fddp.xs, fddp.us)
    return Solved(int(fddp.iter), ms, bool(converged), X, U, (list(fddp.xs), list(fddp.us)))


def cold_sqp(sqp: SQP, gait: Gait, parameters, conventions: Conventions, repeats: int,
             max_iter: int = 200) -> Solved:
    """casdyn's SQP from the example's initial guess (Crocoddyl's ``xs``, ``us``) until its
    step and violation are below 1e-7."""
    X0, U0 = to_casdyn(conventions, gait.xs, gait.us)
    best = None
    for _ in range(repeats):
        sqp.initialize(X0, U0)
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a non-converged solve is reported
            result = sqp.solve(gait.x0, parameters, max_iter=max_iter)
        ms = 1e3 * (time.perf_counter() - started)
        if best is None or ms < best[1]:
            best = (result, ms)
    result, ms = best
    return Solved(result.iterations, ms, result.converged, result.X, result.U)


# -- the warm-started MPC ------------------------------------------------------------------------
def shifted_guess(gait: Gait, start: int, length: int, x, xs, us):
    """Crocoddyl's plan ``(xs, us)`` of the window before ``start`` moved on by one knot
    from the state ``x`` (Pinocchio's); the last control kept where the new last knot
    takes one of its size (else zeros of the right size)."""
    last = gait.problem.runningModels[start + length - 1]
    tail = us[-1] if len(us[-1]) == last.nu else np.zeros(last.nu)
    return [x, *xs[2:], xs[-1]], [*us[1:], tail]


def warm_mpc(legged: Legged, gait: Gait, modes, barriers, casdyn_cold: Solved,
             croc_cold: Solved, steps: int) -> dict:
    """``steps`` solves of the window of ``T - steps`` knots starting at knot i = 1 ..
    steps, each warm-started from the solver's previous plan shifted by one knot (both from
    their cold solution cut to the window), one iteration each, the state moved to each
    plan's second knot. Median wall ms per solver and their ratio."""
    import crocoddyl

    length = gait.problem.T - steps
    problem = legged.problem(length, modes, barriers)
    sqp = SQP(problem)  # (the same library as the cold solve's: cached)
    sqp.initialize(casdyn_cold.X[:, : length + 1], casdyn_cold.U[:, :length])
    xs, us = (list(p) for p in croc_cold.plan)
    xs, us = xs[: length + 1], us[:length]
    x, xc = sqp.X[:, 1].copy(), np.asarray(xs[1]).copy()
    times = {"casdyn": [], "crocoddyl": []}
    for i in range(1, steps + 1):
        parameters = parameters_of(problem, modes, *gait.window(i, length))
        started = time.perf_counter()
        sqp.shift(1.0)
        sqp.iterate(x, parameters)
        times["casdyn"].append(time.perf_counter() - started)
        x = sqp.X[:, 1].copy()
        models = gait.problem.runningModels
        window = crocoddyl.ShootingProblem(xc, list(models[i : i + length]),
                                           ([*models, gait.problem.terminalModel])[i + length])
        window.nthreads = 1
        fddp = crocoddyl.SolverFDDP(window)
        warm_x, warm_u = shifted_guess(gait, i, length, xc, xs, us)
        started = time.perf_counter()
        fddp.solve(warm_x, warm_u, 1, False)
        times["crocoddyl"].append(time.perf_counter() - started)
        xs, us = list(fddp.xs), list(fddp.us)
        xc = np.asarray(xs[1]).copy()
    summary = {key: 1e3 * float(np.median(value)) for key, value in times.items()}
    summary["ratio"] = summary["casdyn"] / summary["crocoddyl"]
    return summary


# -- the comparison ------------------------------------------------------------------------------
def robot_kinds() -> tuple[type[Legged], ...]:
    from ocp_gaits_biped import Biped

    return Quadruped, Biped


def compare(names, *, repeats: int, steps: int, compile: bool = True) -> list[dict]:
    """Each gait of ``names`` (of :data:`GAITS`): cold solves (fastest of ``repeats``), the
    costs of both plans by casdyn's function and by Crocoddyl's, and the warm MPC (``steps``
    solves; none where 0). One line per gait printed; returns the rows of ``--json``'s
    ``problems``."""
    rows = []
    for kind in robot_kinds():
        if any(name in kind.gaits for name in names):
            rows += compare_robot(kind(), [n for n in kind.gaits if n in names],
                                  repeats=repeats, steps=steps, compile=compile)
    return rows


def compare_robot(legged: Legged, names, *, repeats: int, steps: int,
                  compile: bool) -> list[dict]:
    """:func:`compare` of one robot's gaits ``names``."""
    from ocp import tracking_cost

    gaits = [legged.gait(name) for name in legged.gaits]  # every gait's modes: one library
    modes = modes_of(gaits)
    barriers = bounds(gaits[0].problem, legged.conventions)
    c = legged.conventions
    rows = []
    for gait in (g for g in gaits if g.name in names):
        problem = legged.problem(gait.problem.T, modes, barriers)
        parameters = parameters_of(problem, modes, gait.knots, gait.ends[-1])
        sqp = SQP(problem, compile=compile)
        mine = cold_sqp(sqp, gait, parameters, c, repeats)
        theirs = cold_fddp(gait, c, repeats)
        costs = [tracking_cost(problem, parameters, s.X, s.U) for s in (mine, theirs)]
        own = [crocoddyl_cost(gait.problem, c, s.X, s.U) for s in (mine, theirs)]
        name = gait.name if gait.name.startswith(legged.prefix) else \
            f"{legged.prefix} {gait.name}"
        row = {"name": name, "knots": gait.problem.T,
               "casdyn_cold_ms": mine.ms, "crocoddyl_cold_ms": theirs.ms,
               "cold_ratio": mine.ms / theirs.ms, "casdyn_iterations": mine.iterations,
               "crocoddyl_iterations": theirs.iterations, "casdyn_converged": mine.converged,
               "crocoddyl_converged": theirs.converged, "casdyn_cost": costs[0],
               "crocoddyl_cost": costs[1],
               "cost_relative_difference": (costs[0] - costs[1]) / costs[1],
               "casdyn_cost_by_crocoddyl": own[0], "crocoddyl_cost_by_crocoddyl": own[1]}
        if steps:
            warm = warm_mpc(legged, gait, modes, barriers, mine, theirs, steps)
            row.update(casdyn_ms=warm["casdyn"], crocoddyl_ms=warm["crocoddyl"],
                       ratio=warm["ratio"])
        print_row(row)
        rows.append(row)
    return rows


def print_row(row: dict) -> None:
    print(f"  {row['name']:17s} {row['knots']:3d} knots  cold: casdyn SQP "
          f"{row['casdyn_iterations']:3d} it {row['casdyn_cold_ms']:8.1f} ms"
          f"{'' if row['casdyn_converged'] else ' (not converged)'}, Crocoddyl FDDP "
          f"{row['crocoddyl_iterations']:3d} it {row['crocoddyl_cold_ms']:8.1f} ms"
          f"{'' if row['crocoddyl_converged'] else ' (not converged)'}, ratio "
          f"{row['cold_ratio']:.2f}; cost {row['casdyn_cost']:.8g} vs "
          f"{row['crocoddyl_cost']:.8g} ({row['cost_relative_difference']:+.1e}; "
          f"Crocoddyl's calc: {row['casdyn_cost_by_crocoddyl']:.8g} vs "
          f"{row['crocoddyl_cost_by_crocoddyl']:.8g})")
    if "ratio" in row:
        print(f"  {'':17s} warm MPC (median, one iteration): casdyn {row['casdyn_ms']:.2f} ms, "
              f"Crocoddyl {row['crocoddyl_ms']:.2f} ms, ratio {row['ratio']:.2f}")


def main(argv=None) -> None:
    """Only the gait comparison (benchmarks/ocp.py runs it after its own)."""
    import argparse
    import json
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gaits", default=",".join(GAITS), help="comma-separated names")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--gait-steps", type=int, default=20)
    parser.add_argument("--json", action="store_true", help="last line: the rows")
    arguments = parser.parse_args(argv)
    names = arguments.gaits.split(",")
    unknown = [n for n in names if n not in GAITS]
    if unknown:
        parser.error(f"--gaits: unknown {unknown} (one of {', '.join(GAITS)})")
    rows = compare(names, repeats=arguments.repeats, steps=arguments.gait_steps)
    if arguments.json:
        print(json.dumps({"problems": rows}))


if __name__ == "__main__":
    main()
