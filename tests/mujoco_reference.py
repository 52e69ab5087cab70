"""MuJoCo as the independent reference for :func:`casdyn.load_mjcf`, in casdyn's conventions.

Both models come from the same compiled ``mujoco.MjModel``. MuJoCo's quantities are mapped
through the free joints' velocity map ``qvel = T v`` (casdyn's body twist ``[w; v]``,
MuJoCo's ``[v_world; w]``): ``M = T^T M_mj T``, ``tau = T^T qfrc``, ``qacc = T a + dT/dt v``.
MuJoCo's ``mj_rne`` leaves the rotor inertias out (``mj_fullM`` has them): ``armature qacc``
is added to its inverse dynamics, as casdyn's includes it.
"""

from __future__ import annotations

import mujoco
import numpy as np

from casdyn.model.mjcf import mujoco_velocity_map, quaternion_matrix


def random_qpos(m, rng: np.random.Generator) -> np.ndarray:
    """``qpos0`` moved by normal steps (scale 0.5) on hinge and slide joints, uniformly
    random quaternions on ball and free joints, free positions normal."""
    q = m.qpos0.copy()
    for j in range(m.njnt):
        at, kind = int(m.jnt_qposadr[j]), int(m.jnt_type[j])
        if kind == mujoco.mjtJoint.mjJNT_FREE:
            q[at : at + 3] = rng.normal(size=3)
            q[at + 3 : at + 7] = _unit(rng.normal(size=4))
        elif kind == mujoco.mjtJoint.mjJNT_BALL:
            q[at : at + 4] = _unit(rng.normal(size=4))
        else:
            q[at] += 0.5 * rng.normal()
    return q


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x)


class MuJoCo:
    """MuJoCo's dynamics and kinematics of ``m`` at casdyn's ``(q, v, a)``."""

    def __init__(self, m, robot):
        self.m, self.d, self.robot = m, mujoco.MjData(m), robot

    def at(self, q, v, a=None):
        """Set the state (and the acceleration) and run MuJoCo's forward pass."""
        m, d = self.m, self.d
        self.T = mujoco_velocity_map(self.robot, q)
        d.qpos[:], d.qvel[:] = q, self.T @ v
        mujoco.mj_forward(m, d)
        qacc = self.T @ (np.zeros(m.nv) if a is None else a)
        for joint in self.robot.model.coordinate_joints:
            if joint.type.nv == 6:  # d/dt (R v_body) = R (v_body' + w x v_body)
                i = joint.idx_v
                R = quaternion_matrix(q[joint.idx_q + 3 : joint.idx_q + 7])
                qacc[i : i + 3] += R @ np.cross(v[i : i + 3], v[i + 3 : i + 6])
        d.qacc[:] = qacc  # after mj_forward, which writes its own
        return self

    def mass_matrix(self):
        M = np.zeros((self.m.nv, self.m.nv))
        mujoco.mj_fullM(self.m, self.d, M)
        return self.T.T @ M @ self.T

    def inverse_dynamics(self):
        """``M qacc + bias`` with the rotor inertias, without passive forces."""
        out = np.zeros(self.m.nv)
        mujoco.mj_rne(self.m, self.d, 1, out)
        return self.T.T @ (out + self.m.dof_armature * self.d.qacc)

    def bias_force(self):
        """``mj_rne`` without the acceleration: gravity, Coriolis and centrifugal forces
        at ``qacc = dT/dt v`` (the acceleration casdyn's zero ``a`` is)."""
        out = np.zeros(self.m.nv)
        mujoco.mj_rne(self.m, self.d, 1, out)
        return self.T.T @ (out + self.m.dof_armature * self.d.qacc)

    def damping(self):
        """The joints' viscous forces as casdyn's ``tau`` adds them (``-qfrc_damper``)."""
        return -self.T.T @ self.d.qfrc_damper

    def pose(self, kind: str, index: int) -> np.ndarray:
        """The 4x4 pose of body or site ``index`` in the world."""
        d = self.d
        position, rotation = ((d.xpos, d.xmat) if kind == "body" else (d.site_xpos, d.site_xmat))
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = rotation[index].reshape(3, 3), position[index]
        return T

    def jacobian(self, kind: str, index: int) -> np.ndarray:
        """The 6 x nv Jacobian ``[angular; linear]`` of the frame's origin, world axes."""
        jp, jr = np.zeros((3, self.m.nv)), np.zeros((3, self.m.nv))
        if kind == "body":
            mujoco.mj_jac(self.m, self.d, jp, jr, self.d.xpos[index], index)
        else:
            mujoco.mj_jacSite(self.m, self.d, jp, jr, index)
        return np.vstack([jr, jp]) @ self.T


def frames(m, robot, limit: int | None = None) -> list[tuple[str, int, str]]:
    """``(kind, MuJoCo index, casdyn body name)`` of the named bodies and sites casdyn has
    (a site named as a body or joint is ``"<site>_site"``) (``limit`` of them spread over
    the list when limited)."""
    names = set(robot.body_names)
    found = [("body", b, m.body(b).name) for b in range(1, m.nbody) if m.body(b).name in names]
    taken = {m.body(b).name for b in range(m.nbody)} | {m.joint(j).name for j in range(m.njnt)}
    sites = [(s, m.site(s).name + "_site" if m.site(s).name in taken else m.site(s).name)
             for s in range(m.nsite) if m.site(s).name]
    found += [("site", s, name) for s, name in sites if name in names]
    if limit is not None and len(found) > limit:
        keep = np.unique(np.linspace(0, len(found) - 1, limit).round().astype(int))
        found = [found[i] for i in keep]
    return found


def largest_errors(robot, m, seed: int = 0, frame_limit: int | None = None) -> dict:
    """The largest relative error of each quantity at a random state: ``max|casdyn -
    MuJoCo| / max(1, max|MuJoCo|)``."""
    rng = np.random.default_rng(seed)
    q = random_qpos(m, rng)
    v, a = rng.normal(size=(2, robot.nv))
    ref = MuJoCo(m, robot).at(q, v, a)
    errors = {"M": _error(robot.mass_matrix(q), ref.mass_matrix()),
              "inverse_dynamics": _error(robot.inverse_dynamics(q, v, a),
                                         ref.inverse_dynamics())}
    ref.at(q, v)
    errors["bias_force"] = _error(robot.bias_force(q, v), ref.bias_force())
    pose = jacobian = 0.0
    for kind, index, name in frames(m, robot, frame_limit):
        pose = max(pose, _error(robot.get_transform(q, name), ref.pose(kind, index)))
        jacobian = max(jacobian, _error(robot.geometric_jacobian(q, name),
                                        ref.jacobian(kind, index)))
    errors["poses"], errors["jacobians"] = pose, jacobian
    return errors


def _error(actual, expected) -> float:
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    return float(np.max(np.abs(actual - expected), initial=0.0)
                 / max(1.0, np.max(np.abs(expected), initial=0.0)))
