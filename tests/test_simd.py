"""The batched C in SIMD lanes (casdyn.codegen.simd): its C entry point called from ctypes,
and batched numeric calls after compile(), against the single-sample paths."""

from __future__ import annotations

import ctypes
import math
import subprocess
import tempfile
from pathlib import Path

import casadi as ca
import numpy as np
import pytest

import casdyn
import casdyn.sizes
from casdyn.codegen import simd
from casdyn.codegen.build import find_compiler

pytestmark = pytest.mark.slow  # compiled batched C

W = simd.WIDTH
SIZES = [0, 1, 3, W, W + 1, 1000]
# sin and cos are computed in the lanes to within one ulp of the C library's; everything
# else rounds as the scalar code does
TOLERANCE = 1e-14
# what solves with M amplifies those ulps by its condition number: the floating solo12's FD
# derivatives differed by 1.2e-14 of their largest entry where cond(M) = 2.6e4 (its FD by
# 3.4e-15, everything else by at most 2.1e-16)
TOLERANCE_SOLVES = 1e-13

_P = ctypes.POINTER(ctypes.c_double)


def _batch_entry(library, symbol: str):
    entry = getattr(ctypes.CDLL(str(library)), symbol)
    entry.argtypes = [ctypes.POINTER(_P), ctypes.POINTER(ctypes.c_longlong),
                      ctypes.POINTER(_P), ctypes.c_longlong]
    entry.restype = ctypes.c_int
    return entry


def _call(entry, inputs, nnz_out, n, strides=None, status=0):
    """The C entry point on ``inputs`` (each (n, nnz), (nnz,) with stride 0, or None),
    returning ``status`` (2: a NaN or an infinity among the inputs)."""
    outputs = [np.full((n, nnz), np.nan) for nnz in nnz_out]
    arg = (_P * len(inputs))(*(None if a is None else a.ctypes.data_as(_P) for a in inputs))
    res = (_P * len(outputs))(*(o.ctypes.data_as(_P) for o in outputs))
    stride = None if strides is None else (ctypes.c_longlong * len(strides))(*strides)
    assert entry(arg, stride, res, n) == status
    return outputs


def _single(function: ca.Function, sample: list) -> list[np.ndarray]:
    """CasADi's own evaluation of the SX graph on one sample's nonzeros."""
    args = [ca.DM(function.sparsity_in(i), x) for i, x in enumerate(sample)]
    return [np.array(out.nonzeros()) for out in function.call(args)]


def _checked(n: int) -> list[int]:
    """The samples of a batch of ``n`` compared one by one: the first and last blocks and
    every 97th between."""
    return sorted({*range(min(n, 2 * W)), *range(max(0, n - 2 * W), n), *range(0, n, 97)})


def _assert_agree(got: np.ndarray, want: np.ndarray, tolerance: float = TOLERANCE):
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    assert np.abs(got - want).max(initial=0.0) <= tolerance * scale


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The UR5e's dynamics, mass matrix and ID derivatives exported with batched entry
    points (its FD derivatives are batched by the compile() fixture below)."""
    robot = casdyn.load_robot("ur5e")
    functions = ["inverse_dynamics", ("inverse_dynamics", {"fext": False}), "mass_matrix",
                 "inverse_dynamics_derivatives"]
    directory = tmp_path_factory.mktemp("simd")
    loaded = robot.export_c(directory, functions, prefix="arm", batch=True, progress=False)
    return robot, directory, loaded


@pytest.mark.parametrize("n", SIZES)
def test_exported_batch_entry_points_agree_with_the_sx_graph(exported, n):
    robot, directory, loaded = exported
    header = (directory / "casdyn_ur5e.h").read_text()
    rng = np.random.default_rng(n)
    for key in loaded:
        name, options = _name_and_options(key)
        function = robot.function(name, **options)
        assert f"int arm_{key}_batch(const double** arg" in header
        entry = _batch_entry(directory / "libcasdyn_ur5e.so", f"arm_{key}_batch")
        inputs = [rng.uniform(-3, 3, (n, function.nnz_in(i))) for i in range(function.n_in())]
        nnz_out = [function.nnz_out(i) for i in range(function.n_out())]
        outputs = _call(entry, inputs, nnz_out, n)
        for k in _checked(n):
            for got, want in zip(outputs, _single(function, [x[k] for x in inputs]),
                                 strict=True):
                _assert_agree(got[k], want,
                              TOLERANCE_SOLVES if name.startswith("forward") else TOLERANCE)


def _name_and_options(key: str) -> tuple:
    """The function's name and options of an export key."""
    name = key.removesuffix("_nofext")
    return (name, {"fext": False}) if name != key else (name, {})


