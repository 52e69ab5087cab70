"""C export: CasADi code generation, compilation with the system C compiler, loading back.

Everything is generated and compiled in a scratch directory beside the target and moved into
place only when all of it succeeded, so a failed export leaves the target as it was.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import casadi as ca

from ..errors import ExportError, InputError
from ..functions.names import identifier
from ..progress import SILENT, Progress
from ..runtime import entry
from ..runtime.batch import BatchKernel
from . import externals, object_cache, simd, split
from .cache_dir import durable_replace

COMPILERS = ("cc", "gcc", "clang")


DEFAULT_FLAGS = ("-O3", "-fPIC", "-shared")


# Functions from LARGE_FUNCTION instructions on (derivatives of long chains and humanoids)
# get a C file of their own. On such long straight-line code GCC's -O2/-O3 spend most of their
# time in partial-redundancy elimination and code hoisting, for nothing measurable: without
# those two passes -O2 runs as fast as -O3 in half the time (chain24's ID derivatives, 45,689
# instructions: 25 s against 53 s to compile, 9.45 against 9.44 us to run; -O1: 8 s, 13.7 us).
# Up to HUGE_FUNCTION that pays even where it takes long: the floating TALOS's FD derivatives
# (141,795 instructions) compile in 30 s against 19 s at -O1 and run 27 % faster (best of
# five: 31.2 against 42.8 us), chain24's (114,722) in 21 s against 13 s, 23 % faster; a
# 48-link chain's ID derivatives (124,664) gain nothing and take 124 s against 27 s (GCC's
# register allocation), the price of one rule by size. Beyond it they get -O1.
# The loops of casdyn.codegen.kernels in such files are vectorised by the loop vectoriser, which
# GCC's -O2 runs only where no remainder loop is needed and -O1 not at all: with it the
# 24-link chain's FD derivatives ran in 14.7 instead of 16.4 us (-O2), the 48-link chain's in
# 101 instead of 187 us (-O1), with the same compile time; straight-line SX code is unchanged.
LARGE_FUNCTION = 20_000


LARGE_FUNCTION_FLAGS = ("-O2", "-fno-tree-pre", "-fno-code-hoisting",
                        "-fvect-cost-model=dynamic", "-fPIC", "-shared")


HUGE_FUNCTION = 150_000


HUGE_FUNCTION_FLAGS = ("-O1", "-ftree-loop-vectorize", "-fPIC", "-shared")


# In a portable library (no NATIVE_FLAG) the long straight-line functions of the files built
# with LARGE_FUNCTION_FLAGS are cut into parts (casdyn.codegen.split): GCC's register
# allocation, most of the time on such a function, then sees short live ranges. The floating
# TALOS's ID derivatives (52,036 statements) compiled in 7.2 instead of 15.5 s of processor
# time and ran 3 % slower (10.38 against 10.02 us, best of 101 interleaved rounds). Built for
# the processor the cut cost 10 % (6.33 against 5.78 us: with AVX-512's 32 registers the
# uncut code keeps more of its values in registers), so native builds stay uncut.
CUT_PORTABLE = True


# other compilers get plain -O2 and -O1
_GCC_ONLY = ("-fno-tree-pre", "-fno-code-hoisting", "-fvect-cost-model=dynamic",
             "-ftree-loop-vectorize")


# Code built for the CPU it runs on uses its fused multiply-add and AVX instructions: the
# derivatives of a 24-link chain ran in 25 us instead of 36 (TALOS's FD derivatives 30 against
# 50 us) and compiled 30 % faster. RigidBodyTree.compile() builds that way where the compiler
# accepts the flag; export_c only when asked (native=True), as its library may be copied to
# another machine.
NATIVE_FLAG = "-march=native"


# CasADi writes its helpers (casadi_sq, casadi_fmin, casadi_copy, ...) as global functions. In
# a shared library a global function may be interposed at load time, so GCC calls it through
# the PLT rather than inlining it, and every call clobbers all floating-point registers: a
# 24-link chain's inverse dynamics ran 9 % slower for its 69 calls of casadi_sq. The helpers
# are private to the file, so they are made static.
GLOBAL_HELPER = re.compile(
    r"^(?=(?:const )?(?:casadi_real|casadi_int|void|int)\*? ?casadi_\w+\()", re.MULTILINE)


def private_helpers(source: str) -> str:
    """``source`` (CasADi-generated C) with CasADi's helper functions declared ``static``."""
    return GLOBAL_HELPER.sub("static ", source)


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


