"""Batches: (N, nq) arrays in, (N, ...) results out, through Function.map; pickling."""

from __future__ import annotations

import pickle
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
from conftest import assert_close

import casdyn
from casdyn import InputError

N = 7


@pytest.fixture(scope="module")
def robot(shipped):
    return shipped("torso_two_arms")


@pytest.fixture(scope="module")
def batch(robot):
    rng = np.random.default_rng(0)
    q = np.array([robot.random_configuration(rng) for _ in range(N)])
    qd, x = rng.normal(size=(2, N, robot.nq))
    fext = rng.normal(size=(N, robot.n_bodies, 6))
    return q, qd, x, fext


def test_batched_dynamics_equal_one_by_one(robot, batch):
    q, qd, x, fext = batch
    tau = robot.inverse_dynamics(q, qd, x, fext)
    assert tau.shape == (N, robot.nq)
    for k in range(N):
        assert_close(tau[k], robot.inverse_dynamics(q[k], qd[k], x[k], fext[k]))
    qdd = robot.forward_dynamics(q, qd, x)
    M = robot.mass_matrix(q)
    assert qdd.shape == (N, robot.nq) and M.shape == (N, robot.nq, robot.nq)
    for k in range(N):
        assert_close(qdd[k], robot.forward_dynamics(q[k], qd[k], x[k]))
        assert_close(M[k], robot.mass_matrix(q[k]))


def test_unbatched_arguments_are_shared_by_the_batch(robot, batch):
    q, qd, _, _ = batch
    single = qd[0]
    tau = robot.inverse_dynamics(q, single)
    for k in range(N):
        assert_close(tau[k], robot.inverse_dynamics(q[k], single))


def test_batched_kinematics_and_multiple_outputs(robot, batch):
    q = batch[0]
    T = robot.get_transform(q, "left_tool")
    J = robot.geometric_jacobian(q, "right_tool")
    com, jac = robot.center_of_mass(q)
    dq, _, dx = robot.forward_dynamics_derivatives(q, batch[1], batch[2])
    assert T.shape == (N, 4, 4) and J.shape == (N, 6, robot.nq)
    assert com.shape == (N, 3) and jac.shape == (N, 3, robot.nq) and dq.shape == (N, 9, 9)
    for k in (0, N - 1):
        assert_close(T[k], robot.get_transform(q[k], "left_tool"))
        assert_close(com[k], robot.center_of_mass(q[k])[0])
        assert_close(dx[k], robot.forward_dynamics_derivatives(q[k], batch[1][k], batch[2][k])[2])


def test_a_batch_of_one_keeps_its_batch_dimension(robot, batch):
    assert robot.inverse_dynamics(batch[0][:1]).shape == (1, robot.nq)


def test_batches_of_different_sizes_are_refused(robot, batch):
    with pytest.raises(InputError, match="same number of rows"):
        robot.inverse_dynamics(batch[0], batch[1][:3])


def _holding_torque(args):
    robot, q = args
    return robot.gravity_torque(q)


def test_robots_and_functions_pickle_and_run_in_worker_processes(robot, batch):
    q = batch[0]
    clone = pickle.loads(pickle.dumps(robot))
    assert_close(clone.mass_matrix(q[0]), robot.mass_matrix(q[0]))
    f = pickle.loads(pickle.dumps(robot.function("gravity_torque")))
    assert_close(f(q[1]).full().ravel(), robot.gravity_torque(q[1]))
    with ProcessPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(_holding_torque, [(robot, q[k]) for k in range(N)]))
    assert_close(np.array(results), robot.gravity_torque(q))


def test_memory_kept_between_batches_is_bounded():
    """Batches of many different sizes (up to 3 chunks) keep at most MAPPED_PER_THREAD
    chunk-sized evaluators, not one full-size set of buffers per batch size (the old code
    kept 32: 1.2 GB after six batches of 150,000 UR5e mass matrices)."""
    import gc
    import tracemalloc

    from casdyn.runtime.engine import BATCH_CHUNK, MAPPED_PER_THREAD

    robot = casdyn.load_robot("ur5e")
    rng = np.random.default_rng(0)
    floats_per_sample = 2 * robot.nq + robot.nq**2  # q in (and its finiteness weights), M out
    bound = 1.5 * MAPPED_PER_THREAD * BATCH_CHUNK * floats_per_sample * 8
    tracemalloc.start()
    try:
        for n in range(20_000, 32_000, 1_000):
            M = robot.mass_matrix(rng.uniform(-1, 1, size=(n, robot.nq)))
            assert M.shape == (n, 6, 6)
        del M
        gc.collect()
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert kept < bound, f"{kept / 1e6:.1f} MB kept, bound {bound / 1e6:.1f} MB"