def test_the_dense_twin_writes_numpy_layout(exported):
    """``<symbol>_dense``: every output dense and row-major per sample, NumPy's C order."""
    robot, directory, _ = exported
    function = robot.function("inverse_dynamics_derivatives")
    assert "int arm_inverse_dynamics_derivatives_batch_dense(" in \
        (directory / "casdyn_ur5e.h").read_text()
    entry = _batch_entry(directory / "libcasdyn_ur5e.so",
                         "arm_inverse_dynamics_derivatives_batch_dense")
    n = W + 2
    rng = np.random.default_rng(4)
    inputs = [rng.uniform(-3, 3, (n, function.nnz_in(i))) for i in range(function.n_in())]
    outputs = _call(entry, inputs, [function.numel_out(i) for i in range(3)], n)
    for k in range(n):
        args = [ca.DM(function.sparsity_in(i), x[k]) for i, x in enumerate(inputs)]
        for got, want in zip(outputs, function.call(args), strict=True):
            _assert_agree(got[k].reshape(want.shape), np.array(want.full()))


def test_shared_and_missing_inputs_and_outputs_left_out(exported):
    """stride 0: one input for every sample; NULL input: zeros; NULL output: not written."""
    robot, directory, _ = exported
    function = robot.function("inverse_dynamics")
    entry = _batch_entry(directory / "libcasdyn_ur5e.so", "arm_inverse_dynamics_batch")
    n = 2 * W + 3
    rng = np.random.default_rng(1)
    q, qd = rng.uniform(-3, 3, (n, 6)), rng.normal(size=(n, 6))
    fext = rng.normal(size=(10, 6))
    fext_nonzeros = np.ascontiguousarray(fext.T).ravel()  # column-major: CasADi's order
    (tau,) = _call(entry, [q, qd, None, fext_nonzeros], [6], n, strides=[6, 6, 0, 0])
    for k in range(n):
        (want,) = _single(function, [q[k], qd[k], np.zeros(6), fext_nonzeros])
        _assert_agree(tau[k], want)
    arg = (_P * 4)(q.ctypes.data_as(_P), None, None, None)
    res = (_P * 1)(None)
    assert entry(arg, None, res, n) == 0  # nothing to write, nothing written


def test_operations_other_than_sin_and_cos_round_as_the_sx_graph():
    """Bit for bit: every operation the batched C writes, except sin and cos."""
    x = ca.SX.sym("x", 3)
    a, b, c = x[0], x[1], x[2]
    expressions = [a + b, a - b, a * b, a / b, -a, a**2, 2 * a, 1 / a, ca.tan(a), ca.asin(c),
                   ca.acos(c), ca.atan(a), ca.sinh(a), ca.cosh(a), ca.tanh(a), ca.asinh(a),
                   ca.exp(a), ca.log(ca.fabs(a)), ca.sqrt(ca.fabs(b)), ca.floor(a), ca.ceil(a),
                   ca.sign(a), a**b, ca.constpow(ca.fabs(a), 2.5), ca.atan2(a, b),
                   ca.fmin(a, b), ca.fmax(a, b), ca.fmod(a, b), ca.hypot(a, b),
                   ca.copysign(a, b), a < b, a <= b, a == b, a != b, ca.logic_and(a < 0, b < 0),
                   ca.logic_or(a < 0, b < 0), ca.logic_not(a < 0), ca.if_else(a < b, c, 0),
                   ca.erf(a), ca.expm1(a), ca.log1p(ca.fabs(a)), 3.25 * a - 0.1]
    function = ca.Function("ops", [x], [ca.vertcat(*expressions)])
    assert simd.supported(function)
    values = np.random.default_rng(2).uniform(-0.9, 0.9, (2 * W + 5, 3))
    values[3] = [0.5, 0.5, 0.0]  # equal operands
    got = _compile_and_call(function, values)
    want = np.array(function.map(len(values))(values.T)).T
    assert np.array_equal(got, want, equal_nan=True)


def _compile_and_call(function: ca.Function, values: np.ndarray, status: int = 0) -> np.ndarray:
    """The batched C of ``function`` (one input, one output) built alone and run on the
    rows of ``values``, returning ``status``."""
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "batch.c"
        source.write_text(simd.source(function, "batch"))
        library = Path(scratch) / "batch.so"
        subprocess.run([find_compiler(), "-O2", "-fPIC", "-shared", *simd.FLAGS, str(source),
                        "-o", str(library), "-lm"], check=True)
        entry = _batch_entry(library, "batch")
        (out,) = _call(entry, [np.ascontiguousarray(values)], [function.nnz_out(0)],
                       len(values), status=status)
    return out


