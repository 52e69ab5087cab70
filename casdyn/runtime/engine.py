"""The numeric call engine: NumPy in, NumPy out, by the fastest path available.

A numeric call of a robot's Function takes one of four paths, tried in order: the compiled
entry point of a library built by :meth:`casdyn.RigidBodyTree.compile` (one C call for the
whole call, shared by the threads), the buffer path (this thread's preallocated evaluator
of the Function or its compiled twin, for float arrays of exactly the expected shapes), the
checked path (any array-like input checked, converted and given its precise error), and for
inputs with a leading batch dimension the Function mapped over chunks of the batch. Symbolic
inputs (SX, MX, Opti) call the SX Function and return expressions of the same kind.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any

import casadi as ca
import numpy as np

from .. import arguments
from ..errors import InputError
from ..functions.cache import FunctionCache
from ..functions.inputs import INPUTS
from ..functions.registry import VECTOR_OUTPUTS, Signature
from ..model.tree import Model
from .batch import BatchKernel, NonFiniteInput
from .evaluator import NumericEvaluator

# Batches are evaluated in chunks of at most this many samples, by Functions mapped over the
# chunk; each thread keeps the evaluators of its most recent few (Function, chunk size)
# pairs. Memory kept between calls is therefore bounded, whatever the batch sizes.
BATCH_CHUNK = 4096
MAPPED_PER_THREAD = 8

_FLOAT64 = np.dtype(float)


def _on_device(value) -> bool:
    """Whether ``value`` is an array on a GPU (CuPy, or PyTorch, JAX, ... through DLPack)
    rather than NumPy, a list, a number or a CasADi symbol."""
    if isinstance(value, np.ndarray) or not hasattr(value, "__dlpack_device__"):
        return hasattr(value, "__cuda_array_interface__")
    try:
        return value.__dlpack_device__()[0] in _DLPACK_CUDA
    except Exception:  # a device that cannot be asked is not a GPU one
        return False


# DLPack's device types of GPU memory: kDLCUDA, kDLCUDAManaged
_DLPACK_CUDA = (2, 13)


class _Workspace(threading.local):
    """One thread's evaluators (their buffers are Pinocchio's ``Data``): threads never share
    a buffer, so numeric calls from several threads give exactly the single-thread numbers.
    :meth:`RigidBodyTree.compile` replaces the whole workspace, in every thread at once."""

    def __init__(self):
        # call-site key -> (Function key, SX Function, evaluator of it or its compiled twin,
        # compiled entry point or None)
        self.single: dict[tuple, tuple] = {}
        # (Function key, chunk size) -> evaluator of the numeric Function mapped over it
        self.mapped: OrderedDict[tuple, NumericEvaluator] = OrderedDict()


class NumericEngine:
    """Evaluates one model's Functions on numbers (and symbols) for every thread: the
    Function cache, the compiled twins and entry points installed by ``compile``, each
    thread's evaluators, and the defaults of inputs left out. What it knows of an input
    (its shape, default, whether it is a configuration) it reads from the input's
    :class:`casdyn.functions.inputs.Input`; a Function is called by its
    :class:`casdyn.functions.registry.Signature`."""

    def __init__(self, model: Model, functions: FunctionCache):
        self.model = model
        self.functions = functions
        self._n_bodies = len(model.bodies)
        self._compiled: dict[tuple, ca.Function] = {}  # Function key -> compiled twin
        self._kernels: dict[tuple, BatchKernel] = {}  # Function key -> batched entry point
        # Function key -> (entry point's evaluate, index in its library), see
        # casdyn.runtime.entry
        self._native: dict[tuple, tuple] = {}
        self._workspace = _Workspace()
        # Function key -> its kernels on the GPU (casdyn.codegen.gpu.GpuFunction), installed
        # by compile(device="cuda"): batches of device arrays, and NumPy batches, run there
        self._gpu: dict[tuple, Any] = {}
        # counts the numeric calls of Functions not compiled yet, which it has compiled in the
        # background after a while (casdyn.codegen.background.CallCounter, given by the
        # facade; None: CASDYN_COMPILE=0)
        self.counter: Any = None
        # (signature, optional input absent) -> compiled entry point of a call without
        # options: shared by the threads, as the entry point keeps nothing between calls (the
        # shortest numeric path)
        self._entry_points: dict[tuple[Signature, bool], tuple] = {}
        # per input name: what None means (read-only, shared by every call and thread), the
        # shape of one value, and its number of dimensions (one more is a batch)
        self._defaults = {name: i.default_value(model) for name, i in INPUTS.items()}
        self._shapes = {name: i.value_shape(model) for name, i in INPUTS.items()}
        self._ndim = {name: len(shape) for name, shape in self._shapes.items()}
        self._configurations = tuple(name for name, i in INPUTS.items() if i.configuration)
        # (first entry in q, joint name) of each quaternion, checked in numeric calls
        self._quaternions = tuple((joint.idx_q + joint.type.quaternion_at, joint.name)
                                  for joint in model.coordinate_joints
                                  if joint.type.quaternion_at is not None)

    @property
    def compiled_keys(self) -> tuple[tuple, ...]:
        """The keys of the Functions whose numeric calls run compiled code."""
        return tuple(self._compiled)

    def install(self, keys: list[tuple], compiled: list[ca.Function], module,
                kernels: list | None = None) -> None:
        """From now on numeric calls of the Functions of ``keys`` run ``compiled`` (and the
        library's entry point ``module``, if any), in every thread; batches run the
        :class:`casdyn.runtime.batch.BatchKernel` of ``kernels`` (one per key or None)."""
        self._compiled.update(zip(keys, compiled, strict=True))
        if kernels is not None:
            self._kernels.update((key, kernel) for key, kernel in zip(keys, kernels, strict=True)
                                 if kernel is not None)
        if module is not None:
            self._native.update((key, (module.evaluate, k)) for k, key in enumerate(keys))
        self._workspace = _Workspace()  # every thread's evaluators are made anew
        self._entry_points = {}

    def install_gpu(self, keys: list[tuple], functions: list) -> None:
        """From now on batches of the Functions of ``keys`` run on the GPU, by
        ``functions`` (one :class:`casdyn.codegen.gpu.GpuFunction` per key)."""
        self._gpu.update(zip(keys, functions, strict=True))

    def call(self, signature: Signature, options: dict | None = None, **values):
        """Check the arguments, fill RST's defaults and evaluate the Function of
        ``signature`` with ``options`` (None: its defaults).

        Numbers give NumPy results; CasADi symbols give CasADi expressions; arrays with a
        leading batch dimension N give results with that leading dimension, evaluated by the
        Function mapped over the batch (CasADi threads), not by a Python loop. The
        signature's optional input given as None (``fext=None``: no external forces) is
        absent: the call evaluates the variant without it, whose graph is smaller
        (:attr:`casdyn.functions.inputs.Input.optional`).
        """
        # GPU arrays are looked for only once compile(device="cuda") installed kernels (the
        # look costs ~1 us a call); before that, check() names a GPU array's problem
        if self._gpu and any(map(_on_device, values.values())):
            return self._evaluate_on_device(signature, options, values)
        if self._quaternions:  # before any path, compiled ones included
            for name_q in self._configurations:
                if values.get(name_q) is not None:
                    values[name_q] = arguments.quaternions(values[name_q], name_q, self.model.nq,
                                                           self._quaternions)
        optional = signature.optional  # None if it has none (no value is keyed None)
        absent = values.get(optional, 0) is None
        shared = (signature, absent) if options is None else None
        native = self._entry_points.get(shared) if shared else None
        entry = None
        if native is None:
            entry = self._thread_entry(signature, options, absent)
            native = entry[3]
            if native is not None and shared:
                self._entry_points[shared] = native
        if native is not None and self._gpu:  # batches of a GPU Function go to the GPU
            entry = entry or self._thread_entry(signature, options, absent)
            if entry[0] in self._gpu and any(np.ndim(v) > self._ndim[name]
                                             for name, v in values.items() if v is not None):
                native = None
        if native is not None:  # the compiled entry point, None for input it does not take
            evaluate, index, defaults = native
            result = evaluate(index, values, defaults)
            if result is not None:
                return result
        key, function, evaluator, _ = entry or self._thread_entry(signature, options, absent)
        if native is None and self.counter is not None:
            self.counter.note(key)
        fast = self._evaluate_fast(evaluator, values)
        if fast is not None:
            return fast
        if absent:
            del values[optional]
        # a batch for a batched kernel is checked for NaNs and infinities by the kernel as
        # it reads it (a separate pass cost a large batch a third of its time); one for the
        # GPU, which checks nothing, is checked here
        kernel = key in self._kernels and key not in self._gpu
        checked = {k: self.check(k, v, finite=not kernel) for k, v in values.items()}
        inputs = {i: checked.get(i, self._defaults[i]) for i in function.name_in()}
        if arguments.symbolic_kind(inputs.values()) is not None:
            outputs = function.call(list(inputs.values()))
            return outputs[0] if len(outputs) == 1 else tuple(outputs)
        single = {i: self._ndim[i] for i in inputs}
        n = arguments.batch_size(inputs, single)
        if n is None:
            for view, value in zip(evaluator.input_views, inputs.values(), strict=True):
                view[...] = value
            return evaluator.evaluate()
        return self._evaluate_batch(key, evaluator.function, inputs, single, n)

    def _thread_entry(self, signature: Signature, options: dict | None,
                      absent: bool) -> tuple:
        """This thread's :meth:`_entry` of a call site, made on its first call."""
        evaluators = self._workspace.single
        call_key = (signature, tuple(options.items()) if options else (), absent)
        entry = evaluators.get(call_key)
        if entry is None:
            entry = evaluators[call_key] = self._entry(signature, options, absent)
        return entry

    def _entry(self, signature: Signature, options: dict | None, absent: bool):
        """(Function key, SX Function, evaluator of the Function numbers run on, compiled
        entry point as ``(evaluate, index, defaults)`` or None); ``absent``: the variant
        without the signature's optional input."""
        clean = {k: v for k, v in (options or {}).items() if v is not None}
        if absent:
            clean[signature.optional] = False
        key = self.functions.key(signature.name, **clean)
        function = self.functions.get_key(key)
        numeric = self._compiled.get(key, function)
        native = self._native.get(key)
        if native is not None:
            native = (*native, tuple(self._defaults[i] for i in function.name_in()))
        return key, function, NumericEvaluator(numeric, VECTOR_OUTPUTS), native

    def _evaluate_fast(self, evaluator: NumericEvaluator, values: dict):
        """The buffer path for float arrays or lists of exactly the expected shapes; None for
        anything else (DM, symbols, batches, other shapes or types, non-finite values), which
        then takes the checked path and gets its precise error message there."""
        for input_name, view, shape in evaluator.inputs:
            value = values.get(input_name)
            if value is None:
                view[...] = self._defaults[input_name]
            elif type(value) is np.ndarray and value.shape == shape and value.dtype is _FLOAT64:
                view[...] = value
            elif shape == (1,) and isinstance(value, float | int) and not isinstance(value, bool):
                view[0] = value
            elif isinstance(value, list | tuple):
                try:
                    value = np.asarray(value)
                except (TypeError, ValueError):
                    return None
                if value.shape != shape or value.dtype.kind not in "fiu":
                    return None
                view[...] = value
            else:
                return None
        if not evaluator.inputs_finite():
            return None
        return evaluator.evaluate()

    def _evaluate_batch(self, key: tuple, function: ca.Function, inputs: dict, single: dict,
                        n: int):
        """A batch of ``n`` (possibly 0): batched inputs have a leading dimension n, the
        others are shared. Results are ``(n, rows)`` for vectors, else ``(n, rows, cols)``."""
        shapes = [function.size_out(i) for i in range(function.n_out())]
        vector = [function.name_out(i) in VECTOR_OUTPUTS and shapes[i][1] == 1
                  for i in range(function.n_out())]
        gpu = self._gpu.get(key)
        if gpu is not None:
            batched = [np.ndim(value) > single[name] for name, value in inputs.items()]
            outputs = gpu(list(inputs.values()), n, batched)
            return outputs[0] if len(outputs) == 1 else tuple(outputs)
        kernel = self._kernels.get(key)
        if kernel is not None:
            try:
                return self._evaluate_kernel(kernel, function, inputs, single, n, vector)
            except NonFiniteInput:  # the full check says which value
                for name, value in inputs.items():
                    self.check(name, value)
                raise AssertionError("the kernel found a non-finite input the check did "
                                     "not") from None
        results = [np.empty((n, rows) if v else (n, rows, cols))
                   for (rows, cols), v in zip(shapes, vector, strict=True)]
        for start in range(0, n, BATCH_CHUNK):
            size = min(BATCH_CHUNK, n - start)
            evaluator = self._mapped(key, function, size)
            for view, (name, value) in zip(evaluator.input_views, inputs.items(), strict=True):
                batched = np.ndim(value) > single[name]
                part = value[start : start + size] if batched else value
                arguments.fill_batch(view, part, single[name], size)
            dense = evaluator.evaluate_dense()
            for result, out, (rows, cols) in zip(results, dense, shapes, strict=True):
                # column block k of out (rows x cols*size) is sample k
                samples = out.reshape(rows, size, cols).transpose(1, 0, 2)
                result[start : start + size] = samples[:, :, 0] if result.ndim == 2 else samples
        return results[0] if len(results) == 1 else tuple(results)

    @staticmethod
    def _evaluate_kernel(kernel: BatchKernel, function: ca.Function, inputs: dict,
                         single: dict, n: int, vector: list[bool]):
        """:meth:`_evaluate_batch` by the batched C of a compiled library: each input as one
        row of nonzeros per sample (shared inputs once), the outputs written dense in NumPy's
        layout by the C."""
        flat = []
        for (name, value), nnz in zip(inputs.items(), kernel.nnz_in, strict=True):
            value = np.asarray(value, dtype=float)
            batched = value.ndim > single[name]
            if value.ndim - batched == 2:  # a matrix: CasADi's nonzeros are column-major
                value = np.swapaxes(value, -1, -2)
            flat.append(np.ascontiguousarray(value.reshape((n, nnz) if batched else (nnz,))))
        outputs = kernel(flat, n, dense=True)  # NumPy's layout already
        results = []
        for i, (out, v) in enumerate(zip(outputs, vector, strict=True)):
            results.append(out if v else out.reshape((n, *function.size_out(i))))
        return results[0] if len(results) == 1 else tuple(results)

    def _evaluate_on_device(self, signature: Signature, options: dict | None, values: dict):
        """A call with arrays on a GPU (CuPy, PyTorch, JAX): run by the Function's GPU
        kernels, whose results stay on the device; shapes are checked here, values are not
        (that would cost a synchronisation per call)."""
        absent = values.get(signature.optional, 0) is None
        key, function, _, _ = self._entry(signature, options, absent)
        gpu = self._gpu.get(key)
        given = next(name for name, value in values.items() if _on_device(value))
        if gpu is None:
            raise InputError(
                f"{given} is an array on a GPU, but {function.name()} is not compiled for "
                f"the GPU: call robot.compile([{signature.name!r}], device='cuda') first")
        inputs, batched, n = [], [], None
        for name in function.name_in():
            value = values.get(name)
            shape = self._shapes[name]
            got = tuple(getattr(value, "shape", np.shape(value))) if value is not None else ()
            is_batched = value is not None and len(got) == len(shape) + 1
            if value is not None and (got[is_batched:] != shape or (
                    is_batched and n is not None and got[0] != n)):
                expected = "x".join(map(str, shape))
                raise InputError(f"{name} must be {expected} or N x {expected} (N samples"
                                 f"{f', N = {n}' if n is not None else ''}); got "
                                 f"{'x'.join(map(str, got)) or 'a scalar'}")
            if is_batched:
                n = got[0]
            inputs.append(self._defaults[name] if value is None else value)
            batched.append(is_batched)
        if n is None:
            raise InputError(f"a GPU call evaluates a batch: give {given} a leading "
                             "dimension N of samples")
        outputs = gpu(inputs, n, batched)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _mapped(self, key: tuple, function: ca.Function, size: int) -> NumericEvaluator:
        """This thread's evaluator of ``function`` mapped over ``size`` samples; the
        :data:`MAPPED_PER_THREAD` most recently used are kept. SX graphs run in CasADi
        threads; compiled code is fast enough that threads pay off only for large batches
        (measured: serial 0.33 vs threaded 0.36 us per UR5e ID sample at n = 1000)."""
        cache = self._workspace.mapped
        evaluator = cache.get((key, size))
        if evaluator is None:
            threads = min(size, os.cpu_count() or 1)
            if threads > 1 and function.is_a("SXFunction"):
                mapped = function.map(size, "thread", threads)
            else:
                mapped = function.map(size, "serial")
            evaluator = cache[(key, size)] = NumericEvaluator(mapped)
            while len(cache) > MAPPED_PER_THREAD:
                cache.popitem(last=False)
        else:
            cache.move_to_end((key, size))
        return evaluator

    def check(self, name: str, value, finite: bool = True):
        """``value`` of the input ``name`` checked (shape, type, finite), or its default;
        ``finite=False``: a batch's values are left to the kernel that reads them."""
        if value is None:
            return self._defaults[name]
        if _on_device(value):
            raise InputError(
                f"{name} is an array on a GPU, but no function of this robot is compiled for "
                "the GPU: call robot.compile([...], device='cuda') first")
        shape = self._shapes[name]
        if len(shape) == 2:
            return arguments.matrix(value, name, shape, finite)
        return arguments.vector(value, name, shape[0], finite)

    def default(self, name: str) -> np.ndarray:
        """What the input ``name`` left as None means (read-only): the home configuration,
        zeros (no force), the model's own inertial parameters
        (:attr:`casdyn.functions.inputs.Input.default`)."""
        return self._defaults[name]

