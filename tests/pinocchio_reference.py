"""Pinocchio as the independent reference, converted to casdyn's conventions here.

casdyn: spatial vectors ``[angular; linear]``, ``q`` in URDF document order with one angle
per continuous joint, external forces as base-frame spatial forces about the base origin.
Pinocchio: ``[linear; angular]``, joints in depth-first order, continuous joints as
``(cos, sin)``, external forces per joint in the joint's local frame.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin


class Reference:
    """Pinocchio's model of a URDF; with ``floating_base`` its free flyer (``root_joint``)
    stands for casdyn's ``floating_base`` joint."""

    def __init__(self, urdf_text: str | None, joint_names, body_names, gravity=(0, 0, -9.81),
                 floating_base: bool = False, mimic_joints=(), model: pin.Model | None = None):
        """From ``urdf_text``, or from a Pinocchio ``model`` already built."""
        root = (pin.JointModelFreeFlyer(),) if floating_base else ()
        try:
            self.model = model or pin.buildModelFromXML(urdf_text, *root, mimic=True)
            expand = ()
        except ValueError:
            # Pinocchio takes a mimic joint only if it parses the leader first: then its
            # model with independent joints, reduced here by the mimic map (casdyn's
            # mimic_joints; none for a mimic of an undefined joint, which casdyn reads as
            # independent too)
            self.model = pin.buildModelFromXML(urdf_text, *root)
            expand = mimic_joints
        self.root_mass, self.root_com = 0.0, np.zeros(3)
        if urdf_text is not None and not floating_base:
            self.root_mass, self.root_com = _root_link_mass(urdf_text)
        self.mimic = bool(expand) or any(j.shortname() == "JointModelMimic"
                                         for j in self.model.joints)
        self.model.gravity.linear = np.asarray(gravity, dtype=float)
        self.data = self.model.createData()
        self.joint_ids = [self.model.getJointId("root_joint" if name == "floating_base"
                                                and floating_base else name)
                          for name in joint_names]
        self.body_frames = [self.model.getFrameId(name, pin.BODY) for name in body_names]
        self.v_index, self.q_at, column = [], {}, {}
        at = 0
        for name, j in zip(joint_names, self.joint_ids, strict=True):
            joint = self.model.joints[j]
            first = joint.idx_v
            self.q_at[name], column[name] = at, len(self.v_index)
            at += 4 if _spherical(joint) else {2: 1, 4: 3}.get(joint.nq, joint.nq)
            if joint.nv == 6:  # free flyer: Pinocchio's v is linear first
                self.v_index += [first + 3, first + 4, first + 5, first, first + 1, first + 2]
            else:  # 1-dof, planar ([vx, vy, wz] in both) and spherical (w in both)
                self.v_index += list(range(first, first + joint.nv))
        # G maps casdyn's velocities to Pinocchio's: v_pin = G v, tau = G^T tau_pin
        self.G = np.zeros((self.model.nv, len(self.v_index)))
        self.G[self.v_index, range(len(self.v_index))] = 1.0
        self.expanded = []  # (Pinocchio joint, leader's q position, multiplier, offset)
        for name, leader, multiplier, offset in expand:
            joint = self.model.joints[self.model.getJointId(name)]
            self.G[joint.idx_v, column[leader]] += multiplier
            self.expanded.append((joint, self.q_at[leader], multiplier, offset))

    def parameter_blocks(self, robot) -> list[int]:
        """Pinocchio's joint id of each of casdyn's inertial-parameter blocks
        (``robot.model.joints``; the free flyer is ``root_joint``)."""
        return [self.model.getJointId("root_joint" if robot.floating_base and i == 0
                                      else joint.name)
                for i, joint in enumerate(robot.model.joints)]

    # --- conversions ------------------------------------------------------------------------
    def q(self, q):
        """casdyn's q → Pinocchio's: continuous angles as (cos, sin), planar [x, y, theta]
        as [x, y, cos, sin], free [x, y, z, qw, qx, qy, qz] as [x, y, z, qx, qy, qz, qw],
        ball [qw, qx, qy, qz] as [qx, qy, qz, qw]."""
        q_pin, at = pin.neutral(self.model), 0
        for j in self.joint_ids:
            joint = self.model.joints[j]
            where = slice(joint.idx_q, joint.idx_q + joint.nq)
            if joint.nq == 2:  # continuous: (cos, sin)
                q_pin[where], at = (np.cos(q[at]), np.sin(q[at])), at + 1
            elif _spherical(joint):  # [qw, qx, qy, qz] as [qx, qy, qz, qw]
                part = np.asarray(q[at : at + 4], dtype=float)
                quaternion = part / np.linalg.norm(part)
                q_pin[where], at = np.r_[quaternion[1:], quaternion[0]], at + 4
            elif joint.nq == 4:  # planar
                x, y, theta = q[at : at + 3]
                q_pin[where], at = (x, y, np.cos(theta), np.sin(theta)), at + 3
            elif joint.nq == 7:  # free flyer
                part = np.asarray(q[at : at + 7], dtype=float)
                quaternion = part[3:] / np.linalg.norm(part[3:])
                q_pin[where], at = np.r_[part[:3], quaternion[1:], quaternion[0]], at + 7
            else:
                q_pin[where], at = q[at], at + 1
        assert at == len(q)
        for joint, leader, multiplier, offset in self.expanded:
            value = multiplier * q[leader] + offset
            where = slice(joint.idx_q, joint.idx_q + joint.nq)
            q_pin[where] = (np.cos(value), np.sin(value)) if joint.nq == 2 else value
        return q_pin

    def v(self, v):
        return self.G @ np.asarray(v, dtype=float)

    def from_v(self, v_pin):
        """A generalised force (or, without mimic joints, any velocity-sized vector) of
        Pinocchio's in casdyn's order."""
        return self.G.T @ np.asarray(v_pin)

    def fext(self, q, fext):
        """casdyn's base-frame fext rows → Pinocchio's per-joint local forces."""
        pin.forwardKinematics(self.model, self.data, self.q(q))
        forces = [pin.Force.Zero() for _ in range(self.model.njoints)]
        for row, frame in zip(fext, self.body_frames, strict=True):
            joint = self.model.frames[frame].parentJoint
            world = pin.Force(np.asarray(row[3:]), np.asarray(row[:3]))
            forces[joint] += self.data.oMi[joint].actInv(world)
        return pin.StdVec_Force(forces)

    # --- quantities in casdyn's conventions --------------------------------------------------
    def inverse_dynamics(self, q, qd, qdd, fext):
        tau = pin.rnea(self.model, self.data, self.q(q), self.v(qd), self.v(qdd),
                       self.fext(q, fext))
        return self.from_v(tau)

    def forward_dynamics(self, q, qd, tau, fext):
        if self.mimic:  # Pinocchio's ABA does not take mimic joints: M^-1 (tau - bias)
            q_pin, zero = self.q(q), np.zeros(self.model.nv)
            bias = pin.rnea(self.model, self.data, q_pin, self.v(qd), zero, self.fext(q, fext))
            return np.linalg.solve(self.mass_matrix(q), tau - self.from_v(bias))
        qdd = pin.aba(self.model, self.data, self.q(q), self.v(qd), self.v(tau),
                      self.fext(q, fext))
        return self.from_v(qdd)

    def mass_matrix(self, q):
        # Pinocchio 4.1's CRBA with mimic joints depends on what the Data held before (it
        # differed after an RNEA call): a fresh Data each time
        data = self.model.createData() if self.mimic else self.data
        M = pin.crba(self.model, data, self.q(q))
        M = np.triu(M) + np.triu(M, 1).T
        return self.G.T @ M @ self.G

    def body_transform(self, q, body):
        pin.framesForwardKinematics(self.model, self.data, self.q(q))
        return self.data.oMf[self.body_frames[body]].homogeneous

    def jacobian(self, q, body):
        if self.model.nv == 0:  # Pinocchio 4.1's getFrameJacobian crashes without joints
            return np.zeros((6, 0))
        q_pin = self.q(q)
        pin.computeJointJacobians(self.model, self.data, q_pin)
        pin.updateFramePlacements(self.model, self.data)
        J = pin.getFrameJacobian(self.model, self.data, self.body_frames[body],
                                 pin.LOCAL_WORLD_ALIGNED).reshape(6, -1)  # eigenpy: 6x1 -> (6,)
        return np.vstack([J[3:], J[:3]]) @ self.G

    def center_of_mass(self, q):
        """COM of every inertia, those fixed to the base included (Pinocchio keeps them
        in the universe inertia, which its centerOfMass leaves out), but on a fixed base
        not the root link's own (casdyn ignores it there, SPEC)."""
        q_pin = self.q(q)
        pin.forwardKinematics(self.model, self.data, q_pin)
        moment, total = -self.root_mass * self.root_com, -self.root_mass
        for j in range(self.model.njoints):
            inertia = self.model.inertias[j]
            moment += inertia.mass * self.data.oMi[j].act(inertia.lever)
            total += inertia.mass
        moving = pin.jacobianCenterOfMass(self.model, self.data, q_pin)
        moving_mass = self.data.mass[0]
        return moment / total, (moving * moving_mass / total) @ self.G


