"""The contact and closed-loop part of :class:`casdyn.RigidBodyTree`
(:mod:`casdyn.algorithms.contacts`, :mod:`casdyn.algorithms.loops`)."""

from __future__ import annotations

from .. import arguments
from ..algorithms.contacts import contact_list
from ..functions.build_contacts import (
    contact_dynamics,
    contact_dynamics_derivatives,
    impulse_dynamics,
)
from ..functions.build_loops import loop_dynamics, loop_inverse_dynamics, loop_residual
from ..model.loops import Loop
from .base import RobotParts


class ContactMethods(RobotParts):
    """Dynamics with contacts held, impacts, and closed kinematic loops."""

    def contact_dynamics(self, q=None, qd=None, tau=None, contacts=(), fext=None, damping=0.0):
        """``(qdd, forces)``: forward dynamics with every contact held,
        ``M qdd + h = tau + J_c^T lambda`` and ``J_c qdd + Jdot_c qd = -damping J_c qd``.

        ``contacts``: a sequence of :class:`casdyn.Contact` (a body name stands for a point
        contact at its frame origin). ``forces`` has one row per contact, acting on the
        robot, base-frame axes: ``[fx, fy, fz]`` if every contact is a point, else
        ``[nx, ny, nz, fx, fy, fz]`` about the contact point (zero moment for a point).
        """
        return self._call(contact_dynamics, {"contacts": contact_list(contacts)}, q=q, qd=qd,
                          tau=tau, fext=fext, damping=damping)

    def contact_dynamics_derivatives(self, q=None, qd=None, tau=None, contacts=(), fext=None,
                                     damping=0.0):
        """``(dqdd_dq, dqdd_dqd, dqdd_dtau, dforces_dq, dforces_dqd, dforces_dtau)``: the
        Jacobians of :meth:`contact_dynamics` (Pinocchio's
        ``computeConstraintDynamicsDerivatives``), analytical; ``q`` in the tangent space,
        each ``nv`` columns. ``dqdd_*`` have ``nv`` rows, ``dforces_*`` one row per entry of
        ``forces`` read row by row (contact ``k``'s components first to last)."""
        return self._call(contact_dynamics_derivatives, {"contacts": contact_list(contacts)},
                          q=q, qd=qd, tau=tau, fext=fext, damping=damping)

    def impulse_dynamics(self, q=None, qd_minus=None, contacts=(), restitution=0.0):
        """``(qd_plus, impulses)``: the velocities just after the contacts close,
        ``M (qd_plus - qd_minus) = J_c^T Lambda`` and ``J_c qd_plus = -restitution J_c
        qd_minus``; ``impulses`` per contact as ``forces`` in :meth:`contact_dynamics`."""
        return self._call(impulse_dynamics, {"contacts": contact_list(contacts)}, q=q,
                          qd_minus=qd_minus, restitution=restitution)

    # --- closed loops ------------------------------------------------------------------------
    @property
    def loops(self) -> tuple[Loop, ...]:
        """The closed kinematic loops held as constraints (:class:`casdyn.Loop`): MJCF
        ``connect`` and ``weld`` equalities, or ``load_urdf(..., loops=[...])``. They are held
        by :meth:`loop_dynamics`, :meth:`loop_inverse_dynamics`, :meth:`contact_dynamics` and
        :meth:`impulse_dynamics`; the other dynamics functions are the open tree's."""
        return self._model.loops

    def loop_dynamics(self, q=None, qd=None, tau=None, fext=None):
        """``(qdd, forces)``: forward dynamics with every loop held,
        ``M qdd + h = tau + J^T lambda`` and ``J qdd + Jdot qd = 0`` with ``J = J_a - J_b``
        the loops' relative Jacobians; ``forces`` one row per loop, acting on ``body_a``
        (and opposite on ``body_b``), base-frame axes: ``[fx, fy, fz]`` if every loop holds
        a point, else ``[nx, ny, nz, fx, fy, fz]`` about the held point."""
        return self._call(loop_dynamics, q=q, qd=qd, tau=tau, fext=fext)

    def loop_inverse_dynamics(self, q=None, qd=None, qdd=None, fext=None, *, actuated=()):
        """``(tau, forces)``: the forces of the ``actuated`` joints (names; ``tau`` is zero
        on the others) and the loop forces that give the motion ``qdd`` (which must keep the
        loops closed): ``ID(q, qd, qdd) = tau + J^T lambda``, solved by least squares
        (exact for a consistent ``qdd``; the least-norm solution at a singular
        configuration); ``forces`` as in :meth:`loop_dynamics`. Redundant loops
        (``ModelError``) and actuation that leaves the forces undetermined (``InputError``)
        are refused (docs: "Floating base and joints")."""
        options = {"actuated": arguments.names(actuated, "actuated")}
        return self._call(loop_inverse_dynamics, options, q=q, qd=qd, qdd=qdd, fext=fext)

    def loop_residual(self, q=None):
        """``(residual, jacobian)``: the loops' closure errors stacked (m,), base-frame axes
        (``p_a - p_b``; a ``"6d"`` loop first ``R_a log(R_b^T R_a)``, the rotation vector
        between the held frames), and their derivative in the tangent space (m x nv), for
        optimisation (the constraint ``residual == 0``)."""
        return self._call(loop_residual, q=q)
