"""A MuJoCo simulation of a casdyn robot, the plant of a closed loop: the robot's URDF read by
MuJoCo's compiler, a free joint for a floating base, a floor, contact spheres or boxes on
the feet, one torque motor per actuated joint, and the state converted both ways between
MuJoCo's ``qpos``/``qvel`` and casdyn's ``x = [q; v]``.

The free joint's velocities differ: MuJoCo's ``qvel`` starts with the base's linear velocity
in the world frame and its angular velocity in the base frame; casdyn's ``v`` starts with
the base twist in the base frame, angular first (:func:`to_casdyn`, :func:`to_mujoco`). The
quaternion is ``[w, x, y, z]`` in both. Needs the ``mujoco`` extra
(``pip install "casdyn[mujoco]"``).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from xml.etree import ElementTree

import numpy as np

from .errors import CasdynError, InputError, ModelWarning, unknown_name
from .model.mjcf import mujoco_velocity_map
from .model.shipped import robot_names, robot_urdf

__all__ = ["MujocoPlant", "to_casdyn", "to_mujoco"]


def _mujoco():
    try:
        import mujoco
    except ImportError:
        raise CasdynError('the MuJoCo plant needs mujoco: pip install "casdyn[mujoco]"') from None
    return mujoco


def to_casdyn(robot, qpos, qvel) -> np.ndarray:
    """casdyn's ``x = [q; v]`` of ``robot`` from MuJoCo's ``qpos``, ``qvel``
    (``v = T^T qvel``, :func:`casdyn.model.mjcf.mujoco_velocity_map`'s ``T`` being
    orthogonal)."""
    qpos, qvel = np.asarray(qpos, dtype=float), np.asarray(qvel, dtype=float)
    return np.r_[qpos, mujoco_velocity_map(robot, qpos).T @ qvel]


def to_mujoco(robot, x) -> tuple[np.ndarray, np.ndarray]:
    """MuJoCo's ``(qpos, qvel)`` of ``robot``'s state ``x = [q; v]`` (``qvel = T v``)."""
    x = np.asarray(x, dtype=float)
    q, v = x[: robot.nq], x[robot.nq :]
    return q.copy(), mujoco_velocity_map(robot, q) @ v


class MujocoPlant:
    """MuJoCo's model and data of ``robot`` (a :class:`casdyn.RigidBodyTree` loaded from a
    URDF): ``urdf`` is that URDF (a path or its text; default: the shipped robot's, or the
    file the robot was read from).

    ``feet``: bodies that touch the floor — a name gets a sphere of ``foot_radius`` (m)
    centred on the body's origin; a mapping ``{body: (half_length, half_width)}`` gets a
    flat box sole (``sole_thickness`` m thick) under the body's origin, its axes the body's.
    ``friction``: the floor's and the feet's sliding friction. ``timestep``: MuJoCo's (s).
    ``floor``: a plane at ``z = 0``. ``collision``: keep the URDF's own collision geometry
    (default False: only the feet touch anything — a URDF's collision meshes named by
    ``package://`` paths are files MuJoCo's compiler would not find). The actuated joints
    (``actuated``, default every joint but a floating base) get torque motors limited to
    the robot's effort limits; the joint order is checked against casdyn's.
    """

    def __init__(self, robot, urdf: str | os.PathLike | None = None, *,
                 feet: Sequence[str] | Mapping[str, tuple[float, float]] = (),
                 foot_radius: float = 0.015, sole_thickness: float = 0.01,
                 friction: float = 1.0, timestep: float = 0.001, floor: bool = True,
                 collision: bool = False, actuated: Sequence[str] | None = None):
        mujoco = _mujoco()
        self.robot, self.floating_base = robot, bool(robot.floating_base)
        spec = mujoco.MjSpec.from_string(_for_mujoco(_urdf_text(robot, urdf), collision,
                                                     robot.joint_names))
        spec.option.timestep = float(timestep)
        if self.floating_base:
            spec.body(robot.body_names[0]).add_freejoint()  # the root link
        surface = [float(friction), 0.005, 0.0001]
        if floor:
            spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05],
                                    friction=surface)
        soles = feet if isinstance(feet, Mapping) else {foot: None for foot in feet}
        for foot, sole in soles.items():
            if foot not in robot.body_names:
                raise InputError(f"feet: {unknown_name('body', foot, robot.body_names)}")
            body = spec.body(foot)
            if sole is None:
                body.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[foot_radius, 0, 0],
                              friction=surface)
            else:
                half = sole_thickness / 2
                body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[*sole, half],
                              pos=[0, 0, -half], friction=surface)
        joints = list(robot.joint_names[1:] if self.floating_base else robot.joint_names)
        self.actuated = joints if actuated is None else list(actuated)
        limits = dict(zip(robot.joint_names, _per_joint(robot, robot.effort_limits),
                          strict=True))
        for joint in self.actuated:
            if joint not in joints:
                raise InputError(f"actuated: {unknown_name('joint', joint, joints)}")
            limited = bool(np.isfinite(limits[joint]))
            spec.add_actuator(name=joint, target=joint, trntype=mujoco.mjtTrn.mjTRN_JOINT,
                              ctrlrange=[-limits[joint], limits[joint]] if limited else [0, 0],
                              ctrllimited=limited)
        self.model = spec.compile()
        names = [self.model.joint(i).name for i in range(self.model.njnt)]
        if names[int(self.floating_base):] != joints:
            raise CasdynError(f"MuJoCo's joint order {names} differs from casdyn's {joints}")
        self.data = mujoco.MjData(self.model)
        self._mujoco = mujoco
        self._check_kinematics()

    def _check_kinematics(self) -> None:
        """Refuse a plant whose bodies are not where casdyn puts them (a URDF that is not
        the robot's, a joint locked away from zero) at a random configuration."""
        robot = self.robot
        x = np.r_[robot.random_configuration(np.random.default_rng(0)), np.zeros(robot.nv)]
        self.set_state(x)
        q = x[: robot.nq]
        for body in robot.body_names:
            index = self._mujoco.mj_name2id(self.model, self._mujoco.mjtObj.mjOBJ_BODY, body)
            if index < 0:
                continue
            expected = np.asarray(robot.get_transform(q, body))[:3, 3]
            gap = float(np.abs(self.data.xpos[index] - expected).max())
            if gap > 1e-9:
                raise CasdynError(
                    f"MujocoPlant: body {body!r} is {gap:.3g} m from where casdyn puts it: "
                    "the URDF is not this robot's (a joint locked away from zero?)")
        self.set_state(np.r_[robot.home_configuration(), np.zeros(robot.nv)])

    @property
    def time(self) -> float:
        """The simulated time (s)."""
        return float(self.data.time)

    def state(self) -> np.ndarray:
        """casdyn's ``x = [q; v]`` now."""
        return to_casdyn(self.robot, self.data.qpos, self.data.qvel)

    def set_state(self, x) -> None:
        """Put the robot at casdyn's state ``x`` (``nq + nv``) and update MuJoCo's
        kinematics."""
        x = np.asarray(x, dtype=float)
        expected = self.robot.nq + self.robot.nv
        if x.shape != (expected,) or not np.all(np.isfinite(x)):
            raise InputError(f"set_state: expected {expected} finite numbers, got shape "
                             f"{x.shape}")
        self.data.qpos[:], self.data.qvel[:] = to_mujoco(self.robot, x)
        self._mujoco.mj_forward(self.model, self.data)

    def step(self, tau, steps: int = 1) -> None:
        """``steps`` MuJoCo steps with the motors' torques ``tau`` (one per actuated joint,
        clipped to their limits by MuJoCo)."""
        tau = np.asarray(tau, dtype=float)
        if tau.shape != (len(self.actuated),):
            raise InputError(f"step: expected {len(self.actuated)} torques, got shape "
                             f"{tau.shape}")
        self.data.ctrl[:] = tau
        for _ in range(int(steps)):
            self._mujoco.mj_step(self.model, self.data)


def _for_mujoco(text: str, collision: bool, joints: Sequence[str]) -> str:
    """The URDF as MuJoCo's compiler should read it: the joints casdyn's robot does not have
    (a robot with locked joints, ``robot.locked``) fixed at their zero position (the plant
    checks the bodies' places), fixed links kept as bodies (MuJoCo would merge them into
    their parents, and the feet are fixed links), no visual geometry, the
    collision geometry only where asked, and every link's inertia positive definite — a
    link whose inertia is not (a massless dummy link, such as Go1's ``base``, whose 1e-6
    entries make a matrix of rank one) gets its diagonal, with a warning: MuJoCo refuses it,
    casdyn sums it into its neighbours."""
    root = ElementTree.fromstring(text)
    for joint in root.iter("joint"):
        if joint.get("type") != "fixed" and joint.get("name") not in joints:
            joint.set("type", "fixed")
    singular = []
    for link in root.iter("link"):
        if not collision:
            for element in link.findall("collision"):
                link.remove(element)
        inertia = link.find("inertial/inertia")
        if inertia is None:
            continue
        get = {key: float(inertia.get(key, 0.0)) for key in
               ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")}
        matrix = np.array([[get["ixx"], get["ixy"], get["ixz"]],
                           [get["ixy"], get["iyy"], get["iyz"]],
                           [get["ixz"], get["iyz"], get["izz"]]])
        if np.linalg.eigvalsh(matrix).min() <= 0:
            singular.append(link.get("name"))
            for key in ("ixy", "ixz", "iyz"):
                inertia.set(key, "0")
    if singular:
        warnings.warn(f"MujocoPlant: the inertia of {len(singular)} links is not positive "
                      f"definite, which MuJoCo refuses ({', '.join(map(repr, singular))}); "
                      "the plant uses their diagonals", ModelWarning, stacklevel=3)
    compiler = ElementTree.Element("compiler", fusestatic="false", balanceinertia="false",
                                   discardvisual="true")
    extension = ElementTree.Element("mujoco")
    extension.append(compiler)
    root.insert(0, extension)
    return ElementTree.tostring(root, encoding="unicode")


def _per_joint(robot, per_velocity: np.ndarray) -> list[float]:
    """One value per joint name of a per-velocity array (a joint's first velocity's)."""
    return [float(per_velocity[j.idx_v]) for j in robot.model.coordinate_joints]


def _urdf_text(robot, urdf) -> str:
    if urdf is None:
        source = robot.model.description.source if robot.model.description else ""
        if robot.name in robot_names():
            return robot_urdf(robot.name)
        if source and Path(source).is_file():
            return Path(source).read_text(encoding="utf-8")
        raise InputError(f"MujocoPlant: give the URDF of {robot.name!r} (urdf=path or text)")
    if isinstance(urdf, os.PathLike) or (isinstance(urdf, str) and "<robot" not in urdf):
        return Path(urdf).read_text(encoding="utf-8")
    return urdf
