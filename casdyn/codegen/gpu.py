"""Batched calls of compiled Functions on an NVIDIA GPU, through CuPy.

A :class:`GpuFunction` is one Function's kernels (:mod:`casdyn.codegen.cuda`), compiled for
the GPU at hand by NVRTC (:mod:`casdyn.codegen.nvrtc`, cached) and loaded by CuPy, in
float64 and float32 (each built when first used). Its call takes a batch: every input an
array with a leading sample dimension N (or one value shared by all samples), on the GPU
(CuPy, or any array with ``__dlpack__``: PyTorch, JAX; read where it is, without a copy) or
NumPy (copied over). It returns one array per output, ``(N, rows)`` for a vector output
(``(N, rows, cols)`` otherwise), of the kind of the inputs: CuPy for CuPy, PyTorch tensors for
PyTorch tensors, JAX arrays for JAX arrays (through DLPack, no copy), NumPy for NumPy (copied
back). Float32 inputs run the float32 kernels, anything else float64.

The work runs on CuPy's current stream; arrays from PyTorch or JAX are exchanged through
DLPack, which orders the work after theirs. Nothing is checked on the GPU (finiteness, zero
quaternions): that would cost a reduction and a synchronisation per call.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import casadi as ca
import numpy as np

from ..errors import DeviceError, InputError
from . import cuda, nvrtc

BLOCK = 128  # threads per block
_MID_BYTES = 1 << 30  # scratch of a staged graph per launch; larger batches go in chunks


def cupy_module():
    """CuPy, with a GPU it can use; a :class:`casdyn.DeviceError` saying what is missing."""
    try:
        import cupy
    except ImportError:
        raise DeviceError(
            'the GPU path needs CuPy: pip install "casdyn[gpu]" (CuPy for CUDA 12, '
            "cupy-cuda12x, and NVRTC); with CUDA 13: pip install cupy-cuda13x") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CUDARuntimeError: no driver, no device
        raise DeviceError(f"no usable NVIDIA GPU: {exc}") from None
    if count == 0:
        raise DeviceError("no NVIDIA GPU is visible (cudaGetDeviceCount returned 0)")
    return cupy


def architecture(cupy) -> str:
    """The current GPU's architecture as NVRTC names it (``sm_90`` for an H100)."""
    return f"sm_{cupy.cuda.Device().compute_capability}"


def array_kind(value) -> str | None:
    """``"cupy"``, ``"torch"``, ``"jax"`` or ``"dlpack"`` for an array on a device, None for
    anything else (NumPy, lists, numbers, symbols)."""
    if isinstance(value, np.ndarray | ca.SX | ca.MX | ca.DM):
        return None
    module = type(value).__module__.split(".")[0]
    if module == "cupy":
        return "cupy"
    if hasattr(value, "__dlpack__"):
        return module if module in ("torch", "jax", "jaxlib") else "dlpack"
    return None


