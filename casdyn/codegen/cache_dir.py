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


def built_library(source: str, name: str, folder: Path, compiler: str,
                  flags: tuple[str, ...], what: str) -> Path:
    """The shared library ``lib<name>_<key>.so`` built from the C ``source`` in ``folder``,
    ``key`` a hash of the source, the compiler and its flags: found there, or compiled now
    and moved into place at once (another process never loads half a file). A failed build
    or an unusable folder is an :class:`casdyn.errors.ExportError` naming ``what``."""
    import hashlib
    import subprocess
    import tempfile

    from ..errors import ExportError

    key = hashlib.sha256("\0".join([source, compiler, *flags]).encode()).hexdigest()[:16]
    library = folder / f"lib{name}_{key}.so"
    if library.is_file():
        return library
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=folder) as scratch:
            c_file = Path(scratch) / f"{name}.c"
            c_file.write_text(source)
            built = Path(scratch) / library.name
            run = subprocess.run([compiler, *flags, str(c_file), "-o", str(built), "-lm"],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                raise ExportError(f"compiling {what} failed ({compiler}): "
                                  f"{run.stderr.strip()[-2000:]}")
            os.replace(built, library)
    except OSError as exc:
        raise ExportError(f"the compile cache {folder} cannot be used for {what}: "
                          f"{exc.strerror or exc}; set CASDYN_CACHE to a writable "
                          "directory") from None
    return library
