"""The solo12 trot OCP solved by casdyn (casdyn.ocp: SQP on HPIPM, and the same problem as one
NLP for fatrop and Ipopt) and by Crocoddyl 3.2 (box-FDDP with Pinocchio's analytical
derivatives), in one process, one thread each.

The problem is the MPC horizon of examples/quadruped_mpc.py (its ``TrotController``): 20
knots of 20 ms from T0 = STAND + 0.5 s, the trot's contact sequence (diagonal pairs),
forward contact dynamics with the held feet's velocity damped (Crocoddyl: ContactModel3D with
gains [0, damping]), semi-implicit Euler (Crocoddyl: IntegratedActionModelEuler), the same
residuals, references and weights read from the controller's ``casdyn.ocp.Parameters``
(state in the tangent space, torques, swing-foot heights; Crocoddyl's running costs divided
by dt, which its Euler integrator multiplies them by). The problems differ in their
constraints: casdyn's are exact (each held foot's friction pyramid as four linear rows, the
torques within 2.7 N m, the joints within their position and velocity limits), Crocoddyl's
box-FDDP keeps the torque bounds but has no other inequalities, so its pyramids are
quadratic-barrier costs (a force outside is penalised, not forbidden) and it has no joint
limits (casdyn's violations are measured on every solver's result).

Reported:

* a cold solve from the standing guess: casdyn's SQP (``SQP.solve``: Gauss-Newton QPs on
  HPIPM solved to its tolerance, a filter line search, until the step and the violation are
  below 1e-7), the same problem through ``Transcription`` with fatrop and Ipopt (exact
  Hessian), and box-FDDP — iterations, time, time per iteration, the cost evaluated by one
  function for all (casdyn's residuals and weights at each knot, ``sum 0.5 w r^2``; the SQP
  must agree with Ipopt to about 1e-6 relative) and the constraint violations;
* the MPC: each solver warm-started from its previous solution shifted by one knot (both
  start from their cold solution), one iteration per solve (casdyn: ``SQP.shift(1)`` and
  ``SQP.iterate``, one QP; Crocoddyl: one box-FDDP iteration; building Crocoddyl's models
  for the new references is not timed), the state moved along each solver's own plan;
  median wall and CPU times, and the last plans' costs. casdyn runs twice: with the
  controller's QPs, stopped at HPIPM_ITERATIONS interior-point iterations as
  quadruped_mpc runs them (the ``ratio`` of ``--json``), and with each QP solved to
  HPIPM's tolerance.

Then Crocoddyl's own gait problems (:mod:`ocp_gaits`: ANYmal walking, trotting, pacing,
bounding and jumping from ``crocoddyl.utils.quadruped``, as its
examples/quadrupedal_gaits_fwddyn.py builds them, and TALOS walking and jumping from
``crocoddyl.utils.biped`` as examples/bipedal_gaits_fwddyn.py does, with impulse knots at
touchdown), each
solved by Crocoddyl's FDDP (the example's settings) and by casdyn's SQP on the same problem
written with ``casdyn.ocp`` (read off the generator's models, cost by cost): cold solves
from the example's initial guess (iterations, time, both final costs by casdyn's function
and by Crocoddyl's ``problem.calc``), and the warm MPC (a window sliding one knot per solve,
each solver warm-started from its previous plan shifted by one knot, one iteration).
``--json``'s last line: the solo12 comparison's keys and ``problems``, one dict per gait
(name, casdyn_ms, crocoddyl_ms, ratio: warm; cold_ratio, casdyn_cost, crocoddyl_cost, ...).

Needs crocoddyl 3.2.1 with pin 4.0.0 (its wheel fails with pin 4.1) and example-robot-data:
  pip install 'casdyn[ocp-bench]'   then
  python benchmarks/ocp.py [--json] [--steps N] [--gaits walking,jumping|none] [--quick]
  (gait names: ocp_gaits.GAITS, e.g. "talos walking,talos jumping"; only the gaits:
  python benchmarks/ocp_gaits.py --gaits ...)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import casdyn
from casdyn.ocp import SQP, ControlResidual, FootHeight, StateResidual, Transcription

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import ocp_gaits
import quadruped_mpc as mpc

T0 = mpc.STAND + 0.5  # the horizon starts in the trot


def horizon(controller, t: float, x: np.ndarray):
    """The parameters of the horizon from time ``t`` with the robot at ``x`` (a copy of what
    the controller's schedule writes: references, weights and stance modes)."""
    controller.schedule(t, x)
    return controller.parameters.copy()


# -- casdyn <-> Pinocchio conventions ------------------------------------------------------
def to_pin_x(x: np.ndarray) -> np.ndarray:
    """casdyn ``[p, qw qx qy qz, joints, w, v, joint rates]`` -> Pinocchio
    ``[p, qx qy qz qw, joints, v, w, joint rates]``."""
    q, v = x[:19], x[19:]
    return np.r_[q[:3], q[4:7], q[3], q[7:], v[3:6], v[0:3], v[6:]]


def from_pin_x(x: np.ndarray) -> np.ndarray:
    """The inverse of :func:`to_pin_x`."""
    q, v = x[:19], x[19:]
    return np.r_[q[:3], q[6], q[3:6], q[7:], v[3:6], v[0:3], v[6:]]


def tangent_to_pin(w: np.ndarray) -> np.ndarray:
    """A tangent-space vector (the base's angular part first) in Pinocchio's order (linear
    first)."""
    return np.r_[w[3:6], w[0:3], w[6:]]


class CrocoddylTrot:
    """The horizon of a ``casdyn.ocp.Problem`` as Crocoddyl action models, built from its
    ``Parameters`` (state, control and foot-height residuals; the pyramids as quadratic
    barriers of weight ``barrier_weight`` per N^2 of excess, per second)."""

    def __init__(self, problem, barrier_weight: float = 1.0):
        import crocoddyl
        import pinocchio as pin

        self.croc, self.pin = crocoddyl, pin
        self.problem = problem
        robot_model = pin.buildModelFromXML(casdyn.robot_urdf("solo12"),
                                            pin.JointModelFreeFlyer())
        self.state = crocoddyl.StateMultibody(robot_model)
        self.actuation = crocoddyl.ActuationModelFloatingBase(self.state)
        self.feet = [robot_model.getFrameId(f) for f in problem.model.feet]
        self.barrier_weight = barrier_weight

    def _residual_cost(self, residual, reference, weight):
        """A Crocoddyl cost ``0.5 sum w r^2`` matching one casdyn residual."""
        croc, state, nu = self.croc, self.state, self.actuation.nu
        if isinstance(residual, StateResidual):
            w = np.r_[tangent_to_pin(weight[: state.nv]), tangent_to_pin(weight[state.nv :])]
            model = croc.ResidualModelState(state, to_pin_x(reference), nu)
        elif isinstance(residual, ControlResidual):
            w, model = weight, croc.ResidualModelControl(state, reference)
        elif isinstance(residual, FootHeight):
            fid = self.feet[self.problem.model.feet.index(residual.foot)]
            w = np.array([0.0, 0.0, weight[0]])
            model = croc.ResidualModelFrameTranslation(state, fid, np.r_[0.0, 0.0, reference],
                                                       nu)
        else:
            raise NotImplementedError(f"no Crocoddyl cost for {type(residual).__name__}")
        return croc.CostModelResidual(state, croc.ActivationModelWeightedQuad(w), model)

    def _costs(self, parameters, knot: int):
        """The residual costs of ``knot`` (``N``: the terminal ones), running costs divided
        by dt (Crocoddyl's Euler multiplies them by dt)."""
        terminal = knot == self.problem.N
        residuals = self.problem.terminal_costs if terminal else self.problem.costs
        scale = 1.0 if terminal else 1.0 / self.problem.model.dt
        costs = self.croc.CostModelSum(self.state, self.actuation.nu)
        for residual in residuals:
            reference, weight = parameters.get(residual.label(), knot)
            if np.any(weight > 0):  # (a swing-foot height only while the foot swings)
                costs.addCost(residual.label(), self._residual_cost(residual, reference, weight),
                              scale)
        return costs

    def _contacts(self, held, costs, barrier: bool):
        """The held feet's 3-D contacts (damped velocity), each with its pyramid's barrier
        cost where ``barrier``."""
        croc, pin, m = self.croc, self.pin, self.problem.model
        nu = self.actuation.nu
        contacts = croc.ContactModelMultiple(self.state, nu)
        for k, fid in enumerate(self.feet):
            if not held[k]:
                continue
            contacts.addContact(f"foot{k}", croc.ContactModel3D(
                self.state, fid, np.zeros(3), pin.ReferenceFrame.LOCAL_WORLD_ALIGNED, nu,
                np.array([0.0, m.damping])))
            if barrier:
                cone = croc.FrictionCone(np.eye(3), m.mu, 4, False)  # casdyn's pyramid
                activation = croc.ActivationModelQuadraticBarrier(
                    croc.ActivationBounds(cone.lb, cone.ub))
                costs.addCost(f"cone{k}", croc.CostModelResidual(
                    self.state, activation,
                    croc.ResidualModelContactFrictionCone(self.state, fid, cone, nu)),
                    self.barrier_weight / m.dt)
        return contacts

    def action(self, parameters, knot: int):
        """The integrated action model of ``knot`` (``N``: the terminal one, with the last
        interval's contacts)."""
        croc, problem = self.croc, self.problem
        terminal = knot == problem.N
        mode = parameters.modes[min(knot, problem.N - 1)]
        costs = self._costs(parameters, knot)
        contacts = self._contacts(problem.modes[mode], costs, barrier=not terminal)
        dam = croc.DifferentialActionModelContactFwdDynamics(self.state, self.actuation,
                                                             contacts, costs, 0.0, True)
        iam = croc.IntegratedActionModelEuler(dam, 0.0 if terminal else problem.model.dt)
        if not terminal:
            iam.u_lb, iam.u_ub = -problem.effort_limit, problem.effort_limit.copy()
        return iam

    def shooting_problem(self, x0: np.ndarray, parameters):
        """The horizon from ``x0`` (casdyn's state) for ``parameters``, on one thread."""
        N = self.problem.N
        running = [self.action(parameters, k) for k in range(N)]
        problem = self.croc.ShootingProblem(to_pin_x(x0), running, self.action(parameters, N))
        problem.nthreads = 1  # one core, as casdyn's solves
        return problem


def croc_trajectory(solver) -> tuple[np.ndarray, np.ndarray]:
    """``(X, U)`` of a Crocoddyl solver in casdyn's conventions."""
    X = np.stack([from_pin_x(np.asarray(x)) for x in solver.xs], axis=1)
    U = np.stack([np.asarray(u) for u in solver.us], axis=1)
    return X, U


# -- measures shared by every solver ---------------------------------------------------------
def half_weighted_square(r, w) -> float:
    """``0.5 sum w r^2`` of CasADi values."""
    r, w = r.full().ravel(), w.full().ravel()
    return 0.5 * float(np.dot(w, r * r))


def tracking_cost(problem, parameters, X, U) -> float:
    """The problem's cost ``sum_k 0.5 sum_i w_i r_i^2`` of a trajectory (casdyn's residuals
    and weights at each knot, casdyn's conventions)."""
    total = 0.0
    for k in range(problem.N):
        _, r, w, _ = problem.stage(int(parameters.modes[k]))(X[:, k], U[:, k],
                                                             parameters.stage[:, k])
        total += half_weighted_square(r, w)
    return total + half_weighted_square(*problem.terminal()(X[:, -1], parameters.terminal))


def violations(problem, parameters, X, U) -> dict:
    """The largest dynamics gap (tangent norm, casdyn's step), friction pyramid excess (N),
    torque excess (N m) and joint position or velocity excess of a trajectory."""
    model = problem.model
    gap = cone = 0.0
    for k in range(problem.N):
        mode = int(parameters.modes[k])
        x_next, _, _, forces = problem.stage(mode)(X[:, k], U[:, k], parameters.stage[:, k])
        d = model.difference_state(x_next, X[:, k + 1]).full().ravel()
        gap = max(gap, float(np.abs(d).max()))
        rows = problem.friction_rows(forces).full().ravel()[problem.held_rows(mode)]
        cone = max(cone, float(np.max(-rows, initial=0.0)))
    torque = np.abs(U) - problem.effort_limit[:, None]
    lower, upper = problem.state_bounds()
    beyond = np.maximum(lower[:, None] - X[:, 1:], X[:, 1:] - upper[:, None])
    return {"gap": gap, "cone": cone, "torque": float(np.max(torque, initial=0.0)),
            "joints": float(np.max(beyond, initial=0.0))}


def fastest(solve, repeats: int):
    """``(result, ms)``: the fastest of ``repeats`` calls of ``solve`` (each from the same
    guess) and its wall time."""
    best = None
    for _ in range(repeats):
        started = time.perf_counter()
        result = solve()
        ms = 1e3 * (time.perf_counter() - started)
        if best is None or ms < best[1]:
            best = (result, ms)
    return best


# -- the cold solves ---------------------------------------------------------------------------
def cold_sqp(problem, parameters, x0, repeats: int) -> tuple[dict, tuple, SQP]:
    """casdyn's SQP from the standing guess to its tolerance: (report, (X, U), the SQP)."""
    sqp = SQP(problem)  # the QPs solved to HPIPM's tolerance (the library is cached)

    def solve():
        sqp.hold(x0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a non-converged solve is reported below
            return sqp.solve(x0, parameters, max_iter=200)

    result, ms = fastest(solve, repeats)
    report = {"iterations": result.iterations, "ms": ms, "converged": result.converged,
              "cost": tracking_cost(problem, parameters, result.X, result.U),
              "own_cost": result.cost, **violations(problem, parameters, result.X, result.U)}
    return report, (result.X, result.U), sqp


def cold_transcription(problem, parameters, x0, X0, U0, name: str, repeats: int) -> dict:
    """The problem as one NLP (forward dynamics, multiple shooting) for fatrop or Ipopt."""
    nlp = Transcription(problem, parameters.modes)
    solver = nlp.solver(name)
    (X, U, cost, stats), ms = fastest(lambda: nlp.solve(solver, x0, parameters, X0, U0),
                                      repeats)
    return {"iterations": int(stats["iter_count"]), "ms": ms,
            "converged": bool(stats["success"]),
            "cost": tracking_cost(problem, parameters, X, U), "own_cost": cost,
            **violations(problem, parameters, X, U)}


def cold_crocoddyl(croc, problem, parameters, x0, X0, U0, repeats: int) -> tuple[dict, tuple]:
    """Crocoddyl's box-FDDP from the standing guess (at most 200 iterations)."""
    import crocoddyl

    xs, us = [to_pin_x(x) for x in X0.T], list(U0.T)

    def solve():
        fddp = crocoddyl.SolverBoxFDDP(croc.shooting_problem(x0, parameters))
        converged = fddp.solve(xs, us, 200, False)
        return fddp, converged

    (fddp, converged), ms = fastest(solve, repeats)
    X, U = croc_trajectory(fddp)
    report = {"iterations": int(fddp.iter), "ms": ms, "converged": bool(converged),
              "cost": tracking_cost(problem, parameters, X, U), "own_cost": float(fddp.cost),
              **violations(problem, parameters, X, U)}
    return report, (list(fddp.xs), list(fddp.us))


def print_cold(report: dict) -> None:
    """One line per cold solve."""
    for name, r in report.items():
        print(f"  {name:34s} {r['iterations']:4d} it {r['ms']:8.1f} ms "
              f"({r['ms'] / max(r['iterations'], 1):6.2f} ms/it) converged {r['converged']!s:5}"
              f" cost {r['cost']:.8g} (own {r['own_cost']:.8g}); gap {r['gap']:.1e}, "
              f"cone {r['cone']:.1e} N, torque {r['torque']:.1e} N m, "
              f"joints {r['joints']:.1e}")


# -- the warm-started MPC ------------------------------------------------------------------------
def timed(call, *args):
    """``(result, wall s, CPU s)`` of ``call(*args)``."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = call(*args)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def real_time_iteration(sqp, x, parameters) -> bool:
    """casdyn's MPC solve: the plan moved on by one knot, then one QP (whether its step was
    taken)."""
    sqp.shift(1.0)
    return sqp.iterate(x, parameters)


def warm_mpc(controller, sqp, croc, casdyn_plan, croc_plan, steps: int) -> dict:
    """``steps`` solves at t = T0 + i KNOT, each warm-started from the solver's previous
    plan shifted by one knot, one iteration each, the state moved to each plan's second
    knot. Returns the median wall and CPU ms per solver, casdyn's steps not taken, and each
    solver's last plan: its cost (casdyn's function) and how far its base moved (m)."""
    import crocoddyl

    problem = controller.problem
    sqp.initialize(*casdyn_plan)
    xs, us = croc_plan
    x, xc = casdyn_plan[0][:, 1].copy(), from_pin_x(np.asarray(xs[1]))
    start = x[0]
    times = {key: [] for key in ("casdyn", "crocoddyl", "casdyn_cpu", "crocoddyl_cpu")}
    not_taken = 0
    for i in range(1, steps + 1):
        t = T0 + i * mpc.KNOT
        parameters = horizon(controller, t, x)
        taken, wall, cpu = timed(real_time_iteration, sqp, x, parameters)
        not_taken += not taken
        times["casdyn"].append(wall)
        times["casdyn_cpu"].append(cpu)
        x = sqp.X[:, 1].copy()
        croc_parameters = horizon(controller, t, xc)
        fddp = crocoddyl.SolverBoxFDDP(croc.shooting_problem(xc, croc_parameters))
        warm_x = [to_pin_x(xc), *xs[2:], xs[-1]]  # (building the models is not timed)
        warm_u = [*us[1:], us[-1]]
        _, wall, cpu = timed(fddp.solve, warm_x, warm_u, 1, False)
        times["crocoddyl"].append(wall)
        times["crocoddyl_cpu"].append(cpu)
        xs, us = list(fddp.xs), list(fddp.us)
        xc = from_pin_x(np.asarray(xs[1]))
    summary = {key: 1e3 * float(np.median(value)) for key, value in times.items()}
    X, U = croc_trajectory(fddp)
    summary.update(
        casdyn_not_taken=not_taken,
        casdyn_last_cost=tracking_cost(problem, parameters, sqp.X, sqp.U),
        crocoddyl_last_cost=tracking_cost(problem, croc_parameters, X, U),
        casdyn_moved=float(x[0] - start), crocoddyl_moved=float(xc[0] - start))
    return summary


def print_warm(what: str, steps: int, warm: dict) -> dict:
    """Print one warm-started MPC comparison; ``warm`` with its ratios added."""
    warm["ratio"], warm["ratio_cpu"] = (warm[f"casdyn{s}"] / warm[f"crocoddyl{s}"]
                                        for s in ("", "_cpu"))
    print(f"warm-started MPC solve (median of {steps}): casdyn SQP.iterate (one QP, {what}) "
          f"{warm['casdyn']:.2f} ms, Crocoddyl box-FDDP (1 iteration) {warm['crocoddyl']:.2f} "
          f"ms; ratio {warm['ratio']:.2f} (CPU time: {warm['casdyn_cpu']:.2f} vs "
          f"{warm['crocoddyl_cpu']:.2f} ms, ratio {warm['ratio_cpu']:.2f})")
    print(f"  last plans: cost casdyn {warm['casdyn_last_cost']:.4f}, Crocoddyl "
          f"{warm['crocoddyl_last_cost']:.4f}; base moved {warm['casdyn_moved']:.3f} vs "
          f"{warm['crocoddyl_moved']:.3f} m; casdyn steps not taken: {warm['casdyn_not_taken']}")
    return warm


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="last line: the summary")
    parser.add_argument("--steps", type=int, default=50, help="warm-started MPC solves")
    parser.add_argument("--repeats", type=int, default=5,
                        help="cold solves per solver (the fastest is reported)")
    parser.add_argument("--gaits", default=",".join(ocp_gaits.GAITS),
                        help="Crocoddyl's gait problems to run, comma-separated (or none)")
    parser.add_argument("--gait-steps", type=int, default=20,
                        help="warm MPC solves per gait")
    parser.add_argument("--quick", action="store_true",
                        help="a short run: 1 repeat, 5 warm solves each")
    arguments = parser.parse_args(argv)
    if arguments.quick:
        arguments.repeats, arguments.steps, arguments.gait_steps = 1, 5, 5
    gaits = [] if arguments.gaits == "none" else arguments.gaits.split(",")
    for name in gaits:
        if name not in ocp_gaits.GAITS:
            parser.error(f"--gaits: unknown gait {name!r} (one of {', '.join(ocp_gaits.GAITS)})")
    try:
        import crocoddyl  # noqa: F401
    except ImportError as exc:
        raise SystemExit("needs crocoddyl: pip install 'casdyn[ocp-bench]'") from exc
    robot = casdyn.load_robot("solo12", floating_base=True)
    controller = mpc.TrotController(robot)
    problem, N = controller.problem, mpc.N
    x0 = np.r_[controller.q0, np.zeros(robot.nv)]
    parameters = horizon(controller, T0, x0)
    X0, U0 = np.tile(x0[:, None], (1, N + 1)), np.tile(controller.u0[:, None], (1, N))
    croc = CrocoddylTrot(problem)
    repeats = max(arguments.repeats, 1)

    report = {}
    report["casdyn SQP (HPIPM)"], casdyn_plan, solved = cold_sqp(problem, parameters, x0,
                                                                repeats)
    for name in ("fatrop", "ipopt"):
        report[f"casdyn {name} (Transcription)"] = cold_transcription(
            problem, parameters, x0, X0, U0, name, repeats)
    report["crocoddyl box-FDDP"], croc_plan = cold_crocoddyl(croc, problem, parameters, x0,
                                                             X0, U0, repeats)
    sqp_r, ipopt_r = report["casdyn SQP (HPIPM)"], report["casdyn ipopt (Transcription)"]
    croc_r = report["crocoddyl box-FDDP"]
    agreement = abs(sqp_r["cost"] - ipopt_r["cost"]) / abs(ipopt_r["cost"])
    print(f"cold solve of the {N}-knot horizon from standing (t = {T0} s; fastest of "
          f"{repeats}; cost: casdyn's function; own: the solver's objective, Crocoddyl's with its "
          f"barriers):")
    print_cold(report)
    print(f"  SQP vs Ipopt cost: relative difference {agreement:.2e}; cold time casdyn SQP / "
          f"box-FDDP {sqp_r['ms'] / croc_r['ms']:.2f}")

    # the controller's QPs stop at HPIPM's iteration limit (the MPC as quadruped_mpc runs
    # it); the cold solve's are solved to HPIPM's tolerance
    steps = arguments.steps
    warm = print_warm(f"HPIPM iter_max {mpc.HPIPM_ITERATIONS}", steps, warm_mpc(
        controller, controller.sqp, croc, casdyn_plan, croc_plan, steps))
    solved_warm = print_warm("QP solved", steps, warm_mpc(
        controller, solved, croc, casdyn_plan, croc_plan, steps))
    problems = []
    if gaits:
        print(f"Crocoddyl's gait problems (cold: fastest of {repeats} from the example's "
              f"guess; cost: casdyn's function; warm: median of {arguments.gait_steps}):")
        problems = ocp_gaits.compare(gaits, repeats=repeats, steps=arguments.gait_steps)
    if arguments.json:
        print(json.dumps({
            "casdyn_ms": warm["casdyn"], "crocoddyl_ms": warm["crocoddyl"],
            "ratio": warm["ratio"], "casdyn_cpu_ms": warm["casdyn_cpu"],
            "crocoddyl_cpu_ms": warm["crocoddyl_cpu"], "ratio_cpu": warm["ratio_cpu"],
            "casdyn_solved_qp_ms": solved_warm["casdyn"],
            "crocoddyl_ms_beside_solved_qp": solved_warm["crocoddyl"],
            "ratio_solved_qp": solved_warm["ratio"],
            "casdyn_cold_ms": sqp_r["ms"], "crocoddyl_cold_ms": croc_r["ms"],
            "cold_ratio": sqp_r["ms"] / croc_r["ms"], "casdyn_iterations": sqp_r["iterations"],
            "crocoddyl_iterations": croc_r["iterations"], "casdyn_cost": sqp_r["cost"],
            "crocoddyl_cost": croc_r["cost"], "ipopt_cost": ipopt_r["cost"],
            "fatrop_cost": report["casdyn fatrop (Transcription)"]["cost"],
            "cost_relative_difference": agreement,
            **{key: warm[key] for key in ("casdyn_not_taken", "casdyn_last_cost",
                                          "crocoddyl_last_cost", "casdyn_moved",
                                          "crocoddyl_moved")},
            "casdyn_solved_qp_last_cost": solved_warm["casdyn_last_cost"],
            "casdyn_solver": f"sqp-hpipm real-time iteration (exact pyramids and limits; "
                             f"HPIPM iter_max {mpc.HPIPM_ITERATIONS})",
            "problems": problems}))


if __name__ == "__main__":
    main()
