"""See a robot: a 3D viewer and trajectory player in the browser (SPEC "Viewer"), on viser
(the optional extra ``casdyn[viewer]``, imported when a viewer is made)."""

from .viewer import DEFAULT_MU, Viewer

__all__ = ["DEFAULT_MU", "Viewer"]