def test_sin_and_cos_in_the_lanes_are_within_one_ulp():
    """The vector sin and cos against the C library's (NumPy's), near the quadrant
    boundaries too; beyond 1e5 the C library's own; infinities and NaN are refused."""
    x = ca.SX.sym("x")
    function = ca.Function("trig", [x], [ca.vertcat(ca.sin(x), ca.cos(x))])
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.uniform(-7, 7, 4000), rng.uniform(-1e5, 1e5, 1000),
                             np.arange(-64, 64) * (math.pi / 4), [0.0, -0.0, 1e-300, 5e-324],
                             [1e5, -1e5, 1.5e5, 1e300]])
    got = _compile_and_call(function, values[:, None])
    for bad in (np.inf, -np.inf, np.nan):  # refused as the kernel reads them: status 2
        _compile_and_call(function, np.array([[0.5], [bad], [1.0]] * 5), status=2)
    with np.errstate(invalid="ignore"):
        want = np.stack([np.sin(values), np.cos(values)], axis=1)
    finite = np.isfinite(want)
    ulps = np.abs(got - want)[finite] / np.spacing(np.abs(want))[finite]
    assert ulps.max() <= 1.0
    assert np.array_equal(np.isnan(got), np.isnan(want))
    far = np.abs(values) > 1e5  # the C library's own: identical
    assert np.array_equal(got[far], want[far], equal_nan=True)
    assert np.signbit(got[4000 + 1000 + 128 + 1, 0])  # sin(-0.0) is -0.0


def test_a_sample_does_not_depend_on_its_neighbours():
    """A lane beyond 1e5 (the C library's sin and cos) leaves the other lanes of its block
    as they are alone."""
    x = ca.SX.sym("x")
    function = ca.Function("trig", [x], [ca.sin(x) * ca.cos(x)])
    values = np.linspace(-3, 3, W)[:, None]
    alone = _compile_and_call(function, values)
    mixed = values.copy()
    mixed[2] = 3e5
    together = _compile_and_call(function, mixed)
    assert np.array_equal(np.delete(together, 2), np.delete(alone, 2))
    assert together[2, 0] == math.sin(3e5) * math.cos(3e5)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """Two robots compiled (into a test cache): a fixed arm and a floating base."""
    directory = tmp_path_factory.mktemp("cache")
    functions = ["inverse_dynamics", ("inverse_dynamics", {"fext": False}),
                 ("forward_dynamics", {"fext": False}), "mass_matrix",
                 ("inverse_dynamics_derivatives", {"fext": False}),
                 ("forward_dynamics_derivatives", {"fext": False})]
    arm = casdyn.load_robot("ur5e").compile(functions, directory=directory, progress=False)
    # the floating solo12's FD derivatives (27,799 instructions) would take most of the
    # time to compile: the UR5e's are batched here
    legs = casdyn.load_robot("solo12", floating_base=True).compile(
        functions[:-1], directory=directory, progress=False)
    return arm, legs


def _states(robot, n, seed):
    rng = np.random.default_rng(seed)
    q = np.array([robot.random_configuration(rng) for _ in range(n)]).reshape(n, robot.nq)
    return q, rng.normal(size=(n, robot.nv)), rng.normal(size=(n, robot.nv))


def _batched_calls(q, qd, x, fext):
    """label -> call(robot, k): sample k, or the whole batch for k None."""

    def pick(k, *arrays):
        return [a if k is None else a[k] for a in arrays]

    return {
        "ID": lambda r, k: r.inverse_dynamics(*pick(k, q, qd, x)),
        "ID fext": lambda r, k: r.inverse_dynamics(*pick(k, q, qd, x, fext)),
        "ID shared fext": lambda r, k: r.inverse_dynamics(*pick(k, q, qd, x), fext[0]),
        "FD": lambda r, k: r.forward_dynamics(*pick(k, q, qd, x)),
        "M": lambda r, k: r.mass_matrix(*pick(k, q)),
        "ID derivatives": lambda r, k: r.inverse_dynamics_derivatives(*pick(k, q, qd, x)),
        "FD derivatives": lambda r, k: r.forward_dynamics_derivatives(*pick(k, q, qd, x)),
    }


