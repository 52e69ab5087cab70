"""The CUDA C of casdyn's Functions, checked where there is no GPU: the very source the GPU
compiles, compiled as C++ on the CPU (the launch emulated by a loop over the samples), agrees
with CasADi's evaluation of the SX graph; NVRTC compiles it for sm_80 and sm_90; the Python
API refuses clearly without CuPy or a GPU. tests/test_gpu.py runs it on a GPU."""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path

import casadi as ca
import numpy as np
import pytest

import casdyn
from casdyn import sizes
from casdyn.codegen import cuda, nvrtc

# f64: the same operations in the same order as CasADi's evaluation, rounding aside
F64 = 1e-14


def _robot_functions(robot) -> dict[str, ca.Function]:
    """Registered Functions of every kind: dynamics, kinematics, Jacobians, contacts,
    centroidal, identification, both first-order derivatives, the second-order inverse
    dynamics ones (the forward dynamics' too on the fixed-base arm), an RK4 step."""
    body = robot.body_names[-1]
    functions = {
        "id": robot.function("inverse_dynamics"),
        "fd": robot.function("forward_dynamics"),
        "m": robot.function("mass_matrix"),
        "did": robot.function("inverse_dynamics_derivatives"),
        "dfd": robot.function("forward_dynamics_derivatives"),
        "fk": robot.function("get_transform", body=body),
        "jac": robot.function("geometric_jacobian", body=body),
        "com": robot.function("center_of_mass"),
        "hg": robot.function("centroidal_momentum_matrix"),
        "reg": robot.function("regressor"),
        "contact": robot.function("contact_dynamics",
                                  contacts=(casdyn.Contact(body, "point", (0.0, 0.0, 0.05)),)),
        "rk4": casdyn.integrators.rk4_step(robot, 0.01),
        "d2id": robot.function("inverse_dynamics_second_derivatives"),
    }
    if not robot.floating_base:  # solo12's: 315,796 instructions, long to compile as C++
        functions["d2fd"] = robot.function("forward_dynamics_second_derivatives")
    if robot.floating_base:  # an OCP's stage: a contact step of casdyn.ocp, two feet held
        from casdyn.ocp import ContactModel

        feet = [f"{leg}_FOOT" for leg in ("FL", "FR", "HL", "HR")]
        functions["ocp_step"] = ContactModel(robot, feet, dt=0.01).step((1, 0, 0, 1))
    return functions


def _build(functions: dict[str, ca.Function], folder: Path, stage: int | None = None) -> tuple:
    parts = {key: cuda.function_source(f, f"t_{key}", stage=stage)
             for key, f in functions.items()}
    path = folder / "kernels.cu"
    path.write_text(cuda.file_source(list(parts.values())))
    library = folder / "kernels.so"
    subprocess.run(["g++", "-x", "c++", "-std=c++17", "-O0", "-ffp-contract=off",
                    "-DCASDYN_EMULATE", "-fPIC", "-shared", "-o", str(library), str(path)],
                   check=True, capture_output=True)
    return parts, ctypes.CDLL(str(library))


def _emulate(lib, part: cuda.CudaFunction, inputs, n: int, precision="float64",
             dense=False, layout="aos"):
    """Run the emulated kernels on ``inputs`` (per input: (n, nnz) or (nnz,) shared or
    None); outputs (n, nnz or dense size)."""
    real = np.float64 if precision == "float64" else np.float32
    keep = []

    def pointer(array):
        keep.append(array)
        return ctypes.c_void_p(array.ctypes.data)

    args = [ctypes.c_longlong(n), ctypes.c_int(int(dense))]
    for value in inputs:
        if value is None:  # zeros: one shared array (kernels take no NULL)
            args += [pointer(np.zeros(1 << 12, dtype=real)), ctypes.c_longlong(0),
                     ctypes.c_longlong(1)]
        elif value.ndim == 1:
            args += [pointer(np.ascontiguousarray(value, dtype=real)), ctypes.c_longlong(0),
                     ctypes.c_longlong(1)]
        elif layout == "soa":  # (nnz, n): sample stride 1, element stride n
            args += [pointer(np.ascontiguousarray(value.T, dtype=real)), ctypes.c_longlong(1),
                     ctypes.c_longlong(n)]
        else:
            args += [pointer(np.ascontiguousarray(value, dtype=real)),
                     ctypes.c_longlong(value.shape[1]), ctypes.c_longlong(1)]
    counts = part.dense_out if dense else part.nnz_out
    outputs = [np.zeros((size, n) if layout == "soa" else (n, size), dtype=real)
               for size in counts]
    for out, size in zip(outputs, counts, strict=True):
        strides = (1, n) if layout == "soa" else (size, 1)
        args += [pointer(out), ctypes.c_longlong(strides[0]), ctypes.c_longlong(strides[1])]
    if part.mid:
        args.append(pointer(np.zeros(part.mid * n, dtype=real)))
    suffix = cuda.PRECISIONS[precision][1]
    getattr(lib, f"{part.symbol}_{suffix}_emulate")(*args)
    return [out.T if layout == "soa" else out for out in outputs]


