"""Functions to C source: the files of a library, written by CasADi's code generator and
made to link with others.

A library's Functions go into C files by size (:func:`parts`): the small ones together in
``<basename>.c``, each large one (:data:`casdyn.sizes.OWN_C_FILE`) in a file of its own,
compiled in parallel (:mod:`casdyn.codegen.build`); one header ``<basename>.h`` declares
them all. In the C, CasADi's helpers are made private (:func:`private_helpers`), every
global symbol carries the library's prefix (:func:`checked_prefix`), the external routines
the Functions call are added once (:mod:`casdyn.codegen.externals`), and, in a portable
library, the long straight-line functions of the large files are cut into parts
(:mod:`casdyn.codegen.split`). The batched C of a Function (:mod:`casdyn.codegen.simd`) is a
file of its own.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import casadi as ca

from .. import sizes
from ..errors import InputError
from . import externals, simd, split, trig


class CFile(NamedTuple):
    """One C file of a library: its name without ``.c``, the instructions that size its
    flags (:func:`casdyn.codegen.build.flags_for`), the work of compiling it (to start the
    largest first), whether it is the batched C of a Function, and whether it is compiled
    alike into many libraries (a hand-written routine: its object is kept in the compile
    cache whatever its size)."""
    name: str
    size: int
    work: int
    batched: bool = False
    shared: bool = False


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


def renamed(function: ca.Function, name: str) -> ca.Function:
    """``function`` under the name ``name``: for an SX Function the same graph (calling it
    on its own inputs reproduces it instruction for instruction), for others a wrapper."""
    if function.name() == name:
        return function
    if function.is_a("SXFunction"):
        inputs = function.sx_in()
        return ca.Function(name, inputs, function.call(inputs), function.name_in(),
                           function.name_out())
    return function.wrap(name)


def size(function: ca.Function) -> int:
    """Instructions of an SX Function, or of the SX Functions another one calls, at least
    :data:`casdyn.sizes.OWN_C_FILE` where it calls C loops (:mod:`casdyn.codegen.forms`):
    those are compiled in a file of their own with the large flags, whose loop vectoriser
    handles them as well as -O3 does in a fraction of the time (the floating TALOS's
    linked FD derivatives: 5.5 s of -O3 among the small functions)."""
    if function.is_a("SXFunction"):
        return function.n_instructions()
    called = function.find_functions()
    loops = any(f.class_name() == "JitFunction" for f in called)
    total = sum(f.n_instructions() for f in called if f.is_a("SXFunction"))
    return max(total, sizes.OWN_C_FILE) if loops else total


def parts(functions: list[ca.Function], basename: str,
          prefix: str = "") -> list[tuple[str, list, int]]:
    """The C files: ``(name, functions, size)``, the small functions together in
    ``basename`` (size 0), each large one in ``<basename>_<its name without prefix>`` (size:
    its instructions)."""
    large = [f for f in functions if size(f) >= sizes.OWN_C_FILE]
    small = [f for f in functions if size(f) < sizes.OWN_C_FILE]
    listed = [(basename, small, 0)] if small else []
    listed += [(basename if not listed and i == 0 else
                f"{basename}_{f.name().removeprefix(f'{prefix}_' if prefix else '')}", [f],
                size(f)) for i, f in enumerate(large)]
    return listed


def write(functions: list[ca.Function], scratch: Path, basename: str, *,
          appended: str | None = None, prefix: str = "", cut: bool = False,
          batches: Sequence[tuple[str, ca.Function]] = (),
          with_derivatives: bool = False) -> list[CFile]:
    """Write the C files of ``functions`` (see :func:`parts`) and the header
    ``<basename>.h`` into ``scratch``; returns the C files, the first one first.

    ``appended``: C added at the end of the first file. ``cut``: the long functions of the
    large files cut into parts (:func:`casdyn.codegen.split.split_functions`; the rule of
    :data:`casdyn.codegen.build.CUT_PORTABLE`). ``batches``: ``(C symbol, SX Function)`` of
    batched entry points, each in a file ``<basename>_<symbol>.c`` and declared in the
    header. ``with_derivatives``: each Function's forward and reverse derivatives and
    Jacobian too (what ``nlpsol`` asks of its callbacks)."""
    listed = parts(functions, basename, prefix)
    _generate(listed, scratch, appended, cut, prefix, with_derivatives)
    files = [CFile(name, part_size, sum(size(f) for f in part))
             for name, part, part_size in listed]
    return files + _generate_batches(batches, basename, scratch)


def _generate(listed: list[tuple[str, list, int]], scratch: Path, appended: str | None,
              cut: bool, prefix: str, with_derivatives: bool) -> None:
    """Each part's C in ``scratch``, CasADi's helpers private, the external routines the
    functions call and ``appended`` at the end of the first; one header ``<first
    part>.h`` declaring everything.

    Every global symbol the library defines starts with ``<prefix>_`` (without a prefix,
    with the first part's name): the functions' own, CasADi's service functions (see
    :func:`_services`; global in the first file, private to the others) and the external
    routines' (:func:`casdyn.codegen.externals.with_prefix`), so that two libraries link
    into one program."""
    header = scratch / f"{listed[0][0]}.h"
    own = prefix or listed[0][0]
    every = [f for _, functions, _ in listed for f in functions]
    # the external routines the functions call, once (in the first file): their entry
    # points are global symbols
    called = externals.routines_called(every)
    routines = externals.source_of(called)
    for k, (name, functions, part_size) in enumerate(listed):
        generator = ca.CodeGenerator(f"{name}.c", {"with_header": True})
        for function in functions:
            generator.add(function)
            if with_derivatives:  # under the names casadi.external looks for
                for derivative in (function.forward(1), function.reverse(1),
                                   function.jacobian()):
                    generator.add(derivative)
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
        if part_size == 0:  # the small functions: the sines and cosines of their inputs
            text = trig.hoisted(text)  # together (a large one's are a small share of it)
        if cut and sizes.OWN_C_FILE <= part_size < sizes.LOWEST_OPTIMISATION:
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


def _generate_batches(batches: Sequence[tuple[str, ca.Function]], basename: str,
                      scratch: Path) -> list[CFile]:
    """The batched C file of each ``(symbol, SX Function)`` in ``scratch``, declared in the
    header ``basename.h``."""
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
        instructions = function.n_instructions()
        files.append(CFile(name, max(instructions, sizes.BATCH_OPTIMISED_AS), instructions,
                           batched=True))
    return files
