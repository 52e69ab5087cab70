"""Building C: the compiler, the one flags policy, and the parallel build of a library.

**The flags policy.** A C file's flags follow from the size of the graphs it holds
(:mod:`casdyn.sizes`): :data:`SMALL_FLAGS` below :data:`casdyn.sizes.OWN_C_FILE`
instructions, :data:`LARGE_FLAGS` from there, :data:`HUGE_FLAGS` from
:data:`casdyn.sizes.LOWEST_OPTIMISATION` (in a quick build, :data:`QUICK_FLAGS` for every
large file); the batched C (:mod:`casdyn.codegen.simd`) as a
large file, plus :data:`casdyn.codegen.simd.FLAGS`. Compilers other than GCC get plain
``-O2`` and ``-O1`` for the two last. Every command of a library built for this machine's
processor carries :data:`NATIVE_FLAG`: :meth:`casdyn.RigidBodyTree.compile`, the background
builds and :func:`casdyn.compile_function` build that way where the compiler takes it,
``export_c`` only when asked (``native=True``), the convex-mesh routine never (its library
may serve a graph deserialised elsewhere). Every route takes these flags; ``flags=``
(``export_c``, :func:`casdyn.compile_function`) replaces them for every file. Why each
choice: ``docs/performance.md``, "Why these thresholds".

**The build.** One command for one file; else each file to an object in parallel (the
largest first), the large ones' objects kept in the cache (:mod:`casdyn.codegen.store`),
then one link.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .. import sizes
from ..errors import ExportError, InputError
from ..progress import SILENT, Progress
from . import simd, store
from .source import CFile

COMPILERS = ("cc", "gcc", "clang")

SHARED = ("-fPIC", "-shared")
SMALL_FLAGS = ("-O3", *SHARED)
# long straight-line code: -O2 without the two passes that take its time for nothing
LARGE_FLAGS = ("-O2", "-fno-tree-pre", "-fno-code-hoisting", "-fvect-cost-model=dynamic",
               *SHARED)
HUGE_FLAGS = ("-O1", "-ftree-loop-vectorize", *SHARED)
# a quick build's large files (flags_for's quick): -Og, GCC's -O1 without the passes that
# cost time on straight-line code and gain nothing there (the solo12 OCP's stage
# linearisation, 178,195 instructions: 10.8 s against 17.2 s to compile at -O1 and 24.6 s at
# the large flags, 77 us a call against 92 and 65; the floating TALOS's FD derivatives: 7.3
# against 12.1 s, 50 us at both)
QUICK_FLAGS = ("-Og", *SHARED)
# other compilers get plain -O2 and -O1
GCC_ONLY = ("-fno-tree-pre", "-fno-code-hoisting", "-fvect-cost-model=dynamic",
            "-ftree-loop-vectorize")
# fused multiply-add and AVX: a 24-link chain's FD derivatives run in 25 us instead of 36
NATIVE_FLAG = "-march=native"
# the long functions of large files are cut (casdyn.codegen.split) in portable libraries
# only: built for the processor the uncut code was 10 % faster
CUT_PORTABLE = True


def find_compiler(compiler: str | None = None) -> str:
    """The C compiler to use: ``compiler``, else ``$CC``, else the first of cc, gcc, clang."""
    candidates = [compiler] if compiler else [os.environ["CC"]] if os.environ.get("CC") else []
    for name in candidates or COMPILERS:
        path = shutil.which(name)
        if path:
            return path
    looked = ", ".join(candidates or COMPILERS)
    raise ExportError(
        f"no C compiler found (looked for {looked}); install one (e.g. gcc) or set CC, "
        "or export with compile=False to get the C source only"
    )


def is_gcc(cc: str) -> bool:
    """Whether the compiler is GCC (``cc`` is often GCC under another name)."""
    version = store.compiler_version(cc)
    return "Free Software Foundation" in version and "clang" not in version


@functools.lru_cache(maxsize=8)
def native_flags(cc: str) -> tuple[str, ...]:
    """``(NATIVE_FLAG,)`` where the compiler ``cc`` accepts it, else ``()``."""
    try:
        result = subprocess.run([cc, NATIVE_FLAG, "-E", "-x", "c", "-"], input="",
                                capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return ()
    return (NATIVE_FLAG,) if result.returncode == 0 else ()


def flags_for(size: int, cc: str, quick: bool = False) -> tuple[str, ...]:
    """The policy's flags for a C file of graphs of ``size`` instructions, by ``cc``;
    ``quick`` (a build someone waits for before they can start: the OCP's stages) gives a
    large file :data:`QUICK_FLAGS`, compiled in about half the time."""
    if quick and size >= sizes.OWN_C_FILE:
        chosen = QUICK_FLAGS
    else:
        chosen = HUGE_FLAGS if size >= sizes.LOWEST_OPTIMISATION else \
            LARGE_FLAGS if size >= sizes.OWN_C_FILE else SMALL_FLAGS
    return chosen if is_gcc(cc) else tuple(f for f in chosen if f not in GCC_ONLY)


def jit_options(native: bool = True) -> dict:
    """CasADi's ``jit_options`` for its "shell" compiler under this policy (``nlpsol``'s
    ``jit``, whose Functions CasADi compiles itself): the compiler of
    :func:`find_compiler`, the huge flags (an NLP's exact Hessian is the largest graph
    there is) for this processor where ``native``."""
    cc = find_compiler()
    chosen = [f for f in flags_for(sizes.LOWEST_OPTIMISATION, cc) if f not in SHARED]
    return {"compiler": cc, "flags": chosen + list(native_flags(cc) if native else ()),
            "verbose": False}


def checked_flags(flags) -> tuple[str, ...] | None:
    """The compiler's ``flags`` as a tuple of strings: a sequence of strings, or one string
    split as a shell would (``"-O2 -fPIC -shared"``); None stays None (the policy)."""
    if flags is None:
        return None
    if isinstance(flags, str):
        try:
            return tuple(shlex.split(flags))
        except ValueError as exc:
            raise InputError(f"flags {flags!r} cannot be split into words: {exc}") from None
    try:
        listed = tuple(flags)
    except TypeError:
        listed = None
    if listed is None or not all(isinstance(flag, str) for flag in listed):
        raise InputError(f"flags must be a string or a sequence of strings (compiler "
                         f"arguments such as '-O2'), got {flags!r}")
    return listed


# (command, the file it builds from, its work, whether its object is kept in the cache)
Command = tuple[list[str], str, int, bool]


def commands(cc: str, files: Sequence[CFile], library: str,
             flags: tuple[str, ...] | None = None,
             extra: tuple[str, ...] = (), quick: bool = False) -> list[Command]:
    """The commands that build ``library`` from the C ``files`` (run in their directory):
    ``flags`` for every file (None: :func:`flags_for` each, ``quick`` as it says), ``extra``
    added to each command. One command for one file; else each file to an object, the
    largest first, then the link (its own command, last)."""

    def file_flags(c_file: CFile) -> tuple[str, ...]:
        # a quick build counts the small functions' file by all it holds
        size = max(c_file.size, c_file.work) if quick else c_file.size
        chosen = (*flags, *extra) if flags is not None else (*flags_for(size, cc, quick), *extra)
        return (*chosen, *simd.FLAGS) if c_file.batched else chosen

    if len(files) == 1:
        [only] = files
        return [([cc, *file_flags(only), f"{only.name}.c", "-o", library, "-lm"],
                 f"{only.name}.c", only.work, False)]
    linked = CFile("", 0, 0)  # the link takes the flags of a small file
    order = sorted(files, key=lambda c_file: -c_file.work)
    return [([cc, *(f for f in file_flags(c_file) if f != "-shared"), "-c", f"{c_file.name}.c",
              "-o", f"{c_file.name}.o"], f"{c_file.name}.c", c_file.work,
             c_file.shared or c_file.work >= sizes.KEEP_OBJECT)
            for c_file in order] + \
        [([cc, *file_flags(linked), *(f"{c_file.name}.o" for c_file in order), "-o", library,
           "-lm"], library, 0, False)]


def run(plan: list[Command], scratch: Path, progress: Progress = SILENT) -> None:
    """Run the ``plan`` of :func:`commands` in ``scratch``: the objects in parallel, one per
    core (those of :data:`casdyn.sizes.KEEP_OBJECT` instructions or more, and shared
    routines, from the cache when compiled before, and kept there), then the link. A failure is an
    :class:`ExportError` with the compiler's last lines."""

    def execute(command: list[str], label: str) -> None:
        with progress.step(label):
            result = subprocess.run(command, cwd=scratch, capture_output=True, text=True)
        if result.returncode != 0:
            tail = "\n".join(result.stderr.strip().splitlines()[-8:])
            raise ExportError(f"compiling {label} failed ({' '.join(command)}):\n{tail}")

    def compile_object(command: list[str], label: str, work: int, kept: bool) -> None:
        if not kept:
            execute(command, label)
            return
        target = scratch / command[command.index("-o") + 1]
        key = store.object_key(command, scratch / label)
        if store.fetch_object(key, target):
            with progress.step(f"{label}, compiled before"):
                return
        execute(command, label)
        store.keep_object(key, target)

    files = len(plan) - 1 if len(plan) > 1 else 1
    progress.phase(f"compiling {files} C file" + ("s, then linking" if files > 1 else ""),
                   len(plan))
    if len(plan) == 1:
        execute(*plan[0][:2])
        return
    *objects, link = plan
    with ThreadPoolExecutor(max_workers=min(len(objects), os.cpu_count() or 1)) as pool:
        for job in [pool.submit(compile_object, *step) for step in objects]:
            job.result()
    execute(*link[:2])
