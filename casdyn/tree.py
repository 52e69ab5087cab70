"""The user-facing :class:`RigidBodyTree`: MATLAB's ``rigidBodyTree`` operations in Python.

The class is thin: it checks arguments, fills defaults the way RST does for ``[]``, and calls
the cached CasADi Functions, numerically (NumPy out) or symbolically (CasADi out).
"""

from __future__ import annotations

import os
import pickle
import threading
from collections import OrderedDict
from functools import cached_property

import casadi as ca
import numpy as np

from . import arguments, configuration, export, identification
from .contacts import contact_list
from .errors import InputError
from .evaluator import NumericEvaluator
from .functions import FUNCTION_NAMES, SIGNATURES, VECTOR_OUTPUTS, FunctionCache
from .locking import locked_description
from .model import Model, build_model
from .names import identifier

# Batches are evaluated in chunks of at most this many samples, by Functions mapped over the
# chunk; each thread keeps the evaluators of its most recent few (Function, chunk size)
# pairs. Memory kept between calls is therefore bounded, whatever the batch sizes.
BATCH_CHUNK = 4096
MAPPED_PER_THREAD = 8


_FLOAT64 = np.dtype(float)


class _Workspace(threading.local):
    """One thread's evaluators (their buffers are Pinocchio's ``Data``): threads never share
    a buffer, so numeric calls from several threads give exactly the single-thread numbers.
    :meth:`RigidBodyTree.compile` replaces the whole workspace, in every thread at once."""

    def __init__(self):
        # call-site key -> (Function key, SX Function, evaluator of it or its compiled twin,
        # compiled entry point or None)
        self.single: dict[tuple, tuple] = {}
        # (Function key, chunk size) -> evaluator of the numeric Function mapped over it
        self.mapped: OrderedDict[tuple, NumericEvaluator] = OrderedDict()


