"""Optimal control of robots, with or without contacts.

The general layer, for any robot (fixed or floating base, any feet, any actuated joints):

* :class:`ContactModel`: the robot, its feet, its motors and the stage dynamics (forward
  contact dynamics of each stance mode, stepped on the manifold; the impact of a touchdown,
  :class:`Impulse`);
* residuals (:mod:`casdyn.ocp.residuals`): state, control, frame position / orientation /
  velocity, centre of mass, centroidal momentum, contact force, foot height, and a barrier
  around any of them — each with a reference and weights that are parameters;
* :class:`Problem`: a horizon of stages with those costs and exact constraints (friction
  pyramid or cone, centre of pressure, torque, joint position and velocity limits, state
  constraints such as :class:`CollisionDistance`), and its
  :class:`Parameters` (references, weights, the stance schedule: changed without rebuilding);
* :class:`SQP`: the solver on HPIPM — :meth:`SQP.solve` to the optimum from a cold start,
  :meth:`SQP.iterate` once per control period (MPC);
* :class:`Transcription`: the same problem as one NLP for Ipopt or fatrop.

The earlier, quadruped-shaped :class:`ContactOCP` (with :class:`TrackingCost`) remains for
its inverse-dynamics NLP (accelerations and forces as variables). :func:`compiled` is
:func:`casdyn.compile_function`.
"""

from .compiled import compiled
from .constraints import CollisionDistance, Constraint, StateInequality
from .cost import TrackingCost
from .model import ContactModel, Impulse, friction_cone, friction_pyramid
from .nlp import ContactOCP
from .problem import Parameters, Problem
from .residuals import (
    Barrier,
    CenterOfMass,
    CentroidalMomentum,
    CollisionResidual,
    ContactForce,
    ControlResidual,
    FootHeight,
    FrameOrientation,
    FramePlacement,
    FramePosition,
    FrameVelocity,
    Residual,
    StateResidual,
)
from .sqp import SQP, Result
from .transcription import Transcription

__all__ = ["SQP", "Barrier", "CenterOfMass", "CentroidalMomentum", "CollisionDistance",
           "CollisionResidual",
           "Constraint", "ContactForce", "ContactModel", "ContactOCP", "ControlResidual",
           "FootHeight", "FrameOrientation", "FramePlacement", "FramePosition", "FrameVelocity",
           "Impulse", "Parameters", "Problem", "Residual", "Result", "StateInequality",
           "StateResidual", "TrackingCost", "Transcription", "compiled", "friction_cone",
           "friction_pyramid"]
