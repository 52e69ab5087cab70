"""casdyn/codegen/convex_distance.c, the C routine for the signed distance of two convex point
hulls: compiled here with a small shim and called through ctypes.

References: coal (its GJK/EPA on its own hulls of the points), casdyn's exact fixed-graph
distance of two ``ConvexMesh`` (``routine=False``), closed forms (points and boxes), and the
support-function characterisation ``sd = max over unit n of g(n)``,
``g(n) = min(n . xb) - max(n . xa)`` over the points: every ``g(n)`` is a lower bound of sd, and
when the hulls overlap the maximum is reached at a facet normal of B - A, which is a face
normal of a or b or the cross product of an edge of a and one of b.
"""

from __future__ import annotations

import ctypes
import itertools
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from geometry_reference import coal_distance, fixed_graph_distance, random_pose
from scipy.optimize import nnls
from scipy.spatial import ConvexHull

from casdyn.geometry import ConvexMesh

SOURCE = Path(__file__).resolve().parents[1] / "casdyn" / "codegen" / "convex_distance.c"
FLAGS = ["-O2", "-Wall", "-Wextra", "-Werror", "-std=c99", "-fPIC"]
SHIM = f"""#include "{SOURCE}"
#include "{SOURCE}" /* twice: the guard makes it harmless */
double cvx_query(const double *va, int na, const double *pa, const double *vb, int nb,
                 const double *pb, double *normal, double *wa, double *wb, int *info,
                 double *bound)
{{ return casdyn_cvx_query(va, na, pa, vb, nb, pb, normal, wa, wb, info, bound); }}
double cvx_distance(const double *va, int na, const double *pa, const double *vb, int nb,
                    const double *pb, double *normal, double *wa, double *wb)
{{ return casdyn_convex_distance(va, na, pa, vb, nb, pb, normal, wa, wb); }}
"""
# info[0] bits (convex_distance.c): the two meaning "ran normally", a refused EPA start
# (a numerically flat Minkowski difference) and bad input
EPA_USED, FLAT, EPA_REFUSED, BAD_INPUT = 32, 64, 8, 128
EPA_VERTS = 2  # the polytope's vertex capacity reached
MAX_VERTS, GJK_ITERATIONS = 1000, 1000
BOX = np.array(list(itertools.product([-0.5, 0.5], repeat=3)))


