"""From Functions to C: code generation, compilation and the on-disk library cache.

``export`` writes and compiles the C of a set of Functions (atomically, with flags by size);
``library_cache`` keeps compiled libraries between processes; ``loops`` and ``kernels``
give the forms of Functions whose C is best written as loops."""

from . import convex_routine  # noqa: F401  (installs the distance routine of casdyn.geometry)
