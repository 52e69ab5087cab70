"""A robot's Functions on the GPU: ``compile(device="cuda")`` and ``export_cuda``.

Both take the same lists of functions as ``compile()`` and ``export_c`` (:mod:`.robot`) and
write each Function's CUDA C from its SX graph (:mod:`.cuda`). ``compile(device="cuda")``
compiles the kernels for the GPU at hand when a batch first needs them (NVRTC, cached:
:mod:`.nvrtc`) and installs them in the robot's numeric engine; ``export_cuda`` writes
``<prefix>.cu`` and ``<prefix>.h`` into a directory for the user's own CUDA programs.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import casadi as ca

from ..errors import ExportError, InputError
from ..functions.names import identifier
from ..progress import Progress, enabled
from ..runtime.engine import NumericEngine
from . import cuda, source
from .cache_dir import write_file
from .gpu import GpuFunction, cupy_module
from .robot import COMPILED_BY_DEFAULT, _called_variants, export_keys, export_list, items, keyed


def compile_robot_cuda(engine: NumericEngine, functions, progress: bool | None) -> None:
    """:meth:`casdyn.RigidBodyTree.compile` with ``device="cuda"``: the GPU kernels of
    ``functions`` (default: those of a CPU ``compile()``) installed in ``engine``. A
    :class:`casdyn.DeviceError` at once where there is no usable GPU or CuPy; the kernels of
    each precision are compiled (or loaded from the cache) for the device at hand."""
    cupy = cupy_module()
    cache = engine.functions
    listed = COMPILED_BY_DEFAULT if functions is None else _called_variants(items(functions))
    keys = export_keys(cache, listed)
    name = cache.model.name
    with Progress(name, enabled(progress)) as report:
        report.phase(f"building {len(keys)} function{'s' * (len(keys) > 1)}", len(keys))
        gpu_functions = []
        for key in keys:
            with report.step(key[0]):
                function = cache.get_key(key)
                gpu_functions.append(GpuFunction(
                    function, identifier(f"{name}_{function.name()}")))
        report.phase("compiling their CUDA kernels", len(keys))

        def compiled(gpu_function: GpuFunction) -> None:
            with report.step(gpu_function.source.symbol):
                gpu_function.kernels(cupy, "float64")  # now; float32 on first use

        # NVRTC runs outside the GIL: the functions (and their stages) compile in parallel
        with ThreadPoolExecutor(min(len(keys), os.cpu_count() or 1) or 1) as pool:
            list(pool.map(compiled, gpu_functions))
    engine.install_gpu(keys, gpu_functions)


def export_robot_cuda(cache, functions, directory: str | os.PathLike, prefix: str | None,
                      precision: str, progress: bool | None) -> dict[str, ca.Function]:
    """:meth:`casdyn.RigidBodyTree.export_cuda` for the robot of ``cache``."""
    if precision not in cuda.PRECISIONS:
        raise InputError(f"precision must be one of {sorted(cuda.PRECISIONS)}; "
                         f"got {precision!r}")
    name = cache.model.name
    prefix = identifier(name) if prefix is None else source.checked_prefix(prefix)
    if not prefix:
        raise InputError("export_cuda needs a nonempty prefix: it names the files")
    chosen = keyed(export_list(cache, functions), cache.key)
    with Progress(name, enabled(progress)) as report:
        report.phase(f"writing the CUDA C of {len(chosen)} functions", len(chosen))
        parts = []
        for key, function_key in chosen.items():
            with report.step(key):
                parts.append((key, cache.get_key(function_key),
                              cuda.function_source(cache.get_key(function_key),
                                                   f"{prefix}_{key}")))
    write_cuda(parts, Path(directory), prefix, precision)
    return {key: function for key, function, _ in parts}


def write_cuda(parts: list[tuple[str, ca.Function, cuda.CudaFunction]], directory: Path,
               prefix: str, precision: str) -> None:
    """Write ``<prefix>.cu`` and ``<prefix>.h`` into ``directory``: both or neither (an
    :class:`casdyn.ExportError` naming the directory where it cannot be written)."""
    text = cuda.file_source([part for _, _, part in parts], (precision,))
    header = _header(parts, prefix, precision)
    files = {directory / f"{prefix}.cu": text, directory / f"{prefix}.h": header}
    written: list[Path] = []
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for path, content in files.items():
            write_file(path, lambda scratch, content=content: scratch.write_text(content),
                       sealed=False)
            written.append(path)
            path.chmod(0o644)
    except OSError as exc:
        for path in written:
            path.unlink(missing_ok=True)
        raise ExportError(f"export_cuda cannot write into {directory}: "
                          f"{exc.strerror or exc}") from None


def _header(parts, prefix: str, precision: str) -> str:
    real, suffix = cuda.PRECISIONS[precision]
    guard = f"{prefix.upper()}_CUDA_H"
    lines = [
        f"/* {prefix}.h: the kernels of {prefix}.cu (generated by casdyn), {precision}.",
        " *",
        " * Each Function has a batched kernel, one thread per sample, and a host launcher;",
        " * their parameters, in order: n (samples), dense (0: outputs as CasADi's nonzeros,",
        " * 1: dense row-major), then per input a pointer and two strides in elements,",
        " * x_sample and x_element (nonzero c of sample k at x[k * x_sample + c * x_element];",
        " * x_sample = 0: one value for all samples; no pointer may be NULL), the same per",
        " * output,",
        " * then, for a Function in several stages, the scratch `mid` of <NAME>_MID * n",
        " * values, then the stream. The launcher runs the stages in order. The device",
        f" * function <name>(const {real}* const* arg, {real}* const* res) evaluates one",
        f" * sample; it is a template in {prefix}.cu: include {prefix}.cu to call it from",
        " * your own kernels. */",
        f"#ifndef {guard}", f"#define {guard}", "#include <cuda_runtime.h>", "",
    ]
    for key, function, part in parts:
        symbol = f"{prefix}_{key}"
        ins = ", ".join(f"{function.name_in(i)} ({_size(function.sparsity_in(i))})"
                        for i in range(function.n_in()))
        outs = ", ".join(f"{function.name_out(i)} ({_size(function.sparsity_out(i))})"
                         for i in range(function.n_out()))
        lines += [f"/* {key}: inputs {ins}; outputs {outs}; {part.stages} stage(s) */",
                  f"#define {symbol.upper()}_MID {part.mid}"]
        params = []
        for i in range(function.n_in()):
            params.append(f"const {real}* {function.name_in(i)}, long long "
                          f"{function.name_in(i)}_sample, long long "
                          f"{function.name_in(i)}_element")
        for i in range(function.n_out()):
            params.append(f"{real}* {function.name_out(i)}, long long "
                          f"{function.name_out(i)}_sample, long long "
                          f"{function.name_out(i)}_element")
        if part.mid:
            params.append(f"{real}* mid")
        declared = ",\n    ".join(["long long n, int dense", *params])
        lines += [f"extern \"C\" cudaError_t {symbol}_{suffix}_launch(\n    {declared},\n"
                  "    cudaStream_t stream);", ""]
    lines += [f"#endif /* {guard} */", ""]
    return "\n".join(lines)


def _size(sparsity: ca.Sparsity) -> str:
    rows, cols = sparsity.shape
    shape = f"{rows}" if cols == 1 else f"{rows}x{cols}"
    return shape if sparsity.is_dense() else f"{shape}, {sparsity.nnz()} nonzeros"
