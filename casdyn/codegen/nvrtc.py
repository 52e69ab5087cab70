"""CUDA C to GPU machine code at run time, with NVIDIA's runtime compiler (NVRTC).

NVRTC is a library, not a program: it compiles CUDA C held in memory to PTX or to a cubin
(machine code for one GPU architecture, ``sm_90`` for the H100) without a GPU and without
the CUDA toolkit. It comes from pip (``nvidia-cuda-nvrtc-cu12`` or the CUDA 13 wheel,
``pip install "casdyn[gpu]"``), from a CUDA toolkit (``$CUDA_HOME``), or from the system's
library path. :func:`compile_cuda` keeps what it builds in casdyn's one compile cache,
named by a hash of the source, the options, the architecture and NVRTC's version, sealed
like everything else there (:mod:`casdyn.codegen.store`): a process that needs the same
kernels again loads them without compiling.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import glob
import hashlib
import os
import re
import sys
from pathlib import Path

from ..errors import DeviceError, ExportError
from ..progress import Progress
from .cache_dir import verified, write_file
from .store import folder

# the options every kernel is compiled with: C++17, the stage templates inlined
OPTIONS = ("--std=c++17", "-default-device")

_INSTALL = 'pip install "casdyn[gpu]"'


def _candidates() -> list[str]:
    """Paths of NVRTC libraries that may be loaded, the pip wheels' first."""
    found: list[str] = []
    for entry in sys.path:
        if os.path.isdir(os.path.join(entry, "nvidia")):
            found += glob.glob(os.path.join(entry, "nvidia", "*", "lib", "libnvrtc.so*"))
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            found += glob.glob(os.path.join(home, "lib64", "libnvrtc.so*"))
    found = [p for p in found if "builtins" not in p and ".alt." not in p]
    # the newest first: libnvrtc.so.13 before libnvrtc.so.12
    found.sort(key=lambda p: [int(n) for n in re.findall(r"\d+", Path(p).name)], reverse=True)
    return [*found, "libnvrtc.so"]


@functools.lru_cache(maxsize=1)
def library() -> ctypes.CDLL:
    """The loaded NVRTC library; a :class:`casdyn.DeviceError` saying how to install it
    where there is none."""
    tried = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as exc:
            tried.append(f"{path}: {exc}")
            continue
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        return lib
    raise DeviceError(
        "CUDA's runtime compiler (NVRTC) was not found: install it with " + _INSTALL +
        " (the pip wheel nvidia-cuda-nvrtc-cu12), or set CUDA_HOME to a CUDA toolkit")


def version() -> tuple[int, int]:
    """NVRTC's version (major, minor)."""
    major, minor = ctypes.c_int(), ctypes.c_int()
    library().nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value


def _check(result: int, what: str) -> None:
    if result != 0:
        message = library().nvrtcGetErrorString(result).decode()
        raise DeviceError(f"NVRTC {what} failed: {message}")


def resources(source: str, name: str, arch: str) -> str:
    """What the assembler says of each kernel of ``source`` for ``arch``: registers, spill
    stores and loads, stack frame (NVRTC's log with ``--ptxas-options=-v``)."""
    return _compile(source, name, arch, ("--ptxas-options=-v",), log=True)[1]


def _compile(source: str, name: str, arch: str, options: tuple[str, ...],
             log: bool = False):
    lib = library()
    program = ctypes.c_void_p()
    _check(lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(), name.encode(),
                                  0, None, None), "creating a program")
    try:
        flags = [*OPTIONS, f"--gpu-architecture={arch}", *options]
        array = (ctypes.c_char_p * len(flags))(*(f.encode() for f in flags))
        result = lib.nvrtcCompileProgram(program, len(flags), array)
        if result != 0 or log:
            size = ctypes.c_size_t()
            lib.nvrtcGetProgramLogSize(program, ctypes.byref(size))
            buffer = ctypes.create_string_buffer(size.value)
            lib.nvrtcGetProgramLog(program, buffer)
            text = buffer.value.decode(errors="replace").strip()
            if result != 0:
                raise DeviceError(f"NVRTC could not compile {name} for {arch}:\n"
                                  f"{text[-4000:]}")
        machine_code = arch.startswith("sm_")
        get_size, get = (lib.nvrtcGetCUBINSize, lib.nvrtcGetCUBIN) if machine_code else \
            (lib.nvrtcGetPTXSize, lib.nvrtcGetPTX)
        size = ctypes.c_size_t()
        _check(get_size(program, ctypes.byref(size)), "reading the result's size")
        out = ctypes.create_string_buffer(size.value)
        _check(get(program, out), "reading the result")
        return (out.raw, text) if log else out.raw
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(program))


def compile_cuda(source: str, name: str, arch: str, options: tuple[str, ...] = (), *,
                 progress: Progress | None = None) -> bytes:
    """The cubin (``arch`` = ``sm_80``, ``sm_90``, ...) or PTX (``compute_90``, ...) of the
    CUDA C ``source``, from the compile cache or compiled now (``name`` names the program in
    error messages and in the cache). A :class:`casdyn.DeviceError` with NVRTC's log where
    the source does not compile."""
    digest = hashlib.sha256()
    for part in (str(version()), arch, "\0".join((*OPTIONS, *options)), source):
        digest.update(part.encode() + b"\0\1")
    suffix = ".cubin" if arch.startswith("sm_") else ".ptx"
    try:
        path = folder() / f"cuda_{name}_{digest.hexdigest()[:32]}{suffix}"
    except ExportError:  # no usable cache: compile every time
        path = None
    if path is not None and verified(path):
        return path.read_bytes()
    if progress is not None:
        with progress.step(f"{name} ({arch})"):
            code = _compile(source, name, arch, options)
    else:
        code = _compile(source, name, arch, options)
    if path is not None:  # where the cache cannot be written, the kernels still run
        with contextlib.suppress(OSError):
            write_file(path, lambda scratch: scratch.write_bytes(code))
    return code
