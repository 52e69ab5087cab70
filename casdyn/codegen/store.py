"""The one cache of compiled code: content-addressed, under the cache's rules.

Everything casdyn compiles is kept here between processes: the libraries of
:meth:`casdyn.RigidBodyTree.compile` and of the background builds, those of
:func:`casdyn.compile_function` (the OCP's horizons, the examples' MPC steps), of external
routines such as the convex-mesh distance routine, and the objects of large C files of
exports. One key rule names them all (:func:`key`): a hash of the C text (every file the
compiler reads, and the versions of the outside headers it includes), the compiler's
commands (its flags), the compiler's version and this machine's processor
(:func:`cpu_identity`), so that a shared cache never hands one machine code built for
another's instructions, and a library is never mistaken for one built from other C. One
integrity rule keeps them (:mod:`casdyn.codegen.cache_dir`): written whole, then sealed
with a SHA-256 checked before every use; a cache others can write is not used.

Libraries are ``lib<name>_<key>.so`` in the cache directory (or a ``directory=`` of the
caller's), objects ``objects/<key>.o``.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import casadi as ca

from ..errors import ExportError
from ..runtime import entry
from ..runtime.batch import BatchKernel
from .cache_dir import cache_directory, discard, trusted_folder, verified, write_file


@functools.lru_cache(maxsize=1)
def cpu_identity() -> str:
    """This machine's processor and the instruction sets it has (Linux: from
    ``/proc/cpuinfo``), part of every key: a cache shared by different machines never hands
    one a library built for another's instructions."""
    try:
        first = Path("/proc/cpuinfo").read_text().split("\n\n")[0]
    except OSError:
        first = ""
    fields: dict[str, str] = {}
    for line in first.splitlines():
        name, colon, value = line.partition(":")
        if colon:
            fields.setdefault(name.strip(), value.strip())
    keys = ("vendor_id", "model name", "flags", "CPU implementer", "CPU part", "Features")
    found = [f"{key}: {fields[key]}" for key in keys if key in fields]
    return "\n".join([platform.machine(), platform.processor(), *found])