class RigidBodyTree:
    """A robot loaded from URDF, with its dynamics as CasADi functions.

    Frames: the *base* frame is the URDF root link's frame on a fixed base, the ``world``
    frame on a floating base (``floating_base=True`` at load; ``q[0:7]`` is then the root
    link's position and quaternion ``[qw, qx, qy, qz]``, ``qd[0:6]`` its body twist). Every
    spatial quantity is ``[angular; linear]``. ``q`` (nq) and ``qd``, ``qdd``, ``tau`` (nv)
    follow ``joint_names``; ``fext`` is ``n_bodies x 6`` with one row ``[Tx Ty Tz Fx Fy Fz]``
    per entry of ``body_names``.
    """

    def __init__(self, model: Model):
        self._model = model
        self._functions = FunctionCache(model)
        self._compiled: dict[tuple, ca.Function] = {}  # Function key -> compiled twin
        # Function key -> (entry point's evaluate, index in its library), see casdyn.entry
        self._native: dict[tuple, tuple] = {}
        self._workspace = _Workspace()
        # (name, no_fext) -> compiled entry point of a call without options: shared by the
        # threads, as the entry point keeps nothing between calls (the shortest numeric path)
        self._entry_points: dict[tuple[str, bool], tuple] = {}
        self._home = _frozen(self.home_configuration())
        self._zeros = _frozen(np.zeros(model.nv))
        self._no_force = _frozen(np.zeros((len(model.bodies), 6)))
        self._pi = _frozen(identification.inertial_parameters(model))

    def __getstate__(self) -> dict:
        # Functions are rebuilt on demand after unpickling; the geometry keeps its source
        return {"model": self._model, "geometry": getattr(self, "_geometry", None)}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["model"])
        self._geometry = state.get("geometry")

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
        massless joints locked so that forward dynamics is defined. Bodies keep their names;
        mimic joints follow their locked leader."""
        model = self._model
        description = locked_description(model.description, positions)
        armature = {j.name: j.armature for j in model.joints
                    if j.armature and j.name not in positions}
        return RigidBodyTree(build_model(description, model.gravity, model.floating_base,
                                         model.joint_friction, armature,
                                         model.friction_smoothing))

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
        rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        if n is not None and (isinstance(n, bool) or not isinstance(n, int | np.integer)
                              or n < 0):
            raise InputError(f"n must be a count of configurations, got {n!r}")
        return configuration.random(self._model, rng, n=None if n is None else int(n))

    def integrate(self, q, v, dt=1.0):
        """``q ⊕ v dt`` (nq,): the configuration reached from ``q`` moving with the rates
        ``v`` (nv,) for ``dt``: plain addition for 1-dof joints, the exponential of the body
        twist for free (SE(3)) and planar (SE(2)) joints; quaternions come out with unit
        norm."""
        v = self._check("v", v)
        if not isinstance(dt, arguments.SYMBOLIC):  # a symbolic dt (Opti) multiplies as is
            dt = arguments.finite_number(dt, "dt")
        return self._call("integrate", q=q, v=v if isinstance(dt, float) and dt == 1 else v * dt)

    def difference(self, q0, q1):
        """``q1 ⊖ q0`` (nv,): the rates ``v`` with ``integrate(q0, v) == q1``."""
        return self._call("difference", q0=q0, q1=q1)

    # --- dynamics -------------------------------------------------------------------------
    def inverse_dynamics(self, q=None, qd=None, qdd=None, fext=None):
        """Joint torques ``tau = M qdd + C qd + g - sum_b J_b^T fext_b``, (nv,).

        The torque the actuators must supply to produce ``qdd`` while ``fext`` pushes on
        the bodies. Defaults: home configuration, zero rates, no external force.
        """
        return self._call("inverse_dynamics", q=q, qd=qd, qdd=qdd, fext=fext)

    def forward_dynamics(self, q=None, qd=None, tau=None, fext=None):
        """Joint accelerations ``qdd = M^-1 (tau - C qd - g + sum_b J_b^T fext_b)``, (nv,)."""
        return self._call("forward_dynamics", q=q, qd=qd, tau=tau, fext=fext)

    def mass_matrix(self, q=None):
        """The joint-space inertia matrix ``M(q)``, (nv, nv), symmetric positive definite."""
        return self._call("mass_matrix", q=q)

    def velocity_product(self, q=None, qd=None):
        """Coriolis and centrifugal torques ``C(q, qd) qd``, (nv,)."""
        return self._call("velocity_product", q=q, qd=qd)

    def gravity_torque(self, q=None):
        """The torque ``g(q)`` that holds the robot still against gravity, (nv,)."""
        return self._call("gravity_torque", q=q)

    def bias_force(self, q=None, qd=None):
        """``C(q, qd) qd + g(q)``, (nv,): inverse dynamics at zero acceleration without
        external forces (Pinocchio's ``nonLinearEffects``, adam's ``bias_force``)."""
        return self._call("bias_force", q=q, qd=qd)

    def inverse_dynamics_derivatives(self, q=None, qd=None, qdd=None, fext=None):
        """``(dtau_dq, dtau_dqd, dtau_dqdd)``, each (nv, nv): the Jacobians of
        :meth:`inverse_dynamics` (``dtau_dqdd`` is the mass matrix)."""
        return self._call("inverse_dynamics_derivatives", q=q, qd=qd, qdd=qdd, fext=fext)

    def forward_dynamics_derivatives(self, q=None, qd=None, tau=None, fext=None):
        """``(dqdd_dq, dqdd_dqd, dqdd_dtau)``, each (nv, nv): the Jacobians of
        :meth:`forward_dynamics`, i.e. the state-space linearisation an MPC needs
        (``dqdd_dtau`` is the inverse mass matrix)."""
        return self._call("forward_dynamics_derivatives", q=q, qd=qd, tau=tau, fext=fext)

    # --- kinematics -----------------------------------------------------------------------
    def geometric_jacobian(self, q, body: str, point=None, reference_frame: str = "base"):
        """``6 x nv`` Jacobian of ``body``'s frame origin (or of ``point``, 3, in its frame):
        ``[w; v] = J qd``, base-frame axes; ``reference_frame="local"``: the body's axes
        (Pinocchio's ``LOCAL``; ``"base"`` is its ``LOCAL_WORLD_ALIGNED``)."""
        return self._call("geometric_jacobian", _task(body, point, reference_frame), q=q)

    # --- identification -----------------------------------------------------------------------
    def inertial_parameters(self) -> np.ndarray:
        """``pi`` (10 per joint that moves a body, in ``model.joints`` order: ``joint_names``,
        with mimic joints at their place in the URDF): each joint's body (its child link and
        the links fixed to it) in the child link's frame, as Pinocchio's
        ``dynamicParameters``: ``[m, m cx, m cy, m cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``,
        inertia about the link origin."""
        return self._pi.copy()

    def regressor(self, q=None, qd=None, qdd=None):
        """``Y`` (nv, len(pi)): ``Y @ inertial_parameters() == inverse_dynamics(q, qd, qdd)``
        for any parameters (no external force); Pinocchio's ``computeJointTorqueRegressor``."""
        return self._call("regressor", q=q, qd=qd, qdd=qdd)

    def base_parameters(self) -> tuple[np.ndarray, np.ndarray]:
        """``(P, beta)``: the ``nb x len(pi)`` map to the identifiable combinations
        ``beta = P @ pi``, full rank, with ``Y = base_regressor(...) @ P`` exactly.

        Found numerically: regressors at 50 random states (seeded, within the limits),
        stacked, then a QR with column pivoting keeps the columns that add more than
        ``casdyn.identification.BASE_TOLERANCE`` (1e-8) of the largest column norm; every
        other column is a fixed combination of the kept ones."""
        P = self._base[1]
        return P.copy(), P @ self._pi

    def base_regressor(self, q=None, qd=None, qdd=None):
        """``Y_b`` (nv, nb): the columns of :meth:`regressor` that :meth:`base_parameters`
        keeps, so that ``Y_b @ beta == inverse_dynamics(q, qd, qdd)``."""
        independent, _ = self._base
        return self.regressor(q, qd, qdd)[..., independent]

    @cached_property
    def _base(self) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(0)
        Q = self.random_configuration(rng, n=50)  # the same draws as 50 single calls
        Qd, Qdd = rng.normal(size=(2, 50, self.nv))
        samples = self.regressor(Q, Qd, Qdd).reshape(50 * self.nv, len(self._pi))
        independent, K = identification.base_columns(samples)
        return independent, identification.base_map(samples.shape[1], independent, K)

    # --- task space ---------------------------------------------------------------------------
    def frame_velocity(self, q, qd, body: str, point=None, reference_frame: str = "base"):
        """``[w; v]`` (6,): ``body``'s angular velocity and the velocity of its frame origin
        (or of ``point``, 3, in its frame), base-frame axes (``"local"``: the body's);
        ``J qd``."""
        return self._call("frame_velocity", _task(body, point, reference_frame), q=q, qd=qd)

    def frame_acceleration(self, q, qd, qdd, body: str, point=None,
                           reference_frame: str = "base"):
        """``[dw/dt; dv/dt]`` (6,): the classical accelerations of ``body`` and of its frame
        origin (or ``point``), base-frame axes, ``J qdd + Jdot qd``; ``"local"``: the same
        vectors in the body's axes, ``J qdd + Jdot qd + [0; w x v]`` with the local ones."""
        return self._call("frame_acceleration", _task(body, point, reference_frame), q=q,
                          qd=qd, qdd=qdd)

    def jacobian_time_derivative(self, q, qd, body: str, point=None,
                                 reference_frame: str = "base"):
        """``Jdot`` (6, nv): the time derivative of :meth:`geometric_jacobian` (with the same
        ``reference_frame``) along ``qd``."""
        return self._call("jacobian_time_derivative", _task(body, point, reference_frame),
                          q=q, qd=qd)

    # --- momentum and energy --------------------------------------------------------------------
    def centroidal_momentum_matrix(self, q=None):
        """``A_G`` (6, nv): ``A_G qd = [k_G; l]``, the angular momentum about the centre of
        mass and the linear momentum, base-frame axes (angular first; Pinocchio's ``Ag`` puts
        the linear part first)."""
        return self._call("centroidal_momentum_matrix", q=q)

    def centroidal_momentum(self, q=None, qd=None):
        """``h_G = A_G qd = [k_G; l]`` (6,)."""
        return self._call("centroidal_momentum", q=q, qd=qd)

    def centroidal_momentum_bias(self, q=None, qd=None):
        """``Adot_G qd`` (6,): ``d h_G/dt = A_G qdd + Adot_G qd``."""
        return self._call("centroidal_momentum_bias", q=q, qd=qd)

    def kinetic_energy(self, q=None, qd=None):
        """``qd^T M qd / 2``, a scalar."""
        return _scalar(self._call("kinetic_energy", q=q, qd=qd))

    def potential_energy(self, q=None):
        """``-m g . c``, a scalar: zero with the centre of mass at the base origin."""
        return _scalar(self._call("potential_energy", q=q))

    # --- contacts ---------------------------------------------------------------------------------
    def contact_dynamics(self, q=None, qd=None, tau=None, contacts=(), fext=None, damping=0.0):
        """``(qdd, forces)``: forward dynamics with every contact held,
        ``M qdd + h = tau + J_c^T lambda`` and ``J_c qdd + Jdot_c qd = -damping J_c qd``.

        ``contacts``: a sequence of :class:`casdyn.Contact` (a body name stands for a point
        contact at its frame origin). ``forces`` has one row per contact, acting on the
        robot, base-frame axes: ``[fx, fy, fz]`` if every contact is a point, else
        ``[nx, ny, nz, fx, fy, fz]`` about the contact point (zero moment for a point).
        """
        return self._call("contact_dynamics", {"contacts": contact_list(contacts)}, q=q, qd=qd,
                          tau=tau, fext=fext, damping=damping)

    def impulse_dynamics(self, q=None, qd_minus=None, contacts=(), restitution=0.0):
        """``(qd_plus, impulses)``: the velocities just after the contacts close,
        ``M (qd_plus - qd_minus) = J_c^T Lambda`` and ``J_c qd_plus = -restitution J_c
        qd_minus``; ``impulses`` per contact as ``forces`` in :meth:`contact_dynamics`."""
        return self._call("impulse_dynamics", {"contacts": contact_list(contacts)}, q=q,
                          qd_minus=qd_minus, restitution=restitution)

    # --- geometry (casdyn.geometry.robot) --------------------------------------------------
    @property
    def _robot_geometry(self):
        """The robot's :class:`casdyn.geometry.robot.RobotGeometry` (read on first use)."""
        if getattr(self, "_geometry", None) is None:
            from .geometry.robot import RobotGeometry

            self._geometry = RobotGeometry(self._model)
        return self._geometry

    @property
    def collision_geometry(self) -> tuple:
        """The URDF's ``<collision>`` shapes: ``casdyn.geometry.Geometry`` per element."""
        return self._robot_geometry.collision

    @property
    def visual_geometry(self) -> tuple:
        """The URDF's ``<visual>`` shapes: ``casdyn.geometry.Geometry`` per element."""
        return self._robot_geometry.visual

    @property
    def collision_pairs(self) -> tuple[tuple[str, str], ...]:
        """Collision geometry pairs on links neither welded, adjacent nor disabled."""
        return self._robot_geometry.pairs

    def collision_distances(self, q, pairs=None, obstacles=()):
        """Signed distances (m) of ``pairs`` (default :attr:`collision_pairs`), then of each
        ``casdyn.geometry.Obstacle`` against every collision geometry: 1-D array."""
        return self._robot_geometry.distances(q, pairs, obstacles)

    def get_transform(self, q, body: str, relative_to: str | None = None):
        """4x4 pose of ``body``'s frame in ``relative_to``'s frame (default: the base).

        It maps points from ``body`` coordinates to ``relative_to`` coordinates. MATLAB's
        ``getTransform(robot, q, A, B)`` is ``get_transform(q, B, relative_to=A)``.
        """
        return self._call("get_transform", {"body": body, "relative_to": relative_to}, q=q)

    def center_of_mass(self, q=None):
        """``(com, com_jacobian)``: the centre of mass of all bodies in the base frame, (3,),
        and its Jacobian, (3, nv)."""
        return self._call("center_of_mass", q=q)

    def external_force(self, body: str, wrench, q=None):
        """An ``n_bodies x 6`` ``fext`` matrix with one wrench ``[Tx Ty Tz Fx Fy Fz]`` on ``body``.

        Without ``q``, ``wrench`` is already a base-frame spatial force (moment about the
        base origin) and is stored unchanged. With ``q``, ``wrench`` is in ``body``'s frame
        about its origin and is transformed to the base frame and origin.
        """
        index = self._model.body_index(body)
        if q is not None:
            return self._call("external_force", {"body": body}, wrench=wrench, q=q)
        wrench = arguments.vector(wrench, "wrench", 6)
        kind = arguments.symbolic_kind([wrench])
        fext = kind.zeros(self.n_bodies, 6) if kind else np.zeros((self.n_bodies, 6))
        fext[index, :] = wrench.T if kind else wrench
        return fext

    # --- C export ---------------------------------------------------------------------------
    def export_c(
        self,
        directory: str | os.PathLike,
        functions=None,
        compile: bool = True,
        *,
        compiler: str | None = None,
        flags: tuple[str, ...] | None = None,
        prefix: str | None = None,
        native: bool = False,
    ) -> dict[str, ca.Function]:
        """Export Functions as C source and header, compile them to a shared library with the
        system C compiler and load them back.

        ``functions``: a name from ``casdyn.FUNCTION_NAMES``, or a list of names and
        ``(name, options)`` pairs such as ``("geometric_jacobian", {"body": "tool0"})``, or
        None for every function — the body-specific ones for each leaf body (the tool
        frames); the contact functions only when listed with their ``contacts``. Returns
        Function name → loaded ``casadi.Function`` (the SX functions when ``compile`` is
        False). Files are ``casdyn_<robot>.c``, ``.h`` and ``libcasdyn_<robot>.so``, and
        ``casdyn_<robot>_<Function name>.c`` for each function of
        ``casdyn.export.LARGE_FUNCTION`` instructions or more (compiled in parallel, with
        lighter optimisation unless ``flags`` are given; default flags ``-O3 -fPIC
        -shared``); a failed export writes none. The C symbols are
        ``<prefix>_<Function name>`` (``prefix`` defaults to the robot's name), so that
        several robots' libraries link into one program; ``prefix=""`` keeps the plain
        names. The loaded Functions keep their names. ``native=True`` builds the library for
        this machine's processor (``-march=native``: fused multiply-add and AVX where it
        has them, up to 40 % faster for large functions) — it may then not run on another
        machine; the C files stay portable either way. :meth:`compile` always does so.
        """
        keys = self._keys(functions)
        prefix = identifier(self.name) if prefix is None else prefix
        loaded = export.export_functions(
            [self._functions.for_c(key) for key in keys], directory, f"casdyn_{self.name}",
            compile=compile, compiler=compiler, flags=flags, prefix=prefix, native=native,
        )
        if not compile:
            loaded = [self._functions.get_key(key) for key in keys]
        return {f.name(): f for f in loaded}

    def compile(self, functions=None, *, directory: str | os.PathLike | None = None):
        """Compile Functions to C once (cached on disk) and evaluate numbers with them.

        From then on numeric calls (single and batched) of those functions run compiled code
        — the fastest path from Python — while symbolic calls keep the SX graphs. Default
        ``functions``: both variants of inverse and forward dynamics, mass matrix, velocity
        product, gravity torque and centre of mass (same forms as :meth:`export_c`). The
        library is kept in ``directory`` (default :func:`casdyn.export.cache_directory`),
        named by a hash of the model, the functions and this machine's processor (the library
        is built for it, with ``-march=native``), so the next process loads it without
        compiling; a cached library that is damaged is built again. Needs a C compiler the
        first time. Returns ``self``.
        """
        if functions is None:
            functions = [(name, {"fext": f}) for name in ("inverse_dynamics", "forward_dynamics")
                         for f in (True, False)]
            functions += ["mass_matrix", "velocity_product", "gravity_torque", "center_of_mass"]
        keys = self._keys(functions)
        chosen = [self._functions.for_c(key) for key in keys]
        compiled, module = export.cached_library(chosen, f"casdyn_{self.name}",
                                                 pickle.dumps(self._model), directory,
                                                 VECTOR_OUTPUTS)
        self._compiled.update(zip(keys, compiled, strict=True))
        if module is not None:
            self._native.update((key, (module.evaluate, k)) for k, key in enumerate(keys))
        self._workspace = _Workspace()  # every thread's evaluators are made anew
        self._entry_points = {}
        return self

    @property
    def compiled_functions(self) -> tuple[str, ...]:
        """Names of the Functions whose numeric calls run compiled code."""
        return tuple(self._functions.get_key(key).name() for key in self._compiled)

    def _keys(self, functions) -> list[tuple]:
        """The keys of the distinct Functions an export list names, in its order."""
        return list(dict.fromkeys(self._functions.key(name, **opts)
                                  for name, opts in self._export_list(functions)))

    def _export_list(self, functions) -> list[tuple[str, dict]]:
        if functions is None:
            leaves = self._model.leaf_bodies()
            # contact functions need contacts: they are exported when listed with them
            options = {n: SIGNATURES[n][2] for n in FUNCTION_NAMES if "contacts" not in
                       SIGNATURES[n][2]}
            plain = [n for n in options if "body" not in options[n]]
            per_body = [n for n in options if "body" in options[n]]
            return [(n, {}) for n in plain] + [(n, {"body": b}) for b in leaves for n in per_body]
        if isinstance(functions, str) or (isinstance(functions, tuple) and len(functions) == 2
                                          and isinstance(functions[1], dict)):
            functions = [functions]  # one name or one (name, options) pair
        listed = []
        for item in functions:
            if isinstance(item, str):
                listed.append((item, {}))
            elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], dict):
                listed.append(item)
            else:
                raise InputError(
                    f"functions must hold names or (name, options) pairs, got {item!r}"
                )
        return listed

    # --- CasADi functions -----------------------------------------------------------------
    def function(self, name: str, **options) -> ca.Function:
        """The cached ``casadi.Function`` ``name`` with the SPEC's named inputs and outputs.

        Options: ``body=`` for ``geometric_jacobian``, ``get_transform`` and
        ``external_force``; ``relative_to=`` for ``get_transform``; ``fext=False`` for
        ``inverse_dynamics`` and ``forward_dynamics`` gives a variant without that input;
        ``pairs=``, ``obstacles=`` and ``jacobian=`` (True: ``(q) -> (d, J)``, J in the
        tangent space) for ``collision_distances`` (:mod:`casdyn.geometry.robot`).
        """
        if name == "collision_distances":
            return self._robot_geometry.function(**options)
        return self._functions.get(name, **options)

    def _call(self, name: str, options: dict | None = None, **values):
        """Check the arguments, fill RST's defaults and evaluate the Function ``name``.

        Numbers give NumPy results; CasADi symbols give CasADi expressions; arrays with a
        leading batch dimension N give results with that leading dimension, evaluated by the
        Function mapped over the batch (CasADi threads), not by a Python loop.
        """
        # fext=None selects the smaller variant without that input
        no_fext = values.get("fext", 0) is None
        shared = (name, no_fext) if options is None else None
        native = self._entry_points.get(shared) if shared else None
        entry = None
        if native is None:
            entry = self._thread_entry(name, options, no_fext)
            native = entry[3]
            if native is not None and shared:
                self._entry_points[shared] = native
        if native is not None:  # the compiled entry point, None for input it does not take
            evaluate, index, defaults = native
            result = evaluate(index, values, defaults)
            if result is not None:
                return result
        key, function, evaluator, _ = entry or self._thread_entry(name, options, no_fext)
        fast = self._evaluate_fast(evaluator, values)
        if fast is not None:
            return fast
        if no_fext:
            del values["fext"]
        checked = {k: self._check(k, v) for k, v in values.items()}
        inputs = {i: checked.get(i, self._default(i)) for i in function.name_in()}
        if arguments.symbolic_kind(inputs.values()) is not None:
            outputs = function.call(list(inputs.values()))
            return outputs[0] if len(outputs) == 1 else tuple(outputs)
        single = {i: 2 if i == "fext" else 1 for i in inputs}
        n = arguments.batch_size(inputs, single)
        if n is None:
            for view, value in zip(evaluator.input_views, inputs.values(), strict=True):
                view[...] = value
            return evaluator.evaluate()
        return self._evaluate_batch(key, evaluator.function, inputs, single, n)

    def _thread_entry(self, name: str, options: dict | None, no_fext: bool) -> tuple:
        """This thread's :meth:`_entry` of a call site, made on its first call."""
        evaluators = self._workspace.single
        call_key = (name, tuple(options.items()) if options else (), no_fext)
        entry = evaluators.get(call_key)
        if entry is None:
            entry = evaluators[call_key] = self._entry(name, options, no_fext)
        return entry

    def _entry(self, name: str, options: dict | None, no_fext: bool):
        """(Function key, SX Function, evaluator of the Function numbers run on, compiled
        entry point as ``(evaluate, index, defaults)`` or None)."""
        clean = {k: v for k, v in (options or {}).items() if v is not None}
        if no_fext:
            clean["fext"] = False
        key = self._functions.key(name, **clean)
        function = self._functions.get_key(key)
        numeric = self._compiled.get(key, function)
        native = self._native.get(key)
        if native is not None:
            native = (*native, tuple(self._default(i) for i in function.name_in()))
        return key, function, NumericEvaluator(numeric, VECTOR_OUTPUTS), native

    def _evaluate_fast(self, evaluator: NumericEvaluator, values: dict):
        """The buffer path for float arrays or lists of exactly the expected shapes; None for
        anything else (DM, symbols, batches, other shapes or types, non-finite values), which
        then takes the checked path and gets its precise error message there."""
        for input_name, view, shape in evaluator.inputs:
            value = values.get(input_name)
            if value is None:
                view[...] = self._default(input_name)
            elif type(value) is np.ndarray and value.shape == shape and value.dtype is _FLOAT64:
                view[...] = value
            elif shape == (1,) and isinstance(value, float | int) and not isinstance(value, bool):
                view[0] = value
            elif isinstance(value, list | tuple):
                try:
                    value = np.asarray(value)
                except (TypeError, ValueError):
                    return None
                if value.shape != shape or value.dtype.kind not in "fiu":
                    return None
                view[...] = value
            else:
                return None
        if not evaluator.inputs_finite():
            return None
        return evaluator.evaluate()

    def _evaluate_batch(self, key: tuple, function: ca.Function, inputs: dict, single: dict,
                        n: int):
        """A batch of ``n`` (possibly 0): batched inputs have a leading dimension n, the
        others are shared. Results are ``(n, rows)`` for vectors, else ``(n, rows, cols)``."""
        shapes = [function.size_out(i) for i in range(function.n_out())]
        vector = [function.name_out(i) in VECTOR_OUTPUTS and shapes[i][1] == 1
                  for i in range(function.n_out())]
        results = [np.empty((n, rows) if v else (n, rows, cols))
                   for (rows, cols), v in zip(shapes, vector, strict=True)]
        for start in range(0, n, BATCH_CHUNK):
            size = min(BATCH_CHUNK, n - start)
            evaluator = self._mapped(key, function, size)
            for view, (name, value) in zip(evaluator.input_views, inputs.items(), strict=True):
                batched = np.ndim(value) > single[name]
                part = value[start : start + size] if batched else value
                arguments.fill_batch(view, part, single[name], size)
            dense = evaluator.evaluate_dense()
            for result, out, (rows, cols) in zip(results, dense, shapes, strict=True):
                # column block k of out (rows x cols*size) is sample k
                samples = out.reshape(rows, size, cols).transpose(1, 0, 2)
                result[start : start + size] = samples[:, :, 0] if result.ndim == 2 else samples
        return results[0] if len(results) == 1 else tuple(results)

    def _mapped(self, key: tuple, function: ca.Function, size: int) -> NumericEvaluator:
        """This thread's evaluator of ``function`` mapped over ``size`` samples; the
        :data:`MAPPED_PER_THREAD` most recently used are kept. SX graphs run in CasADi
        threads; compiled code is fast enough that threads pay off only for large batches
        (measured: serial 0.33 vs threaded 0.36 us per UR5e ID sample at n = 1000)."""
        cache = self._workspace.mapped
        evaluator = cache.get((key, size))
        if evaluator is None:
            threads = min(size, os.cpu_count() or 1)
            if threads > 1 and function.is_a("SXFunction"):
                mapped = function.map(size, "thread", threads)
            else:
                mapped = function.map(size, "serial")
            evaluator = cache[(key, size)] = NumericEvaluator(mapped)
            while len(cache) > MAPPED_PER_THREAD:
                cache.popitem(last=False)
        else:
            cache.move_to_end((key, size))
        return evaluator

    def _check(self, name: str, value):
        if value is None:
            return self._default(name)
        if name == "fext":
            return arguments.matrix(value, "fext", (self.n_bodies, 6))
        size = {"q": self.nq, "q0": self.nq, "q1": self.nq, "wrench": 6, "damping": 1,
                "restitution": 1, "pi": len(self._pi)}.get(name, self.nv)
        return arguments.vector(value, name, size)

    def _default(self, name: str):
        if name in ("q", "q0", "q1"):
            return self._home
        if name in ("damping", "restitution"):
            return _ZERO
        if name == "pi":
            return self._pi
        return self._no_force if name == "fext" else self._zeros


def _point(point):
    """A point option as a hashable tuple (None: the frame origin)."""
    return None if point is None else arguments.point(point, "point")


def _task(body: str, point, reference_frame: str) -> dict:
    """The options of a task-space function."""
    return {"body": body, "point": _point(point), "reference_frame": reference_frame}


def _scalar(value):
    """A scalar Function output as a float (a batch: an (N,) array; symbols unchanged)."""
    if isinstance(value, np.ndarray):
        return float(value[0]) if value.ndim == 1 and value.shape == (1,) else value[..., 0]
    return value


def _frozen(array: np.ndarray) -> np.ndarray:
    """``array`` made read-only: the defaults are shared by every call and thread."""
    array.flags.writeable = False
    return array


_ZERO = _frozen(np.zeros(1))  # the default damping and restitution
