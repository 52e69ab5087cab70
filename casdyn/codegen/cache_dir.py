"""Where compiled code is kept between processes (one place for every cache of casdyn)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_directory() -> Path:
    """Where :meth:`casdyn.RigidBodyTree.compile` keeps libraries (and the compiled-object
    and OCP caches their sub-directories): ``$CASDYN_CACHE``, else
    ``$XDG_CACHE_HOME/casdyn``, else ``~/.cache/casdyn``."""
    if os.environ.get("CASDYN_CACHE"):
        return Path(os.environ["CASDYN_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "casdyn"
