"""What export_c returns and calls its C symbols: the caller's names, no hashes where
nothing clashes, clashes refused; its prefix and flags checked; every global symbol under
the prefix, so that two exports link into one program."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import casadi as ca
import numpy as np
import pytest
from conftest import assert_close

import casdyn
from casdyn import InputError, sizes
from casdyn import geometry as g
from casdyn.cli import main
from casdyn.codegen import build, library

pytestmark = pytest.mark.slow  # C export and compilation

TOOL = [casdyn.Contact("tool0")]
WRIST = [casdyn.Contact("wrist_3_link", point=(0.0, 0.0, 0.1))]


@pytest.fixture(scope="module")
def ur5e():
    return casdyn.load_robot("ur5e")


def test_contact_dynamics_is_exported_under_its_own_name(ur5e, tmp_path):
    loaded = ur5e.export_c(tmp_path, [("contact_dynamics", {"contacts": TOOL})])
    assert list(loaded) == ["contact_dynamics"]
    header = (tmp_path / "casdyn_ur5e.h").read_text()
    assert "int ur5e_contact_dynamics(" in header
    f = loaded["contact_dynamics"]
    assert f.name() == "contact_dynamics"
    assert f.name_in() == ["q", "qd", "tau", "fext", "damping"]
    q, qd, tau = ur5e.random_configuration(0), np.full(6, 0.3), np.full(6, 2.0)
    out = f(q=q, qd=qd, tau=tau, fext=np.zeros((ur5e.n_bodies, 6)), damping=0.0)
    want_qdd, want_forces = ur5e.contact_dynamics(q, qd, tau, TOOL)
    assert_close(out["qdd"].full().ravel(), want_qdd)
    assert_close(out["forces"].full(), want_forces)


def test_variants_read_apart_by_their_options(ur5e, tmp_path):
    loaded = ur5e.export_c(tmp_path, ["inverse_dynamics", ("inverse_dynamics", {"fext": False}),
                                      ("geometric_jacobian", {"body": "tool0",
                                                              "reference_frame": "local"}),
                                      ("geometric_jacobian", {"body": "tool0",
                                                              "point": (0, 0, 0.1)})],
                           compile=False)
    assert list(loaded) == ["inverse_dynamics", "inverse_dynamics_nofext",
                            "geometric_jacobian_tool0_local", "geometric_jacobian_tool0"]
    header = (tmp_path / "casdyn_ur5e.h").read_text()
    for key in loaded:
        assert f"int ur5e_{key}(" in header


def test_variants_that_read_alike_need_keys_of_their_own(ur5e, tmp_path):
    two = [("contact_dynamics", {"contacts": TOOL}), ("contact_dynamics", {"contacts": WRIST})]
    with pytest.raises(InputError, match=r"both be exported as 'contact_dynamics'.*keys"):
        ur5e.export_c(tmp_path / "refused", two, compile=False)
    assert not (tmp_path / "refused").exists()
    named = [("tool", *two[0]), ("wrist", *two[1])]
    loaded = ur5e.export_c(tmp_path / "triples", named, compile=False)
    assert list(loaded) == ["tool", "wrist"]
    assert loaded["tool"] is ur5e.function("contact_dynamics", contacts=TOOL)
    header = (tmp_path / "triples" / "casdyn_ur5e.h").read_text()
    assert "int ur5e_tool(" in header and "int ur5e_wrist(" in header
    loaded = ur5e.export_c(tmp_path / "dict", {"tool": two[0], "wrist": two[1],
                                               "M": "mass_matrix"}, compile=False, prefix="")
    assert list(loaded) == ["tool", "wrist", "M"]
    header = (tmp_path / "dict" / "casdyn_ur5e.h").read_text()
    assert "int tool(" in header and "int M(" in header
    # a key of the caller's that another item takes too
    with pytest.raises(InputError, match="'mass_matrix'"):
        ur5e.export_c(tmp_path / "x", [("mass_matrix", "gravity_torque", {}), "mass_matrix"],
                      compile=False)
    with pytest.raises(InputError, match=r"not a C identifier.*'my_key'"):
        ur5e.export_c(tmp_path / "x", [("my key", "mass_matrix", {})], compile=False)


def test_the_same_function_twice_is_exported_once(ur5e, tmp_path):
    loaded = ur5e.export_c(tmp_path, ["mass_matrix", ("mass_matrix", {})], compile=False)
    assert list(loaded) == ["mass_matrix"]


def test_prefix_must_be_a_string(ur5e, tmp_path):
    with pytest.raises(InputError, match=r"prefix must be a string.*int 3"):
        ur5e.export_c(tmp_path, ["mass_matrix"], prefix=3)


@pytest.mark.parametrize("prefix", ["a-b", "1bad", "_arm", "arm_", "a__b", "arm b", "bras\u00e9",
                                    "casadi", "casadi_arm"])
def test_a_prefix_that_is_not_a_c_identifier_is_refused(ur5e, tmp_path, prefix):
    with pytest.raises(InputError, match=rf"prefix {prefix!r} .*C identifier"):
        ur5e.export_c(tmp_path / "x", ["mass_matrix"], compile=False, prefix=prefix)
    assert not (tmp_path / "x").exists()


def test_the_command_line_refuses_a_bad_prefix_in_one_line(tmp_path, capsys):
    assert main(["export", "ur5e", "--out", str(tmp_path / "x"), "--no-compile",
                 "--functions", "mass_matrix", "--prefix", "a-b"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "prefix 'a-b'" in error and "C identifier" in error
    assert not (tmp_path / "x").exists()


# a hull of 60 points in the UR5e's workspace: its pairs go through the compiled routine
ROCK = g.Obstacle("rock", g.ConvexMesh(np.random.default_rng(5).normal(size=(60, 3))
                                       * [0.08, 0.06, 0.05]),
                  np.array([[1.0, 0, 0, 0.35], [0, 1, 0, 0.1], [0, 0, 1, 0.5], [0, 0, 0, 1]]))

# calls g (gravity torque) of the export "left" and d (distances to the rock) of "right"
# at the configuration given on the command line, and prints their outputs
TWO_EXPORTS = r"""
#include <stdio.h>
#include <stdlib.h>
#include "left/casdyn_ur5e.h"
#include "right/casdyn_ur5e.h"