class GpuFunction:
    """One Function's kernels on the GPU (see the module's docstring); ``symbol`` names them
    in the cache and in NVRTC's messages; ``stage``: instructions per kernel
    (:func:`casdyn.codegen.cuda.function_source`)."""

    def __init__(self, function: ca.Function, symbol: str, stage: int | None = None):
        self.function = function
        self.source = cuda.function_source(function, symbol, stage=stage)
        self.vector = [function.size_out(i)[1] == 1 for i in range(function.n_out())]
        self._modules: dict[tuple[str, int], tuple[Any, list]] = {}
        self._lock = threading.Lock()

    def kernels(self, cupy, precision: str) -> list:
        """The loaded kernels of ``precision`` on the current device (compiled on first
        use)."""
        device = cupy.cuda.Device().id
        with self._lock:
            found = self._modules.get((precision, device))
            if found is None:
                arch = architecture(cupy)
                programs = self.source.programs(precision)
                names = self.source.kernels(precision)
                with ThreadPoolExecutor(min(len(programs), os.cpu_count() or 1)) as pool:
                    codes = list(pool.map(lambda text, name: nvrtc.compile_cuda(
                        text, name, arch), programs, names))
                modules = []
                for code in codes:
                    modules.append(cupy.cuda.function.Module())
                    modules[-1].load(code)
                found = (modules, [module.get_function(name)
                                   for module, name in zip(modules, names, strict=True)])
                self._modules[(precision, device)] = found
        return found[1]

    def __call__(self, inputs: list, n: int, batched: list[bool]):
        """The outputs for the batch of ``n`` samples: ``inputs[i]`` is None (zeros), or an
        array ``(n, *shape)`` where ``batched[i]``, else one value for all samples."""
        cupy = cupy_module()
        kinds = {array_kind(value) for value in inputs if value is not None} - {None}
        if len(kinds) > 1:
            raise InputError("the inputs of one GPU call must be arrays of one kind "
                             f"(CuPy, PyTorch, JAX or NumPy); got {sorted(kinds)}")
        kind = kinds.pop() if kinds else "numpy"
        arrays = [None if value is None else _on_device(cupy, value) for value in inputs]
        # the caller's GPU arrays choose the precision (NumPy ones, defaults too, are float64)
        given = [a for a, value in zip(arrays, inputs, strict=True)
                 if a is not None and array_kind(value) is not None]
        single = bool(given) and all(a.dtype == np.float32 for a in given)
        precision = "float32" if single else "float64"
        dtype = np.float32 if single else np.float64
        flat = [None if a is None else _nonzeros(cupy, a.astype(dtype, copy=False), b,
                                                 self.function.sparsity_in(i))
                for i, (a, b) in enumerate(zip(arrays, batched, strict=True))]
        # the kernels read and write structures of arrays (coalesced); NumPy's layout, one
        # sample after the other, is one transposition away on each side
        flat = [cupy.ascontiguousarray(f.T) if f is not None and b else f
                for f, b in zip(flat, batched, strict=True)]
        outputs = [cupy.zeros((size, n), dtype=dtype) for size in self.source.dense_out]
        self.launch(cupy, precision, flat, batched, outputs, n)
        outputs = [cupy.ascontiguousarray(out.T) for out in outputs]
        shaped = [out if vector else out.reshape((n, *self.function.size_out(i)))
                  for i, (out, vector) in enumerate(zip(outputs, self.vector, strict=True))]
        return [_to_kind(cupy, out, kind) for out in shaped]

    def launch(self, cupy, precision: str, flat: list, batched: list[bool], outputs: list,
               n: int, layout: str = "soa") -> None:
        """Run the kernels on ``n`` samples. ``layout="soa"`` (structure of arrays, the
        fast one: a warp's 32 reads or writes of one value are one contiguous block):
        ``flat[i]`` a C-contiguous ``(nnz, n)`` array where ``batched[i]``, and ``outputs``
        dense ``(size, n)``; ``"aos"``: ``(n, nnz)`` and ``(n, size)``, NumPy's layout of a
        batch. A shared input is ``(nnz,)``, an absent one None (zeros)."""
        kernels = self.kernels(cupy, precision)
        real = np.float32 if precision == "float32" else np.float64
        soa = layout == "soa"
        mid_columns = self.source.mid
        chunk = n if not mid_columns else \
            max(1, min(n, _MID_BYTES // (mid_columns * np.dtype(real).itemsize)))
        mid = cupy.empty(mid_columns * chunk, dtype=real) if mid_columns else None
        zeros: list = []  # kept until the kernels are queued

        def strided(array, size: int, start: int) -> list:
            """pointer to sample ``start``, sample stride, element stride"""
            if soa:
                return [np.uint64(array.data.ptr + start * array.itemsize), np.int64(1),
                        np.int64(n)]
            return [np.uint64(array.data.ptr + start * size * array.itemsize),
                    np.int64(size), np.int64(1)]

        for start in range(0, n, chunk):
            size = min(chunk, n - start)
            args: list = [np.int64(size), np.int32(1)]
            for array, is_batched, nnz in zip(flat, batched, self.source.nnz_in, strict=True):
                if array is None:  # zeros, shared by every sample
                    array = cupy.zeros(nnz, dtype=real)
                    zeros.append(array)
                    args += [np.uint64(array.data.ptr), np.int64(0), np.int64(1)]
                elif is_batched:
                    args += strided(array, nnz, start)
                else:
                    args += [np.uint64(array.data.ptr), np.int64(0), np.int64(1)]
            for out, size_out in zip(outputs, self.source.dense_out, strict=True):
                args += strided(out, size_out, start)
            if mid is not None:
                args.append(np.uint64(mid.data.ptr))
            grid = ((size + BLOCK - 1) // BLOCK,)
            for kernel in kernels:
                kernel(grid, (BLOCK,), tuple(args))


def _on_device(cupy, value):
    """``value`` as a CuPy array: itself, a view through DLPack (PyTorch, JAX), or a copy
    of a NumPy array or list."""
    kind = array_kind(value)
    if kind == "cupy":
        return value
    if kind is not None:
        return cupy.from_dlpack(value)
    return cupy.asarray(np.asarray(value, dtype=float))


def _nonzeros(cupy, array, batched: bool, sparsity: ca.Sparsity):
    """The input ``array`` (one value or a batch of them) as CasADi's nonzeros, one
    contiguous row per sample: a matrix is read column by column (CasADi's order)."""
    rows, cols = sparsity.shape
    if cols > 1 or array.ndim - batched == 2:
        array = array.reshape((-1, rows, cols) if batched else (rows, cols))
        array = cupy.swapaxes(array, -1, -2)
    flat = cupy.ascontiguousarray(array.reshape((array.shape[0], -1) if batched else (-1,)))
    if not sparsity.is_dense():
        index = cupy.asarray(np.array(sparsity.find(), dtype=np.int64))
        flat = cupy.ascontiguousarray(flat[..., index])
    return flat


def _to_kind(cupy, array, kind: str):
    """``array`` (CuPy) as an array of ``kind``, without a copy where one is on the GPU."""
    if kind == "cupy":
        return array
    if kind == "numpy":
        return cupy.asnumpy(array)
    if kind == "torch":
        import torch

        return torch.from_dlpack(array)
    if kind in ("jax", "jaxlib"):
        import jax.numpy as jnp

        return jnp.from_dlpack(array)
    return array