def _tuple(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("which", [0, 1], ids=["ur5e", "solo12-floating"])
def test_batched_calls_after_compile_run_the_simd_kernels(compiled, which, n):
    """Against single calls of the SX graph (the compiled single calls contract a * b + c
    into fused multiply-adds where the compiler chooses: both differ from the SX graph by
    a few ulps, amplified by M's condition number in forward dynamics)."""
    robot = compiled[which]
    plain = casdyn.load_robot("ur5e") if which == 0 else \
        casdyn.load_robot("solo12", floating_base=True)
    # every compiled Function has its batched C
    assert len(robot._engine._kernels) == len(robot.compiled_functions)
    q, qd, x = _states(robot, n, n)
    fext = np.random.default_rng(9).normal(size=(max(n, 1), robot.n_bodies, 6))[:n]
    for label, call in _batched_calls(q, qd, x, fext).items():
        if (label == "ID shared fext" and n == 0) or \
                (label == "FD derivatives" and robot.name == "solo12"):
            continue
        batch = _tuple(call(robot, None))
        for b in batch:
            assert b.shape[0] == n and b.flags.c_contiguous, label
        for k in _checked(n):
            for b, s in zip(batch, _tuple(call(plain, k)), strict=True):
                assert b.shape[1:] == s.shape, label
                _assert_agree(b[k], s, TOLERANCE_SOLVES if "FD" in label else TOLERANCE)


def test_small_batches_run_from_the_entry_point_and_large_ones_split(compiled, monkeypatch):
    """A batch below casdyn.sizes.BATCH_WORK_PER_THREAD * 2 instructions times samples runs
    in the compiled entry point (no Python between the arrays and the kernel); a larger one
    goes to the thread-splitting BatchKernel; the numbers are the same."""
    from casdyn.runtime.batch import BatchKernel

    robot = compiled[0]
    work = robot.function("inverse_dynamics", fext=False).n_instructions()
    n = 2 * casdyn.sizes.BATCH_WORK_PER_THREAD // work + 1  # just past the entry point's
    q, qd, x = _states(robot, n, 4)
    used = []
    original = BatchKernel.__call__
    monkeypatch.setattr(BatchKernel, "__call__",
                        lambda self, *a, **k: used.append(a[1]) or original(self, *a, **k))
    large = robot.inverse_dynamics(q, qd, x)
    assert used == [n]
    small = robot.inverse_dynamics(q[:100], qd[:100], x[:100])
    assert used == [n] and np.array_equal(small, large[:100])
    bad = x[:100].copy()
    bad[57, 2] = np.inf
    with pytest.raises(casdyn.InputError, match="finite"):
        robot.inverse_dynamics(q[:100], qd[:100], bad)


def test_threads_give_the_numbers_of_one_thread(compiled):
    robot = compiled[0]
    key = robot._functions.key("inverse_dynamics", fext=False)
    kernel = robot._engine._kernels[key]
    q, qd, x = _states(robot, 1001, 5)
    one = kernel([q, qd, x], 1001, threads=1)
    two = kernel([q, qd, x], 1001, threads=2)
    three = kernel([q, qd, x], 1001, threads=3)
    assert np.array_equal(one[0], two[0]) and np.array_equal(one[0], three[0])


def test_sparse_outputs_are_scattered_back(tmp_path):
    """A Jacobian with structural zeros (the left arm's tool does not move with the right
    arm's joints) comes back dense, as from single calls."""
    robot = casdyn.load_robot("torso_two_arms").compile(
        [("geometric_jacobian", {"body": "left_tool"})], directory=tmp_path, progress=False)
    function = robot.function("geometric_jacobian", body="left_tool")
    assert not function.sparsity_out(0).is_dense() and robot._engine._kernels
    q = np.array([robot.random_configuration(k) for k in range(W + 3)])
    batch = robot.geometric_jacobian(q, "left_tool")
    assert batch.shape == (W + 3, 6, robot.nv)
    for k in range(W + 3):
        _assert_agree(batch[k], robot.geometric_jacobian(q[k], "left_tool"))


def test_compile_builds_the_batched_c_by_size_unless_told(tmp_path, monkeypatch):
    functions = ["gravity_torque", "mass_matrix"]
    sizes = {f: casdyn.load_robot("planar_2link").function(f).n_instructions() for f in functions}
    monkeypatch.setattr(casdyn.sizes, "BATCHED_BY_DEFAULT", min(sizes.values()))  # the smaller only
    by_size = casdyn.load_robot("planar_2link").compile(functions, directory=tmp_path)
    assert [key[0] for key in by_size._engine._kernels] == [min(sizes, key=sizes.get)]
    every = casdyn.load_robot("planar_2link").compile(functions, directory=tmp_path, batch=True)
    assert len(every._engine._kernels) == 2
    none = casdyn.load_robot("planar_2link").compile(functions, directory=tmp_path, batch=False)
    assert not none._engine._kernels and len(none.compiled_functions) == 2
    q = np.array([[0.1, 0.2], [0.3, -0.4], [1.0, 2.0]])
    for robot in (by_size, every):  # batches with and without the batched C agree
        _assert_agree(robot.mass_matrix(q), none.mass_matrix(q))
        _assert_agree(robot.gravity_torque(q), none.gravity_torque(q))