# casdyn's reference_frame option -> Pinocchio's ReferenceFrame
PIN = {"base": pin.LOCAL_WORLD_ALIGNED, "local": pin.LOCAL}


class TaskSpace:
    """Pinocchio's frame, centroidal, energy and contact quantities for a :class:`Reference`,
    in casdyn's conventions (SPEC "Frames, momentum, energy and contacts")."""

    def __init__(self, reference: Reference):
        self.ref = reference
        self._points: dict[tuple, int] = {}

    def frame(self, body: int, point=None) -> int:
        """Pinocchio's frame of ``body`` (an index of ``body_names``); with ``point`` a frame
        added at that point of the body (the model's Data is made anew)."""
        ref = self.ref
        base = ref.body_frames[body]
        if point is None or not np.any(point):
            return base
        key = (body, tuple(point))
        if key not in self._points:
            parent = ref.model.frames[base]
            placement = parent.placement * pin.SE3(np.eye(3), np.asarray(point, dtype=float))
            self._points[key] = ref.model.addFrame(pin.Frame(
                f"point{len(self._points)}", parent.parentJoint, base, placement,
                pin.FrameType.OP_FRAME))
            ref.data = ref.model.createData()
        return self._points[key]

    def _kinematics(self, q, qd, qdd=None):
        ref = self.ref
        a = ref.v(np.zeros(len(qd)) if qdd is None else qdd)
        pin.forwardKinematics(ref.model, ref.data, ref.q(q), ref.v(qd), a)
        pin.updateFramePlacements(ref.model, ref.data)

    def frame_velocity(self, q, qd, body, point=None, reference_frame="base"):
        frame = self.frame(body, point)
        self._kinematics(q, qd)
        v = pin.getFrameVelocity(self.ref.model, self.ref.data, frame, PIN[reference_frame])
        return np.r_[v.angular, v.linear]

    def frame_acceleration(self, q, qd, qdd, body, point=None, reference_frame="base"):
        frame = self.frame(body, point)
        self._kinematics(q, qd, qdd)
        a = pin.getFrameClassicalAcceleration(self.ref.model, self.ref.data, frame,
                                              PIN[reference_frame])
        return np.r_[a.angular, a.linear]

    def jacobian(self, q, body, point=None, reference_frame="base"):
        ref = self.ref
        frame = self.frame(body, point)
        pin.computeJointJacobians(ref.model, ref.data, ref.q(q))
        pin.updateFramePlacements(ref.model, ref.data)
        J = pin.getFrameJacobian(ref.model, ref.data, frame, PIN[reference_frame])
        return np.vstack([J[3:], J[:3]]) @ ref.G

    def jacobian_time_derivative(self, q, qd, body, point=None, reference_frame="base"):
        ref = self.ref
        frame = self.frame(body, point)
        pin.computeJointJacobiansTimeVariation(ref.model, ref.data, ref.q(q), ref.v(qd))
        pin.updateFramePlacements(ref.model, ref.data)
        dJ = pin.getFrameJacobianTimeVariation(ref.model, ref.data, frame, PIN[reference_frame])
        return np.vstack([dJ[3:], dJ[:3]]) @ ref.G

    def _about(self, linear, angular, com):
        """Pinocchio's momentum (or rate) about its centre of mass ``data.com[0]`` moved
        to casdyn's ``com`` (which on a fixed base also counts bodies fixed to the base):
        ``k_com = k_pin + (c_pin - com) x l``, angular first."""
        shift = self.ref.data.com[0] - np.asarray(com)
        return np.r_[np.asarray(angular) + np.cross(shift, linear, axis=0), linear]

    def centroidal_momentum_matrix(self, q, com):
        ref = self.ref
        A = pin.computeCentroidalMap(ref.model, ref.data, ref.q(q)) @ ref.G
        shift = ref.data.com[0] - np.asarray(com)
        return np.vstack([A[3:] + np.cross(shift, A[:3], axis=0), A[:3]])

    def centroidal_momentum(self, q, qd, com):
        ref = self.ref
        h = pin.computeCentroidalMomentum(ref.model, ref.data, ref.q(q), ref.v(qd))
        return self._about(h.linear, h.angular, com)

    def centroidal_momentum_bias(self, q, qd, com):
        ref = self.ref
        zero = np.zeros(ref.model.nv)
        pin.computeCentroidalMomentumTimeVariation(ref.model, ref.data, ref.q(q), ref.v(qd),
                                                   zero)
        return self._about(ref.data.dhg.linear, ref.data.dhg.angular, com)

    def kinetic_energy(self, q, qd):
        ref = self.ref
        return pin.computeKineticEnergy(ref.model, ref.data, ref.q(q), ref.v(qd))

    def potential_energy(self, q):
        """``-g . (sum m_i c_i)`` over every inertia Pinocchio holds, the universe's (bodies
        fixed to the base) included, but not a fixed root link's (casdyn ignores it)."""
        ref = self.ref
        com, _ = ref.center_of_mass(q)
        total = sum(ref.model.inertias[j].mass for j in range(ref.model.njoints))
        return -float(ref.model.gravity.linear @ com) * (total - ref.root_mass)

    def contact_dynamics(self, q, qd, tau, fext, contacts, bodies, damping=0.0):
        """``(qdd, lambda)`` from the KKT system assembled from Pinocchio's M, bias (with
        fext), point Jacobians and classical drifts, solved densely by NumPy."""
        ref = self.ref
        M = ref.mass_matrix(q)
        h = ref.inverse_dynamics(q, qd, np.zeros(len(qd)), fext)
        J, drift = self._constraints(q, qd, contacts, bodies)
        return _kkt(M, J, tau - h, -drift - damping * J @ qd)

    def impulse_dynamics(self, q, qd_minus, contacts, bodies, restitution=0.0):
        M = self.ref.mass_matrix(q)
        J, _ = self._constraints(q, qd_minus, contacts, bodies)
        jump, impulses = _kkt(M, J, np.zeros(len(qd_minus)), -(1 + restitution) * J @ qd_minus)
        return qd_minus + jump, impulses

    def _constraints(self, q, qd, contacts, bodies):
        rows, drifts = [], []
        zero = np.zeros(len(qd))
        for contact, body in zip(contacts, bodies, strict=True):
            frame = self.frame(body, contact.point)
            pin.computeJointJacobians(self.ref.model, self.ref.data, self.ref.q(q))
            pin.updateFramePlacements(self.ref.model, self.ref.data)
            J = pin.getFrameJacobian(self.ref.model, self.ref.data, frame,
                                     pin.LOCAL_WORLD_ALIGNED)
            J = np.vstack([J[3:], J[:3]]) @ self.ref.G
            drift = self.frame_acceleration(q, qd, zero, body, contact.point)
            keep = slice(3, 6) if contact.kind == "point" else slice(0, 6)
            rows.append(J[keep])
            drifts.append(drift[keep])
        return np.vstack(rows), np.concatenate(drifts)


