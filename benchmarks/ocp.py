"""The solo12 trot OCP solved by casdyn (casdyn.ocp: HPIPM real-time iteration, fatrop, Ipopt)
and by Crocoddyl 3.2 (box-FDDP with Pinocchio's analytical derivatives), in one process.

The problem is the MPC horizon of examples/quadruped_mpc.py: 20 knots of 20 ms, the trot's
contact sequence (diagonal pairs), forward contact dynamics with the held feet's velocity
damped (Crocoddyl: ContactModel3D with gains [0, damping]), semi-implicit Euler
(IntegratedActionModelEuler), the same tracking residuals and weights (state in the tangent
space, torques, swing-foot heights), torques within 2.7 N m; the friction pyramids are
relaxed barriers in casdyn's RTI and quadratic barriers in Crocoddyl (FDDP has no hard
inequalities), hard constraints for fatrop/Ipopt.

Reported: a cold solve from the standing guess (iterations, time, time per iteration, the
tracking cost evaluated by one function for both, constraint violations), then the MPC:
each solver warm-started from its previous solution shifted by one knot, one iteration (one
QP / one FDDP iteration) per solve, the state moved along the plan.

Needs crocoddyl 3.2.1 with pin 4.0.0 (its wheel fails with pin 4.1):
  pip install 'casdyn[ocp-bench]'   then   python benchmarks/ocp.py [--json] [--steps N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import casdyn
from casdyn.ocp import ContactOCP, RealTimeIteration

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import quadruped_mpc as mpc

T0 = mpc.STAND + 0.5  # the horizon starts in the trot


def references(controller, t: float, N: int, base_x: float = 0.0):
    """(P, modes, held) of the horizon from ``t``, the base's x reference moving on from
    ``base_x`` at the commanded speed (both solvers get the same numbers)."""
    model, cost = controller.model, controller.cost
    nf = len(mpc.FEET)
    P = np.empty((cost.parameter_size(model), N + 1))
    modes, held = np.empty(N, dtype=int), np.empty((nf, N))
    for k in range(N + 1):
        tk = t + k * mpc.KNOT
        _, swing = mpc.gait(tk)
        q_ref = controller.q0.copy()
        q_ref[0] = base_x + mpc.SPEED * (tk - t)
        v_ref = np.zeros(model.nv)
        v_ref[3] = mpc.SPEED if tk >= mpc.STAND else 0.0
        P[:, k] = cost.pack(model, q_ref, v_ref, controller.u0, mpc.foot_height(swing),
                            (swing >= 0).astype(float))
        if k < N:
            modes[k] = mpc.gait(tk + mpc.KNOT / 2)[0]
            held[:, k] = mpc.MODES[modes[k]]
    return P, modes, held


# -- casdyn <-> Pinocchio conventions ------------------------------------------------------
def to_pin_x(x: np.ndarray) -> np.ndarray:
    """casdyn ``[p, qw qx qy qz, joints, w, v, joint rates]`` -> Pinocchio
    ``[p, qx qy qz qw, joints, v, w, joint rates]``."""
    q, v = x[:19], x[19:]
    return np.r_[q[:3], q[4:7], q[3], q[7:], v[3:6], v[0:3], v[6:]]


def from_pin_x(x: np.ndarray) -> np.ndarray:
    q, v = x[:19], x[19:]
    return np.r_[q[:3], q[6], q[3:6], q[7:], v[3:6], v[0:3], v[6:]]


def tangent_to_pin(w: np.ndarray) -> np.ndarray:
    """A tangent-space vector (angular first) in Pinocchio's order (linear first)."""
    return np.r_[w[3:6], w[0:3], w[6:]]