def _reference(function: ca.Function, inputs, n: int) -> list[np.ndarray]:
    """CasADi's evaluation, sample by sample: (n, nnz) per output."""
    rows = []
    for k in range(n):
        args = [ca.DM(function.sparsity_in(i), 0 if x is None else
                      (x if x.ndim == 1 else x[k]).tolist())
                for i, x in enumerate(inputs)]
        rows.append([np.array(out.nonzeros()) for out in function.call(args)])
    return [np.array([row[j] for row in rows]) for j in range(function.n_out())]


def _inputs(function: ca.Function, n: int, rng) -> list[np.ndarray]:
    out = []
    for i in range(function.n_in()):
        x = rng.normal(size=(n, function.nnz_in(i)))
        if function.name_in(i) == "q":  # unit quaternions are not required, nonzero ones are
            x[:, :] = rng.uniform(-1.5, 1.5, size=x.shape)
        out.append(x)
    return out


def _relative(actual, expected) -> float:
    return float(np.max(np.abs(actual - expected), initial=0.0) /
                 max(1.0, np.max(np.abs(expected), initial=0.0)))


@pytest.fixture(scope="module", params=["ur5e", "solo12"])
def emulated(request, tmp_path_factory):
    floating = request.param == "solo12"
    robot = casdyn.load_robot(request.param, floating_base=floating)
    functions = _robot_functions(robot)
    # a small stage so that the derivatives run in several stages through the scratch
    parts, lib = _build(functions, tmp_path_factory.mktemp(request.param), stage=1500)
    return robot, functions, parts, lib


@pytest.mark.slow  # compiles every kind of Function's kernels as C++
def test_every_kind_of_function_agrees_with_casadi_in_float64(emulated):
    robot, functions, parts, lib = emulated
    rng = np.random.default_rng(1)
    staged = reordered = 0
    for key, function in functions.items():
        inputs = _inputs(function, 5, rng)
        got = _emulate(lib, parts[key], inputs, 5)
        for actual, expected in zip(got, _reference(function, inputs, 5), strict=True):
            assert _relative(actual, expected) <= F64, key
        staged += parts[key].stages > 1
        reordered += parts[key].reordered
    assert staged >= 2  # the derivatives went through the scratch between stages
    if robot.floating_base:  # solo12's ID and FD keep over 200 values alive in CasADi's order
        assert reordered >= 2


@pytest.mark.slow  # compiles every kind of Function's kernels as C++
def test_layouts_shared_and_absent_inputs_and_dense_outputs(emulated):
    _, functions, parts, lib = emulated
    function, part = functions["dfd"], parts["dfd"]
    rng = np.random.default_rng(2)
    n = 6
    inputs = _inputs(function, n, rng)
    inputs[1] = inputs[1][0]  # qd shared by every sample
    inputs[3] = None  # fext absent: zeros
    expected = _reference(function, inputs, n)
    for layout in ("aos", "soa"):
        got = _emulate(lib, part, inputs, n, layout=layout)
        for actual, want in zip(got, expected, strict=True):
            assert _relative(actual, want) <= F64, layout
    dense = _emulate(lib, part, inputs, n, dense=True)
    for j, (actual, want) in enumerate(zip(dense, expected, strict=True)):
        full = np.array([np.array(ca.DM(function.sparsity_out(j), row)) for row in want])
        assert _relative(actual, full.reshape(n, -1)) <= F64


@pytest.mark.slow  # compiles every kind of Function's kernels as C++
def test_float32_kernels_agree_to_single_precision(emulated):
    _, functions, parts, lib = emulated
    rng = np.random.default_rng(3)
    for key in ("id", "fd", "m", "fk"):
        function = functions[key]
        inputs = _inputs(function, 4, rng)
        got = _emulate(lib, parts[key], inputs, 4, precision="float32")
        for actual, expected in zip(got, _reference(function, inputs, 4), strict=True):
            assert actual.dtype == np.float32
            assert _relative(actual, expected) <= 2e-3, key


