"""Identify the shipped UR5e's base inertial parameters, joint friction and rotor inertia
from a simulated experiment.

The "real robot" is casdyn's UR5e with the URDF's inertias plus joint friction and rotor
inertias (illustrative values, of the order of a geared arm's; the URDF gives none), and
the experiment is what a lab would run: a periodic excitation trajectory (a finite Fourier
series per joint, Swevers et al., IEEE Trans. Robotics and Automation 13(5), 1997) within
the joint limits, tracked by a PD controller around the nominal model's computed torques,
the robot simulated by RK4 steps of casdyn's forward dynamics at 1 kHz and logged at 200 Hz
with noise on the measured torques. Then:

1. least squares on the base regressor (``Y_b beta = tau``): the base parameters and their
   standard deviations from the noise;
2. a physically consistent fit with Opti: every body's pseudo-inertia written as ``L L^T``
   (so positive semi-definite: mass >= 0, inertia satisfying the triangle inequality;
   Wensing, Kim & Slotine, IEEE RA-L 2017), friction and rotor inertia >= 0, close to a
   prior (the URDF's numbers) where the data says nothing;
3. both checked on a fresh validation trajectory: predicted against measured torques.

Run:  python examples/identification.py [--quick] [--plot-dir DIR]
"""

import argparse
import re
import time
from pathlib import Path

import casadi as ca
import numpy as np

import casdyn
from casdyn.integrators import rk4_step
from casdyn.plotting import pyplot

# the simulated robot's joint friction (viscous N m s/rad, Coulomb N m) and rotor inertia
# (kg m^2): illustrative values, larger on the big shoulder and elbow drives
DAMPING = [1.2, 1.2, 0.8, 0.3, 0.3, 0.3]
COULOMB = [4.0, 4.0, 2.5, 1.0, 1.0, 1.0]
ARMATURE = [0.4, 0.4, 0.2, 0.05, 0.05, 0.05]
SMOOTHING = 0.05  # rad/s: the width of the smoothed Coulomb sign, in the plant and model
NOISE = 0.5  # N m: standard deviation of the torque measurement noise
STEP, LOG_EVERY = 1e-3, 5  # simulation step (s); log every 5th step (200 Hz)
DURATION, QUICK_DURATION = 20.0, 8.0  # seconds of data per trajectory
BASE_FREQUENCY, HARMONICS = 0.1, 5  # Hz, terms of the Fourier series


def robot_with_friction(urdf: str) -> casdyn.RigidBodyTree:
    """The UR5e with ``<dynamics>`` on its joints, friction on, and rotor inertias."""
    names = re.findall(r'<joint name="([^"]+)" type="revolute">', urdf)
    for name, d, c in zip(names, DAMPING, COULOMB, strict=True):
        urdf = urdf.replace(f'<joint name="{name}" type="revolute">',
                            f'<joint name="{name}" type="revolute">'
                            f'<dynamics damping="{d}" friction="{c}"/>')
    return casdyn.load_urdf(urdf, joint_friction=True, friction_smoothing=SMOOTHING,
                            armature=dict(zip(names, ARMATURE, strict=True)))


def fourier_trajectory(robot, seed: int):
    """``q(t)``, ``qd(t)``, ``qdd(t)`` as functions: per joint a sum of HARMONICS sines and
    cosines of the base frequency around the home pose, scaled into 80 % of the joint
    range (at most +-1.2 rad) and 1.5 rad/s."""
    rng = np.random.default_rng(seed)
    w = 2 * np.pi * BASE_FREQUENCY * np.arange(1, HARMONICS + 1)
    a, b = rng.normal(size=(2, robot.nv, HARMONICS)) / np.arange(1, HARMONICS + 1)
    t = np.linspace(0, 1 / BASE_FREQUENCY, 2001)
    shape = a @ np.sin(np.outer(w, t)) + b @ np.cos(np.outer(w, t))
    speed = (a * w) @ np.cos(np.outer(w, t)) - (b * w) @ np.sin(np.outer(w, t))
    lower, upper = robot.position_limits
    reach = np.minimum(0.8 * np.minimum(upper, -lower), 1.2)
    scale = np.minimum(reach / np.abs(shape).max(axis=1), 1.5 / np.abs(speed).max(axis=1))
    a, b = a * scale[:, None], b * scale[:, None]
    home = np.zeros(robot.nv)
    home[1], home[2] = -1.57, 1.2  # arm out, elbow bent, away from the limits

    def at(times):
        times = np.atleast_1d(times)
        s, c = np.sin(np.outer(w, times)), np.cos(np.outer(w, times))
        return ((home[:, None] + a @ s + b @ c).T, ((a * w) @ c - (b * w) @ s).T,
                (-(a * w**2) @ s - (b * w**2) @ c).T)

    return at


