"""Stage functions of a robot (fixed or floating base) that may hold the ground with some of
its bodies, from casdyn's public Functions.

State ``x = [q; v]`` (``nq + nv``), its tangent ``dx = [dq; dv]`` (``2 nv``): ``q`` moves on
the configuration manifold by ``robot.integrate`` and deviations are measured by
``robot.difference`` (base twist in the base frame, angular first, as casdyn's free joint).
The motors drive a selection of the joints, ``tau = S^T u`` with ``u`` of size ``nu`` (by
default every joint but a floating base: ``tau = [0_6; u]``).

Two ways to write the dynamics at a knot with the feet in ``stance`` held:

* forward contact dynamics: ``(qdd, f) = contact_dynamics(q, v, S^T u)`` (the feet's
  accelerations held at ``-damping J v``), stepped by semi-implicit Euler
  (``v+ = v + dt qdd``, ``q+ = q ⊕ dt v+``) — :meth:`ContactModel.step`;
* at a touchdown, the impulse that stops the landing feet (restitution 0, no time passes:
  ``q+ = q``, ``v+`` the velocity after the impact) — :meth:`ContactModel.impulse`, the mode
  :class:`Impulse` of a :class:`casdyn.ocp.Problem`;
* inverse dynamics with the forces as variables:
  ``M a + h - S^T u - J_c^T f = 0`` and ``J_c a + Jdot_c v + damping J_c v = 0`` —
  :meth:`ContactModel.inverse_dynamics_residual` and :meth:`ContactModel.foot_acceleration`.

Forces are the feet's point forces on the robot, world axes (the ground's normal is +z); with
``contact="6d"`` (flat feet such as a humanoid's soles) each foot's is the wrench ``[n; f]``
about its origin, world axes, and its rows add the centre of pressure inside the sole.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import casadi as ca
import numpy as np

from casdyn import Contact
from casdyn.errors import InputError, unknown_name

from .checks import nonnegative, number

CONES = ("pyramid", "exact")


def friction_pyramid(force, mu: float | ca.SX | ca.MX):
    """The four rows ``[mu fz - fx, mu fz + fx, mu fz - fy, mu fz + fy]`` (each ``>= 0``
    inside the linearised cone; together they imply ``fz >= 0``) of a force ``[fx, fy, fz]``
    (world axes, +z the ground's normal). ``mu``: a finite number ``>= 0`` (a negative one
    would allow only pulling on the ground), or a CasADi symbol."""
    return _pyramid(force, _friction(mu))


def friction_cone(force, mu: float | ca.SX | ca.MX):
    """The exact (second-order) cone as two rows ``>= 0``: ``fz`` and
    ``mu^2 fz^2 - fx^2 - fy^2`` (smooth, unlike ``mu fz - |f_t|``; both rows non-negative
    is ``|f_t| <= mu fz``). ``mu`` as in :func:`friction_pyramid`."""
    return _cone(force, _friction(mu))


def _friction(mu):
    # a symbol (a parameter of the problem) cannot be checked before it has a value
    return mu if isinstance(mu, ca.SX | ca.MX) else number("mu", mu)


def _pyramid(force, mu):
    fx, fy, fz = force[0], force[1], force[2]
    return ca.vertcat(mu * fz - fx, mu * fz + fx, mu * fz - fy, mu * fz + fy)


def _cone(force, mu):
    fx, fy, fz = force[0], force[1], force[2]
    return ca.vertcat(fz, mu**2 * fz**2 - fx**2 - fy**2)


@dataclass(frozen=True)
class Impulse:
    """A mode of :class:`casdyn.ocp.Problem` where the ``stance`` feet (one flag per foot, or
    the held feet's names; at least one) touch down: the interval is the impact, not
    ``dt`` of motion (:meth:`ContactModel.impulse`), as Crocoddyl's
    ``ActionModelImpulseFwdDynamics``."""

    stance: object


class ContactModel:
    """A ``robot`` whose ``feet`` (body names, point contacts at each body's origin; none for
    an arm or a robot in flight) can hold the ground.

    ``actuated``: the names of the joints the motors drive, in the order of ``u`` (default:
    every joint but a floating base); a floating base is never actuated.

    ``dt`` is the knot interval (s, finite, ``> 0``), ``damping`` (1/s, ``>= 0``) the held
    feet's velocity feedback in the contact constraint (Baumgarte), ``mu`` the friction
    coefficient (``>= 0``). ``contact``: "point" (a force per foot) or "6d" (a wrench per
    foot: the foot held flat), then ``sole`` is the half length and half width (m, ``>= 0``,
    along the foot frame's x and y, centred on its origin) that the centre of pressure must
    stay within (the soles lying flat on the ground). Each foot is named once; anything else
    is an :class:`casdyn.errors.InputError` naming the argument.
    """

    def __init__(self, robot, feet: Sequence[str] = (), *, dt: float, damping: float = 0.0,
                 mu: float = 0.7, contact: str = "point", sole: tuple[float, float] = (0.1, 0.05),
                 actuated: Sequence[str] | None = None):
        self.feet = _feet(feet, robot.body_names)
        self.dt = number("dt", dt, positive=True)
        self.damping, self.mu = number("damping", damping), number("mu", mu)
        if contact not in ("point", "6d"):
            raise InputError(f"contact must be 'point' or '6d', got {contact!r}")
        length, width = nonnegative("sole", sole, 2, scalar=False)
        self.contact, self.sole = contact, (float(length), float(width))
        self.force_size = 3 if contact == "point" else 6
        self.rows_per_foot = 4 if contact == "point" else 8
        self.robot = robot
        self.nq, self.nv = robot.nq, robot.nv
        self.actuated, self.actuated_dofs = _actuated(robot, actuated)
        self.nu, self.nx, self.ndx = len(self.actuated_dofs), robot.nq + robot.nv, 2 * robot.nv
        selection = np.zeros((self.nu, self.nv))
        selection[np.arange(self.nu), self.actuated_dofs] = 1.0
        self.selection = selection  # S, (nu, nv): tau = S^T u
        self._integrate = robot.function("integrate")
        self._difference = robot.function("difference")
        self._steps: dict[tuple, ca.Function] = {}  # by stance (and "impulse")
        self._dynamics: dict[tuple, ca.Function] = {}  # by stance (and "derivatives")

    # -- the state manifold ------------------------------------------------------------
    def integrate_state(self, x, dx):
        """``x ⊕ dx``: ``q`` by ``robot.integrate``, ``v`` by addition."""
        return ca.vertcat(self._integrate(x[: self.nq], dx[: self.nv]),
                          x[self.nq :] + dx[self.nv :])

    def difference_state(self, x0, x1):
        """``x1 ⊖ x0``, the ``dx`` with ``x0 ⊕ dx = x1``."""
        return ca.vertcat(self._difference(x0[: self.nq], x1[: self.nq]),
                          x1[self.nq :] - x0[self.nq :])

    def torque(self, u):
        """``S^T u`` (``nv``): the actuated joints' torques, zero on the others."""
        if isinstance(u, np.ndarray):
            return self.selection.T @ u
        return ca.mtimes(ca.sparsify(ca.DM(self.selection.T)), u)

    # -- kinematics --------------------------------------------------------------------
    def foot_positions(self, q):
        """The feet's origins in the world, ``3 x n_feet``."""
        return ca.horzcat(*[self.robot.get_transform(q, foot)[:3, 3] for foot in self.feet])

    def stance_mask(self, stance, *, name: str = "stance") -> tuple[bool, ...]:
        """``stance`` (one flag per foot: 0, 1, True or False; or the held feet's names) as
        a tuple of bools. ``name``: the argument that ``stance`` came from, for the error
        when it is neither."""
        if isinstance(stance, str) or not isinstance(stance, Sequence | np.ndarray) or \
                (isinstance(stance, np.ndarray) and stance.ndim != 1):
            raise InputError(f"{name} must be one flag per foot ({len(self.feet)}) or the held "
                             f"feet's names, got {stance!r}")
        if len(stance) > 0 and all(isinstance(s, str) for s in stance):
            for s in stance:
                if s not in self.feet:
                    raise InputError(f"{name}: {unknown_name('foot', s, self.feet)}")
            return tuple(foot in stance for foot in self.feet)
        for s in stance:
            # bool(2) or bool("FL_FOOT") would hold a foot that nobody asked to hold
            if isinstance(s, str) or not isinstance(s, bool | np.bool_ | numbers.Real) or \
                    s not in (0, 1):
                raise InputError(f"{name}: flags must be 0, 1, True or False, got {s!r}")
        if len(stance) != len(self.feet):
            raise InputError(f"{name}: expected {len(self.feet)} flags (one per foot), "
                             f"got {len(stance)}")
        return tuple(bool(s) for s in stance)

    # -- forward contact dynamics -------------------------------------------------------
    def step(self, stance) -> ca.Function:
        """``step(x, u) -> (x_next, forces)``: one semi-implicit Euler step of ``dt`` with the
        ``stance`` feet held; ``forces`` is ``force_size x n_feet`` (world axes, zero for the
        swing feet) at the step's start."""
        mask = self.stance_mask(stance)
        if mask not in self._steps:
            x, u = ca.SX.sym("x", self.nx), ca.SX.sym("u", self.nu)
            qdd, forces = self.dynamics(mask)(x, u)
            self._steps[mask] = ca.Function(f"step_{_tag(mask)}", [x, u],
                                            [self.advance(x, qdd), forces],
                                            ["x", "u"], ["x_next", "forces"])
        return self._steps[mask]

    def advance(self, x, qdd):
        """The state after one semi-implicit Euler step of ``dt`` from ``x`` with the
        accelerations ``qdd`` (``nv``): ``v+ = v + dt qdd``, ``q+ = q ⊕ dt v+``."""
        q, v = x[: self.nq], x[self.nq :]
        v_next = v + self.dt * qdd
        return ca.vertcat(self._integrate(q, self.dt * v_next), v_next)

    def dynamics(self, stance) -> ca.Function:
        """``(x, u) -> (qdd, forces)``: the accelerations (``nv``) and the feet's forces
        (``force_size x n_feet``, world axes, zero for the swing feet) with the ``stance``
        feet held (their accelerations held at ``-damping J v``); free motion with none."""
        mask = self.stance_mask(stance)
        if mask not in self._dynamics:
            x, u = ca.SX.sym("x", self.nx), ca.SX.sym("u", self.nu)
            q, v = x[: self.nq], x[self.nq :]
            held = self._held(mask)
            if held:
                qdd, f = self.robot.function("contact_dynamics", contacts=held, fext=False)(
                    q, v, self.torque(u), self.damping)
            else:
                qdd = self.robot.function("forward_dynamics", fext=False)(q, v, self.torque(u))
                f = ca.SX(0, self.force_size)
            self._dynamics[mask] = ca.Function(
                f"dynamics_{_tag(mask)}", [x, u], [qdd, self._spread(mask, f.T)],
                ["x", "u"], ["qdd", "forces"])
        return self._dynamics[mask]

    def dynamics_derivatives(self, stance) -> ca.Function:
        """``(x, u) -> (dqdd, dforces)``: the derivatives of :meth:`dynamics`' ``qdd``
        (``nv`` rows) and of its ``forces`` read column by column (foot ``k``'s
        ``force_size`` components at rows ``k force_size`` onwards) along
        ``(x ⊕ dx, u + du)``, by ``w = [dx; du]`` (``2 nv + nu`` columns): casdyn's
        analytical derivatives of the contact dynamics (or of the forward dynamics in flight),
        not AD through the solve."""
        mask = self.stance_mask(stance)
        key = ("derivatives", mask)
        if key in self._dynamics:
            return self._dynamics[key]
        x, u = ca.SX.sym("x", self.nx), ca.SX.sym("u", self.nu)
        q, v = x[: self.nq], x[self.nq :]
        held = self._held(mask)
        if held:
            derivatives = self.robot.function("contact_dynamics_derivatives", contacts=held,
                                              fext=False)
            *d_qdd, df_dq, df_dv, df_dtau = derivatives(q, v, self.torque(u), self.damping)
            # a point's force rows come as the contact's rows of forces: three per foot
            d_forces = self._along_w(df_dq, df_dv, df_dtau)
        else:
            d_qdd = self.robot.function("forward_dynamics_derivatives", fext=False)(
                q, v, self.torque(u))
            d_forces = ca.SX(0, self.ndx + self.nu)
        d_qdd = self._along_w(*d_qdd)
        self._dynamics[key] = ca.Function(f"dynamics_derivatives_{_tag(mask)}", [x, u],
                                          [d_qdd, self._spread_rows(mask, d_forces)],
                                          ["x", "u"], ["dqdd", "dforces"])
        return self._dynamics[key]

    def switched(self, derivatives: bool = False) -> ca.Function:
        """Every stance in one graph: ``(x, u, held) -> (qdd, forces)``, :meth:`dynamics`
        with the feet whose flag of ``held`` (one per foot, 0 or 1) is 1 held; with
        ``derivatives``, ``(x, u, held) -> (dqdd, dforces)`` as
        :meth:`dynamics_derivatives`. The same numbers as those of the stance's own graph
        (the robot's ``switched`` contact Functions), from one graph the size of all feet
        held: an optimal control problem compiles one instead of one per stance mode."""
        if not self.feet:
            raise InputError("switched dynamics need feet (ContactModel(robot, feet, ...))")
        key = ("switched", derivatives)
        if key not in self._dynamics:
            x, u = ca.SX.sym("x", self.nx), ca.SX.sym("u", self.nu)
            flags = ca.SX.sym("held", len(self.feet))
            q, v = x[: self.nq], x[self.nq :]
            tree = self.robot.model
            by_body = ca.SX.zeros(len(tree.bodies))  # the Functions' input: a flag per body
            for k, foot in enumerate(self.feet):
                by_body[tree.body_index(foot)] = flags[k]
            mask = tuple(True for _ in self.feet)
            name = "contact_dynamics_derivatives" if derivatives else "contact_dynamics"
            outputs = self.robot.function(name, contacts=self._held(mask), fext=False,
                                          switched=True)(q, v, self.torque(u), self.damping,
                                                         by_body)
            if derivatives:
                outputs = [self._along_w(*outputs[:3]), self._along_w(*outputs[3:])]
                names = ["dqdd", "dforces"]
            else:
                outputs, names = [outputs[0], outputs[1].T], ["qdd", "forces"]
            self._dynamics[key] = ca.Function(
                "dynamics_derivatives_switched" if derivatives else "dynamics_switched",
                [x, u, flags], outputs, ["x", "u", "held"], names)
        return self._dynamics[key]

    def _along_w(self, d_q, d_v, d_tau):
        """Derivatives by ``q`` (tangent space), ``v`` and ``tau`` as the columns by ``w =
        [dx; du]``: ``[d_q, d_v, d_tau S^T]``."""
        return ca.horzcat(d_q, d_v, ca.mtimes(d_tau, ca.sparsify(ca.DM(self.selection.T))))

    def impulse(self, stance) -> ca.Function:
        """``impulse(x, u) -> (x_next, forces)``, :meth:`step`'s signature for the touchdown
        of the ``stance`` feet (at least one): ``x_next = [q; v+]`` with ``v+`` the velocity
        just after the impact that stops the held feet (``robot.function("impulse_dynamics")``,
        restitution 0), ``forces`` their impulses (N s; ``force_size x n_feet``, world axes,
        zero on the others). ``u`` has no effect: a control residual weighted at this knot
        keeps it determined (its optimum is then its reference)."""
        mask = self.stance_mask(stance)
        if not any(mask):
            raise InputError("an impulse needs at least one foot touching down, got "
                             f"{list(stance)!r}")
        key = ("impulse", mask)
        if key not in self._steps:
            x, u = ca.SX.sym("x", self.nx), ca.SX.sym("u", self.nu)
            q, v = x[: self.nq], x[self.nq :]
            dynamics = self.robot.function("impulse_dynamics", contacts=self._held(mask))
            v_plus, impulses = dynamics(q, v, 0.0)
            self._steps[key] = ca.Function(f"impulse_{_tag(mask)}", [x, u],
                                           [ca.vertcat(q, v_plus), self._spread(mask, impulses.T)],
                                           ["x", "u"], ["x_next", "forces"])
        return self._steps[key]

    def _held(self, mask: tuple[bool, ...]) -> list[Contact]:
        return [Contact(foot, self.contact) for foot, h in zip(self.feet, mask, strict=True)
                if h]

    def _spread(self, mask: tuple[bool, ...], held_forces):
        """The held feet's force columns (``force_size x n_held``) as ``force_size x
        n_feet``, zero columns for the swing feet."""
        return ca.reshape(self._spread_rows(mask, ca.vec(held_forces)), self.force_size,
                          len(self.feet))

    def _spread_rows(self, mask: tuple[bool, ...], rows):
        """The held feet's derivative rows (``force_size`` per held foot) placed at their
        feet's rows of ``force_size * n_feet``, zero rows for the swing feet."""
        size, spread = self.force_size, ca.SX.zeros(self.force_size * len(self.feet),
                                                   rows.size2())
        columns = [k for k, h in enumerate(mask) if h]
        for i, k in enumerate(columns):
            spread[k * size : (k + 1) * size, :] = rows[i * size : (i + 1) * size, :]
        return spread

    # -- inverse dynamics with force variables --------------------------------------------
    def inverse_dynamics_residual(self, q, v, a, u, forces):
        """``M a + h - S^T u - sum_i J_i^T f_i`` (``nv``): zero where ``a`` and the feet's
        ``forces`` (``force_size x n_feet``, world axes) are consistent with the torques
        ``u``."""
        fext = 0
        for k, foot in enumerate(self.feet):
            p = self.robot.get_transform(q, foot)[:3, 3]
            if self.contact == "point":
                n, f = 0, forces[:, k]
            else:
                n, f = forces[:3, k], forces[3:, k]
            # a wrench [n; f] about p: the base-frame spatial force [n + p x f; f] (casdyn's
            # fext rows)
            fext = fext + self.robot.external_force(foot, ca.vertcat(n + ca.cross(p, f), f).T)
        return self.robot.inverse_dynamics(q, v, a, fext) - self.torque(u)

    def foot_acceleration(self, q, v, a, stance):
        """The held feet's ``J a + Jdot v + damping J v`` (``3 x n_held``, world axes; all six
        rows ``[w; v]`` with ``contact="6d"``): zero is the contact constraint of
        :meth:`step`."""
        mask = self.stance_mask(stance)
        first = 3 if self.contact == "point" else 0
        rows = []
        for foot, h in zip(self.feet, mask, strict=True):
            if h:
                acc = self.robot.frame_acceleration(q, v, a, foot)[first:]
                vel = self.robot.frame_velocity(q, v, foot)[first:]
                rows.append(acc + self.damping * vel)
        return ca.horzcat(*rows) if rows else ca.SX(6 - first, 0)

    def contact_rows(self, force, cone: str = "pyramid"):
        """One held foot's rows ``>= 0``: its force in the friction pyramid (four rows) or the
        exact ``cone`` (two rows, :func:`friction_cone`); with ``contact="6d"`` (``force =
        [n; f]``, world axes, the sole flat) four more: the centre of pressure within the
        sole, ``|n_x| <= w fz`` and ``|n_y| <= l fz``."""
        if cone not in CONES:
            raise InputError(f"cone must be 'pyramid' or 'exact', got {cone!r}")
        f = force if self.contact == "point" else force[3:]
        rows = _pyramid(f, self.mu) if cone == "pyramid" else _cone(f, self.mu)
        if self.contact == "6d":
            length, width = self.sole
            n = force[:3]
            rows = ca.vertcat(rows, width * f[2] - n[0], width * f[2] + n[0],
                              length * f[2] - n[1], length * f[2] + n[1])
        return rows

    # -- a standing guess -------------------------------------------------------------------
    def standing_torques(self, q) -> np.ndarray:
        """Torques ``u`` that hold ``q`` still on all feet with equal vertical forces (least
        squares of ``S^T u = g - J_c^T f``; without feet, ``S^T u = g``)."""
        q = np.asarray(q, dtype=float)
        g = np.asarray(self.robot.gravity_torque(q), dtype=float).ravel()
        if self.feet:
            weight = self.robot.mass * -self.robot.gravity[2]
            f = np.array([0.0, 0.0, weight / len(self.feet)])
            for foot in self.feet:
                g = g - np.asarray(self.robot.geometric_jacobian(q, foot))[3:].T @ f
        return np.linalg.lstsq(self.selection.T, g, rcond=None)[0]

    def standing_forces(self) -> np.ndarray:
        """The weight shared by all feet, ``force_size x n_feet`` (world axes)."""
        forces = np.zeros((self.force_size, len(self.feet)))
        forces[-1] = self.robot.mass * -self.robot.gravity[2] / len(self.feet)
        return forces


def _tag(mask: tuple[bool, ...]) -> str:
    return "".join("1" if h else "0" for h in mask)


def legged(model: ContactModel, what: str) -> None:
    """Refuse, for the quadruped-shaped classes, a model that is not a floating base on
    feet with every joint actuated (they take ``u`` as ``tau[6:]``)."""
    expected = np.arange(6, model.nv)
    if not (model.robot.floating_base and model.feet and
            np.array_equal(model.actuated_dofs, expected)):
        raise InputError(f"{what} takes a floating base on feet with every joint actuated; "
                         "casdyn.ocp.Problem and SQP take any robot")


def _actuated(robot, actuated) -> tuple[tuple[str, ...], np.ndarray]:
    """(joint names, their velocity indices) of the motors, in the order of ``u``."""
    joints = [j for j in robot.model.coordinate_joints
              if not (robot.floating_base and j is robot.model.coordinate_joints[0])]
    by_name = {j.name: j for j in joints}
    if actuated is None:
        names = [j.name for j in joints]
    else:
        if isinstance(actuated, str) or not isinstance(actuated, Sequence | np.ndarray) or \
                not all(isinstance(name, str) for name in actuated):
            raise InputError(f"actuated must be a sequence of joint names, got {actuated!r}")
        names = list(actuated)
        for k, name in enumerate(names):
            if name not in by_name:
                raise InputError(f"actuated: {unknown_name('joint', name, list(by_name))}")
            if name in names[:k]:
                raise InputError(f"actuated: {name!r} is listed twice")
    dofs = [by_name[name].idx_v + i for name in names for i in range(by_name[name].type.nv)]
    return tuple(names), np.array(dofs, dtype=int)


def _feet(feet, bodies: Sequence[str]) -> tuple[str, ...]:
    """``feet`` as a tuple of distinct body names, else an InputError naming the foot."""
    if isinstance(feet, str) or not isinstance(feet, Sequence | np.ndarray) or \
            not all(isinstance(foot, str) for foot in feet):
        raise InputError(f"feet must be a sequence of body names, got {feet!r}")
    for k, foot in enumerate(feet):
        if foot not in bodies:
            raise InputError(f"feet: {unknown_name('body', foot, bodies)}")
        if foot in feet[:k]:
            # two columns of forces on one body: the same contact twice
            raise InputError(f"feet: {foot!r} is listed twice")
    return tuple(str(foot) for foot in feet)