class CrocoddylTrot:
    """The same horizon as Crocoddyl action models, one per knot time."""

    def __init__(self, controller, barrier_weight: float = 1.0):
        import crocoddyl
        import pinocchio as pin

        self.croc, self.pin = crocoddyl, pin
        self.controller = controller
        # Pinocchio gives continuous joints two coordinates (cos, sin): as revolute joints
        # with wide limits they have casdyn's one
        urdf = casdyn.robot_urdf("solo12").replace('type="continuous"', 'type="revolute"')
        urdf = urdf.replace("<limit effort=", '<limit lower="-100" upper="100" effort=')
        robot_model = pin.buildModelFromXML(urdf, pin.JointModelFreeFlyer())
        self.state = crocoddyl.StateMultibody(robot_model)
        self.actuation = crocoddyl.ActuationModelFloatingBase(self.state)
        self.feet = [robot_model.getFrameId(f) for f in mpc.FEET]
        self.barrier_weight = barrier_weight
        self.limit = controller.rti.effort_limit

    def action(self, p: np.ndarray, held, terminal: bool = False):
        croc, pin, c = self.croc, self.pin, self.controller
        model, cost = c.model, c.cost
        nu = self.actuation.nu
        q_ref, v_ref, u_ref, z_ref, w_foot = (np.asarray(a).ravel() for a in
                                              cost.unpack(model, p))
        costs = croc.CostModelSum(self.state, nu)
        scale = 1.0 if terminal else 1.0 / mpc.KNOT  # Euler multiplies running costs by dt
        t2 = cost.terminal**2 if terminal else 1.0
        x_ref = to_pin_x(np.r_[q_ref, v_ref])
        weights = np.r_[tangent_to_pin(np.asarray(cost.q_weight)),
                        tangent_to_pin(np.asarray(cost.v_weight))] ** 2 * t2
        costs.addCost("state", croc.CostModelResidual(
            self.state, croc.ActivationModelWeightedQuad(weights),
            croc.ResidualModelState(self.state, x_ref, nu)), scale)
        if not terminal:
            costs.addCost("control", croc.CostModelResidual(
                self.state, croc.ActivationModelWeightedQuad(np.asarray(cost.u_weight) ** 2),
                croc.ResidualModelControl(self.state, u_ref)), scale)
        for k, fid in enumerate(self.feet):
            if w_foot[k] > 0:
                w = np.array([0.0, 0.0, (cost.foot_weight * w_foot[k]) ** 2 * t2])
                costs.addCost(f"swing{k}", croc.CostModelResidual(
                    self.state, croc.ActivationModelWeightedQuad(w),
                    croc.ResidualModelFrameTranslation(self.state, fid,
                                                       np.array([0, 0, z_ref[k]]), nu)),
                    scale)
        contacts = croc.ContactModelMultiple(self.state, nu)
        for k, fid in enumerate(self.feet):
            if held[k]:
                contacts.addContact(f"foot{k}", croc.ContactModel3D(
                    self.state, fid, np.zeros(3), pin.ReferenceFrame.LOCAL_WORLD_ALIGNED, nu,
                    np.array([0.0, model.damping])))
                if not terminal:
                    cone = croc.FrictionCone(np.eye(3), model.mu, 4, False)
                    bounds = croc.ActivationBounds(cone.lb, cone.ub)
                    costs.addCost(f"cone{k}", croc.CostModelResidual(
                        self.state, croc.ActivationModelQuadraticBarrier(bounds),
                        croc.ResidualModelContactFrictionCone(self.state, fid, cone, nu)),
                        self.barrier_weight * scale)
        dam = croc.DifferentialActionModelContactFwdDynamics(self.state, self.actuation,
                                                             contacts, costs, 0.0, True)
        iam = croc.IntegratedActionModelEuler(dam, 0.0 if terminal else mpc.KNOT)
        if not terminal:
            iam.u_lb, iam.u_ub = -self.limit, self.limit
        return iam

    def problem(self, x0: np.ndarray, P, held):
        N = held.shape[1]
        running = [self.action(P[:, k], held[:, k]) for k in range(N)]
        terminal = self.action(P[:, N], held[:, N - 1], terminal=True)
        problem = self.croc.ShootingProblem(to_pin_x(x0), running, terminal)
        problem.nthreads = 1  # one core, as casdyn's solves
        return problem


# -- measures shared by both -----------------------------------------------------------------
def tracking_cost(controller, X, U, P) -> float:
    """casdyn's tracking cost ``0.5 sum |r|^2`` of a trajectory (casdyn's conventions)."""
    import casadi as ca

    model, cost = controller.model, controller.cost
    x, u, p = ca.SX.sym("x", model.nx), ca.SX.sym("u", model.nu), ca.SX.sym("p", P.shape[0])
    stage = ca.Function("c", [x, u, p], [0.5 * ca.sumsqr(cost.residual(model, x, u, p))])
    final = ca.Function("c", [x, p], [0.5 * ca.sumsqr(cost.residual(model, x, None, p))])
    total = sum(float(stage(X[:, k], U[:, k], P[:, k])) for k in range(U.shape[1]))
    return total + float(final(X[:, -1], P[:, -1]))