def _kkt(M, J, r, b):
    """``(x, lam)`` with ``M x = r + J^T lam`` and ``J x = b``: one dense solve."""
    n, m = M.shape[0], J.shape[0]
    K = np.block([[M, -J.T], [J, np.zeros((m, m))]])
    solution = np.linalg.solve(K, np.r_[r, b])
    return solution[:n], solution[n:]


def _spherical(joint) -> bool:
    return joint.shortname() == "JointModelSpherical"


def _root_link_mass(urdf_text: str) -> tuple[float, np.ndarray]:
    """Mass and centre of mass (its frame) of the URDF's root link."""
    root = ET.fromstring(urdf_text.encode() if isinstance(urdf_text, str) else urdf_text)
    children = {joint.find("child").get("link") for joint in root.findall("joint")}
    link = next(link for link in root.findall("link") if link.get("name") not in children)
    inertial = link.find("inertial")
    if inertial is None or inertial.find("mass") is None:
        return 0.0, np.zeros(3)
    origin = inertial.find("origin")
    xyz = origin.get("xyz", "0 0 0") if origin is not None else "0 0 0"
    return float(inertial.find("mass").get("value")), np.array(xyz.split(), dtype=float)


def _reorder(reference: Reference, matrix):
    return reference.G.T @ np.asarray(matrix) @ reference.G


