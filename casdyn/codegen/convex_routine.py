"""Signed distances of the pairs without a closed form through a compiled C routine.

The fixed-graph distance of a polytope (:mod:`casdyn.geometry.fixed_graphs`) tests every pair
of edge directions and every vertex against every face, so its graph grows with the hulls'
sizes: a point against a Panda link's hull takes 299k instructions. Every pair of polytopes
without a closed form (the pair table of :mod:`casdyn.geometry.distance`: a convex mesh with
a sphere's or a capsule's core, a box or another mesh, and two boxes) is computed instead by
the C routine ``convex_distance.c``: GJK (Gilbert, Johnson and Keerthi 1988) for the distance,
EPA (van den Bergen 2001) for the penetration depth, on the hulls of the cores' points (one
for a sphere, two for a capsule, eight for a box); exact for polytopes and finite everywhere.
It is called from the CasADi graph as an external Function of the two poses that returns the
unit normal ``n`` and the witness points ``w_a, w_b`` in the shapes' own frames. The graph
forms (the radii are subtracted by the caller)

    d = n . (x_b - x_a),   x_a = R_a w_a + p_a,   x_b = R_b w_b + p_b,

with ``n, w_a, w_b`` held constant (the routine declares a structurally zero Jacobian for
reverse mode and zero forward derivatives: CasADi's SX forward mode reads an empty Jacobian's
product as dense, uninitialised memory). That is the exact distance, and its derivative is
the exact first derivative almost everywhere: closest points and the normal are stationary
(the envelope theorem), so only the motion of the witness points, fixed in their bodies,
changes ``d``. Second derivatives leave out the curvature of
the distance (that of a fixed normal and fixed witness points).

The routine is compiled once, to an object of casdyn's compile cache, with the system C
compiler; each set of hull pairs gets a small library of its entries (the hulls' tables)
linked with it, kept in the cache too. ``compile()`` and ``export_c`` put its C into the
generated files (:mod:`casdyn.codegen.externals`), so the exported code is
self-contained. Geometry sits below codegen: this module installs itself as geometry's
routine when it is imported (:func:`casdyn.geometry.distance.install_routine`), which
``import casdyn`` does.
"""

from __future__ import annotations

import hashlib
import sys
import threading
from pathlib import Path

import casadi as ca
import numpy as np

from ..codegen import externals
from ..errors import CasdynError, ExportError
from ..geometry import distance as _geometry

PREFIX = "casdyn_convex_"
ROUTINE = Path(__file__).with_name("convex_distance.c")

# the routine's output, in its symbol's hash: a library or a kept entry of another layout is
# never called with this one's buffers
OUTPUTS = "normal w_a w_b limits bound"
LIMITS = {1: "GJK's iteration limit (1,000)",
          2: "EPA's vertex capacity (CASDYN_CVX_MAX_VERTS = 1,000)",
          4: "EPA's face capacity (CASDYN_CVX_MAX_FACES = 2,000)"}  # convex_distance.c's bits

_lock = threading.Lock()
_vertices: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # symbol -> (a's, b's) (n, 3)
_loaded: dict[str, ca.Function] = {}


def symbol(vertices_a: np.ndarray, vertices_b: np.ndarray) -> str:
    """The C symbol of the routine for hulls with these vertices ((n, 3) arrays, own frames);
    registered, so that :func:`source` can write its C later."""
    a = np.ascontiguousarray(vertices_a, dtype=float)
    b = np.ascontiguousarray(vertices_b, dtype=float)
    digest = hashlib.sha256(f"{a.shape} {b.shape} {OUTPUTS}".encode() + a.tobytes()
                            + b.tobytes())
    digest = digest.hexdigest()[:16]
    name = PREFIX + digest
    with _lock:
        _vertices.setdefault(name, (a, b))
    return name


