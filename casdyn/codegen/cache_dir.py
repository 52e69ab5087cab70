"""Where compiled code is kept between processes, and the one rule every cached file obeys.

casdyn keeps what it compiles (:mod:`casdyn.codegen.store`: libraries and the objects of
large C files) and the C of the convex routine's entry points under one directory
(:func:`cache_directory`). Every file there obeys the same two rules:

* **Integrity.** A file is written in a scratch file beside its place, flushed to disk
  (``fsync``) and renamed into place in one step; only then is its SHA-256 written beside it
  (``<file>.sha256``, the same way). A file is used only when its bytes match that digest
  (:func:`verified`): a file cut short, emptied or overwritten is built again, never loaded —
  a truncated shared library once killed every process that mapped it (SIGBUS).
* **Ownership.** A shared library loaded from the cache runs its code in the process, so the
  cache is used only where no one else can write: the directory and every file in it must be
  owned by the user (or root) and writable by no one else, and so must every directory above
  it unless, like ``/tmp``, it has the sticky bit, which keeps others from renaming what is in
  it (the rule of OpenSSH's ``StrictModes`` and of pip's cache). A cache that breaks it is
  not used: a :class:`casdyn.errors.CacheWarning` names it and the process compiles into a
  private temporary directory instead, removed at exit. A file of another owner, or that
  others may write, in a trusted directory is built again.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import stat
import tempfile
import threading
import warnings
from collections.abc import Callable
from pathlib import Path

from ..errors import CacheWarning

DIGEST_SUFFIX = ".sha256"

_lock = threading.Lock()
_warned: set[str] = set()
_private: Path | None = None  # this process's own cache where the configured one is not safe


def cache_directory() -> Path:
    """Where casdyn keeps what it compiles (:mod:`casdyn.codegen.store`; objects and the
    convex routine's entry C in sub-directories): ``$CASDYN_CACHE``, else
    ``$XDG_CACHE_HOME/casdyn``, else ``~/.cache/casdyn``. See :func:`trusted_folder` for the
    directory actually used."""
    if os.environ.get("CASDYN_CACHE"):
        return Path(os.environ["CASDYN_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "casdyn"


def _owners() -> tuple[int, ...]:
    return (os.getuid(), 0)


def untrusted_reason(path: Path, *, directory: bool) -> str | None:
    """Why ``path`` (an existing directory, or a file) may not be trusted: owned by another
    user, writable by group or others, a link or not of its kind; None if it may."""
    if not hasattr(os, "getuid"):  # no POSIX owners (Windows): nothing to check
        return None
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) and not directory:
        return f"{path} is a symbolic link"
    if directory:
        info = os.stat(path)
    if directory and not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a directory"
    if not directory and not stat.S_ISREG(info.st_mode):
        return f"{path} is not a regular file"
    if info.st_uid not in _owners():
        return f"{path} is owned by another user (uid {info.st_uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{path} is writable by {'others' if info.st_mode & stat.S_IWOTH else 'its group'}"
    return None


def _ancestors_reason(directory: Path) -> str | None:
    """Why a directory above ``directory`` lets others replace it: owned by another user, or
    writable by others without the sticky bit (as ``/tmp`` has)."""
    if not hasattr(os, "getuid"):
        return None
    for parent in directory.resolve().parents:
        info = os.stat(parent)
        if info.st_uid not in _owners():
            return f"{parent} (above it) is owned by another user (uid {info.st_uid})"
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not info.st_mode & stat.S_ISVTX:
            return f"{parent} (above it) is writable by others and not sticky"
    return None


def _private_directory() -> Path:
    """This process's own cache directory (mode 0700 in the system's temporary directory),
    removed when the process exits."""
    global _private
    if _private is None:
        _private = Path(tempfile.mkdtemp(prefix="casdyn-cache-"))
        atexit.register(shutil.rmtree, _private, True)
    return _private


def trusted_folder(sub: str | None = None, directory: str | os.PathLike | None = None) -> Path:
    """The cache directory to use (``directory``, else :func:`cache_directory`; ``sub`` a
    sub-directory of it), created private (mode 0700) where missing. Where it, or a
    directory above it, breaks the ownership rule (module docstring), a
    :class:`casdyn.errors.CacheWarning` says so once and this process's private temporary
    directory (with ``sub``) is returned instead.

    Raises ``OSError`` where the directory cannot be created (a file in the way, no
    permission): the callers name the cache in their error."""
    root = Path(directory) if directory is not None else cache_directory()
    path = root / sub if sub else root
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    reason = untrusted_reason(root, directory=True) or \
        (untrusted_reason(path, directory=True) if sub else None) or _ancestors_reason(root)
    if reason is None:
        return path
    with _lock:
        fallback = _private_directory()
        if str(path) not in _warned:
            _warned.add(str(path))
            warnings.warn(
                f"casdyn does not use the compile cache {path}: {reason}, so a library "
                "planted there would run in this process. This process compiles into "
                f"{fallback} instead (removed at exit). Make the cache yours and writable by "
                "you only (chown; chmod go-w), or set CASDYN_CACHE to such a directory.",
                CacheWarning, stacklevel=3)
    private = fallback / sub if sub else fallback
    private.mkdir(exist_ok=True, mode=0o700)
    return private


def digest_path(path: Path) -> Path:
    """Where the SHA-256 of the cached file ``path`` is kept."""
    return path.with_name(path.name + DIGEST_SUFFIX)


def sha256(path: Path) -> str:
    """The SHA-256 of the file ``path`` (hex)."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verified(path: Path) -> bool:
    """Whether the cached file ``path`` may be used: it and its digest exist, are regular
    files of the user's (or root's) that no one else may write, and its bytes match the
    digest. Anything else (a file cut short, a missing digest, a foreign file) is False:
    the caller builds it again."""
    checksum = digest_path(path)
    try:
        if untrusted_reason(path, directory=False) or \
                untrusted_reason(checksum, directory=False):
            return False
        return checksum.read_text().strip() == sha256(path)
    except (OSError, UnicodeDecodeError):
        return False


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # a directory that cannot be opened (not on every system): best effort
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def durable_replace(source: Path, target: Path) -> None:
    """Move the file ``source`` to ``target`` in one step (same file system), its bytes on
    disk first and the rename after: another process sees the old file or the whole new
    one, even across a crash. The file is made writable by its owner only."""
    with open(source, "rb+") as file:
        os.fsync(file.fileno())
        info = os.fstat(file.fileno())
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            os.fchmod(file.fileno(), stat.S_IMODE(info.st_mode) & ~0o022)
    os.replace(source, target)
    _fsync_directory(target.parent)


def seal(path: Path) -> None:
    """Write the digest of the cached file ``path``, which is in place and on disk (see
    :func:`durable_replace`): from now on :func:`verified` accepts it."""
    write_file(digest_path(path), lambda scratch: scratch.write_text(sha256(path) + "\n"),
               sealed=False)


def write_file(path: Path, write: Callable[[Path], object], sealed: bool = True) -> None:
    """Put a cached file at ``path``: ``write(scratch)`` writes it into a scratch file beside
    ``path``, which then takes its place (:func:`durable_replace`) and, ``sealed``, gets its
    digest (:func:`seal`). Nothing is left behind where ``write`` fails."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    scratch = Path(name)
    try:
        write(scratch)
        durable_replace(scratch, path)
    finally:
        scratch.unlink(missing_ok=True)
    if sealed:
        seal(path)


def discard(path: Path) -> None:
    """Remove the cached file ``path`` and its digest (what is not there is no error)."""
    for stale in (digest_path(path), path):
        with contextlib.suppress(OSError):
            stale.unlink(missing_ok=True)