def rnea_derivatives(reference: Reference, q, qd, qdd):
    """(dtau/dq, dtau/dqd, dtau/dqdd) without external forces, in casdyn's order."""
    m, d = reference.model, reference.data
    pin.computeRNEADerivatives(m, d, reference.q(q), reference.v(qd), reference.v(qdd))
    M = np.triu(d.M) + np.triu(d.M, 1).T
    return tuple(_reorder(reference, x) for x in (d.dtau_dq, d.dtau_dv, M))


def aba_derivatives(reference: Reference, q, qd, tau):
    """(dqdd/dq, dqdd/dqd, dqdd/dtau) without external forces, in casdyn's order."""
    m, d = reference.model, reference.data
    pin.computeABADerivatives(m, d, reference.q(q), reference.v(qd), reference.v(tau))
    Minv = np.triu(d.Minv) + np.triu(d.Minv, 1).T
    return tuple(_reorder(reference, x) for x in (d.ddq_dq, d.ddq_dv, Minv))


def assert_agrees(robot, reference: Reference, state, kinematics: bool = True) -> None:
    """casdyn's ID (with ``fext``), M and FD at ``state = (q, qd, x, fext)`` equal the
    reference's to 1e-9, and with ``kinematics`` every body's transform and Jacobian."""
    from conftest import assert_close

    q, qd, x, fext = state
    assert_close(robot.inverse_dynamics(q, qd, x, fext),
                 reference.inverse_dynamics(q, qd, x, fext))
    assert_close(robot.mass_matrix(q), reference.mass_matrix(q))
    assert_close(robot.forward_dynamics(q, qd, x, fext),
                 reference.forward_dynamics(q, qd, x, fext))
    for index, body in enumerate(robot.body_names if kinematics else ()):
        assert_close(robot.get_transform(q, body), reference.body_transform(q, index))
        assert_close(robot.geometric_jacobian(q, body), reference.jacobian(q, index))


def assert_center_of_mass_agrees(robot, reference: Reference, q) -> None:
    """casdyn's centre of mass and its Jacobian at ``q`` equal the reference's to 1e-9."""
    from conftest import assert_close

    for actual, expected in zip(robot.center_of_mass(q), reference.center_of_mass(q),
                                strict=True):
        assert_close(actual, expected)


def assert_frame_motion_agrees(robot, task_space: TaskSpace, q, qd, qdd, body: int, point,
                               axes: str) -> None:
    """casdyn's Jacobian, frame velocity and classical acceleration of body ``body`` (an
    index of ``body_names``; ``point`` in its frame or None) in ``axes`` equal Pinocchio's
    to 1e-9."""
    from conftest import assert_close

    name = robot.body_names[body]
    assert_close(robot.geometric_jacobian(q, name, point, axes),
                 task_space.jacobian(q, body, point, axes))
    assert_close(robot.frame_velocity(q, qd, name, point, axes),
                 task_space.frame_velocity(q, qd, body, point, axes))
    assert_close(robot.frame_acceleration(q, qd, qdd, name, point, axes),
                 task_space.frame_acceleration(q, qd, qdd, body, point, axes))