def violations(controller, X, U, held) -> dict:
    """Largest dynamics gap (tangent norm, with casdyn's step), friction pyramid excess (N)
    and torque excess (N m) of a trajectory."""
    model = controller.model
    gap = cone = 0.0
    for k in range(U.shape[1]):
        x_next, forces = model.step(tuple(held[:, k]))(X[:, k], U[:, k])
        d = np.asarray(model.difference_state(x_next, X[:, k + 1])).ravel()
        gap = max(gap, float(np.abs(d).max()))
        f = np.asarray(forces)
        rows = np.r_[model.mu * f[2] - np.abs(f[0]), model.mu * f[2] - np.abs(f[1])]
        cone = max(cone, float(np.max(-rows, initial=0.0)))
    torque = float(np.max(np.abs(U) - controller.rti.effort_limit[:, None], initial=0.0))
    return {"gap": gap, "cone": max(cone, 0.0), "torque": max(torque, 0.0)}


def croc_trajectory(solver):
    X = np.stack([from_pin_x(np.asarray(x)) for x in solver.xs], axis=1)
    U = np.stack([np.asarray(u) for u in solver.us], axis=1)
    return X, U


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="last line: the MPC summary")
    parser.add_argument("--steps", type=int, default=50, help="warm-started MPC solves")
    arguments = parser.parse_args(argv)
    try:
        import crocoddyl
    except ImportError as exc:
        raise SystemExit("needs crocoddyl: pip install 'casdyn[ocp-bench]'") from exc
    robot = casdyn.load_robot("solo12", floating_base=True)
    controller = mpc.TrotController(robot)
    rti, N = controller.rti, mpc.N
    croc = CrocoddylTrot(controller)
    x0 = np.r_[controller.q0, np.zeros(robot.nv)]
    P, modes, held = references(controller, T0, N)
    X0 = np.tile(x0[:, None], (1, N + 1))
    U0 = np.tile(controller.u0[:, None], (1, N))
    report = {}

    # cold: RTI iterated (one QP each, solved to HPIPM's tolerance) until the step is small
    # (the same compiled linearisation: the library is cached)
    rti = RealTimeIteration(controller.model, controller.cost, N, mpc.MODES,
                            constraints="barrier", hpipm={"mode": "speed_abs", "iter_max": 30})
    rti.initialize(X0, U0)
    started = time.perf_counter()
    iterations = 0
    while iterations < 100:
        before = rti.X.copy()
        rti.iterate(x0, P, modes, held)
        iterations += 1
        if np.abs(rti.X - before).max() < 1e-6:
            break
    seconds = time.perf_counter() - started
    report["casdyn RTI (SQP-GN, HPIPM)"] = dict(
        iterations=iterations, ms=1e3 * seconds, cost=tracking_cost(controller, rti.X, rti.U, P),
        **violations(controller, rti.X, rti.U, held))

    # cold: the NLP with hard pyramids, fatrop and Ipopt (inverse dynamics)
    for name in ("fatrop", "ipopt"):
        ocp = ContactOCP(mpc.ContactModel(robot, mpc.FEET, dt=mpc.KNOT,
                                          damping=controller.model.damping, mu=mpc.MU_MODEL),
                         controller.cost, [tuple(held[:, k]) for k in range(N)],
                         dynamics="inverse")
        solver = ocp.solver(name)
        parameters = np.r_[x0, P.ravel(order="F")]
        started = time.perf_counter()
        solution = solver(x0=ocp.guess(x0, controller.u0), p=parameters, lbx=ocp.lbz,
                          ubx=ocp.ubz, lbg=ocp.lbg, ubg=ocp.ubg)
        seconds = time.perf_counter() - started
        X, W = ocp.split(solution["x"].full().ravel())
        stats = solver.stats()
        report[f"casdyn {name} (exact Hessian, inverse dynamics)"] = dict(
            iterations=int(stats["iter_count"]), ms=1e3 * seconds,
            cost=tracking_cost(controller, X, W[: robot.nv - 6], P),
            **violations(controller, X, W[: robot.nv - 6], held))

    # cold: Crocoddyl box-FDDP
    problem = croc.problem(x0, P, held)
    fddp = crocoddyl.SolverBoxFDDP(problem)
    xs = [to_pin_x(x) for x in X0.T]
    us = [u for u in U0.T]
    started = time.perf_counter()
    fddp.solve(xs, us, 200, False)
    seconds = time.perf_counter() - started
    X, U = croc_trajectory(fddp)
    report["crocoddyl box-FDDP"] = dict(iterations=int(fddp.iter), ms=1e3 * seconds,
                                        cost=tracking_cost(controller, X, U, P),
                                        **violations(controller, X, U, held))
    print(f"cold solve of the {N}-knot horizon from standing (t = {T0} s):")
    for name, r in report.items():
        print(f"  {name:44s} {r['iterations']:4d} it {r['ms']:8.1f} ms "
              f"({r['ms'] / r['iterations']:6.2f} ms/it); cost {r['cost']:.4f}; gap "
              f"{r['gap']:.1e}, cone {r['cone']:.1e} N, torque {r['torque']:.1e} N m")

    # warm-started MPC: one iteration per solve, the state moved along each plan
    times = {"casdyn": [], "crocoddyl": []}
    cpu = {"casdyn": [], "crocoddyl": []}  # the process's CPU time: robust to a busy machine
    rti = controller.rti
    for _ in range(5):
        rti.iterate(x0, P, modes, held)
    x = x0.copy()
    xc = x0.copy()
    previous = None
    for i in range(arguments.steps):
        t = T0 + i * mpc.KNOT
        P, modes, held = references(controller, t, N, x[0])
        if i:
            started, used = time.perf_counter(), time.process_time()
            rti.shift(1.0)
            rti.iterate(x, P, modes, held)
            times["casdyn"].append(time.perf_counter() - started)
            cpu["casdyn"].append(time.process_time() - used)
        x = rti.X[:, 1].copy()
        Pc = references(controller, t, N, xc[0])[0]
        problem = croc.problem(xc, Pc, held)  # (building the models is not timed)
        fddp_mpc = crocoddyl.SolverBoxFDDP(problem)
        if previous is None:
            fddp_mpc.solve(xs, us, 200, False)
        else:
            warm_x = [to_pin_x(xc)] + [x for x in previous[0][2:]] + [previous[0][-1]]
            warm_u = [u for u in previous[1][1:]] + [previous[1][-1]]
            started, used = time.perf_counter(), time.process_time()
            fddp_mpc.solve(warm_x, warm_u, 1, False)
            times["crocoddyl"].append(time.perf_counter() - started)
            cpu["crocoddyl"].append(time.process_time() - used)
        previous = (list(fddp_mpc.xs), list(fddp_mpc.us))
        xc = from_pin_x(np.asarray(fddp_mpc.xs[1]))
    casdyn_ms = 1e3 * float(np.median(times["casdyn"]))
    croc_ms = 1e3 * float(np.median(times["crocoddyl"]))
    casdyn_cpu, croc_cpu = (1e3 * float(np.median(cpu[k])) for k in ("casdyn", "crocoddyl"))
    print(f"warm-started MPC solve (median of {len(times['casdyn'])}): casdyn RTI "
          f"{casdyn_ms:.2f} ms, Crocoddyl box-FDDP (1 iteration) {croc_ms:.2f} ms; ratio "
          f"{casdyn_ms / croc_ms:.2f} (CPU time: {casdyn_cpu:.2f} vs {croc_cpu:.2f} ms, "
          f"ratio {casdyn_cpu / croc_cpu:.2f})")
    if arguments.json:
        print(json.dumps({"casdyn_ms": casdyn_ms, "crocoddyl_ms": croc_ms,
                          "ratio": casdyn_ms / croc_ms, "casdyn_cpu_ms": casdyn_cpu,
                          "crocoddyl_cpu_ms": croc_cpu, "ratio_cpu": casdyn_cpu / croc_cpu,
                          "casdyn_solver": "rti-hpipm (barrier constraints)"}))


if __name__ == "__main__":
    main()