def experiment(truth, nominal, trajectory, duration: float, rng):
    """Track ``trajectory`` with computed torque (nominal model) + PD, simulate ``truth``;
    return the logged (q, qd, qdd, measured tau) at 200 Hz."""
    step = rk4_step(truth, STEP)
    Kp, Kd = 400.0, 40.0
    q, qd, _ = (x[0] for x in trajectory(0.0))
    log = []
    for k in range(round(duration / STEP)):
        q_ref, qd_ref, qdd_ref = (x[0] for x in trajectory(k * STEP))
        tau = (nominal.inverse_dynamics(q_ref, qd_ref, qdd_ref)
               + Kp * (q_ref - q) + Kd * (qd_ref - qd))
        if k % LOG_EVERY == 0:  # the joint accelerations the robot has (an ideal sensor)
            qdd = truth.forward_dynamics(q, qd, tau)
            log.append((q, qd, qdd, tau + rng.normal(scale=NOISE, size=truth.nv)))
        x = np.array(step(np.r_[q, qd], tau)).ravel()
        q, qd = x[: truth.nq], x[truth.nq :]
    return tuple(np.array(column) for column in zip(*log, strict=True))


def consistent_fit(robot, W, tau, prior):
    """Least squares over physically consistent parameters: each body's pseudo-inertia
    ``[[Sigma, h], [h^T, m]] = L L^T`` (``Sigma = tr(I)/2 1 - I``) with ``L`` lower
    triangular and an exponential diagonal (the log-Cholesky parametrisation of Rucker &
    Wensing, IEEE RA-L 2022, so positive definite), friction and rotor inertia as squares;
    a small pull towards ``prior`` fixes what the data cannot see."""
    n_bodies = len(robot.model.joints)
    opti = ca.Opti()
    factors = [opti.variable(10) for _ in range(n_bodies)]
    extra = opti.variable(len(prior) - 10 * n_bodies)
    rows, columns = np.tril_indices(4)
    blocks = []
    for x in factors:
        L = ca.MX.zeros(4, 4)
        for k, (r, c) in enumerate(zip(rows, columns, strict=True)):
            L[r, c] = ca.exp(x[k]) if r == c else x[k]
            if r == c:  # keeps the line search away from exp overflow
                opti.subject_to(opti.bounded(-30, x[k], 10))
        J = L @ L.T
        Sigma, h, m = J[:3, :3], J[:3, 3], J[3, 3]
        I = ca.trace(Sigma) * ca.DM.eye(3) - Sigma  # noqa: E741
        blocks += [m, h, I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]]
    pi = ca.vertcat(*blocks, extra**2)
    # |W pi - tau|^2 through the normal equations (78 x 78 instead of the samples), scaled
    scale = tau @ tau
    A, b = W.T @ W / scale, W.T @ tau / scale
    opti.minimize(ca.bilin(A, pi, pi) - 2 * ca.dot(b, pi) + 1e-6 * ca.sumsqr(pi - prior))
    # start from the prior's own factors (its pseudo-inertias are positive definite)
    for k, x in enumerate(factors):
        block = prior[10 * k : 10 * k + 10]
        m, h = block[0], block[1:4]
        Ixx, Ixy, Iyy, Ixz, Iyz, Izz = block[4:]
        I = np.array([[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]])  # noqa: E741
        Sigma = np.trace(I) / 2 * np.eye(3) - I
        L = np.linalg.cholesky(np.block([[Sigma, h[:, None]], [h[None, :], np.array([[m]])]])
                               + 1e-9 * np.eye(4))
        opti.set_initial(x, [np.log(L[r, c]) if r == c else L[r, c]
                             for r, c in zip(rows, columns, strict=True)])
    opti.set_initial(extra, np.sqrt(np.abs(prior[10 * n_bodies :])) + 0.1)
    opti.solver("ipopt", {"print_time": False}, {"print_level": 0, "sb": "yes"})
    solution = opti.solve()
    return solution.value(pi), solution.stats()["return_status"]


