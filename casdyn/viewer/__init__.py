"""See a robot: a 3D viewer and trajectory player in the browser (docs: "The viewer"), on viser
(the optional extra ``casdyn[viewer]``, imported when a viewer is made)."""

from .viewer import DEFAULT_MU, Viewer

__all__ = ["DEFAULT_MU", "Viewer"]