@functools.lru_cache(maxsize=8)
def native_flags(cc: str) -> tuple[str, ...]:
    """``(NATIVE_FLAG,)`` where the compiler ``cc`` accepts it, else ``()``."""
    try:
        result = subprocess.run([cc, NATIVE_FLAG, "-E", "-x", "c", "-"], input="",
                                capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return ()
    return (NATIVE_FLAG,) if result.returncode == 0 else ()


def library_path(directory: str | os.PathLike, basename: str) -> Path:
    suffix = ".dylib" if sys.platform == "darwin" else ".so"
    return Path(directory) / f"lib{identifier(basename, 'casdyn')}{suffix}"


def load_library(path: Path, symbols: list[str], with_entry: bool = False):
    """The functions ``symbols`` of the compiled library ``path``, as ``casadi.Function``s;
    ``with_entry``: the pair (those Functions, the library's module :mod:`casdyn.runtime.entry`).
    See :func:`load_library_parts`."""
    functions, module, _ = load_library_parts(path, symbols, with_entry)
    return (functions, module) if with_entry else functions


def load_library_parts(path: Path, symbols: list[str], with_entry: bool = False,
                       batches: Sequence[tuple[str, ca.Function]] = ()):
    """``(Functions, module, kernels)``: the functions ``symbols`` of the compiled library
    ``path`` as ``casadi.Function``s, its module :mod:`casdyn.runtime.entry` (None unless
    ``with_entry``) and a :class:`casdyn.runtime.batch.BatchKernel` for each ``(symbol,
    Function)`` of ``batches``.

    The library is loaded through a private copy under a fresh name, removed again once
    loaded: the dynamic loader hands back an already loaded library for a path (or file) it
    has seen, so loading ``path`` itself after it was rebuilt in this process could return
    the old code.
    """
    for scratch_dir in (path.parent, None):  # beside the library, else the system's temp
        try:
            fd, private = tempfile.mkstemp(prefix=".casdyn-load-", suffix=path.suffix,
                                           dir=scratch_dir)
            break
        except OSError:
            continue
    else:
        raise ExportError(f"cannot make a temporary copy of {path} to load it")
    try:
        with os.fdopen(fd, "wb") as copy, open(path, "rb") as library:
            shutil.copyfileobj(library, copy)
        functions = [ca.external(symbol, private) for symbol in symbols]
        module = entry.load(Path(private)) if with_entry else None
        kernels = []
        if batches:
            handle = ctypes.CDLL(private)  # the library CasADi opened, by the same path
            kernels = [BatchKernel(handle, symbol, function) for symbol, function in batches]
        return functions, module, kernels
    except (OSError, RuntimeError, ImportError, AttributeError) as exc:
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise ExportError(f"loading the compiled library {path} failed: {reason}") from None
    finally:
        os.unlink(private)


def _renamed(function: ca.Function, name: str) -> ca.Function:
    """``function`` under the name ``name``: for an SX Function the same graph (calling it
    on its own inputs reproduces it instruction for instruction), for others a wrapper."""
    if function.name() == name:
        return function
    if function.is_a("SXFunction"):
        inputs = function.sx_in()
        return ca.Function(name, inputs, function.call(inputs), function.name_in(),
                           function.name_out())
    return function.wrap(name)


# A prefix starts every C symbol of an export, ``<prefix>_<name>``, and CasADi's name of
# its Functions: a letter, then letters, digits and single underscores (CasADi refuses
# ``__`` in a Function's name, C reserves a leading ``_``), not ending in one. ``casadi``
# and ``casadi_...`` name CasADi's own helpers (see GLOBAL_HELPER).
SYMBOL_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*")
_CASADI_OWN = re.compile(r"casadi(?:_|$)")


def checked_prefix(prefix) -> str:
    """``prefix`` of C symbols (``""``: none), as given: a C identifier of ASCII letters,
    digits and single underscores starting with a letter (:data:`SYMBOL_PREFIX`); anything
    else is an :class:`InputError` (a prefix made valid silently would name other
    symbols than the caller links against)."""
    if not isinstance(prefix, str):
        raise InputError(f"prefix must be a string (the start of the C symbols' names), got "
                         f"{type(prefix).__name__} {prefix!r}")
    if prefix and not SYMBOL_PREFIX.fullmatch(prefix):
        raise InputError(f"prefix {prefix!r} is not a C identifier of the kind symbols need: "
                         "a letter, then ASCII letters, digits and single underscores, not "
                         "ending in '_' (e.g. 'left_arm'); '' for none")
    if _CASADI_OWN.match(prefix):
        raise InputError(f"prefix {prefix!r} is not a C identifier casdyn can use: "
                         "'casadi' and 'casadi_...' name CasADi's own helper functions")
    return prefix


def checked_flags(flags) -> tuple[str, ...] | None:
    """The compiler's ``flags`` as a tuple of strings: a sequence of strings, or one string
    split as a shell would (``"-O2 -fPIC -shared"``); None stays None (the defaults)."""
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


def export_functions(
    functions: list[ca.Function],
    directory: str | os.PathLike,
    basename: str,
    *,
    compile: bool = True,
    compiler: str | None = None,
    flags: tuple[str, ...] | None = None,
    prefix: str = "",
    native: bool = False,
    names: list[str] | None = None,
    progress: Progress = SILENT,
    batched: list[ca.Function] | None = None,
) -> list[ca.Function]:
    """Write ``basename.c`` and ``basename.h`` for ``functions`` into ``directory``; with
    ``compile``, also build ``lib<basename>.so`` and return the functions loaded from it, in
    the same order and with the same names; else return ``functions`` themselves.

    A function of :data:`LARGE_FUNCTION` instructions or more gets a C file of its own,
    ``<basename>_<name>.c`` (declared in the one header), and the files are compiled in
    parallel. ``flags``: the compiler's flags for every file; by default
    :data:`DEFAULT_FLAGS`, and :data:`LARGE_FUNCTION_FLAGS` / :data:`HUGE_FUNCTION_FLAGS`
    for the files of large / huge functions.
    ``names``: the names to export the functions under (default: their own; valid C
    identifiers, distinct). With a ``prefix`` the C symbols are ``<prefix>_<name>``, so that
    the libraries of several robots link into one program; the returned Functions are
    called ``<name>``. ``flags`` may also be one string, split as a shell would. ``native``:
    build the library for this machine's processor (:data:`NATIVE_FLAG` added to every
    command; an error where the compiler does not take it) — faster, but it may not run on
    another machine; the C stays portable.
    Nothing is written unless all of it succeeded. ``progress`` reports the generation and
    the compilation (:mod:`casdyn.progress`). ``batched``: for each function, the SX
    Function of the same inputs and outputs whose batched entry point ``<symbol>_batch``
    (:mod:`casdyn.codegen.simd`) is exported too.
    """
    prefix = checked_prefix(prefix)
    flags = checked_flags(flags)
    names = [f.name() for f in functions] if names is None else list(names)
    if len(names) != len(functions) or len(set(names)) != len(names):
        raise ExportError(f"export names must be distinct, one per function: {names}")
    cc = find_compiler(compiler) if compile else None
    extra: tuple[str, ...] = ()
    if native and cc is not None:
        extra = native_flags(cc)
        if not extra:
            raise ExportError(f"the compiler {cc} does not accept {NATIVE_FLAG}; export with "
                              "native=False")
    symbols = [f"{prefix}_{name}" if prefix else name for name in names]
    renamed = [_renamed(f, symbol) for f, symbol in zip(functions, symbols, strict=True)]
    batches = []
    for function, symbol in zip(batched, symbols, strict=True) if batched else ():
        if not simd.supported(function):
            raise ExportError(f"{symbol} has no batched form: the batched C takes SX "
                              "Functions of arithmetic and C library operations")
        batches.append((f"{symbol}_batch", function))
    library = write_library(renamed, Path(directory), identifier(basename, "casdyn"), cc, flags,
                     extra, prefix=prefix, progress=progress, batches=batches)
    if library is None:
        return list(functions)
    loaded = load_library(library, symbols)
    # the C symbol carries the prefix; the Function keeps the name it was exported under
    return [f if f.name() == name else f.wrap(name)
            for f, name in zip(loaded, names, strict=True)]


def _size(function: ca.Function) -> int:
    """Instructions of an SX Function, or of the SX Functions another one calls, at least
    :data:`LARGE_FUNCTION` where it calls C loops (:mod:`casdyn.codegen.kernels`): those
    are compiled in a file of their own with :data:`LARGE_FUNCTION_FLAGS`, whose loop
    vectoriser handles them as well as -O3 does in a fraction of the time (the floating
    TALOS's linked FD derivatives, :mod:`casdyn.codegen.linked`: 5.5 s of -O3 among the
    small functions)."""
    if function.is_a("SXFunction"):
        return function.n_instructions()
    called = function.find_functions()
    loops = any(f.class_name() == "JitFunction" for f in called)
    total = sum(f.n_instructions() for f in called if f.is_a("SXFunction"))
    return max(total, LARGE_FUNCTION) if loops else total


def _parts(functions: list[ca.Function], basename: str,
           prefix: str = "") -> list[tuple[str, list, int]]:
    """The C files: ``(name, functions, size)``, the small functions together in
    ``basename`` (size 0), each large one in ``<basename>_<its name without prefix>`` (size:
    its instructions)."""
    large = [f for f in functions if _size(f) >= LARGE_FUNCTION]
    small = [f for f in functions if _size(f) < LARGE_FUNCTION]
    parts = [(basename, small, 0)] if small else []
    parts += [(basename if not parts and i == 0 else
               f"{basename}_{f.name().removeprefix(f'{prefix}_' if prefix else '')}", [f],
               _size(f)) for i, f in enumerate(large)]
    return parts


def _generate(parts: list[tuple[str, list, int]], scratch: Path, appended: str | None,
              cut: bool = False, prefix: str = "") -> None:
    """Each part's C in ``scratch``, CasADi's helpers private, the external routines the
    functions call (:mod:`casdyn.codegen.externals`) and ``appended`` at the end of the
    first; one header ``<first part>.h`` declaring everything. ``cut``: the long
    functions of the files compiled with :data:`LARGE_FUNCTION_FLAGS` cut into parts
    (:func:`casdyn.codegen.split.split_functions`, see :data:`CUT_PORTABLE`).

    Every global symbol the library defines starts with ``<prefix>_`` (without a prefix,
    with the first part's name): the functions' own, CasADi's service functions (see
    :func:`_services`; global in the first file, private to the others) and the external
    routines' (:func:`casdyn.codegen.externals.with_prefix`), so that two libraries link
    into one program."""
    header = scratch / f"{parts[0][0]}.h"
    own = prefix or parts[0][0]
    every = [f for _, functions, _ in parts for f in functions]
    # the external routines the functions call, once (in the first file): their entry
    # points are global symbols
    called = externals.routines_called(every)
    routines = externals.source_of(called)
    for k, (name, functions, size) in enumerate(parts):
        generator = ca.CodeGenerator(f"{name}.c", {"with_header": True})
        for function in functions:
            generator.add(function)
        generator.generate(str(scratch) + os.sep)
        source = scratch / f"{name}.c"
        extra = f'\n#include "{header.name}"\n{appended}' if k == 0 and appended else ""
        text = private_helpers(source.read_text())
        part_header = scratch / f"{name}.h"
        declared = part_header.read_text()
        services = _services(text, name, [f.name() for f in functions])
        if k == 0:
            text, declared = (_renamed_services(t, name, services, own) for t in (text, declared))
        else:
            text, declared = _private_services(text, declared, services)
        if cut and LARGE_FUNCTION <= size < HUGE_FUNCTION:
            text = split.split_functions(text)
        text = externals.with_prefix(text + (routines if k == 0 else ""), called, own)
        source.write_text(text + extra)
        if k > 0:
            header.write_text(header.read_text() + declared)
            part_header.unlink()
        else:
            header.write_text(declared)


# the functions CasADi's generated C exports: ``CASADI_SYMBOL_EXPORT <type> <name>(``
_EXPORTED = re.compile(r"^CASADI_SYMBOL_EXPORT [^(\n]*?\b(\w+)\(", re.MULTILINE)


def _services(source: str, stem: str, symbols: list[str]) -> list[str]:
    """CasADi's service functions in ``source``, the generated file ``<stem>.c``: the
    functions it exports under the file's name (``<stem>_casadi_version``,
    ``<stem>_casadi_int_size``, ``<stem>_max_num_threads``, ...), none of those of the
    Functions ``symbols`` (``<symbol>``, ``<symbol>_n_in``, ...)."""
    return [name for name in _EXPORTED.findall(source) if name.startswith(f"{stem}_")
            and not any(name == s or name.startswith(f"{s}_") for s in symbols)]


def _renamed_services(text: str, stem: str, services: list[str], own: str) -> str:
    """``text`` (C or header) with the ``services`` of ``<stem>.c`` named after ``own``."""
    for service in services:
        text = re.sub(rf"\b{service}\b", f"{own}_{service.removeprefix(f'{stem}_')}", text)
    return text


def _private_services(source: str, header: str, services: list[str]) -> tuple[str, str]:
    """``(source, header)`` of a part after the first with its ``services`` private to its
    file (the first file's are the library's) and no longer declared."""
    for service in services:
        source = re.sub(rf"^CASADI_SYMBOL_EXPORT (?=[^(\n]*\b{service}\()", "static ",
                        source, flags=re.MULTILINE)
        header = re.sub(rf"^[^\n]*\b{service}\([^\n]*;\n", "", header, flags=re.MULTILINE)
    return source, header


def _compile(cc: str, parts: list[tuple[str, list, int]], scratch: Path, library: str,
             flags: tuple[str, ...] | None, extra: tuple[str, ...],
             progress: Progress = SILENT, batches: Sequence[tuple[str, int]] = ()) -> None:
    """Build ``library`` from the parts' C and the batched C files ``batches`` (``(name,
    instructions)``, built with :data:`casdyn.codegen.simd.FLAGS` added): one command for
    one file, else each file to an object in parallel (the largest first), then one link."""

    def run(command: list[str], source: str) -> None:
        with progress.step(source):
            result = subprocess.run(command, cwd=scratch, capture_output=True, text=True)
        if result.returncode != 0:
            tail = "\n".join(result.stderr.strip().splitlines()[-8:])
            raise ExportError(f"compiling {source} failed ({' '.join(command)}):\n{tail}")

    def compile_object(command: list[str], name: str, work: int) -> None:
        """``name``.o, from the object cache where a large file was compiled before."""
        if work < object_cache.CACHED_FROM:
            run(command, f"{name}.c")
            return
        key = object_cache.key(command, scratch / f"{name}.c")
        if object_cache.fetch(key, scratch / f"{name}.o"):
            with progress.step(f"{name}.c, compiled before"):
                return
        run(command, f"{name}.c")
        object_cache.keep(key, scratch / f"{name}.o")

    def part_flags(size: int) -> tuple[str, ...]:
        if flags is not None:
            return (*flags, *extra)
        chosen = HUGE_FUNCTION_FLAGS if size >= HUGE_FUNCTION else \
            LARGE_FUNCTION_FLAGS if size >= LARGE_FUNCTION else DEFAULT_FLAGS
        if not _is_gcc(cc):
            chosen = tuple(f for f in chosen if f not in _GCC_ONLY)
        return (*chosen, *extra)

    files = len(parts) + len(batches)
    progress.phase(f"compiling {files} C file" + ("s, then linking" if files > 1 else ""),
                   files + (files > 1))
    if files == 1:
        name, _, size = parts[0]
        run([cc, *part_flags(size), f"{name}.c", "-o", library, "-lm"], f"{name}.c")
        return
    # (file, its flags, work) of every file, the largest first
    order = sorted([(name, part_flags(size), sum(_size(f) for f in functions))
                    for name, functions, size in parts] +
                   [(name, (*part_flags(max(size, simd.OPTIMISE_AS)), *simd.FLAGS), size)
                    for name, size in batches],
                   key=lambda file: -file[2])
    with ThreadPoolExecutor(max_workers=min(files, os.cpu_count() or 1)) as pool:
        jobs = [pool.submit(compile_object, [cc, *(f for f in file_flags if f != "-shared"),
                                             "-c", f"{name}.c", "-o", f"{name}.o"], name, work)
                for name, file_flags, work in order]
        for job in jobs:
            job.result()
    run([cc, *part_flags(0), *(f"{name}.o" for name, _, _ in order), "-o", library, "-lm"],
        library)


def _generate_batches(batches: Sequence[tuple[str, ca.Function]], basename: str,
                      scratch: Path) -> list[tuple[str, int]]:
    """The batched C file of each ``(symbol, SX Function)`` in ``scratch``, declared in the
    header ``basename.h``; returns ``(file name without .c, instructions)`` of each."""
    if not batches:
        return []
    header = scratch / f"{basename}.h"
    declarations = [f"int {symbol}{form}(const double** arg, const long long* stride, "
                    "double** res, long long n);" for symbol, _ in batches
                    for form in ("", "_dense")]
    text = header.read_text()
    guard = "#ifdef __cplusplus\n} /* extern \"C\" */\n#endif"
    block = "\n/* batched entry points (casdyn.codegen.simd) */\n" + "\n".join(declarations) + "\n"
    header.write_text(text.replace(guard, block + guard, 1) if guard in text else text + block)
    files = []
    for symbol, function in batches:
        name = f"{basename}_{symbol}"
        (scratch / f"{name}.c").write_text(simd.source(function, symbol))
        files.append((name, function.n_instructions()))
    return files


@functools.lru_cache(maxsize=8)
def _is_gcc(cc: str) -> bool:
    """Whether the compiler is GCC (``cc`` is often GCC under another name)."""
    try:
        result = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return "Free Software Foundation" in result.stdout and "clang" not in result.stdout


def write_library(functions: list[ca.Function], directory: Path, basename: str, cc: str | None,
           flags: tuple[str, ...] | None, extra: tuple[str, ...] = (),
           appended: str | None = None, prefix: str = "",
           progress: Progress = SILENT,
           batches: Sequence[tuple[str, ca.Function]] = ()) -> Path | None:
    """Generate the C files (see :func:`_parts`; the C ``appended`` at the end of the
    first) and the header ``basename.h`` and, with a compiler ``cc``, build the library
    (``extra``: flags added to every command); move them into ``directory`` once all of it
    succeeded. ``batches``: ``(C symbol, SX Function)`` of batched entry points
    (:mod:`casdyn.codegen.simd`), each in a file ``<basename>_<symbol>.c`` and declared in
    the header. Returns the library's path (None without ``cc``)."""
    if directory.exists() and not directory.is_dir():
        raise ExportError(f"cannot export into {directory}: it is a file, not a directory")
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".casdyn-export-", dir=directory.parent))
    except OSError as exc:
        raise ExportError(f"cannot export into {directory}: {exc.strerror or exc}") from None
    try:
        parts = _parts(functions, basename, prefix)
        progress.phase("generating C", 1)
        with progress.step(f"{len(functions)} function{'s' if len(functions) > 1 else ''} "
                           f"in {len(parts)} file{'s' if len(parts) > 1 else ''}"):
            _generate(parts, scratch, appended, cut=CUT_PORTABLE and NATIVE_FLAG not in extra,
                      prefix=prefix)
            batch_files = _generate_batches(batches, basename, scratch)
        produced = [f"{name}.c" for name, _, _ in parts] + \
            [f"{name}.c" for name, _ in batch_files] + [f"{basename}.h"]
        if cc is not None:
            library = library_path(scratch, basename).name
            _compile(cc, parts, scratch, library, flags, extra, progress, batch_files)
            produced.append(library)
        directory.mkdir(parents=True, exist_ok=True)
        for name in produced:  # each on disk before it takes its place
            durable_replace(scratch / name, directory / name)
    except OSError as exc:
        raise ExportError(f"cannot export into {directory}: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return directory / produced[-1] if cc is not None else None