typedef int (*eval_t)(const casadi_real**, casadi_real**, casadi_int*, casadi_real*, int);
typedef int (*work_t)(casadi_int*, casadi_int*, casadi_int*, casadi_int*);
typedef const casadi_int* (*sparsity_t)(casadi_int);

static int run(eval_t f, work_t work, sparsity_t sparsity_out, const double* q) {
  casadi_int sz_arg, sz_res, sz_iw, sz_w, k, n;
  const casadi_int* sp = sparsity_out(0);
  const casadi_real** arg;
  casadi_real **res, *w, *out;
  casadi_int* iw;
  work(&sz_arg, &sz_res, &sz_iw, &sz_w);
  /* CasADi's sparsity: rows, columns, then column offsets; {rows, columns, 1}: dense */
  n = sp[2] == 1 ? sp[0] * sp[1] : sp[2 + sp[1]];
  arg = calloc(sz_arg, sizeof *arg);
  res = calloc(sz_res, sizeof *res);
  iw = calloc(sz_iw + 1, sizeof *iw);
  w = calloc(sz_w + 1, sizeof *w);
  out = calloc(n, sizeof *out);
  arg[0] = q;
  res[0] = out;
  if (f(arg, res, iw, w, 0)) return 1;
  for (k = 0; k < n; ++k) printf("%.17g ", out[k]);
  printf("\n");
  return 0;
}