def test_a_sine_and_cosine_of_one_value_come_from_one_sincos(tmp_path):
    """A joint's sine and cosine come from one ``casdyn_sincos`` (one argument reduction and
    one slow path on the device), only where both are in one stage; either way the
    emulated kernels give CasADi's numbers."""
    robot = casdyn.load_robot("ur5e")
    function = robot.function("forward_dynamics", fext=False)
    whole = cuda.function_source(function, "t")
    # five pairs: the last joint turns a body whose inertia is round about its axis, so
    # neither its sine nor its cosine is in the graph
    assert whole.text.count("casdyn_sincos(") == 5
    assert " sin(" not in whole.text and " cos(" not in whole.text
    x = ca.SX.sym("x")
    apart = ca.Function("apart", [x], [ca.vertcat(ca.sin(x) * 3, ca.cos(x) + 1)])
    split = cuda.function_source(apart, "s", stage=3)  # sin and cos in two stages
    assert split.stages > 1 and "casdyn_sincos(" not in split.text
    parts, lib = _build({"fd": function, "apart": apart}, tmp_path)
    (tmp_path / "split").mkdir()
    split, lib_split = _build({"apart": apart}, tmp_path / "split", stage=3)
    rng = np.random.default_rng(4)
    for key, f, part, library in (("fd", function, parts["fd"], lib),
                                  ("apart", apart, parts["apart"], lib),
                                  ("apart", apart, split["apart"], lib_split)):
        inputs = _inputs(f, 4, rng)
        for actual, expected in zip(_emulate(library, part, inputs, 4),
                                    _reference(f, inputs, 4), strict=True):
            assert _relative(actual, expected) <= F64, key


def test_unsupported_functions_are_refused_with_the_reason():
    x = ca.MX.sym("x", 2)
    with pytest.raises(casdyn.ExportError, match="not an SX Function"):
        cuda.function_source(ca.Function("f", [x], [x * 2]), "f")
    assert issubclass(cuda.UnsupportedFunction, casdyn.CasdynError)
    # a pair without a closed form calls the compiled GJK/EPA routine: no CUDA form, said so
    from casdyn import geometry

    mesh = geometry.ConvexMesh(np.random.default_rng(0).normal(size=(30, 3)))
    p = ca.SX.sym("p", 3)
    pose = ca.vertcat(ca.horzcat(ca.SX.eye(3), p), ca.horzcat(ca.SX.zeros(1, 3), 1))
    distance = ca.Function("d", [p], [geometry.signed_distance(geometry.Sphere(0.1), pose,
                                                               mesh, np.eye(4))])
    with pytest.raises(casdyn.ExportError, match="GJK/EPA, which has no CUDA form"):
        cuda.function_source(distance, "d")


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_nvrtc_compiles_the_source_of_an_export(tmp_path, arch):
    robot = casdyn.load_robot("ur5e")
    robot.export_cuda(tmp_path, ["inverse_dynamics", "forward_dynamics_derivatives"],
                      prefix="arm")
    text = (tmp_path / "arm.cu").read_text()
    cubin = nvrtc.compile_cuda(text, "arm", arch)
    assert cubin[:4] == b"\x7fELF"  # machine code for that architecture
    assert b"arm_inverse_dynamics_f64" in cubin
    with pytest.raises(casdyn.DeviceError, match="could not compile"):
        nvrtc.compile_cuda(text + "\nthis is not C++;\n", "broken", arch)


