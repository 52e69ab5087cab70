"""Batched numeric calls through the SIMD entry points of a compiled library.

A library built by :meth:`casdyn.RigidBodyTree.compile` holds, beside each Function, its
batched entry point (:mod:`casdyn.codegen.simd`): one C call evaluates a whole batch, a
block of samples per vector instruction. :class:`BatchKernel` calls it through ``ctypes``,
which releases the GIL during the call, so that a large batch is split across threads.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import casadi as ca
import numpy as np

from .. import sizes

# A batch is split across threads where each thread gets at least this many instructions
# times samples (measurements: casdyn.sizes.BATCH_WORK_PER_THREAD)
WORK_PER_THREAD = sizes.BATCH_WORK_PER_THREAD

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _threads() -> ThreadPoolExecutor:
    """The process's pool of batch threads, made on first use."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1,
                                       thread_name_prefix="casdyn-batch")
        return _pool


class NonFiniteInput(Exception):
    """An input of the batch holds a NaN or an infinity (found by the kernel as it reads
    them); the caller's checked path then says which."""


class BatchKernel:
    """The batched C entry point of ``function`` (``int f(const double** arg, const long
    long* stride, double** res, long long n)``, see :mod:`casdyn.codegen.simd`) in a loaded
    library. Stateless: any thread may call it."""

    def __init__(self, library: ctypes.CDLL, symbol: str, function: ca.Function):
        self._entries = []
        for form in (symbol, f"{symbol}_dense"):
            entry = getattr(library, form)
            # the pointer arrays are NumPy arrays of addresses (cheaper to make than ctypes
            # arrays of casts: 10 us a call for three inputs)
            entry.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                              ctypes.c_longlong]
            entry.restype = ctypes.c_int
            self._entries.append(entry)
        self.nnz_in = [function.nnz_in(i) for i in range(function.n_in())]
        self.nnz_out = [function.nnz_out(i) for i in range(function.n_out())]
        self.numel_out = [function.numel_out(i) for i in range(function.n_out())]
        self._work = max(function.n_instructions(), 1) if function.is_a("SXFunction") else 1

    def __call__(self, inputs: list[np.ndarray], n: int, threads: int | None = None,
                 dense: bool = False) -> list[np.ndarray]:
        """The outputs ``(n, nnz_out)`` of ``n`` samples (``dense``: ``(n, rows * cols)``,
        each sample's output dense and row-major); ``inputs[i]`` is a C-contiguous float64
        array ``(n, nnz_in)`` (one row per sample) or ``(nnz_in,)`` (every sample's).
        ``threads``: how many threads to split the batch across (default: by its size)."""
        entry = self._entries[dense]
        outputs = [np.empty((n, size)) for size in (self.numel_out if dense else self.nnz_out)]
        if n == 0:
            return outputs
        if threads is None:
            threads = min(os.cpu_count() or 1, n * self._work // WORK_PER_THREAD)
        strides = [a.shape[1] if a.ndim == 2 else 0 for a in inputs]
        stride = np.array(strides or [0], dtype=np.int64)
        if threads <= 1:
            self._run(entry, inputs, strides, stride, outputs, 0, n)
            return outputs
        bounds = [n * t // threads for t in range(threads + 1)]
        jobs = [_threads().submit(self._run, entry, inputs, strides, stride, outputs, start,
                                  stop)
                for start, stop in itertools.pairwise(bounds) if stop > start]
        for job in jobs:
            job.result()
        return outputs

    @staticmethod
    def _run(entry, inputs, strides, stride, outputs, start: int, stop: int) -> None:
        """Samples ``start`` to ``stop`` (the GIL released while C runs)."""
        arg = np.array([a.ctypes.data + 8 * start * s
                        for a, s in zip(inputs, strides, strict=True)] or [0], dtype=np.uintp)
        res = np.array([o.ctypes.data + 8 * start * o.shape[1] for o in outputs] or [0],
                       dtype=np.uintp)
        status = entry(arg.ctypes.data, stride.ctypes.data, res.ctypes.data, stop - start)
        if status == 2:
            raise NonFiniteInput
        if status != 0:
            raise MemoryError("the batched evaluation could not allocate its scratch space")