_COMMON = """
#ifndef casadi_real
#define casadi_real double
#endif
#ifndef casadi_int
#define casadi_int long long int
#endif
#ifndef CASDYN_CONVEX_ENTRIES
#define CASDYN_CONVEX_ENTRIES
#ifndef CASDYN_CONVEX_LINKAGE
#define CASDYN_CONVEX_LINKAGE static
#endif
/* sparsity patterns (CasADi's compressed column format): a dense 4x4 pose, the 11 outputs
   (normal, the witness points in a's and b's frames, the CASDYN_CVX_LIMITS bits reached and
   the width of the interval known to hold the distance), their structurally zero Jacobian
   with respect to a pose */
CASDYN_CONVEX_LINKAGE const casadi_int casdyn_convex_pose[] = {4, 4, 0, 4, 8, 12, 16,
    0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3};
CASDYN_CONVEX_LINKAGE const casadi_int casdyn_convex_out[] = {11, 1, 0, 11,
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
CASDYN_CONVEX_LINKAGE const casadi_int casdyn_convex_zero[] = {11, 16,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

CASDYN_CONVEX_LINKAGE int casdyn_convex_call(const double *va, int na, const double *vb,
                                             int nb, const casadi_real **arg,
                                             casadi_real **res) {
  double pa[16], pb[16], out[11];
  int k, info[4];
  for (k = 0; k < 16; ++k) {  /* CasADi passes a null argument for an all-zero input */
    pa[k] = arg[0] ? arg[0][k] : 0.0;
    pb[k] = arg[1] ? arg[1][k] : 0.0;
  }
  casdyn_cvx_query(va, na, pa, vb, nb, pb, out, out + 3, out + 6, info, out + 10);
  out[9] = (double)(info[0] & CASDYN_CVX_LIMITS);
  if (res[0]) for (k = 0; k < 11; ++k) res[0][k] = out[k];
  return 0;
}
#endif
"""

# the routine as a C file of its own, compiled once to an object of the compile cache and
# linked into every library of entries: its shared names hidden outside that library
_LINKED = """
#if defined(__GNUC__)
#define CASDYN_CONVEX_LINKAGE __attribute__((visibility("hidden")))
#else
#define CASDYN_CONVEX_LINKAGE
#endif
"""

# the entries' view of that file
_DECLARED = """
#ifndef casadi_real
#define casadi_real double
#endif
#ifndef casadi_int
#define casadi_int long long int
#endif
extern const casadi_int casdyn_convex_pose[], casdyn_convex_out[], casdyn_convex_zero[];
int casdyn_convex_call(const double *va, int na, const double *vb, int nb,
                       const casadi_real **arg, casadi_real **res);
"""

_ENTRY = """
/* {name}: the hulls of {na} and {nb} points; (pose_a, pose_b) -> (normal, w_a, w_b,
   limits, bound) */
static const double {name}_a[{la}] = {{{a}}};
static const double {name}_b[{lb}] = {{{b}}};
int {name}(const casadi_real **arg, casadi_real **res, casadi_int *iw, casadi_real *w,
    int mem) {{
  (void)iw; (void)w; (void)mem;
  return casdyn_convex_call({name}_a, {na}, {name}_b, {nb}, arg, res);
}}
casadi_int {name}_n_in(void) {{ return 2; }}
casadi_int {name}_n_out(void) {{ return 1; }}
const casadi_int *{name}_sparsity_in(casadi_int i) {{ (void)i; return casdyn_convex_pose; }}
const casadi_int *{name}_sparsity_out(casadi_int i) {{ (void)i; return casdyn_convex_out; }}
/* the Jacobian: structurally zero (the graph holds the outputs constant) */
int jac_{name}(const casadi_real **arg, casadi_real **res, casadi_int *iw, casadi_real *w,
    int mem) {{
  (void)arg; (void)res; (void)iw; (void)w; (void)mem;
  return 0;
}}
casadi_int jac_{name}_n_in(void) {{ return 3; }}
casadi_int jac_{name}_n_out(void) {{ return 2; }}
const casadi_int *jac_{name}_sparsity_in(casadi_int i) {{
  return i < 2 ? casdyn_convex_pose : casdyn_convex_out;
}}
const casadi_int *jac_{name}_sparsity_out(casadi_int i) {{ (void)i; return casdyn_convex_zero; }}
/* forward derivatives: zero, written out (CasADi's SX forward mode reads them densely) */
int fwd1_{name}(const casadi_real **arg, casadi_real **res, casadi_int *iw, casadi_real *w,
    int mem) {{
  int k;
  (void)arg; (void)iw; (void)w; (void)mem;
  if (res[0]) for (k = 0; k < 11; ++k) res[0][k] = 0.0;
  return 0;
}}
casadi_int fwd1_{name}_n_in(void) {{ return 5; }}
casadi_int fwd1_{name}_n_out(void) {{ return 1; }}
const casadi_int *fwd1_{name}_sparsity_in(casadi_int i) {{
  return i == 2 ? casdyn_convex_out : casdyn_convex_pose;
}}
const casadi_int *fwd1_{name}_sparsity_out(casadi_int i) {{ (void)i; return casdyn_convex_out; }}
"""


