"""Building blocks of optimal control problems for robots in contact.

* :class:`ContactModel`: a floating-base robot with feet, its stage dynamics (forward contact
  dynamics stepped on the manifold, or inverse dynamics with force variables), friction
  cones;
* :class:`TrackingCost`: least-squares costs in the tangent space;
* :class:`ContactOCP`: the whole problem as one NLP laid out for fatrop (or Ipopt);
* :class:`RealTimeIteration`: one Gauss-Newton QP per control period on HPIPM;
* :func:`compiled`: :func:`casdyn.compile_function` under the name it has here.
"""

from .compiled import compiled
from .cost import TrackingCost
from .model import ContactModel, friction_cone, friction_pyramid
from .nlp import ContactOCP
from .rti import RealTimeIteration

__all__ = ["ContactModel", "ContactOCP", "RealTimeIteration", "TrackingCost", "compiled",
           "friction_cone", "friction_pyramid"]