@functools.lru_cache(maxsize=8)
def compiler_version(cc: str) -> str:
    """What ``cc --version`` says (empty where it says nothing)."""
    try:
        return subprocess.run([cc, "--version"], capture_output=True, text=True,
                              timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def key(texts: Iterable[str | bytes], commands: Sequence[Sequence[str]]) -> str:
    """The name of what ``commands`` build from ``texts`` (the C they read): a hash of
    both, the compiler's version (the first command's program) and the processor."""
    digest = hashlib.sha256()
    for part in (compiler_version(commands[0][0]), cpu_identity(),
                 *("\0".join(command) for command in commands)):
        digest.update(part.encode() + b"\0\1")
    for text in texts:
        digest.update((text.encode() if isinstance(text, str) else text) + b"\0\1")
    return digest.hexdigest()[:32]


def folder(directory: str | os.PathLike | None = None) -> Path:
    """The directory libraries are kept in: ``directory``, else the cache directory (see
    :func:`casdyn.codegen.cache_dir.trusted_folder`); an :class:`ExportError` that names it
    where it cannot be used."""
    chosen = directory is not None
    configured = Path(directory) if chosen else cache_directory()
    where = str(configured) if chosen or "CASDYN_CACHE" not in os.environ else \
        f"{configured} ($CASDYN_CACHE)"
    try:
        used = trusted_folder(None, configured)
        tempfile.TemporaryFile(dir=used).close()  # writable?
    except OSError as exc:
        blocker = next((p for p in (configured, *configured.parents)
                        if p.exists() and not p.is_dir()), None)
        reason = f"{blocker} is a file" if blocker else exc.strerror or str(exc)
        raise ExportError(
            f"the compile cache {where} cannot be used: {reason}; set CASDYN_CACHE to a "
            "writable directory or pass directory="
        ) from None
    return used


def library_path(directory: str | os.PathLike, basename: str) -> Path:
    """Where the library ``basename`` is in ``directory`` (``lib<basename>.so``)."""
    suffix = ".dylib" if sys.platform == "darwin" else ".so"
    return Path(directory) / f"lib{basename}{suffix}"


def keep(path: Path, built: Path) -> None:
    """Put the file ``built`` in the cache as ``path``, whole, then sealed."""
    write_file(path, lambda scratch: shutil.copyfile(built, scratch))


# --- objects -----------------------------------------------------------------------------
def _objects() -> Path | None:
    try:
        directory = trusted_folder("objects")
    except OSError:
        return None
    return directory if os.access(directory, os.W_OK) else None


def object_key(command: list[str], source: Path) -> str:
    """The key of the object ``command`` (run in ``source``'s directory) makes of the C
    file ``source``: its text and the headers beside it, by :func:`key`."""
    headers = sorted(source.parent.glob("*.h"))
    return key([source.read_bytes(), *(h.name.encode() + h.read_bytes() for h in headers)],
               [command])


def fetch_object(name: str, target: Path) -> bool:
    """Copy the kept object ``name`` to ``target``; False if there is none, or if its bytes
    do not match its digest (cut short, emptied: it is compiled again and replaced)."""
    directory = _objects()
    if directory is None or not verified(directory / f"{name}.o"):
        return False
    try:
        shutil.copyfile(directory / f"{name}.o", target)
    except OSError:
        return False
    return True


def keep_object(name: str, built: Path) -> None:
    """Keep the object ``built`` as ``name`` (silently not where the cache cannot be
    written: the export goes on)."""
    directory = _objects()
    if directory is not None:
        with contextlib.suppress(OSError):
            keep(directory / f"{name}.o", built)


# --- loading -----------------------------------------------------------------------------
def load(path: Path, symbols: list[str], with_entry: bool = False,
         batches: Sequence[tuple[str, ca.Function]] = (), private: bool = False):
    """``(Functions, module, kernels)``: the functions ``symbols`` of the compiled library
    ``path`` as ``casadi.Function``s, its module :mod:`casdyn.runtime.entry` (None unless
    ``with_entry``) and a :class:`casdyn.runtime.batch.BatchKernel` for each ``(symbol,
    Function)`` of ``batches``. An :class:`ExportError` where the loader refuses it.

    A library of the cache is loaded from its place: its name is its content's, and a
    graph that calls it, serialised, names that path for another process. ``private``
    loads a library that may be rebuilt at the same path in this process (an export's)
    through a private copy under a fresh name, removed again once loaded: the dynamic
    loader hands back an already loaded library for a path (or file) it has seen.
    """
    fd, copy_path = -1, None
    for scratch_dir in (path.parent, None) if private else ():  # beside it, else the temp
        try:
            fd, copy_path = tempfile.mkstemp(prefix=".casdyn-load-", suffix=path.suffix,
                                             dir=scratch_dir)
            break
        except OSError:
            continue
    else:
        if private:
            raise ExportError(f"cannot make a temporary copy of {path} to load it")
    try:
        if copy_path is not None:
            with os.fdopen(fd, "wb") as copy, open(path, "rb") as library:
                shutil.copyfileobj(library, copy)
        loaded = copy_path or str(path)
        functions = [ca.external(symbol, loaded) for symbol in symbols]
        module = entry.load(Path(loaded)) if with_entry else None
        kernels = []
        if batches:
            handle = ctypes.CDLL(loaded)  # the library CasADi opened, by the same path
            kernels = [BatchKernel(handle, symbol, function) for symbol, function in batches]
        return functions, module, kernels
    except (OSError, RuntimeError, ImportError, AttributeError) as exc:
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise ExportError(f"loading the compiled library {path} failed: {reason}") from None
    finally:
        if copy_path is not None:
            os.unlink(copy_path)


def cached(path: Path, build: Callable[[], Path], load_it: Callable[[Path], object]):
    """``load_it(path)`` of the library ``path`` of the cache: as found where its bytes match
    its digest and the loader takes it, else built now (``build()`` returns the built file,
    on the same file system, which then takes its place whole and is sealed) and loaded. A
    library whose bytes match but that the loader refuses (built by another compiler's
    runtime, say) is built again once."""
    if verified(path):
        try:
            return load_it(path)
        except ExportError:
            discard(path)  # bytes as written but unusable here: build it again
    built = build()
    write_file(path, lambda scratch: os.replace(built, scratch))
    return load_it(path)