def _compilers() -> list[str]:
    found = [shutil.which(name) for name in ("cc", "gcc", "clang")]
    paths = sorted({str(Path(p).resolve()) for p in found if p})
    if not paths:
        pytest.fail("no C compiler found (looked for cc, gcc, clang): convex_distance.c is "
                    "tested compiled; install one, e.g. apt-get install gcc")
    return paths


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    folder = tmp_path_factory.mktemp("convex_distance")
    (folder / "shim.c").write_text(SHIM)
    target = folder / "libconvex_distance.so"
    result = subprocess.run([_compilers()[0], *FLAGS, "-shared", str(folder / "shim.c"),
                             "-o", str(target), "-lm"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    library = ctypes.CDLL(str(target))
    for name in ("cvx_query", "cvx_distance"):
        getattr(library, name).restype = ctypes.c_double
    return library


def _pointer(array):
    return array.ctypes.data_as(ctypes.c_void_p)


class Answer:
    """One call's outputs: sd, normal, witnesses (own frames and world) and the report."""

    def __init__(self, lib, va, pose_a, vb, pose_b, entry: bool = False):
        va, vb = (np.ascontiguousarray(v, dtype=float).reshape(-1, 3) for v in (va, vb))
        # CasADi's dense 4x4 is column-major: element (r, c) at [4c + r]
        pa, pb = (np.ascontiguousarray(np.asarray(p, dtype=float).T) for p in (pose_a, pose_b))
        self.normal, self.wa, self.wb = np.zeros(3), np.zeros(3), np.zeros(3)
        self.info = np.zeros(4, dtype=np.int32)
        self.bound = np.zeros(1)
        head = (_pointer(va), len(va), _pointer(pa), _pointer(vb), len(vb), _pointer(pb),
                _pointer(self.normal), _pointer(self.wa), _pointer(self.wb))
        if entry:
            self.sd = lib.cvx_distance(*head)
        else:
            self.sd = lib.cvx_query(*head, _pointer(self.info), _pointer(self.bound))
        self.xa = pose_a[:3, :3] @ self.wa + pose_a[:3, 3]
        self.xb = pose_b[:3, :3] @ self.wb + pose_b[:3, 3]


def query(lib, va, pose_a, vb, pose_b, allowed: int = 0) -> Answer:
    """The routine's answer, checked to be finite with a unit normal and no limit reached
    (beyond the ``allowed`` info bits)."""
    answer = Answer(lib, va, pose_a, vb, pose_b)
    assert np.isfinite(answer.sd), answer.sd
    assert abs(np.linalg.norm(answer.normal) - 1) <= 1e-12, answer.normal
    assert answer.info[0] & ~(EPA_USED | FLAT | allowed) == 0, f"limit reached: {answer.info}"
    assert answer.info[1] < GJK_ITERATIONS and answer.info[3] < MAX_VERTS, answer.info
    return answer


def world(points, pose):
    return np.asarray(points, dtype=float) @ pose[:3, :3].T + pose[:3, 3]


def gap(n, va, pose_a, vb, pose_b):
    """g(n) = min over b of n . xb - max over a of n . xa for each row n: a lower bound of sd
    for every unit n."""
    n = np.atleast_2d(n)
    return (n @ world(vb, pose_b).T).min(axis=1) - (n @ world(va, pose_a).T).max(axis=1)


def _directions(points):
    """Face normals and edge directions of the hull of ``points`` (own frame), supersets:
    a solid's Qhull facets and triangle edges; a flat set's plane normal and every pair of
    points; a collinear set's direction; nothing for a single point."""
    points = np.unique(np.asarray(points, dtype=float), axis=0)
    if len(points) == 1:
        return np.zeros((0, 3)), np.zeros((0, 3))
    singular = np.linalg.svd(points - points.mean(axis=0))
    values = singular.S
    rank = int(np.sum(values > 1e-9 * values[0]))
    if rank == 3:
        hull = ConvexHull(points)
        t = hull.simplices
        edges = np.concatenate([points[t[:, 1]] - points[t[:, 0]],
                                points[t[:, 2]] - points[t[:, 1]],
                                points[t[:, 0]] - points[t[:, 2]]])
        return hull.equations[:, :3], edges
    pairs = np.array(list(itertools.combinations(range(len(points)), 2)))
    normals = singular.Vh[2:3] if rank == 2 else np.zeros((0, 3))
    return normals, points[pairs[:, 1]] - points[pairs[:, 0]]


def overlap_reference(va, pose_a, vb, pose_b) -> float:
    """The largest g(n) over the candidate facet normals of B - A (both signs): sd exactly when
    the hulls overlap, a lower bound of it otherwise."""
    normals_a, edges_a = (x @ pose_a[:3, :3].T for x in _directions(va))
    normals_b, edges_b = (x @ pose_b[:3, :3].T for x in _directions(vb))
    cross = np.cross(edges_a[:, None, :], edges_b[None, :, :]).reshape(-1, 3)
    n = np.concatenate([normals_a, normals_b, cross, np.eye(3)])  # any extra n is harmless
    length = np.linalg.norm(n, axis=1)
    n = n[length > 1e-12 * length.max()] / length[length > 1e-12 * length.max(), None]
    return float(np.max(gap(np.concatenate([n, -n]), va, pose_a, vb, pose_b)))


def in_hull(x, points, tol=1e-9) -> bool:
    """Whether x is within tol of the convex hull of points: a nonnegative least-squares fit of
    x by weights summing to one (any point set, flat ones included)."""
    points = np.asarray(points, dtype=float)
    weight = 1e3
    matrix = np.vstack([points.T, weight * np.ones(len(points))])
    _, residual = nnls(matrix, np.append(x, weight))
    return residual <= tol


def random_points(rng, count, size):
    """``count`` points of a random ellipsoidal cloud about 2 * ``size`` across, off-centre."""
    points = rng.normal(size=(count, 3)) * rng.uniform(0.3, 1.0, 3)
    points *= size / np.max(np.ptp(points, axis=0))
    return points + rng.uniform(-0.3, 0.3, 3) * size


@pytest.fixture(scope="module")
def random_pairs(lib):
    """1,200 random pose pairs of random hulls (10-200 points, 0.05-0.5 m across), about half of
    them overlapping: (va, pose_a, vb, pose_b, answer)."""
    rng = np.random.default_rng(20261124)
    pairs = []
    for _ in range(120):
        va = random_points(rng, rng.integers(10, 201), rng.uniform(0.05, 0.5))
        vb = random_points(rng, rng.integers(10, 201), rng.uniform(0.05, 0.5))
        for _ in range(10):
            pose_a, pose_b = random_pose(rng, 0.15), random_pose(rng, 0.15)
            pairs.append((va, pose_a, vb, pose_b, query(lib, va, pose_a, vb, pose_b)))
    return pairs


def _coal(points):
    import coal

    vector = coal.StdVec_Vec3s()
    for p in points:
        vector.append(np.asarray(p, dtype=float))
    return coal.Convex.convexHull(vector, False, None)


def coal_signed_distance(hull_a, pose_a, hull_b, pose_b) -> float:
    """coal's signed distance of its hulls with GJK and EPA run to 1e-12. At its defaults
    (1e-6) coal's depths of these hulls are off by up to 4e-7 and its distances of 5,000-point
    hulls by 1.2e-7 (measured); run to 1e-12 it agrees with the exact references to 1e-15."""
    return coal_distance(None, pose_a, None, pose_b, hull_a, hull_b, epa=1e-12)


def test_compiles_warning_free_with_every_compiler_found(tmp_path):
    """C99, -Wall -Wextra -pedantic clean on its own and with the entry point used; pasting the
    file twice into one translation unit is harmless."""
    use = tmp_path / "use.c"
    use.write_text(f'#include "{SOURCE}"\n#include "{SOURCE}"\n'
                   "double f(const double *v, const double *p, double *o)\n"
                   "{ return casdyn_convex_distance(v, 1, p, v, 1, p, o, o + 3, o + 6); }\n")
    for compiler in _compilers():
        for source in (SOURCE, use):
            result = subprocess.run([compiler, *FLAGS, "-pedantic", "-c", str(source), "-o",
                                     str(tmp_path / "out.o")], capture_output=True, text=True)
            assert result.returncode == 0 and not result.stderr, (compiler, result.stderr)


def test_the_entry_point_gives_the_reported_answer(lib, random_pairs):
    for va, pose_a, vb, pose_b, answer in random_pairs[:200]:
        direct = Answer(lib, va, pose_a, vb, pose_b, entry=True)
        assert direct.sd == answer.sd
        assert np.array_equal(direct.normal, answer.normal)
        assert np.array_equal(direct.wa, answer.wa) and np.array_equal(direct.wb, answer.wb)


def test_matches_coal_on_random_hulls(random_pairs):
    errors = {"apart": [], "overlapping": []}
    hulls: dict[int, object] = {}
    for va, pose_a, vb, pose_b, answer in random_pairs:
        hull_a = hulls.setdefault(id(va), _coal(va))
        hull_b = hulls.setdefault(id(vb), _coal(vb))
        reference = coal_signed_distance(hull_a, pose_a, hull_b, pose_b)
        errors["apart" if reference > 0 else "overlapping"].append(abs(answer.sd - reference))
    for kind, error in errors.items():
        assert len(error) >= 300, (kind, len(error))
        assert max(error) <= 1e-9, (kind, max(error))


@pytest.mark.slow  # several seconds: the quick tier stays quick
def test_matches_the_exact_fixed_graph_distance(lib):
    """casdyn's exact symbolic distance of two ConvexMesh (small hulls), apart and
    overlapping."""
    rng = np.random.default_rng(7)
    errors = {"apart": [], "overlapping": []}
    for _ in range(8):
        va = random_points(rng, rng.integers(8, 31), rng.uniform(0.05, 0.5))
        vb = random_points(rng, rng.integers(8, 31), rng.uniform(0.05, 0.5))
        a, b = ConvexMesh(va), ConvexMesh(vb)
        for _ in range(30):
            pose_a, pose_b = random_pose(rng, 0.15), random_pose(rng, 0.15)
            reference = fixed_graph_distance(a, pose_a, b, pose_b)
            error = abs(query(lib, va, pose_a, vb, pose_b).sd - reference)
            errors["apart" if reference > 0 else "overlapping"].append(error)
    for kind, error in errors.items():
        assert len(error) >= 50, (kind, len(error))
        assert max(error) <= 1e-9, (kind, max(error))


def check_answer(answer, va, pose_a, vb, pose_b, certified=1e-12):
    """Witnesses on the hulls, sd = normal . (xb - xa), xb - xa = sd normal (to 1e-12), and
    g(normal) = sd to ``certified``.

    g(normal) <= sd_true always; apart, |xb - xa| >= sd_true for witnesses on the hulls, so
    these checks alone certify an apart answer to ``certified``. Within about 1e-9 of touching
    the normal's direction is only known to ~1e-16 |x| / |sd| rad (the rounding of the world
    points x), which tilts g(normal) below sd by that times the contact's size: up to ~1e-8
    at |sd| = 1e-10 (the distance itself stays exact)."""
    assert in_hull(answer.wa, va) and in_hull(answer.wb, vb)
    assert abs(answer.sd - answer.normal @ (answer.xb - answer.xa)) <= 1e-12
    assert np.max(np.abs(answer.xb - answer.xa - answer.sd * answer.normal)) <= 1e-12
    assert abs(gap(answer.normal, va, pose_a, vb, pose_b)[0] - answer.sd) <= certified


def test_witnesses_and_normal_are_consistent(random_pairs):
    hulls: dict[int, ConvexHull] = {}
    for va, pose_a, vb, pose_b, answer in random_pairs:
        for points, w in ((va, answer.wa), (vb, answer.wb)):
            hull = hulls.setdefault(id(points), ConvexHull(points))
            assert np.max(hull.equations[:, :3] @ w + hull.equations[:, 3]) <= 1e-9
        assert abs(answer.sd - answer.normal @ (answer.xb - answer.xa)) <= 1e-12
        assert np.max(np.abs(answer.xb - answer.xa - answer.sd * answer.normal)) <= 1e-12
        assert abs(gap(answer.normal, va, pose_a, vb, pose_b)[0] - answer.sd) <= 1e-12
        if answer.sd < 0 and len(va) + len(vb) <= 80:  # the candidate facet normals agree
            assert abs(overlap_reference(va, pose_a, vb, pose_b) - answer.sd) <= 1e-12


def test_identical_hulls_at_one_pose(lib):
    """sd = -(the hull's least width); boxes: minus the shortest edge."""
    rng = np.random.default_rng(3)
    for _ in range(4):
        points = random_points(rng, rng.integers(6, 25), rng.uniform(0.05, 0.5))
        pose = random_pose(rng, 0.3)
        answer = query(lib, points, pose, points, pose)
        mesh = ConvexMesh(points)
        assert abs(answer.sd - fixed_graph_distance(mesh, pose, mesh, pose)) <= 1e-9
        assert abs(answer.sd - overlap_reference(points, pose, points, pose)) <= 1e-12
        check_answer(answer, points, pose, points, pose)
    for _ in range(20):
        size = rng.uniform(0.05, 0.5, 3)
        pose = random_pose(rng, 0.3)
        answer = query(lib, BOX * size, pose, BOX * size, pose)
        assert abs(answer.sd + size.min()) <= 1e-12
        check_answer(answer, BOX * size, pose, BOX * size, pose)


def test_one_hull_inside_the_other(lib):
    rng = np.random.default_rng(4)
    for _ in range(3):
        outer = random_points(rng, 30, 0.4)
        inner = 0.1 * random_points(rng, 12, 0.4) + outer.mean(axis=0)
        big, small = ConvexMesh(outer), ConvexMesh(inner)
        for _ in range(5):
            pose = random_pose(rng, 0.3)
            for va, vb, a, b in ((outer, inner, big, small), (inner, outer, small, big)):
                answer = query(lib, va, pose, vb, pose)
                assert answer.sd < 0
                assert abs(answer.sd - fixed_graph_distance(a, pose, b, pose)) <= 1e-9
                check_answer(answer, va, pose, vb, pose)


def _point_box(p, size):
    """Closed form: the signed distance of point p from the centred box of edges size."""
    excess = np.abs(p) - size / 2
    return float(np.max(excess)) if np.all(excess < 0) else float(np.linalg.norm(
        np.maximum(excess, 0)))


def test_a_point_against_a_box_and_a_point(lib):
    """na = 1 and nb = 1: a point inside and outside a box (closed form), in both orders;
    two points (their distance, 0 when they coincide)."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        size = rng.uniform(0.05, 0.5, 3)
        box_pose = random_pose(rng, 0.2)
        local = rng.uniform(-0.4, 0.4, 3) * rng.choice([0.3, 1.0])
        point_pose = np.eye(4)
        point_pose[:3, 3] = world(local, box_pose)
        origin = np.zeros((1, 3))
        expected = _point_box(local, size)
        for va, pose_a, vb, pose_b in ((BOX * size, box_pose, origin, point_pose),
                                       (origin, point_pose, BOX * size, box_pose)):
            answer = query(lib, va, pose_a, vb, pose_b)
            assert abs(answer.sd - expected) <= 1e-12
            check_answer(answer, va, pose_a, vb, pose_b)
    for _ in range(20):
        p, pose_a, pose_b = rng.normal(size=(1, 3)), random_pose(rng), random_pose(rng)
        answer = query(lib, p, pose_a, p, pose_b)
        assert abs(answer.sd - np.linalg.norm(world(p, pose_b) - world(p, pose_a))) <= 1e-12
        assert query(lib, p, pose_a, p, pose_a).sd == 0


def _degenerate_sets(rng):
    """Flat, collinear, repeated and single-point sets, and ordinary ones to meet them."""
    flat = rng.normal(size=(rng.integers(3, 15), 3)) * 0.15
    flat[:, 2] = 0
    line = np.outer(rng.uniform(-1, 1, rng.integers(2, 6)), rng.normal(size=3)) * 0.15
    repeated = np.repeat(rng.normal(size=(rng.integers(4, 8), 3)) * 0.15, 3, axis=0)
    return [flat, line, repeated, rng.normal(size=(1, 3)) * 0.05,
            random_points(rng, 12, 0.3), BOX * rng.uniform(0.05, 0.3, 3)]


@pytest.mark.slow  # several seconds: the quick tier stays quick
def test_flat_collinear_and_repeated_point_sets(lib):
    """Every pair of degenerate and ordinary sets at random poses, at one pose, and tilted by
    1e-10 rad: overlapping, the candidate-normal reference (exact); apart, the certificate
    (witnesses on the hulls and g(normal) = sd). Two segments crossing at 1e-10 rad make
    B - A a sliver parallelogram, flat only to rounding: there EPA may refuse its start (its
    faces have no reliable orientation) and report touching, which is right to 1e-11."""
    rng = np.random.default_rng(6)
    overlapping = 0
    for _ in range(40):
        sets = _degenerate_sets(rng)
        for va, vb in itertools.product(sets, repeat=2):
            pose_a = random_pose(rng, 0.1)
            tilted = pose_a.copy()
            axis = rng.normal(size=3) * 1e-10
            tilted[:3, :3] = pose_a[:3, :3] @ (np.eye(3) + np.cross(np.eye(3), axis))
            for pose_b in (random_pose(rng, 0.1), pose_a, tilted):
                answer = query(lib, va, pose_a, vb, pose_b, allowed=EPA_REFUSED)
                if answer.info[0] & EPA_REFUSED:
                    assert len(np.unique(va, axis=0)) <= 5 and pose_b is tilted
                    assert abs(answer.sd) <= 1e-11
                check_answer(answer, va, pose_a, vb, pose_b, certified=1e-7)
                if answer.sd < -1e-9:
                    overlapping += 1
                    assert abs(answer.sd - overlap_reference(va, pose_a, vb, pose_b)) <= 1e-12
                else:  # never less than the reference's lower bound
                    assert answer.sd >= overlap_reference(va, pose_a, vb, pose_b) - 1e-12
    assert overlapping >= 500, overlapping


def test_coincident_flat_sets_touch(lib):
    """Two flat sets in one plane, overlapping in it: a translation off the plane separates
    them, so sd = 0."""
    rng = np.random.default_rng(8)
    for _ in range(20):
        a, b = rng.normal(size=(2, 10, 3)) * 0.1
        a[:, 2] = b[:, 2] = 0
        pose = random_pose(rng)
        answer = query(lib, a, pose, b, pose)
        assert abs(answer.sd) <= 1e-12
        check_answer(answer, a, pose, b, pose)


def test_touching_and_nearly_touching(lib, random_pairs):
    """b moved by -sd along the normal touches a (sd = 0); moved 1e-10 further apart from there
    it is 1e-10 away; moved 1e-10 into a it overlaps by at most 1e-10."""
    for va, pose_a, vb, pose_b, answer in random_pairs[::6]:
        moved = pose_b.copy()
        moved[:3, 3] -= answer.sd * answer.normal
        touching = query(lib, va, pose_a, vb, moved)
        assert abs(touching.sd) <= 1e-12
        check_answer(touching, va, pose_a, vb, moved, certified=1e-7)
        for step in (1e-10, -1e-10):
            near = moved.copy()
            near[:3, 3] += step * touching.normal
            answer_near = query(lib, va, pose_a, vb, near)
            check_answer(answer_near, va, pose_a, vb, near, certified=1e-7)
            if step > 0:
                assert abs(answer_near.sd - step) <= 1e-12
            else:
                assert step - 1e-12 <= answer_near.sd <= 1e-12


def test_five_thousand_points(lib):
    """5,000 points on spheres and in boxes, apart and overlapping: coal (run to 1e-12) and
    the certificate."""
    rng = np.random.default_rng(9)
    for _ in range(3):
        sphere = rng.normal(size=(5000, 3))
        sphere *= 0.2 / np.linalg.norm(sphere, axis=1)[:, None]
        box = np.vstack([BOX, rng.uniform(-0.5, 0.5, (4992, 3))]) * rng.uniform(0.1, 0.4, 3)
        hulls = (_coal(sphere), _coal(box))
        for spread in (0.1, 0.4):
            pose_a, pose_b = random_pose(rng, spread), random_pose(rng, spread)
            answer = query(lib, sphere, pose_a, box, pose_b)
            check_answer(answer, sphere, pose_a, box, pose_b)
            assert abs(answer.sd - coal_signed_distance(*hulls[:1], pose_a, hulls[1],
                                                        pose_b)) <= 1e-9


def test_the_bound_holds_the_answer_and_is_within_the_tolerance(random_pairs):
    """Every answer comes with the width of an interval known to hold sd (GJK's and EPA's
    certificates); converged, it is below the stopping tolerance, 1e-12 of the problem's
    size."""
    hulls: dict[int, object] = {}
    for va, pose_a, vb, pose_b, answer in random_pairs[::4]:
        size = (np.max(np.linalg.norm(va, axis=1)) + np.max(np.linalg.norm(vb, axis=1))
                + np.linalg.norm(pose_b[:3, 3] - pose_a[:3, 3]))
        assert 0 <= answer.bound[0] <= 1e-12 * size
        reference = coal_signed_distance(hulls.setdefault(id(va), _coal(va)), pose_a,
                                         hulls.setdefault(id(vb), _coal(vb)), pose_b)
        assert abs(answer.sd - reference) <= answer.bound[0] + 1e-14


@pytest.mark.slow  # several seconds: the quick tier stays quick
def test_a_full_polytope_is_reported_with_a_bound_that_holds_the_depth(lib):
    """5,000 points on a sphere against themselves at one pose: EPA needs about 1.6 vertices
    per point to converge, more than its 1,000. The routine says so (CASDYN_CVX_EPA_VERTS) and
    returns the shortest separating translation found, its depth over-estimated by 0.2 mm,
    with the width of an interval that holds the true sd. The reference: the largest g(n) over
    a dense sample of directions refined by Nelder-Mead, a lower bound of sd within 1e-10 of
    it (coal stops early here too: its depth is not the width along its own normal)."""
    from geometry_reference import separating_axis_distance

    rng = np.random.default_rng(14)
    sphere = rng.normal(size=(5000, 3))
    sphere *= 0.1 / np.linalg.norm(sphere, axis=1)[:, None]
    pose = random_pose(rng, 0.1)
    answer = Answer(lib, sphere, pose, sphere, pose)
    assert answer.info[0] & EPA_VERTS and answer.info[3] == MAX_VERTS
    # sd = g(normal), a lower bound of the true sd (the witnesses touch in the plane normal
    # to it)
    assert abs(gap(answer.normal, sphere, pose, sphere, pose)[0] - answer.sd) <= 1e-12
    mesh = ConvexMesh(sphere)
    reference = separating_axis_distance(mesh, pose, mesh, pose)
    assert reference - answer.sd >= 1e-4  # the over-estimated depth, which the bound covers
    assert reference <= answer.sd + answer.bound[0]
    assert answer.bound[0] <= 1e-3


@pytest.mark.parametrize("size", [1e-150, 1e-100, 1e100, 1e150, 1e300])
def test_boxes_at_extreme_sizes(lib, size):
    """Lengths are squared and cubed inside (Gram determinants, triple products): boxes of
    edge 2e150 overlapping by 5e149 were reported 1.1e150 apart, smaller ones from 1e-100 m
    touching. Scaled by a power of two inside, the answers are those of a unit box times the
    size: closed forms overlapping, apart and rotated."""
    rng = np.random.default_rng(15)
    box = BOX * 2 * size
    for offset, expected in ((1.5, -0.5), (2.5, 0.5), (0.0, -2.0)):
        pose_a = random_pose(rng, 0.0)
        pose_b = pose_a.copy()
        pose_b[:3, 3] = pose_a[:3, :3] @ [offset * size, 0, 0]
        answer = query(lib, box, pose_a, box, pose_b)
        assert answer.sd == pytest.approx(expected * size, rel=1e-12)
        assert abs(np.linalg.norm(answer.normal) - 1) <= 1e-12
        assert answer.xb - answer.xa == pytest.approx(answer.sd * answer.normal, rel=1e-12,
                                                      abs=1e-12 * size)


def test_bad_input_gives_nan_not_a_crash(lib):
    points, pose = BOX.copy(), np.eye(4)
    nan_points = BOX.copy()
    nan_points[3, 1] = np.nan
    inf_pose = np.eye(4)
    inf_pose[0, 3] = np.inf
    for va, pose_a, vb in ((points, pose, nan_points), (points, inf_pose, points),
                           (np.zeros((0, 3)), pose, points)):
        answer = Answer(lib, va, pose_a, vb, pose)
        assert np.isnan(answer.sd) and answer.info[0] & BAD_INPUT
        assert np.array_equal(answer.normal, [0.0, 0.0, 1.0])


def test_gradient_is_the_normal(lib, random_pairs):
    """d sd / d (translation of b along u) = normal . u, by central differences of the routine
    at generic poses, apart and overlapping."""
    rng = np.random.default_rng(10)
    kinds = {"apart": 0, "overlapping": 0}
    for va, pose_a, vb, pose_b, answer in random_pairs[::10]:
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        h = 1e-6
        values = []
        for sign in (1, -1):
            moved = pose_b.copy()
            moved[:3, 3] += sign * h * u
            values.append(query(lib, va, pose_a, vb, moved).sd)
        assert abs((values[0] - values[1]) / (2 * h) - answer.normal @ u) <= 1e-6
        kinds["apart" if answer.sd > 0 else "overlapping"] += 1
    assert min(kinds.values()) >= 30, kinds


def test_limits_are_far_from_reached(random_pairs):
    """The fixed capacities are far from full on random hulls of up to 200 points (query()
    asserts no limit was hit on every call of these tests)."""
    gjk = max(answer.info[1] for *_, answer in random_pairs)
    epa = max(answer.info[3] for *_, answer in random_pairs)
    assert gjk < GJK_ITERATIONS / 10 and epa < MAX_VERTS / 4, (gjk, epa)


def test_threads_get_the_serial_answers(lib, random_pairs):
    """No shared state: the same calls from four threads at once give the same answers."""
    def call(item):
        va, pose_a, vb, pose_b, _ = item
        return Answer(lib, va, pose_a, vb, pose_b).sd

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(call, random_pairs * 2))
    assert results == [answer.sd for *_, answer in random_pairs] * 2


def test_segments_points_and_boxes_against_panda_hulls_are_certified(lib):
    """A capsule's segment (2 points), a sphere's centre and a box's corners against the
    Panda's link hulls (102-152 points, many of them on flat faces), apart: the Minkowski
    difference of a segment and such a hull has long thin triangles, where barycentric
    weights from a Gram system lose their accuracy (skipping those triangles once stopped
    GJK up to 6.5e-5 m above the distance, in 27 of 8,259 such poses). Every answer is
    certified by g(normal) = sd."""
    from test_geometry_robot import PANDA

    from casdyn import geometry as g

    rng = np.random.default_rng(11)
    box = np.array(list(itertools.product((-0.1, 0.1), (-0.2, 0.2), (-0.3, 0.3))))
    cores = [np.zeros((1, 3)), np.array([[0, 0, -0.5], [0, 0, 0.5]]), box]
    checked = 0
    for link in ("link1", "link5", "link6"):
        hull = g.Mesh(PANDA / f"meshes/collision/{link}.stl").convex().vertices
        for core in cores:
            for _ in range(1000):
                pose_a, pose_b = random_pose(rng, 0.4), random_pose(rng, 0.4)
                answer = query(lib, core, pose_a, hull, pose_b)
                if answer.sd > 1e-6:
                    lower = gap(answer.normal, core, pose_a, hull, pose_b)[0]
                    assert answer.sd - lower <= 1e-10, (link, answer.sd, lower)
                    checked += 1
    assert checked > 5000
