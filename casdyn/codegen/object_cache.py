"""Compiled objects of large C files kept between exports.

Compiling the C of large Functions is most of an export's time (the floating TALOS's
dynamics and derivatives: 5 s to build the Functions, 2 s to write their C, then two files
of 52,036 and 153,235 statements that GCC takes 17 and 13 s of processor time for). The C
of a Function is the same from one export to the next, so the object file compiled from it
is kept in the compile cache (:func:`casdyn.codegen.cache_dir.cache_directory`,
``objects/``), named by a hash of the C, the headers beside it, the command and the
compiler's version, with its digest (the cache's rules: :mod:`casdyn.codegen.cache_dir`),
and copied instead of compiled the next time. Only files of
:data:`CACHED_FROM` statements or more are kept (the rest compile in a second). A cache
that cannot be written is not used; nothing else changes.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from .cache_dir import trusted_folder, verified, write_file

# C files of Functions of this many instructions or more have their objects kept
CACHED_FROM = 20_000


@functools.lru_cache(maxsize=8)
def _compiler_version(cc: str) -> str:
    try:
        return subprocess.run([cc, "--version"], capture_output=True, text=True,
                              timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _directory() -> Path | None:
    try:
        directory = trusted_folder("objects")
    except OSError:
        return None
    return directory if os.access(directory, os.W_OK) else None


def key(command: list[str], source: Path) -> str:
    """The hash naming the object ``command`` (run in ``source``'s directory) makes of the C
    file ``source``: its text, the headers beside it, the command, the compiler."""
    digest = hashlib.sha256()
    digest.update(_compiler_version(command[0]).encode())
    digest.update("\0".join(command).encode())
    digest.update(source.read_bytes())
    for header in sorted(source.parent.glob("*.h")):
        digest.update(header.name.encode() + header.read_bytes())
    return digest.hexdigest()[:32]


def fetch(name: str, target: Path) -> bool:
    """Copy the kept object ``name`` to ``target``; False if there is none, or if its bytes
    do not match its digest (cut short, emptied: it is compiled again and replaced)."""
    directory = _directory()
    if directory is None or not verified(directory / f"{name}.o"):
        return False
    try:
        shutil.copyfile(directory / f"{name}.o", target)
    except OSError:
        return False
    return True


def keep(name: str, built: Path) -> None:
    """Keep the object ``built`` as ``name``, with its digest (see
    :mod:`casdyn.codegen.cache_dir`; silently not where the cache cannot be written)."""
    directory = _directory()
    if directory is None:
        return
    with contextlib.suppress(OSError):
        write_file(directory / f"{name}.o", lambda scratch: shutil.copyfile(built, scratch))