def _numbers(values: np.ndarray) -> str:
    return ", ".join(float(x).hex() for x in values.ravel())


def _folder() -> Path:
    from ..codegen.cache_dir import trusted_folder

    try:
        return trusted_folder("convex")
    except OSError as exc:
        raise ExportError(f"the compile cache cannot be used for the convex-mesh distance "
                          f"routine: {exc.strerror or exc}; set CASDYN_CACHE to a writable "
                          "directory") from None


def entry_source(name: str) -> str:
    """The C of the entry point ``name`` (its hulls' tables, the function, its sparsity):
    written from the hulls registered in this process, else read from the compile cache,
    where every built entry is kept (a graph built in another process, then deserialised)."""
    if name in _vertices:
        a, b = _vertices[name]
        return _ENTRY.format(name=name, na=len(a), nb=len(b), la=a.size, lb=b.size,
                             a=_numbers(a), b=_numbers(b))
    from ..codegen.cache_dir import verified

    kept = _folder() / f"{name}.c"
    if verified(kept):  # a file cut short or foreign is as good as none
        return kept.read_text()
    raise CasdynError(f"a graph calls the convex-mesh distance routine {name}, whose hulls "
                      f"are neither known to this process nor kept in {_folder()}: build "
                      "the Function again in this process")


def source(names) -> str:
    """A C file for the entry points ``names``: the routine once, then each entry."""
    return "\n".join([ROUTINE.read_text(), _COMMON, *(entry_source(n) for n in sorted(names))])


def _linked_source(names) -> tuple[str, tuple[str, str]]:
    """:func:`source` as two C files: the entries, and the routine ``(name, text)`` they
    call, the same for every set of entries (compiled once, then linked)."""
    entries = "\n".join([_DECLARED, *(entry_source(n) for n in sorted(names))])
    return entries, ("casdyn_convex_routine", "\n".join([_LINKED, ROUTINE.read_text(), _COMMON]))


def _compiled(names: list[str]) -> list[ca.Function]:
    """The external Functions of the entry points ``names``, from one library of the
    compile cache or built now (:func:`casdyn.codegen.library.compile_source`); each
    entry's C is kept in the cache too (see :func:`entry_source`)."""
    from ..codegen.cache_dir import verified, write_file
    from ..codegen.library import compile_source

    entries, routine_file = _linked_source(names)
    compiled = compile_source(entries, "casdyn_convex", names, shared=routine_file,
                              what="the distance between these shapes (a detailed convex "
                                   "mesh) is computed by a C routine")
    folder = _folder()
    for name in names:
        kept = folder / f"{name}.c"
        if not verified(kept):
            text = entry_source(name)
            write_file(kept, lambda scratch, text=text: scratch.write_text(text))
    return compiled


def prepare(names) -> None:
    """Build (or find in the cache) one library for every entry point of ``names`` not yet
    loaded: a robot's pairs compile together."""
    with _lock:
        missing = sorted({n for n in names if n not in _loaded})
        if not missing:
            return
        loaded = _compiled(missing)
        _loaded.update(zip(missing, loaded, strict=True))


def routine(vertices_a: np.ndarray, vertices_b: np.ndarray) -> ca.Function:
    """The external Function ``(pose_a 4x4, pose_b 4x4) -> [n; w_a; w_b; limits; bound]``
    (11 x 1) of the two hulls (vertices (n, 3) in their own frames): the unit normal, the
    witness points in the shapes' frames, the capacities or limits the search reached (bits,
    :data:`LIMITS`; 0 when it converged) and the width of the interval known to hold the
    distance (m)."""
    name = symbol(vertices_a, vertices_b)
    prepare([name])
    return _loaded[name]


def distance(vertices_a: np.ndarray, pose_a, vertices_b: np.ndarray, pose_b):
    """The signed distance of the two hulls at the 4x4 poses (SX or MX) as ``n . (x_b -
    x_a)`` with the routine's normal and witness points held constant (see the module)."""
    out = routine(vertices_a, vertices_b)(pose_a, pose_b)
    n, w_a, w_b = out[0:3], out[3:6], out[6:9]
    x_a = ca.mtimes(pose_a[:3, :3], w_a) + pose_a[:3, 3]
    x_b = ca.mtimes(pose_b[:3, :3], w_b) + pose_b[:3, 3]
    return ca.dot(n, x_b - x_a)


externals.register(PREFIX, source)
_geometry.install_routine(sys.modules[__name__])