@pytest.mark.slow  # compiles kernels as C++ and for sm_90
def test_stages_with_many_outputs_write_them_through_the_far_accessor(tmp_path, monkeypatch):
    """Their results are the same, as C++ and as PTX that NVRTC accepts (the accessor's
    multiply-add is inline PTX on the device)."""
    robot = casdyn.load_robot("ur5e")
    function = robot.function("inverse_dynamics_derivatives", fext=False)
    monkeypatch.setattr(sizes, "CUDA_FAR_OUTPUTS", 50)  # stages of 23 and 82 outputs
    parts, lib = _build({"did": function}, tmp_path, stage=1500)
    kernels = parts["did"].kernel_texts["float64"]
    assert any("casdyn_strided_out<double, true>" in k for k in kernels)
    assert not all("casdyn_strided_out<double, true>" in k for k in kernels)
    inputs = _inputs(function, 4, np.random.default_rng(2))
    expected = _reference(function, inputs, 4)
    for layout in ("aos", "soa"):
        got = _emulate(lib, parts["did"], inputs, 4, layout=layout)
        for actual, want in zip(got, expected, strict=True):
            assert _relative(actual, want) <= F64, layout
    dense = _emulate(lib, parts["did"], inputs, 4, dense=True)  # the outputs' dense places
    for j, (actual, want) in enumerate(zip(dense, expected, strict=True)):
        full = np.array([np.array(ca.DM(function.sparsity_out(j), row)) for row in want])
        assert _relative(actual, full.reshape(4, -1)) <= F64
    for program, name in zip(parts["did"].programs("float64"), parts["did"].kernels("float64"),
                             strict=True):
        assert nvrtc.compile_cuda(program, name, "sm_90")[:4] == b"\x7fELF"


def test_export_cuda_writes_a_source_and_header_that_build_as_cpp(tmp_path):
    robot = casdyn.load_robot("ur5e")
    functions = robot.export_cuda(tmp_path, ["inverse_dynamics", "mass_matrix"],
                                  prefix="arm", precision="float32")
    assert set(functions) == {"inverse_dynamics", "mass_matrix"}
    text = (tmp_path / "arm.cu").read_text()
    assert "arm_inverse_dynamics_f32" in text and "_f64" not in text
    header = (tmp_path / "arm.h").read_text()
    assert "arm_mass_matrix_f32_launch" in header and "#define ARM_MASS_MATRIX_MID 0" in header
    # every symbol carries the prefix: nothing global without it but the shared helpers
    subprocess.run(["g++", "-x", "c++", "-std=c++17", "-fsyntax-only", "-DCASDYN_EMULATE",
                    str(tmp_path / "arm.cu")], check=True)
    with pytest.raises(casdyn.InputError, match="precision"):
        robot.export_cuda(tmp_path, "mass_matrix", precision="half")
    blocked = tmp_path / "file"
    blocked.write_text("")
    with pytest.raises(casdyn.ExportError, match="cannot write"):
        robot.export_cuda(blocked / "sub", "mass_matrix")


def test_without_cupy_compile_for_the_gpu_says_what_to_install(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_cupy(name, *args, **kwargs):
        if name == "cupy" or name.startswith("cupy."):
            raise ImportError("No module named 'cupy'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cupy)
    robot = casdyn.load_robot("ur5e")
    with pytest.raises(casdyn.DeviceError, match=r'pip install "casdyn\[gpu\]"'):
        robot.compile(device="cuda")
    with pytest.raises(casdyn.InputError, match="device must be"):
        robot.compile(device="tpu")


class _DeviceArray:
    """An array that says it is in GPU memory (DLPack device type 2), as a CuPy, PyTorch or
    JAX array on a GPU does."""

    shape = (3, 6)

    def __dlpack__(self, stream=None):
        raise AssertionError("not to be read")

    def __dlpack_device__(self):
        return (2, 0)


def test_a_gpu_array_for_a_function_not_compiled_for_the_gpu_is_refused():
    robot = casdyn.load_robot("ur5e")
    with pytest.raises(casdyn.InputError, match=r"compiled for the GPU.*device='cuda'"):
        robot.inverse_dynamics(_DeviceArray(), np.zeros(6), np.zeros(6))


def test_a_numpy_batch_for_the_gpu_is_checked_even_with_a_cpu_kernel(tmp_path):
    """The GPU checks no values: a NumPy batch bound for it is checked on the CPU, also when
    the function has a CPU kernel too (whose own check would otherwise be relied on)."""
    robot = casdyn.load_robot("ur5e").compile([("inverse_dynamics", {"fext": False})],
                                              directory=tmp_path, batch=True)
    key = robot._functions.key("inverse_dynamics", fext=False)
    reached = []
    robot._engine.install_gpu([key], [lambda inputs, n, batched: reached.append(n) or
                                      [np.zeros((n, 6))]])
    q = np.zeros((5, 6))
    bad = q.copy()
    bad[3, 1] = np.nan
    with pytest.raises(casdyn.InputError, match="finite"):
        robot.inverse_dynamics(q, bad, q)
    assert reached == []
    assert robot.inverse_dynamics(q, q, q).shape == (5, 6) and reached == [5]
