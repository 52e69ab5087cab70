"""From Functions to machine code: the one compile path.

``forms`` gives the C-only forms of a robot's Functions (loops, linked calls); ``source``
writes the C of a set of Functions (``split`` cuts its long functions, ``simd`` writes the
batched C, ``externals`` adds the routines the graphs call); ``build`` compiles it under one
flags policy; ``store`` keeps what is compiled in one content-addressed cache
(``cache_dir``: its rules); ``library`` goes from Functions to a loaded library, through the
cache or into a directory (:func:`compile_function` compiles any ``casadi.Function``);
``robot`` picks a robot's Functions for export and ``compile()``, ``background`` compiles
them while the robot is used. The size thresholds are :mod:`casdyn.sizes`."""

from . import convex_routine  # noqa: F401  (installs the distance routine of casdyn.geometry)
from .library import compile_function

__all__ = ["compile_function"]