int main(int argc, char** argv) {
  double q[6];
  int k;
  for (k = 0; k < 6 && k + 1 < argc; ++k) q[k] = atof(argv[k + 1]);
  return run(left_g, left_g_work, left_g_sparsity_out, q)
      || run(right_d, right_d_work, right_d_sparsity_out, q);
}
"""


def _global_symbols(library: Path) -> list[str]:
    """The global symbols ``library`` defines for the dynamic linker (``nm``), less those
    the linker itself defines (``_end``, ``__bss_start``: names reserved to it)."""
    listed = subprocess.run(["nm", "-D", "--defined-only", "--extern-only", str(library)],
                            capture_output=True, text=True, check=True).stdout
    return [line.split()[-1] for line in listed.splitlines()
            if line.strip() and not line.split()[-1].startswith("_")]


needs_gcc_and_nm = pytest.mark.skipif(
    sys.platform != "linux" or not (shutil.which("gcc") and shutil.which("nm")),
    reason="links with gcc and lists symbols with GNU nm")


@needs_gcc_and_nm
def test_two_exports_of_one_robot_with_different_prefixes_link_into_one_program(ur5e,
                                                                               tmp_path):
    """Each export's global symbols carry its prefix, those of the convex-mesh routine
    included: the C of both compiles and links into one program, which calls both."""
    functions = {"g": "gravity_torque", "d": ("collision_distances", {"obstacles": [ROCK]})}
    for prefix in ("left", "right"):
        ur5e.export_c(tmp_path / prefix, functions, prefix=prefix)
        symbols = _global_symbols(tmp_path / prefix / "libcasdyn_ur5e.so")
        assert symbols and [s for s in symbols if not s.startswith(f"{prefix}_")] == []
    (tmp_path / "main.c").write_text(TWO_EXPORTS)
    build = subprocess.run(["gcc", "-O0", "-o", "two", "main.c", "left/casdyn_ur5e.c",
                            "right/casdyn_ur5e.c", "-lm"],
                           cwd=tmp_path, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    q = ur5e.random_configuration(np.random.default_rng(3))
    ran = subprocess.run([str(tmp_path / "two"), *(repr(float(x)) for x in q)],
                         capture_output=True, text=True, check=True)
    torque, distances = (np.array(line.split(), dtype=float)
                         for line in ran.stdout.splitlines())
    assert_close(torque, ur5e.gravity_torque(q))
    assert_close(distances, ur5e.collision_distances(q, obstacles=[ROCK]))
    assert len(distances) == len(ur5e.collision_pairs) + len(ur5e.collision_geometry)


@needs_gcc_and_nm
@pytest.mark.parametrize("prefix", ["pq", ""])
def test_a_library_in_several_files_defines_only_prefixed_symbols(tmp_path, monkeypatch,
                                                                  prefix):
    """Every function in a file of its own (each file with CasADi's own service functions),
    the convex-mesh routine and its derivatives in the first: the library's global symbols
    all start with the prefix (without one: the functions' own names, the rest with the
    library's name), and it computes what the Functions compute."""
    rng = np.random.default_rng(10)
    a, b = (g.ConvexMesh(rng.normal(size=(40, 3)) * 0.1) for _ in range(2))
    T = ca.SX.sym("T", 4, 4)
    d = g.signed_distance(a, np.eye(4), b, T)
    functions = [ca.Function("d", [T], [d]), ca.Function("grad", [T], [ca.gradient(d, T)]),
                 ca.Function("slope", [T], [ca.jtimes(d, T, ca.DM.ones(4, 4))])]
    monkeypatch.setattr(sizes, "OWN_C_FILE", 1)
    loaded = library.export_functions(functions, tmp_path, "parts", prefix=prefix)
    assert len(list(tmp_path.glob("*.c"))) == 3
    starts = ("pq_",) if prefix else ("parts_", "d_", "grad_", "slope_")
    symbols = _global_symbols(tmp_path / "libparts.so")
    assert [s for s in symbols if not s.startswith(starts)
            and (prefix or s not in ("d", "grad", "slope"))] == []
    assert any("convex" in s for s in symbols)  # the routine's entry points are there
    pose = np.eye(4)
    pose[:3, 3] = [0.4, 0.1, -0.2]
    for ours, theirs in zip(loaded, functions, strict=True):
        assert np.allclose(np.asarray(ours(pose)), np.asarray(theirs(pose)), atol=1e-14, rtol=0)


def test_flags_may_be_one_string_split_as_a_shell_would(tmp_path):
    assert build.checked_flags("-O0  -fPIC '-DNAME=a b'") == ("-O0", "-fPIC", "-DNAME=a b")
    robot = casdyn.load_robot("planar_2link")
    loaded = robot.export_c(tmp_path, ["gravity_torque"], flags="-O0 -fPIC -shared")
    q = robot.random_configuration(1)
    assert_close(loaded["gravity_torque"](q).full().ravel(), robot.gravity_torque(q))
    for bad in (5, ["-O0", 1]):
        with pytest.raises(InputError, match="flags must be a string or a sequence"):
            robot.export_c(tmp_path / "bad", ["gravity_torque"], flags=bad)