def main(plot_dir=None, duration=DURATION):
    started = time.perf_counter()
    urdf = casdyn.robot_urdf("ur5e")
    truth = robot_with_friction(urdf).compile()
    nominal = casdyn.load_robot("ur5e").compile()
    rng = np.random.default_rng(7)
    Q, Qd, Qdd, Tau = experiment(truth, nominal, fourier_trajectory(truth, 1), duration, rng)
    print(f"simulated in {time.perf_counter() - started:.1f} s")
    P, beta_true = truth.base_parameters()
    pi_true = truth.inertial_parameters()
    print(f"{truth.name}: {len(pi_true)} parameters (10 per link, then viscous and Coulomb "
          f"friction and rotor inertia per joint), {len(beta_true)} identifiable combinations")
    print(f"excitation: {len(Q)} samples over {duration:.0f} s, torque noise {NOISE} N m; "
          f"|q - home| up to {np.abs(Q - Q.mean(axis=0)).max():.2f} rad, |qd| up to "
          f"{np.abs(Qd).max():.2f} rad/s")

    # 1. least squares on the base regressor, with the parameters' standard deviations
    W_b = truth.base_regressor(Q, Qd, Qdd).reshape(-1, len(beta_true))
    tau = Tau.reshape(-1)
    beta, *_ = np.linalg.lstsq(W_b, tau, rcond=None)
    residual = tau - W_b @ beta
    sigma = np.sqrt(residual @ residual / (len(tau) - len(beta)))
    std = sigma * np.sqrt(np.diag(np.linalg.inv(W_b.T @ W_b)))
    z = np.abs(beta - beta_true) / std
    print(f"least squares: noise estimated {sigma:.3f} N m (true {NOISE}); "
          f"|beta - beta_true| / std: median {np.median(z):.2f}, max {z.max():.2f} "
          f"(within {np.sum(z < 3)} of {len(z)} at 3 std)")
    relative = np.abs(beta - beta_true) / np.maximum(np.abs(beta_true), 1e-12)
    well = std < 0.02 * np.abs(beta_true)  # parameters the data pins to 2 % (one std)
    print(f"  the {well.sum()} parameters with a standard deviation under 2 % of their value:"
          f" relative errors up to {relative[well].max():.2%}")

    # 2. physically consistent fit on the full parameters, the URDF as the prior
    W = truth.regressor(Q, Qd, Qdd).reshape(-1, len(pi_true))
    prior = np.r_[nominal.inertial_parameters(), np.zeros(len(pi_true) - 60)]
    pi_fit, status = consistent_fit(truth, W, tau, prior)
    beta_fit = P @ pi_fit
    print(f"consistent fit (Ipopt: {status}): |beta - beta_true| / std: max "
          f"{(np.abs(beta_fit - beta_true) / std).max():.2f}; masses "
          f"{np.round(pi_fit[0:60:10], 3)} kg (true {np.round(pi_true[0:60:10], 3)})")
    print(f"  friction: viscous {np.round(pi_fit[60:72:2], 2)} (true {DAMPING}), "
          f"Coulomb {np.round(pi_fit[61:72:2], 2)} (true {COULOMB})")

    # 3. validation on a fresh trajectory
    Qv, Qdv, Qddv, Tauv = experiment(truth, nominal, fourier_trajectory(truth, 2),
                                     duration / 2, rng)
    W_v = truth.base_regressor(Qv, Qdv, Qddv)
    rms = {name: np.sqrt(np.mean((W_v @ b - Tauv) ** 2, axis=0))
           for name, b in (("least squares", beta), ("consistent", beta_fit),
                           ("nominal URDF", None)) if b is not None}
    rms["nominal URDF"] = np.sqrt(np.mean((nominal.inverse_dynamics(Qv, Qdv, Qddv) - Tauv) ** 2,
                                          axis=0))
    for name, value in rms.items():
        print(f"validation torque RMS error, {name:<13}: {np.round(value, 3)} N m "
              f"(noise {NOISE})")
    if plot_dir is not None:
        path = Path(plot_dir) / "identification.png"
        plot(path, truth, np.arange(len(Qv)) * STEP * LOG_EVERY, Tauv, W_v @ beta,
             nominal.inverse_dynamics(Qv, Qdv, Qddv))
        print(f"plot: {path}")


def plot(path, robot, t, measured, predicted, nominal):
    """Measured against predicted joint torques on the validation trajectory."""
    plt = pyplot()

    fig, axes = plt.subplots(3, 2, sharex=True, figsize=(11, 8), constrained_layout=True)
    for j, ax in enumerate(axes.T.ravel()):
        ax.plot(t, measured[:, j], color="0.6", linewidth=0.8, label="measured (noisy)")
        ax.plot(t, predicted[:, j], color="tab:blue", label="identified model")
        ax.plot(t, nominal[:, j], color="tab:red", linestyle="--", linewidth=1,
                label="URDF model, no friction")
        ax.set_title(robot.joint_names[j], fontsize=10)
        ax.set_ylabel("torque [N m]")
        ax.grid(True)
    for ax in axes[-1]:
        ax.set_xlabel("time [s]")
    axes[0, 0].legend(fontsize="small")
    fig.suptitle("UR5e identification: validation trajectory, measured vs predicted torques")
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 s of data (the tests)")
    parser.add_argument("--plot-dir", help="save identification.png here")
    arguments = parser.parse_args()
    main(arguments.plot_dir, QUICK_DURATION if arguments.quick else DURATION)
