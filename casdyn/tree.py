"""The user-facing :class:`RigidBodyTree`: MATLAB's ``rigidBodyTree`` operations in Python.

The class is thin: it checks arguments, fills defaults the way RST does for ``[]``, and calls
the cached CasADi Functions, numerically (NumPy out) or symbolically (CasADi out). Each
method calls its Function by the Function's signature object, imported under the same name
from the module that builds it (``inverse_dynamics`` from
:mod:`casdyn.functions.build_dynamics`), so a reader goes from the method to the builder in
one step.
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from . import arguments
from .algorithms import configuration
from .codegen import background
from .errors import InputError
from .facade.codegen import CodegenMethods
from .facade.contacts import ContactMethods
from .facade.geometry import GeometryMethods
from .facade.identification import IdentificationMethods
from .functions.build_dynamics import (
    bias_force,
    centroidal_momentum,
    centroidal_momentum_bias,
    centroidal_momentum_matrix,
    forward_dynamics,
    forward_dynamics_derivatives,
    gravity_torque,
    inverse_dynamics,
    inverse_dynamics_derivatives,
    kinetic_energy,
    mass_matrix,
    potential_energy,
    velocity_product,
)
from .functions.build_kinematics import (
    center_of_mass,
    difference,
    external_force,
    frame_acceleration,
    frame_velocity,
    geometric_jacobian,
    get_transform,
    integrate,
    jacobian_time_derivative,
)
from .functions.build_second_order import (
    forward_dynamics_second_derivatives,
    inverse_dynamics_second_derivatives,
)
from .functions.cache import FunctionCache
from .functions.inputs import V
from .functions.registry import describe_functions
from .model import srdf
from .model.build import build_model
from .model.locking import locked_description
from .model.loops import with_loops
from .model.tree import Model
from .runtime.engine import NumericEngine

_task = arguments.task_options  # the options of a task-space function


class RigidBodyTree(IdentificationMethods, ContactMethods, GeometryMethods, CodegenMethods):
    """A robot loaded from URDF, with its dynamics as CasADi functions.

    Frames: the *base* frame is the URDF root link's frame on a fixed base, the ``world``
    frame on a floating base (``floating_base=True`` at load; ``q[0:7]`` is then the root
    link's position and quaternion ``[qw, qx, qy, qz]``, ``qd[0:6]`` its body twist). Every
    spatial quantity is ``[angular; linear]``. ``q`` (nq) and ``qd``, ``qdd``, ``tau`` (nv)
    follow ``joint_names``; ``fext`` is ``n_bodies x 6`` with one row ``[Tx Ty Tz Fx Fy Fz]``
    per entry of ``body_names``.
    """

    def __init__(self, model: Model, srdf_data: srdf.SRDF | None = None, geometry=None):
        """``geometry``: the robot's collision and visual geometry
        (:class:`casdyn.model.geometry.RobotGeometry` or MJCF's), fixed for the robot's life;
        None reads its URDF's on first use. The loaders give it."""
        self._model = model
        self._srdf = srdf_data
        self._named = configuration.named(srdf_data, model) if srdf_data else {}
        self._functions = FunctionCache(model, geometry)
        self._engine = NumericEngine(model, self._functions)
        if background.enabled():  # compiled in the background after a while
            self._engine.counter = background.CallCounter(self._engine)
        self._call = self._engine.call

    def __getstate__(self) -> dict:
        # Functions are rebuilt on demand after unpickling; the geometry keeps its source
        return {"model": self._model, "srdf": self._srdf,
                "geometry": self._functions.stages.given_geometry}

    def __setstate__(self, state: dict) -> None:
        RigidBodyTree.__init__(self, state["model"], state.get("srdf"), state.get("geometry"))

    # --- description ----------------------------------------------------------------------
    @property
    def model(self) -> Model:
        """The immutable kinematic tree behind this robot."""
        return self._model

    @property
    def name(self) -> str:
        return self._model.name

    @property
    def base_name(self) -> str:
        """The fixed frame: the URDF root link on a fixed base, ``"world"`` on a floating
        base (``"universe"`` if the root link itself is called ``world``); not a body."""
        return self._model.base_name

    @property
    def floating_base(self) -> bool:
        """Whether the root link is free (joint ``floating_base``) or welded to the world."""
        return self._model.floating_base

    @property
    def base_description(self) -> str:
        """One line saying whether the base is fixed or free."""
        if self.floating_base:
            return (f"floating base: free joint 'floating_base' from {self.base_name!r} to "
                    f"root link {self.body_names[0]!r}")
        return (f"fixed base: root link {self.base_name!r} welded to the world; "
                "floating_base=True for a free robot")

    @property
    def body_names(self) -> tuple[str, ...]:
        """Every link but the root, in URDF document order (the rows of ``fext``)."""
        return self._model.body_names

    @property
    def joint_names(self) -> tuple[str, ...]:
        """The movable joints in URDF document order (the order of ``q``)."""
        return self._model.joint_names

    @property
    def mimic_joints(self) -> tuple[tuple[str, str, float, float], ...]:
        """``(name, leader, multiplier, offset)`` of each URDF ``<mimic>`` joint: it has no
        coordinate of its own (``q = multiplier * q_leader + offset``) and is not in
        ``joint_names``; its generalised force goes, times the multiplier, to the leader."""
        joints = self._model.joints
        return tuple((j.name, joints[j.mimic.leader].name, j.mimic.multiplier, j.mimic.offset)
                     for j in joints if j.mimic is not None)

    @property
    def named_configurations(self) -> dict[str, np.ndarray]:
        """The SRDF's ``group_state``s (``load_urdf(..., srdf=)``; shipped robots carry their
        own): name -> ``q`` (nq,) in this robot's layout, joints the state does not name at
        home. Empty without an SRDF, and after :meth:`locked` (its ``q`` is another)."""
        return {name: q.copy() for name, q in self._named.items()}

    @property
    def disabled_collision_pairs(self) -> tuple[tuple[str, str], ...]:
        """The SRDF's ``disable_collisions`` link pairs ``(link1, link2)``, as written."""
        return self._srdf.disable_collisions if self._srdf else ()

    @property
    def nq(self) -> int:
        return self._model.nq

    @property
    def nv(self) -> int:
        return self._model.nv

    @property
    def n_bodies(self) -> int:
        return len(self._model.bodies)

    @property
    def gravity(self) -> np.ndarray:
        """Gravitational acceleration in the base frame, (3,)."""
        return self._model.gravity.copy()

    @property
    def mass(self) -> float:
        """Total mass of all bodies (on a fixed base, the root link excluded)."""
        return self._model.base_inertia.mass + sum(j.inertia.mass for j in self._model.joints)

    @property
    def position_limits(self) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)``, each (nq,); continuous, planar and free joints have infinite
        limits."""
        return configuration.position_limits(self._model)

    @property
    def effort_limits(self) -> np.ndarray:
        """``|tau|`` bounds from the URDF ``<limit effort>``, (nv,); inf where none is given."""
        return configuration.per_velocity(self._model, lambda joint: joint.effort)

    @property
    def velocity_limits(self) -> np.ndarray:
        """``|qd|`` bounds from the URDF ``<limit velocity>``, (nv,); inf where none is given."""
        return configuration.per_velocity(self._model, lambda joint: joint.velocity)

    def __repr__(self) -> str:
        return (
            f"<RigidBodyTree {self.name!r}: {len(self.joint_names)} joints (nq={self.nq}, "
            f"nv={self.nv}), {self.n_bodies} bodies, {self.base_description}>"
        )

    def locked(self, positions: dict) -> RigidBodyTree:
        """A new robot with the joints named in ``positions`` fixed at those positions (a
        number for a 1-dof joint; ``[x, y, theta]`` planar; ``[x, y, z, qw, qx, qy, qz]``
        floating), as Pinocchio's ``buildReducedModel``: e.g. a gripper's fingers locked, or
        massless joints locked so that forward dynamics is defined. Bodies keep their names
        and their collision and visual geometry; mimic joints follow their locked leader."""
        model = self._model
        if model.description is None:
            raise InputError(f"robot {self.name!r} has no description to lock joints in")
        description = locked_description(model.description, positions)
        armature = {j.name: j.armature for j in model.joints
                    if j.armature and j.name not in positions}
        reduced = build_model(description, model.gravity, model.floating_base,
                              model.joint_friction, armature, model.friction_smoothing)
        if model.loops:
            reduced = with_loops(reduced, model.loops)
        # the collision and visual geometry stay with their links
        geometry = self._functions.stages.given_geometry
        return RigidBodyTree(reduced, None,
                             geometry.for_model(reduced) if geometry is not None else None)

    # --- configurations -------------------------------------------------------------------
    def home_configuration(self) -> np.ndarray:
        """Every joint at 0, clamped into its limits, (nq,); free joints at the identity
        (unit quaternion ``[1, 0, 0, 0]``)."""
        return configuration.neutral(self._model)

    def random_configuration(self, rng: np.random.Generator | int | None = None,
                             n: int | None = None) -> np.ndarray:
        """Uniform within the limits, (nq,); joints without finite limits that rotate take
        angles in [-pi, pi]; free joints a uniformly random rotation and a position in
        ``[-1, 1]^3``, planar joints ``x, y`` in ``[-1, 1]``. ``rng`` is a
        ``numpy.random.Generator`` or a seed. With ``n``, a batch of n, (n, nq), drawn at
        once."""
        rng = arguments.generator(rng)
        if n is not None and (isinstance(n, bool) or not isinstance(n, int | np.integer)
                              or n < 0):
            raise InputError(f"n must be a count of configurations, got {n!r}")
        return configuration.random(self._model, rng, n=None if n is None else int(n))

    def integrate(self, q, v, dt=1.0):
        """``q ⊕ v dt`` (nq,): the configuration reached from ``q`` moving with the rates
        ``v`` (nv,) for ``dt``: plain addition for 1-dof joints, the exponential of the body
        twist for free (SE(3)) and planar (SE(2)) joints; quaternions come out with unit
        norm."""
        v = self._engine.check(V.name, v)
        if not isinstance(dt, arguments.SYMBOLIC):  # a symbolic dt (Opti) multiplies as is
            dt = arguments.finite_number(dt, "dt")
        return self._call(integrate, q=q, v=v if isinstance(dt, float) and dt == 1 else v * dt)

    def difference(self, q0, q1):
        """``q1 ⊖ q0`` (nv,): the rates ``v`` with ``integrate(q0, v) == q1``."""
        return self._call(difference, q0=q0, q1=q1)

    # --- dynamics -------------------------------------------------------------------------
    def inverse_dynamics(self, q=None, qd=None, qdd=None, fext=None):
        """Joint torques ``tau = M qdd + C qd + g - sum_b J_b^T fext_b``, (nv,).

        The torque the actuators must supply to produce ``qdd`` while ``fext`` pushes on
        the bodies. Defaults: home configuration, zero rates, no external force.
        """
        return self._call(inverse_dynamics, q=q, qd=qd, qdd=qdd, fext=fext)

    def forward_dynamics(self, q=None, qd=None, tau=None, fext=None):
        """Joint accelerations ``qdd = M^-1 (tau - C qd - g + sum_b J_b^T fext_b)``, (nv,)."""
        return self._call(forward_dynamics, q=q, qd=qd, tau=tau, fext=fext)

    def mass_matrix(self, q=None):
        """The joint-space inertia matrix ``M(q)``, (nv, nv), symmetric positive definite."""
        return self._call(mass_matrix, q=q)

    def velocity_product(self, q=None, qd=None):
        """Coriolis and centrifugal torques ``C(q, qd) qd``, (nv,)."""
        return self._call(velocity_product, q=q, qd=qd)

    def gravity_torque(self, q=None):
        """The torque ``g(q)`` that holds the robot still against gravity, (nv,)."""
        return self._call(gravity_torque, q=q)

    def bias_force(self, q=None, qd=None):
        """``C(q, qd) qd + g(q)``, (nv,): inverse dynamics at zero acceleration without
        external forces (Pinocchio's ``nonLinearEffects``, adam's ``bias_force``)."""
        return self._call(bias_force, q=q, qd=qd)

    def inverse_dynamics_derivatives(self, q=None, qd=None, qdd=None, fext=None):
        """``(dtau_dq, dtau_dqd, dtau_dqdd)``, each (nv, nv): the Jacobians of
        :meth:`inverse_dynamics` (``dtau_dqdd`` is the mass matrix)."""
        return self._call(inverse_dynamics_derivatives, q=q, qd=qd, qdd=qdd, fext=fext)

    def forward_dynamics_derivatives(self, q=None, qd=None, tau=None, fext=None):
        """``(dqdd_dq, dqdd_dqd, dqdd_dtau)``, each (nv, nv): the Jacobians of
        :meth:`forward_dynamics`, i.e. the state-space linearisation an MPC needs
        (``dqdd_dtau`` is the inverse mass matrix)."""
        return self._call(forward_dynamics_derivatives, q=q, qd=qd, tau=tau, fext=fext)

    def inverse_dynamics_second_derivatives(self, q=None, qd=None, qdd=None, fext=None):
        """``(d2tau_dq2, d2tau_dqd2, d2tau_dq_dqd, d2tau_dqdd_dq)``, each ``(nv, nv, nv)``
        for numbers: ``[i, j, k]`` is the derivative along the ``k``-th coordinate (``q``: in
        the tangent space) of :meth:`inverse_dynamics_derivatives`' ``[i, j]``
        (``d2tau_dqdd_dq[i, j, k] = dM_ij/dq_k``). Symbolic arguments give the registered
        Function's ``nv x nv^2`` matrices (column ``k nv + j`` holds ``[:, j, k]``)."""
        return _tensors(self._call(inverse_dynamics_second_derivatives, q=q, qd=qd, qdd=qdd,
                                   fext=fext), self.nv)

    def forward_dynamics_second_derivatives(self, q=None, qd=None, tau=None, fext=None):
        """The four tensors of :meth:`inverse_dynamics_second_derivatives` for
        :meth:`forward_dynamics`' ``qdd``, ``tau`` in place of ``qdd``."""
        return _tensors(self._call(forward_dynamics_second_derivatives, q=q, qd=qd, tau=tau,
                                   fext=fext), self.nv)

    # --- kinematics -----------------------------------------------------------------------
    def geometric_jacobian(self, q, body: str, point=None, reference_frame: str = "base"):
        """``6 x nv`` Jacobian of ``body``'s frame origin (or of ``point``, 3, in its frame):
        ``[w; v] = J qd``, base-frame axes; ``reference_frame="local"``: the body's axes
        (Pinocchio's ``LOCAL``; ``"base"`` is its ``LOCAL_WORLD_ALIGNED``)."""
        return self._call(geometric_jacobian, _task(body, point, reference_frame), q=q)


    # --- task space ---------------------------------------------------------------------------
    def frame_velocity(self, q, qd, body: str, point=None, reference_frame: str = "base"):
        """``[w; v]`` (6,): ``body``'s angular velocity and the velocity of its frame origin
        (or of ``point``, 3, in its frame), base-frame axes (``"local"``: the body's);
        ``J qd``."""
        return self._call(frame_velocity, _task(body, point, reference_frame), q=q, qd=qd)

    def frame_acceleration(self, q, qd, qdd, body: str, point=None,
                           reference_frame: str = "base"):
        """``[dw/dt; dv/dt]`` (6,): the classical accelerations of ``body`` and of its frame
        origin (or ``point``), base-frame axes, ``J qdd + Jdot qd``; ``"local"``: the same
        vectors in the body's axes, ``J qdd + Jdot qd + [0; w x v]`` with the local ones."""
        return self._call(frame_acceleration, _task(body, point, reference_frame), q=q,
                          qd=qd, qdd=qdd)

    def jacobian_time_derivative(self, q, qd, body: str, point=None,
                                 reference_frame: str = "base"):
        """``Jdot`` (6, nv): the time derivative of :meth:`geometric_jacobian` (with the same
        ``reference_frame``) along ``qd``."""
        return self._call(jacobian_time_derivative, _task(body, point, reference_frame),
                          q=q, qd=qd)

    # --- momentum and energy --------------------------------------------------------------------
    def centroidal_momentum_matrix(self, q=None):
        """``A_G`` (6, nv): ``A_G qd = [k_G; l]``, the angular momentum about the centre of
        mass and the linear momentum, base-frame axes (angular first; Pinocchio's ``Ag`` puts
        the linear part first)."""
        return self._call(centroidal_momentum_matrix, q=q)

    def centroidal_momentum(self, q=None, qd=None):
        """``h_G = A_G qd = [k_G; l]`` (6,)."""
        return self._call(centroidal_momentum, q=q, qd=qd)

    def centroidal_momentum_bias(self, q=None, qd=None):
        """``Adot_G qd`` (6,): ``d h_G/dt = A_G qdd + Adot_G qd``."""
        return self._call(centroidal_momentum_bias, q=q, qd=qd)

    def kinetic_energy(self, q=None, qd=None):
        """``qd^T M qd / 2``, a scalar."""
        return arguments.scalar(self._call(kinetic_energy, q=q, qd=qd))

    def potential_energy(self, q=None):
        """``-m g . c``, a scalar: zero with the centre of mass at the base origin."""
        return arguments.scalar(self._call(potential_energy, q=q))



    def get_transform(self, q, body: str, relative_to: str | None = None):
        """4x4 pose of ``body``'s frame in ``relative_to``'s frame (default: the base).

        It maps points from ``body`` coordinates to ``relative_to`` coordinates. MATLAB's
        ``getTransform(robot, q, A, B)`` is ``get_transform(q, B, relative_to=A)``.
        """
        return self._call(get_transform, {"body": body, "relative_to": relative_to}, q=q)

    def center_of_mass(self, q=None):
        """``(com, com_jacobian)``: the centre of mass of all bodies in the base frame, (3,),
        and its Jacobian, (3, nv)."""
        return self._call(center_of_mass, q=q)

    def external_force(self, body: str, wrench, q=None):
        """An ``n_bodies x 6`` ``fext`` matrix with one wrench ``[Tx Ty Tz Fx Fy Fz]`` on ``body``.

        Without ``q``, ``wrench`` is already a base-frame spatial force (moment about the
        base origin) and is stored unchanged. With ``q``, ``wrench`` is in ``body``'s frame
        about its origin and is transformed to the base frame and origin. A batch of
        wrenches (N, 6), with or without ``q``, gives (N, n_bodies, 6).
        """
        index = self._model.body_index(body)
        if q is not None:
            return self._call(external_force, {"body": body}, wrench=wrench, q=q)
        return arguments.fext_row(index, self.n_bodies, wrench)


    # --- CasADi functions -----------------------------------------------------------------
    def function(self, name: str, **options) -> ca.Function:
        """The cached ``casadi.Function`` ``name`` (an SX graph built once per option set)
        with named inputs and outputs, behind the numeric method of the same name.

        Call it by keyword (``f(q=q, qd=qd)``; inputs left out are zero; a dict of the
        outputs) or with every input in order (a list of the outputs). ``fext`` inputs are
        ``n_bodies x 6``, one row per entry of :attr:`body_names`. Options: ``body=`` a body
        name; ``relative_to=`` the frame ``T`` is in; ``point=(x, y, z)`` a point in the
        body's frame; ``reference_frame=`` ``"base"`` or ``"local"`` axes; ``fext=False``
        the variant without ``fext``; ``parameters=True`` an extra input ``pi``
        (:meth:`inertial_parameters`); ``dt=`` the step of ``integrate``; ``contacts=``
        :class:`casdyn.Contact` s held by the contact functions; ``pairs=``, ``obstacles=``
        and ``jacobian=`` (``True`` or ``"ad"``) those of ``collision_distances``
        (:meth:`collision_distances`, :mod:`casdyn.geometry`). The Functions, their
        inputs -> outputs and options with their defaults:
        """
        return self._functions.get(name, **options)


RigidBodyTree.function.__doc__ = (RigidBodyTree.function.__doc__ or "") + describe_functions(
    " " * 8)  # one line per Function


def _tensors(results, nv: int):
    """Second-order derivatives as ``(..., nv, nv, nv)`` arrays from the registered
    Function's ``nv x nv^2`` layout, of the kind the call returned (NumPy, or a GPU batch's
    CuPy, PyTorch or JAX arrays); symbolic results as they are."""
    return tuple(r if isinstance(r, (ca.SX, ca.MX, ca.DM)) else
                 r.reshape(*r.shape[:-2], nv, nv, nv).swapaxes(-1, -2) for r in results)
