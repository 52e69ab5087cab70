/* casdyn: the signed distance between the convex hulls of two point sets, in portable C99.
 *
 * Entry point: casdyn_convex_distance (below). Self-contained: <math.h>, <float.h>,
 * <string.h> only; no allocation, no printing, no global or static mutable state (safe to call
 * from several threads at once); every helper is static and named casdyn_cvx_*. The file is
 * guarded so that including or pasting it twice into one translation unit is harmless.
 *
 * Method. Both shapes enter only through their support mappings (a brute-force scan of the
 * points, so any number of points works and no hull is built). The signed distance of the
 * hulls A and B is read off their Minkowski difference D = B - A = {xb - xa}:
 *   - apart: the distance is the norm of the point of D closest to the origin, found by the
 *     GJK algorithm: E. G. Gilbert, D. W. Johnson, S. S. Keerthi, "A fast procedure for
 *     computing the distance between complex objects in three-dimensional space", IEEE Journal
 *     of Robotics and Automation 4(2), 1988. The closest point of each simplex is found by
 *     testing every sub-simplex (at most 15), which has no Voronoi-region case logic to get
 *     inconsistent under rounding.
 *   - overlapping: the penetration depth is the distance from the origin to the boundary of D,
 *     found by the expanding polytope algorithm: G. van den Bergen, "Proximity queries and
 *     penetration depth computation on 3D game objects", Game Developers Conference 2001 (also
 *     his book "Collision Detection in Interactive 3D Environments", Morgan Kaufmann 2004,
 *     ch. 4.3). A polytope of points of D containing the origin grows towards the face nearest
 *     the origin until the support of D along that face's normal lies on the face's plane.
 * For polytopes both terminate exactly (finitely many support points); the stopping tests use
 * an absolute tolerance of 1e-12 times the problem's size (the points' radii about their frames'
 * origins plus the distance between the frames), and are certificates: on return from a
 * converged search the error of sd is below that tolerance (apart: GJK's lower bound v.w/|v|;
 * overlapping: the nearest face plane of a polytope inside D bounds the depth from below, the
 * support along its normal from above).
 *
 * GJK stops, too, when rounding leaves |v| no smaller than in the step before. The closest
 * point of a triangle is taken as the foot on its plane and that of a segment is made normal
 * to it, so that v's direction (the normal) stays accurate when the shapes nearly touch; a
 * sliver sub-simplex whose weights do not reproduce its point is skipped. EPA starts from
 * GJK's tetrahedron, or grows GJK's smaller simplex into one by support points (a D that
 * stays flat, or on one side of a plane through the origin, is reported as touching). Its
 * answer is the foot of the origin on the nearest face plane, located in whichever coplanar
 * triangle of that facet holds it. Within ~1e-9 m of touching the normal's direction is
 * known to about 1e-16 |x| / |sd| rad (the rounding of the world points x); sd stays exact.
 *
 * Fixed capacities (on the stack, about 200 kB in all): the expanding polytope holds at most
 * CASDYN_CVX_MAX_VERTS = 1000 vertices and CASDYN_CVX_MAX_FACES = 2000 triangles (a closed
 * triangulated polytope of V vertices has 2V - 4 faces); GJK runs at most
 * CASDYN_CVX_GJK_ITERATIONS = 1000 iterations. Should a capacity or limit be reached, or an
 * update of the polytope be refused as numerically inconsistent, the best answer found is
 * returned, still with witness points on the hulls and a unit normal with
 * sd = normal . (xb - xa): apart, GJK's last point (an upper bound of the distance);
 * overlapping, the shortest separating translation found (its length an upper bound of the
 * depth; xa and xb are the support points along it, which then touch in a plane normal to
 * it). casdyn_cvx_query reports which of these happened, and the width of an interval
 * known to hold sd (apart, GJK's lower bound v.w/|v| to |v|; overlapping, the nearest face
 * plane to the shortest translation found). None of them happens on casdyn's test sets of
 * robot hulls; round hulls deep in each other need more EPA vertices, about 1.3 to 1.6 per
 * point for a sphere's hull against itself (800 points reach the vertex capacity).
 *
 * Sizes: lengths are squared and cubed, so the search works on them scaled by a power of
 * two (exact); any finite coordinates whose differences stay finite work (see
 * casdyn_cvx_query).
 */
#ifndef CASDYN_CONVEX_DISTANCE_C
#define CASDYN_CONVEX_DISTANCE_C

#include <float.h>
#include <math.h>
#include <string.h>

/* Unused static functions are expected (a caller may use only the entry point or only the
 * report); say so to GCC and Clang. */
#if defined(__GNUC__) || defined(__clang__)
#define CASDYN_CVX_UNUSED __attribute__((unused))
#else
#define CASDYN_CVX_UNUSED
#endif

/* EPA's polytope lives on the stack: about 200 kB with these caps. A program with smaller
 * thread stacks may define smaller ones before including this file (EPA then stops earlier on
 * very detailed hulls, returning its best bound; Panda-sized hulls need about 20 vertices). */
#ifndef CASDYN_CVX_MAX_VERTS
#define CASDYN_CVX_MAX_VERTS 1000
#endif
#ifndef CASDYN_CVX_MAX_FACES
#define CASDYN_CVX_MAX_FACES 2000
#endif
#define CASDYN_CVX_GJK_ITERATIONS 1000
#define CASDYN_CVX_TOL 1e-12   /* stopping tolerance, relative to the problem's size */
#define CASDYN_CVX_ZERO 1e-14  /* |v| below this (relative) counts as touching: go to EPA */

/* Bits of info[0] from casdyn_cvx_query. */
#define CASDYN_CVX_GJK_LIMIT 1    /* GJK iteration limit reached */
#define CASDYN_CVX_EPA_VERTS 2    /* EPA vertex capacity reached */
#define CASDYN_CVX_EPA_FACES 4    /* EPA face capacity reached */
#define CASDYN_CVX_EPA_REFUSED 8  /* an EPA update was numerically inconsistent: stopped */
#define CASDYN_CVX_EPA_STALLED 16 /* EPA's support point was already a vertex: stopped */
#define CASDYN_CVX_EPA_USED 32    /* the shapes overlap or touch: EPA ran */
#define CASDYN_CVX_FLAT 64        /* D is flat (or a segment, or a point) through the origin */
#define CASDYN_CVX_BAD_INPUT 128  /* n < 1 or a non-finite number: sd is NaN */
/* The bits of a search stopped by a capacity or limit: sd is then only a bound (above). */
#define CASDYN_CVX_LIMITS (CASDYN_CVX_GJK_LIMIT | CASDYN_CVX_EPA_VERTS | CASDYN_CVX_EPA_FACES)

/* A point of D = B - A: world coordinates and the indices of the points of a and b. */
typedef struct {
    double w[3];
    int ia, ib;
} casdyn_cvx_vertex;

/* A triangle of the expanding polytope: vertices counter-clockwise seen from outside, the
 * neighbour across edge e (from v[e] to v[(e+1)%3]) and that edge's index in the neighbour,
 * the outward unit normal and the plane's signed distance from the origin. */
typedef struct {
    double n[3];
    double d;
    int v[3];
    int adj[3];
    int mark;
    unsigned char adje[3];
    unsigned char alive;
} casdyn_cvx_face;

/* The two shapes: points in their own frames and their poses (column-major 4x4), and the
 * power of two unit by which the search scales every length (see casdyn_cvx_query). */
typedef struct {
    const double *va, *vb, *pa, *pb;
    double unit;
    int na, nb;
} casdyn_cvx_pair;

static double casdyn_cvx_dot(const double *x, const double *y)
{
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
}

static void casdyn_cvx_cross(const double *x, const double *y, double *out)
{
    out[0] = x[1] * y[2] - x[2] * y[1];
    out[1] = x[2] * y[0] - x[0] * y[2];
    out[2] = x[0] * y[1] - x[1] * y[0];
}

static void casdyn_cvx_sub(const double *x, const double *y, double *out)
{
    out[0] = x[0] - y[0];
    out[1] = x[1] - y[1];
    out[2] = x[2] - y[2];
}

/* The world point R v + p of a shape's point v, times the power of two unit, formed as
 * R (unit v) + unit p: the same number (scaling by a power of two is exact), and no product
 * overflows. */
static void casdyn_cvx_world_scaled(const double *pose, const double *v, double unit, double *x)
{
    int r;
    for (r = 0; r < 3; ++r)
        x[r] = pose[r] * (unit * v[0]) + pose[4 + r] * (unit * v[1])
               + pose[8 + r] * (unit * v[2]) + unit * pose[12 + r];
}

/* The index of the point of a shape farthest along the world direction d. */
static int casdyn_cvx_support_index(const double *pts, int n, const double *pose, const double *d)
{
    double dl[3], best, s;
    int c, i, arg = 0;
    for (c = 0; c < 3; ++c)
        dl[c] = pose[4 * c] * d[0] + pose[4 * c + 1] * d[1] + pose[4 * c + 2] * d[2];
    best = casdyn_cvx_dot(pts, dl);
    for (i = 1; i < n; ++i) {
        s = casdyn_cvx_dot(pts + 3 * i, dl);
        if (s > best) {
            best = s;
            arg = i;
        }
    }
    return arg;
}

/* The point of D = B - A farthest along d, scaled by the pair's unit. */
static void casdyn_cvx_support(const casdyn_cvx_pair *p, const double *d, casdyn_cvx_vertex *out)
{
    double md[3], xa[3], xb[3];
    md[0] = -d[0];
    md[1] = -d[1];
    md[2] = -d[2];
    out->ib = casdyn_cvx_support_index(p->vb, p->nb, p->pb, d);
    out->ia = casdyn_cvx_support_index(p->va, p->na, p->pa, md);
    casdyn_cvx_world_scaled(p->pb, p->vb + 3 * out->ib, p->unit, xb);
    casdyn_cvx_world_scaled(p->pa, p->va + 3 * out->ia, p->unit, xa);
    casdyn_cvx_sub(xb, xa, out->w);
}

/* x scaled to unit length; returns 0 (x unchanged) when its length is 0 or not finite. */
static int casdyn_cvx_normalize(double *x)
{
    double len = sqrt(casdyn_cvx_dot(x, x));
    if (!(len > 0.0) || !(len < DBL_MAX))
        return 0;
    x[0] /= len;
    x[1] /= len;
    x[2] /= len;
    return 1;
}

/* The unit normal n of the triangle x0 x1 x2 (counter-clockwise seen from where n points);
 * returns 0 when it has no area. e1 x e2 = e1 x e3 = e2 x e3 for the edges e1 = x1 - x0,
 * e2 = x2 - x0, e3 = x2 - x1: the product of the two shorter edges is the most accurate. */
static int casdyn_cvx_normal3(const double *x0, const double *x1, const double *x2, double *n)
{
    double e1[3], e2[3], e3[3], a1, a2, a3;
    casdyn_cvx_sub(x1, x0, e1);
    casdyn_cvx_sub(x2, x0, e2);
    casdyn_cvx_sub(x2, x1, e3);
    a1 = casdyn_cvx_dot(e1, e1);
    a2 = casdyn_cvx_dot(e2, e2);
    a3 = casdyn_cvx_dot(e3, e3);
    if (a1 >= a2 && a1 >= a3)
        casdyn_cvx_cross(e2, e3, n);
    else if (a2 >= a3)
        casdyn_cvx_cross(e1, e3, n);
    else
        casdyn_cvx_cross(e1, e2, n);
    return casdyn_cvx_normalize(n);
}

/* Barycentric coordinates lam of the projection of the origin on the affine hull of the m
 * points s[idx[0..m-1]] (m = 1..4). Returns 0 when those points are (nearly) degenerate. */
static int casdyn_cvx_project(const casdyn_cvx_vertex *s, const int *idx, int m, double *lam)
{
    double e[3][3], g[3][3], r[3], mu[3], det;
    const double *p0 = s[idx[0]].w;
    int i, j;
    if (m == 1) {
        lam[0] = 1.0;
        return 1;
    }
    for (i = 1; i < m; ++i)
        casdyn_cvx_sub(s[idx[i]].w, p0, e[i - 1]);
    for (i = 0; i < m - 1; ++i) {
        for (j = 0; j < m - 1; ++j)
            g[i][j] = casdyn_cvx_dot(e[i], e[j]);
        r[i] = -casdyn_cvx_dot(e[i], p0);
    }
    if (m == 2) {
        if (!(g[0][0] > 0.0))
            return 0;
        mu[0] = r[0] / g[0][0];
    } else if (m == 3) {
        det = g[0][0] * g[1][1] - g[0][1] * g[1][0];
        if (!(det > 1e-20 * g[0][0] * g[1][1]))
            return 0;
        mu[0] = (r[0] * g[1][1] - g[0][1] * r[1]) / det;
        mu[1] = (g[0][0] * r[1] - g[1][0] * r[0]) / det;
    } else {
        double c0, c1, c2;
        c0 = g[1][1] * g[2][2] - g[1][2] * g[2][1];
        c1 = g[1][2] * g[2][0] - g[1][0] * g[2][2];
        c2 = g[1][0] * g[2][1] - g[1][1] * g[2][0];
        det = g[0][0] * c0 + g[0][1] * c1 + g[0][2] * c2;
        if (!(det > 1e-20 * g[0][0] * g[1][1] * g[2][2]))
            return 0;
        /* Cramer's rule on the symmetric 3x3 Gram matrix. */
        mu[0] = (r[0] * c0 + g[0][1] * (g[1][2] * r[2] - r[1] * g[2][2])
                 + g[0][2] * (r[1] * g[2][1] - g[1][1] * r[2])) / det;
        mu[1] = (g[0][0] * (r[1] * g[2][2] - g[1][2] * r[2]) + r[0] * c1
                 + g[0][2] * (g[1][0] * r[2] - r[1] * g[2][0])) / det;
        mu[2] = (g[0][0] * (g[1][1] * r[2] - r[1] * g[2][1])
                 + g[0][1] * (r[1] * g[2][0] - g[1][0] * r[2]) + r[0] * c2) / det;
    }
    lam[0] = 1.0;
    for (i = 1; i < m; ++i) {
        lam[i] = mu[i - 1];
        lam[0] -= mu[i - 1];
    }
    return 1;
}

/* The foot x of the origin on the plane of the triangle s[idx[0..2]] (unit normal n) and its
 * barycentric weights lam from the areas of the sub-triangles; returns 0 when the foot lies
 * outside the triangle (beyond rounding) or the triangle is a needle (twice its area below
 * 1e-9 of its longest edge squared), else clamps the weights to the triangle. */
static int casdyn_cvx_foot3(const casdyn_cvx_vertex *s, const int *idx, const double *n,
                            double *lam, double *x)
{
    const double *w0 = s[idx[0]].w, *w1 = s[idx[1]].w, *w2 = s[idx[2]].w;
    double c[3], e1[3], e2[3], r0[3], r1[3], r2[3], h, whole, total, edge;
    int i;
    for (i = 0; i < 3; ++i)
        c[i] = (w0[i] + w1[i] + w2[i]) / 3.0;
    h = casdyn_cvx_dot(n, c);
    for (i = 0; i < 3; ++i) {
        x[i] = h * n[i];
        e1[i] = w1[i] - w0[i];
        e2[i] = w2[i] - w0[i];
        r0[i] = w0[i] - x[i];
        r1[i] = w1[i] - x[i];
        r2[i] = w2[i] - x[i];
    }
    casdyn_cvx_cross(e1, e2, c);
    whole = casdyn_cvx_dot(n, c);
    casdyn_cvx_sub(w2, w1, r0);
    edge = fmax(casdyn_cvx_dot(r0, r0), fmax(casdyn_cvx_dot(e1, e1), casdyn_cvx_dot(e2, e2)));
    if (!(fabs(whole) > 1e-9 * edge))
        return 0; /* a triangle flat to rounding: its normal is noise, its edges stand in */
    for (i = 0; i < 3; ++i)
        r0[i] = w0[i] - x[i];
    casdyn_cvx_cross(r1, r2, c);
    lam[0] = casdyn_cvx_dot(n, c) / whole;
    casdyn_cvx_cross(r2, r0, c);
    lam[1] = casdyn_cvx_dot(n, c) / whole;
    casdyn_cvx_cross(r0, r1, c);
    lam[2] = casdyn_cvx_dot(n, c) / whole;
    total = 0.0;
    for (i = 0; i < 3; ++i) {
        if (!(lam[i] >= -1e-12))
            return 0;
        lam[i] = fmax(lam[i], 0.0);
        total += lam[i];
    }
    for (i = 0; i < 3; ++i)
        lam[i] /= total;
    return 1;
}

/* The barycentric weights lam of the origin in the tetrahedron s[idx[0..3]], as ratios of
 * volumes (triple products); returns 0 when the origin lies outside it or the tetrahedron is
 * flat (volume below 1e-12 of its longest edge cubed). */
static int casdyn_cvx_tetra_weights(const casdyn_cvx_vertex *s, const int *idx, double *lam)
{
    double e1[3], e2[3], e3[3], o[3], c[3], whole, edge;
    int i;
    casdyn_cvx_sub(s[idx[1]].w, s[idx[0]].w, e1);
    casdyn_cvx_sub(s[idx[2]].w, s[idx[0]].w, e2);
    casdyn_cvx_sub(s[idx[3]].w, s[idx[0]].w, e3);
    for (i = 0; i < 3; ++i)
        o[i] = -s[idx[0]].w[i];
    casdyn_cvx_cross(e2, e3, c);
    whole = casdyn_cvx_dot(e1, c);
    edge = fmax(casdyn_cvx_dot(e1, e1), fmax(casdyn_cvx_dot(e2, e2), casdyn_cvx_dot(e3, e3)));
    if (!(fabs(whole) > 1e-12 * edge * sqrt(edge)))
        return 0; /* flat to rounding (a flat D): its faces stand in */
    lam[1] = casdyn_cvx_dot(o, c) / whole;
    casdyn_cvx_cross(o, e3, c);
    lam[2] = casdyn_cvx_dot(e1, c) / whole;
    casdyn_cvx_cross(e2, o, c);
    lam[3] = casdyn_cvx_dot(e1, c) / whole;
    lam[0] = 1.0 - lam[1] - lam[2] - lam[3];
    for (i = 0; i < 4; ++i)
        if (!(lam[i] >= 0.0))
            return 0;
    return 1;
}

/* The point v of the simplex s[0..k-1] nearest the origin, by trying every sub-simplex; the
 * simplex is reduced to the smallest one holding v. Returns 1 when the full tetrahedron holds
 * the origin. */
static int casdyn_cvx_closest(casdyn_cvx_vertex *s, int *k, double *lam, double *v)
{
    int mask, best_mask = 1, i, m, idx[4], inside = 0;
    double l[4], best_lam[4] = {1.0, 0.0, 0.0, 0.0}, best = DBL_MAX, x[3], q, n[3];
    double best_x[3] = {0.0, 0.0, 0.0};
    casdyn_cvx_vertex kept[4];
    for (mask = 1; mask < (1 << *k); ++mask) {
        m = 0;
        for (i = 0; i < *k; ++i)
            if (mask & (1 << i))
                idx[m++] = i;
        if (m == 3 && casdyn_cvx_normal3(s[idx[0]].w, s[idx[1]].w, s[idx[2]].w, n)) {
            /* The foot of the origin on the triangle's plane, far more accurate than a
             * barycentric sum when the origin is near the plane (its direction is the
             * plane's normal), and its weights from the sub-triangles' areas, which stay
             * accurate on a long thin triangle (a segment against a face of a mesh makes
             * them) where the Gram system's do not: a thin triangle skipped there stopped
             * GJK 6.5e-5 above the distance. On the plane every point of the triangle has
             * the same n . w, so the distance does not depend on the weights' rounding. */
            if (!casdyn_cvx_foot3(s, idx, n, l, x))
                continue;
        } else if (m == 4) {
            /* Whether the tetrahedron holds the origin, from the signs of the volumes with the
             * origin in place of each vertex: robust on a flat tetrahedron, where the Gram
             * system's weights (and their sum's distance from the origin, 4e-12 of its size
             * on a Panda hull) once rejected one that held the origin, and GJK stopped apart
             * at 4e-4 m with the shapes overlapping by as much. */
            if (!casdyn_cvx_tetra_weights(s, idx, l))
                continue;
            x[0] = x[1] = x[2] = 0.0;
        } else {
            if (m == 3 || !casdyn_cvx_project(s, idx, m, l))
                continue; /* a triangle without a normal: its edges stand in */
            for (i = 0; i < m; ++i)
                if (!(l[i] >= 0.0))
                    break;
            if (i < m)
                continue;
            /* The barycentric point. */
            x[0] = x[1] = x[2] = 0.0;
            for (i = 0; i < m; ++i) {
                x[0] += l[i] * s[idx[i]].w[0];
                x[1] += l[i] * s[idx[i]].w[1];
                x[2] += l[i] * s[idx[i]].w[2];
            }
            if (m == 2) {
                /* The foot on a segment is normal to it; rounding leaves a component along
                 * it of ~eps |x|, a tilt of eps |x| / |v| when nearly touching: remove it. */
                double e[3], t;
                casdyn_cvx_sub(s[idx[1]].w, s[idx[0]].w, e);
                t = casdyn_cvx_dot(x, e) / casdyn_cvx_dot(e, e);
                x[0] -= t * e[0];
                x[1] -= t * e[1];
                x[2] -= t * e[2];
            }
        }
        q = casdyn_cvx_dot(x, x);
        if (m == 4)
            inside = 1;
        if (q < best) {
            best = q;
            best_mask = mask;
            memcpy(best_lam, l, sizeof l);
            memcpy(best_x, x, sizeof x);
        }
    }
    if (best_mask == (1 << *k) - 1 && *k == 4 && inside) {
        memcpy(lam, best_lam, sizeof best_lam);
        v[0] = v[1] = v[2] = 0.0;
        return 1;
    }
    m = 0;
    for (i = 0; i < *k; ++i)
        if (best_mask & (1 << i))
            kept[m++] = s[i];
    *k = m;
    for (i = 0; i < m; ++i) {
        s[i] = kept[i];
        lam[i] = best_lam[i];
    }
    memcpy(v, best_x, sizeof best_x);
    return 0;
}

/* Witness points in the shapes' frames from barycentric weights over points of D. */
static void casdyn_cvx_witness(const casdyn_cvx_pair *p, const casdyn_cvx_vertex *const *s,
                               const double *lam, int m, double *wa, double *wb)
{
    double total = 0.0, l;
    int i, c;
    for (i = 0; i < m; ++i)
        total += lam[i] > 0.0 ? lam[i] : 0.0;
    for (c = 0; c < 3; ++c)
        wa[c] = wb[c] = 0.0;
    for (i = 0; i < m; ++i) {
        l = total > 0.0 ? (lam[i] > 0.0 ? lam[i] : 0.0) / total : (i == 0 ? 1.0 : 0.0);
        for (c = 0; c < 3; ++c) {
            wa[c] += l * p->va[3 * s[i]->ia + c];
            wb[c] += l * p->vb[3 * s[i]->ib + c];
        }
    }
}

/* sd = normal . (xb - xa) from the witnesses, so the three outputs always agree (formed
 * scaled by the pair's unit, exactly, so that xb - xa cannot overflow). */
static double casdyn_cvx_signed(const casdyn_cvx_pair *p, const double *normal, const double *wa,
                                const double *wb)
{
    double xa[3], xb[3], g[3];
    casdyn_cvx_world_scaled(p->pa, wa, p->unit, xa);
    casdyn_cvx_world_scaled(p->pb, wb, p->unit, xb);
    casdyn_cvx_sub(xb, xa, g);
    return casdyn_cvx_dot(normal, g) / p->unit;
}

/* A unit vector perpendicular to the nonzero vector e. */
static void casdyn_cvx_perpendicular(const double *e, double *u)
{
    double axis[3] = {0.0, 0.0, 0.0};
    int k = 0;
    if (fabs(e[1]) < fabs(e[k]))
        k = 1;
    if (fabs(e[2]) < fabs(e[k]))
        k = 2;
    axis[k] = 1.0;
    casdyn_cvx_cross(e, axis, u);
    casdyn_cvx_normalize(u);
}

/* Sets a face's outward unit normal and plane offset; returns 0 for a face without area or
 * one that does not face away from the interior point c. The offset is the least of n . x
 * over the corners: the plane never passes outside the triangle, whatever the normal's
 * rounding (a sliver's normal can be far off), so the nearest face plane remains a lower
 * bound of the depth. */
static int casdyn_cvx_face_plane(casdyn_cvx_face *f, const casdyn_cvx_vertex *vs,
                                 const double *c)
{
    const double *x0 = vs[f->v[0]].w, *x1 = vs[f->v[1]].w, *x2 = vs[f->v[2]].w;
    double n[3], m[3], d0, d1, d2;
    if (!casdyn_cvx_normal3(x0, x1, x2, n))
        return 0;
    m[0] = (x0[0] + x1[0] + x2[0]) / 3.0 - c[0];
    m[1] = (x0[1] + x1[1] + x2[1]) / 3.0 - c[1];
    m[2] = (x0[2] + x1[2] + x2[2]) / 3.0 - c[2];
    if (!(casdyn_cvx_dot(n, m) > 0.0))
        return 0;
    memcpy(f->n, n, sizeof n);
    d0 = casdyn_cvx_dot(n, x0);
    d1 = casdyn_cvx_dot(n, x1);
    d2 = casdyn_cvx_dot(n, x2);
    f->d = d0 < d1 ? (d0 < d2 ? d0 : d2) : (d1 < d2 ? d1 : d2);
    return 1;
}

/* Barycentric coordinates of the projection of the point q on the plane of face f. */
static int casdyn_cvx_face_coordinates(const casdyn_cvx_vertex *vs, const casdyn_cvx_face *f,
                                       const double *q, double *lam)
{
    casdyn_cvx_vertex t[3];
    int idx[3] = {0, 1, 2}, i;
    for (i = 0; i < 3; ++i)
        casdyn_cvx_sub(vs[f->v[i]].w, q, t[i].w);
    return casdyn_cvx_project(t, idx, 3, lam);
}

#define CASDYN_CVX_FACET_FACES 64

/* The answer of the expanding polytope from its face f0 nearest the origin: the foot q of the
 * origin on its plane, as a point of a triangle. q lies in the polytope's facet holding f0,
 * but that facet may be split into several coplanar triangles (the parallelograms of D from
 * an edge of a and one of b always are) and q in another of them: search the triangles
 * connected to f0 whose planes hold q (to tol) for the one holding q best. */
static double casdyn_cvx_epa_answer(const casdyn_cvx_pair *p, const casdyn_cvx_vertex *vs,
                                    const casdyn_cvx_face *faces, int f0, double tol,
                                    double normal[3], double wa[3], double wb[3])
{
    const casdyn_cvx_face *f = &faces[f0];
    const casdyn_cvx_vertex *s[3];
    int seen[CASDYN_CVX_FACET_FACES], nseen = 1, at, i, e, chosen = f0;
    double q[3], lam[3], best_lam[3] = {1.0, 0.0, 0.0}, best_min = -DBL_MAX, least;
    for (i = 0; i < 3; ++i)
        q[i] = f->d * f->n[i];
    seen[0] = f0;
    for (at = 0; at < nseen && best_min < 0.0; ++at) {
        const casdyn_cvx_face *g = &faces[seen[at]];
        if (casdyn_cvx_face_coordinates(vs, g, q, lam)) {
            least = lam[0] < lam[1] ? (lam[0] < lam[2] ? lam[0] : lam[2])
                                    : (lam[1] < lam[2] ? lam[1] : lam[2]);
            if (least > best_min) {
                best_min = least;
                chosen = seen[at];
                memcpy(best_lam, lam, sizeof lam);
            }
        }
        for (e = 0; e < 3 && nseen < CASDYN_CVX_FACET_FACES; ++e) {
            int nb = g->adj[e], known = 0;
            for (i = 0; i < nseen; ++i)
                known |= seen[i] == nb;
            if (!known && casdyn_cvx_dot(faces[nb].n, f->n) > 0.0
                && fabs(casdyn_cvx_dot(faces[nb].n, q) - faces[nb].d) <= tol)
                seen[nseen++] = nb;
        }
    }
    for (i = 0; i < 3; ++i)
        s[i] = &vs[faces[chosen].v[i]];
    casdyn_cvx_witness(p, s, best_lam, 3, wa, wb);
    normal[0] = -f->n[0];
    normal[1] = -f->n[1];
    normal[2] = -f->n[2];
    return casdyn_cvx_signed(p, normal, wa, wb);
}

/* The answer when D is flat through the origin or the origin lies on its boundary: the
 * witnesses of the simplex's point nearest the origin and the given normal. */
static double casdyn_cvx_touch(const casdyn_cvx_pair *p, const casdyn_cvx_vertex *s,
                               const double *lam, int k, const double *normal_in,
                               double normal[3], double wa[3], double wb[3])
{
    const casdyn_cvx_vertex *sp[4];
    int i;
    for (i = 0; i < k; ++i)
        sp[i] = &s[i];
    casdyn_cvx_witness(p, sp, lam, k, wa, wb);
    memcpy(normal, normal_in, 3 * sizeof(double));
    return casdyn_cvx_signed(p, normal, wa, wb);
}

static int casdyn_cvx_new_face(casdyn_cvx_face *faces, int *nf, int *freelist, int *nfree)
{
    int i;
    if (*nfree > 0)
        i = freelist[--*nfree];
    else if (*nf < CASDYN_CVX_MAX_FACES)
        i = (*nf)++;
    else
        return -1;
    faces[i].alive = 1;
    faces[i].mark = -1;
    return i;
}

/* The expanding polytope from a simplex s[0..k-1] (k = 1..4) of points of D whose convex
 * hull holds the origin (to rounding). *bound: the width of the interval known to hold the
 * depth, in the pair's unit (0 where D touches the origin or is flat). */
static double casdyn_cvx_epa(const casdyn_cvx_pair *p, casdyn_cvx_vertex *s, int k,
                             double *lam, double scale, double normal[3], double wa[3],
                             double wb[3], int *info, double *bound)
{
    casdyn_cvx_vertex vs[CASDYN_CVX_MAX_VERTS];
    casdyn_cvx_face faces[CASDYN_CVX_MAX_FACES];
    int freelist[CASDYN_CVX_MAX_FACES], stack[CASDYN_CVX_MAX_FACES];
    int hor_u[CASDYN_CVX_MAX_VERTS], hor_v[CASDYN_CVX_MAX_VERTS];
    int hor_f[CASDYN_CVX_MAX_VERTS], hor_e[CASDYN_CVX_MAX_VERTS];
    int start_of[CASDYN_CVX_MAX_VERTS], newface_of[CASDYN_CVX_MAX_VERTS];
    double eps = CASDYN_CVX_ZERO * scale, tol = CASDYN_CVX_TOL * scale;
    double dir[3], c[3], e[3], u[3], nrm[3], h;
    casdyn_cvx_vertex w;
    int nv, nf = 0, nfree = 0, live, i, j, best, iter, tries, converged = 0;
    double best_h = DBL_MAX, best_n[3] = {0.0, 0.0, 1.0};
    casdyn_cvx_vertex best_w = s[0];
    static const int tet[4][3] = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}};

    info[0] |= CASDYN_CVX_EPA_USED;
    *bound = 0.0;
    /* Grow the simplex to a solid whose hull holds the origin. k = 1: a segment. */
    if (k == 1) {
        for (tries = 0; tries < 6 && k == 1; ++tries) {
            dir[0] = dir[1] = dir[2] = 0.0;
            dir[tries / 2] = (tries % 2) ? -1.0 : 1.0;
            casdyn_cvx_support(p, dir, &w);
            casdyn_cvx_sub(w.w, s[0].w, e);
            if (sqrt(casdyn_cvx_dot(e, e)) > eps) {
                s[1] = w;
                lam[1] = 0.0;
                k = 2;
            }
        }
        if (k == 1) { /* D is a single point: both shapes are points. */
            info[0] |= CASDYN_CVX_FLAT;
            dir[0] = dir[1] = 0.0;
            dir[2] = 1.0;
            return casdyn_cvx_touch(p, s, lam, 1, dir, normal, wa, wb);
        }
    }
    if (k == 2) {
        double perp[3], len2;
        casdyn_cvx_sub(s[1].w, s[0].w, e);
        casdyn_cvx_perpendicular(e, u);
        casdyn_cvx_cross(e, u, perp);
        casdyn_cvx_normalize(perp);
        for (tries = 0; tries < 4 && k == 2; ++tries) {
            for (j = 0; j < 3; ++j)
                dir[j] = (tries < 2 ? u[j] : perp[j]) * ((tries % 2) ? -1.0 : 1.0);
            casdyn_cvx_support(p, dir, &w);
            /* Its distance from the segment's line. */
            casdyn_cvx_sub(w.w, s[0].w, nrm);
            casdyn_cvx_cross(nrm, e, c);
            len2 = sqrt(casdyn_cvx_dot(c, c) / casdyn_cvx_dot(e, e));
            if (len2 > eps) {
                s[2] = w;
                lam[2] = 0.0;
                k = 3;
            }
        }
        if (k == 2) { /* D is a segment through the origin. */
            info[0] |= CASDYN_CVX_FLAT;
            return casdyn_cvx_touch(p, s, lam, 2, u, normal, wa, wb);
        }
    }
    if (k == 3) {
        casdyn_cvx_vertex up, down;
        double hu, hd, m[3];
        casdyn_cvx_sub(s[1].w, s[0].w, e);
        casdyn_cvx_sub(s[2].w, s[0].w, u);
        casdyn_cvx_cross(e, u, nrm);
        if (!casdyn_cvx_normalize(nrm)) { /* cannot happen: s[2] is off the line */
            info[0] |= CASDYN_CVX_FLAT;
            casdyn_cvx_perpendicular(e, nrm);
            return casdyn_cvx_touch(p, s, lam, 3, nrm, normal, wa, wb);
        }
        casdyn_cvx_support(p, nrm, &up);
        dir[0] = -nrm[0];
        dir[1] = -nrm[1];
        dir[2] = -nrm[2];
        casdyn_cvx_support(p, dir, &down);
        m[0] = (s[0].w[0] + s[1].w[0] + s[2].w[0]) / 3.0;
        m[1] = (s[0].w[1] + s[1].w[1] + s[2].w[1]) / 3.0;
        m[2] = (s[0].w[2] + s[1].w[2] + s[2].w[2]) / 3.0;
        casdyn_cvx_sub(up.w, m, e);
        hu = casdyn_cvx_dot(nrm, e);
        casdyn_cvx_sub(down.w, m, e);
        hd = -casdyn_cvx_dot(nrm, e);
        if (!(hu > eps) || !(hd > eps)) {
            /* D lies on one side of the triangle's plane, which holds the origin: touching
             * (or D is flat). D's outward normal there is nrm when D does not reach above
             * the plane, -nrm otherwise; translating b against it moves D off the origin. */
            if (!(hu > eps) && !(hd > eps))
                info[0] |= CASDYN_CVX_FLAT;
            if (hu > eps) {
                nrm[0] = -nrm[0];
                nrm[1] = -nrm[1];
                nrm[2] = -nrm[2];
            }
            dir[0] = -nrm[0];
            dir[1] = -nrm[1];
            dir[2] = -nrm[2];
            return casdyn_cvx_touch(p, s, lam, 3, dir, normal, wa, wb);
        }
        /* The tetrahedron on the triangle and one apex: the origin lies on its face (a
         * double pyramid with both apexes need not be convex). */
        s[3] = up;
        lam[3] = 0.0;
        k = 4;
    }
    {
        /* A tetrahedron holding the origin (from GJK, or the triangle's). */
        for (i = 0; i < 4; ++i)
            vs[i] = s[i];
        nv = 4;
        for (j = 0; j < 3; ++j)
            c[j] = (s[0].w[j] + s[1].w[j] + s[2].w[j] + s[3].w[j]) / 4.0;
        for (i = 0; i < 4; ++i) {
            j = casdyn_cvx_new_face(faces, &nf, freelist, &nfree);
            faces[j].v[0] = tet[i][0];
            faces[j].v[1] = tet[i][1];
            faces[j].v[2] = tet[i][2];
        }
    }
    /* Orient the faces outward: away from the interior point c. */
    for (i = 0; i < nf; ++i) {
        double a1[3], a2[3], nn[3];
        casdyn_cvx_sub(vs[faces[i].v[1]].w, vs[faces[i].v[0]].w, a1);
        casdyn_cvx_sub(vs[faces[i].v[2]].w, vs[faces[i].v[0]].w, a2);
        casdyn_cvx_cross(a1, a2, nn);
        casdyn_cvx_sub(vs[faces[i].v[0]].w, c, a1);
        if (casdyn_cvx_dot(nn, a1) < 0.0) {
            j = faces[i].v[1];
            faces[i].v[1] = faces[i].v[2];
            faces[i].v[2] = j;
        }
    }
    /* Neighbours of the initial faces, by matching opposite edges. */
    for (i = 0; i < nf; ++i) {
        int ei, g, eg;
        for (ei = 0; ei < 3; ++ei) {
            int a = faces[i].v[ei], b = faces[i].v[(ei + 1) % 3];
            faces[i].adj[ei] = -1;
            for (g = 0; g < nf; ++g)
                for (eg = 0; eg < 3; ++eg)
                    if (faces[g].v[eg] == b && faces[g].v[(eg + 1) % 3] == a) {
                        faces[i].adj[ei] = g;
                        faces[i].adje[ei] = (unsigned char)eg;
                    }
        }
    }
    for (i = 0; i < nf; ++i) {
        if (!casdyn_cvx_face_plane(&faces[i], vs, c) || faces[i].adj[0] < 0
            || faces[i].adj[1] < 0 || faces[i].adj[2] < 0) {
            /* A flat start (cannot happen after the checks above): report touching. */
            info[0] |= CASDYN_CVX_EPA_REFUSED;
            casdyn_cvx_sub(s[1].w, s[0].w, e);
            casdyn_cvx_perpendicular(e, nrm);
            return casdyn_cvx_touch(p, s, lam, k, nrm, normal, wa, wb);
        }
    }
    for (i = 0; i < CASDYN_CVX_MAX_VERTS; ++i)
        start_of[i] = -1;
    live = nf;

    for (iter = 0;; ++iter) {
        int nstack = 0, nh = 0, f, ok;
        /* The face whose plane is nearest the origin. */
        best = -1;
        for (i = 0; i < nf; ++i)
            if (faces[i].alive && (best < 0 || faces[i].d < faces[best].d))
                best = i;
        f = best;
        info[2] = iter;
        info[3] = nv;
        casdyn_cvx_support(p, faces[f].n, &w);
        h = casdyn_cvx_dot(faces[f].n, w.w);
        if (h - faces[f].d <= tol) {
            converged = 1;
            break;
        }
        if (h < best_h) { /* translating b by h along -n separates the shapes */
            best_h = h;
            memcpy(best_n, faces[f].n, sizeof best_n);
            best_w = w;
        }
        for (i = 0; i < nv; ++i)
            if (vs[i].ia == w.ia && vs[i].ib == w.ib)
                break;
        if (i < nv) {
            info[0] |= CASDYN_CVX_EPA_STALLED;
            break;
        }
        if (nv == CASDYN_CVX_MAX_VERTS) {
            info[0] |= CASDYN_CVX_EPA_VERTS;
            break;
        }
        /* The faces w sees, a connected set grown from f; the horizon is their boundary. */
        faces[f].mark = iter;
        stack[nstack++] = f;
        ok = 1;
        for (j = 0; j < nstack && ok; ++j) {
            int g = stack[j], ei;
            for (ei = 0; ei < 3; ++ei) {
                int nb = faces[g].adj[ei];
                if (faces[nb].mark != iter) {
                    if (faces[nb].mark != -2 - iter
                        && casdyn_cvx_dot(faces[nb].n, w.w) - faces[nb].d > eps) {
                        faces[nb].mark = iter;
                        stack[nstack++] = nb;
                        continue;
                    }
                    faces[nb].mark = -2 - iter; /* seen, not visible */
                    if (nh == CASDYN_CVX_MAX_VERTS) {
                        ok = 0;
                        break;
                    }
                    hor_u[nh] = faces[g].v[ei];
                    hor_v[nh] = faces[g].v[(ei + 1) % 3];
                    hor_f[nh] = nb;
                    hor_e[nh] = faces[g].adje[ei];
                    ++nh;
                }
            }
        }
        /* The horizon must be one simple loop. */
        for (i = 0; i < nh && ok; ++i) {
            if (start_of[hor_u[i]] >= 0)
                ok = 0;
            else
                start_of[hor_u[i]] = i;
        }
        if (ok && nh >= 3) {
            int at = 0, steps = 0;
            do {
                at = start_of[hor_v[at]];
                ++steps;
            } while (at >= 0 && at != 0 && steps <= nh);
            if (at != 0 || steps != nh)
                ok = 0;
        } else {
            ok = 0;
        }
        if (ok && live - nstack + nh > CASDYN_CVX_MAX_FACES) {
            info[0] |= CASDYN_CVX_EPA_FACES;
            for (i = 0; i < nh; ++i)
                start_of[hor_u[i]] = -1;
            break;
        }
        /* The new faces' planes must be sound before anything changes. */
        vs[nv] = w;
        for (i = 0; i < nh && ok; ++i) {
            casdyn_cvx_face t;
            t.v[0] = hor_u[i];
            t.v[1] = hor_v[i];
            t.v[2] = nv;
            if (!casdyn_cvx_face_plane(&t, vs, c))
                ok = 0;
        }
        if (!ok) {
            info[0] |= CASDYN_CVX_EPA_REFUSED;
            for (i = 0; i < nh; ++i)
                start_of[hor_u[i]] = -1;
            break;
        }
        ++nv;
        for (i = 0; i < nstack; ++i) {
            faces[stack[i]].alive = 0;
            freelist[nfree++] = stack[i];
        }
        live -= nstack;
        for (i = 0; i < nh; ++i) {
            int g = casdyn_cvx_new_face(faces, &nf, freelist, &nfree);
            faces[g].v[0] = hor_u[i];
            faces[g].v[1] = hor_v[i];
            faces[g].v[2] = nv - 1;
            casdyn_cvx_face_plane(&faces[g], vs, c);
            faces[g].adj[0] = hor_f[i];
            faces[g].adje[0] = (unsigned char)hor_e[i];
            faces[hor_f[i]].adj[hor_e[i]] = g;
            faces[hor_f[i]].adje[hor_e[i]] = 0;
            newface_of[hor_u[i]] = g;
        }
        live += nh;
        for (i = 0; i < nh; ++i) {
            int g = newface_of[hor_u[i]], g2 = newface_of[hor_v[i]];
            faces[g].adj[1] = g2;
            faces[g].adje[1] = 2;
            faces[g2].adj[2] = g;
            faces[g2].adje[2] = 1;
        }
        for (i = 0; i < nh; ++i)
            start_of[hor_u[i]] = -1;
    }
    if (converged) {
        *bound = fmax(h - faces[best].d, 0.0); /* rounding may make it negative */
        return casdyn_cvx_epa_answer(p, vs, faces, best, eps, normal, wa, wb);
    }
    /* The nearest face's plane bounds the depth from below, every support along a face
     * normal from above. */
    *bound = best_h - faces[best].d;
    /* Stopped early: the shortest separating translation seen, with the support points along
     * it (after it they touch in the plane normal to it), an upper bound of the depth. */
    for (j = 0; j < 3; ++j) {
        normal[j] = -best_n[j];
        wa[j] = p->va[3 * best_w.ia + j];
        wb[j] = p->vb[3 * best_w.ib + j];
    }
    return casdyn_cvx_signed(p, normal, wa, wb);
}

/* The largest |x[i]| of n numbers into *big (kept if larger); 0 when one is not finite. */
static int casdyn_cvx_largest(const double *x, int n, double *big)
{
    int i;
    for (i = 0; i < n; ++i) {
        if (!(fabs(x[i]) <= DBL_MAX)) /* NaN fails every comparison */
            return 0;
        if (fabs(x[i]) > *big)
            *big = fabs(x[i]);
    }
    return 1;
}

/* casdyn_convex_distance with a report: info[0] the CASDYN_CVX_* bits, info[1] GJK's
 * iterations, info[2] EPA's iterations, info[3] EPA's polytope vertices; *bound the width of
 * an interval known to hold sd (m): below 1e-12 of the problem's size when the search
 * converged, 0 when touching, larger where a limit stopped it (CASDYN_CVX_LIMITS).
 *
 * The search squares and cubes lengths (Gram determinants, triple products): in metres these
 * overflow from about 1e100 m (two overlapping boxes of edge 2e150 were reported apart) and
 * underflow below 1e-100 m. It works instead on every length times unit, the power of two that
 * brings the largest input coordinate (a point or a translation) into [0.5, 1); scaling by a
 * power of two is exact, so at ordinary sizes the answer is the same number. */
CASDYN_CVX_UNUSED
static double casdyn_cvx_query(const double *va, int na, const double *pose_a, const double *vb,
                               int nb, const double *pose_b, double normal[3], double wa[3],
                               double wb[3], int info[4], double *bound)
{
    casdyn_cvx_pair p;
    casdyn_cvx_vertex s[4], s_old[4], w;
    double lam_old[4], v_old[3];
    int k_old;
    double lam[4] = {1.0, 0.0, 0.0, 0.0}, v[3], dir[3], ra = 0.0, rb = 0.0, scale, tol, zero;
    double vv, vlen, vw, big = 0.0, lower = -DBL_MAX, x[3], sd;
    int i, k, iter, inside = 0, exponent;

    info[0] = info[1] = info[2] = info[3] = 0;
    *bound = 0.0;
    normal[0] = normal[1] = 0.0;
    normal[2] = 1.0;
    for (i = 0; i < 3; ++i)
        wa[i] = wb[i] = 0.0;
    if (na < 1 || nb < 1 || !casdyn_cvx_largest(pose_a, 16, &big)
        || !casdyn_cvx_largest(pose_b, 16, &big)) {
        info[0] |= CASDYN_CVX_BAD_INPUT;
        return NAN;
    }
    big = 0.0; /* the rotations' entries are not lengths */
    if (!casdyn_cvx_largest(pose_a + 12, 3, &big) || !casdyn_cvx_largest(pose_b + 12, 3, &big)
        || !casdyn_cvx_largest(va, 3 * na, &big) || !casdyn_cvx_largest(vb, 3 * nb, &big)) {
        info[0] |= CASDYN_CVX_BAD_INPUT;
        return NAN;
    }
    frexp(big, &exponent);
    p.unit = ldexp(1.0, exponent < -1000 ? 1000 : -exponent); /* finite, also for big = 0 */
    for (i = 0; i < na; ++i) {
        x[0] = p.unit * va[3 * i];
        x[1] = p.unit * va[3 * i + 1];
        x[2] = p.unit * va[3 * i + 2];
        ra = fmax(ra, sqrt(casdyn_cvx_dot(x, x)));
    }
    for (i = 0; i < nb; ++i) {
        x[0] = p.unit * vb[3 * i];
        x[1] = p.unit * vb[3 * i + 1];
        x[2] = p.unit * vb[3 * i + 2];
        rb = fmax(rb, sqrt(casdyn_cvx_dot(x, x)));
    }
    for (i = 0; i < 3; ++i)
        dir[i] = p.unit * pose_b[12 + i] - p.unit * pose_a[12 + i];
    scale = ra + rb + sqrt(casdyn_cvx_dot(dir, dir));
    if (!(scale > 0.0))
        scale = DBL_MIN;
    tol = CASDYN_CVX_TOL * scale;
    zero = CASDYN_CVX_ZERO * scale;
    p.va = va;
    p.vb = vb;
    p.pa = pose_a;
    p.pb = pose_b;
    p.na = na;
    p.nb = nb;

    /* GJK on D = B - A; start from the support towards a's frame. */
    dir[0] = -dir[0];
    dir[1] = -dir[1];
    dir[2] = -dir[2];
    if (!(casdyn_cvx_dot(dir, dir) > 0.0))
        dir[0] = 1.0;
    casdyn_cvx_support(&p, dir, &s[0]);
    k = 1;
    memcpy(v, s[0].w, sizeof v);
    for (iter = 0;; ++iter) {
        info[1] = iter;
        vv = casdyn_cvx_dot(v, v);
        vlen = sqrt(vv);
        if (vlen <= zero)
            break;
        if (iter >= CASDYN_CVX_GJK_ITERATIONS) {
            info[0] |= CASDYN_CVX_GJK_LIMIT;
            break;
        }
        dir[0] = -v[0];
        dir[1] = -v[1];
        dir[2] = -v[2];
        casdyn_cvx_support(&p, dir, &w);
        vw = casdyn_cvx_dot(v, w.w);
        lower = fmax(lower, vw / vlen); /* the support's gap along v: a lower bound of sd */
        if (vlen - vw / vlen <= tol)
            break; /* the distance lies in [v.w/|v|, |v|] */
        for (i = 0; i < k; ++i)
            if (s[i].ia == w.ia && s[i].ib == w.ib)
                break;
        if (i < k)
            break; /* no progress possible */
        memcpy(s_old, s, sizeof s);
        memcpy(lam_old, lam, sizeof lam);
        memcpy(v_old, v, sizeof v);
        k_old = k;
        s[k++] = w;
        inside = casdyn_cvx_closest(s, &k, lam, v);
        if (inside)
            break;
        if (!(casdyn_cvx_dot(v, v) < vv)) {
            /* No progress (rounding): keep the previous, nearer simplex. */
            memcpy(s, s_old, sizeof s);
            memcpy(lam, lam_old, sizeof lam);
            memcpy(v, v_old, sizeof v);
            k = k_old;
            break;
        }
    }
    if (!inside && sqrt(casdyn_cvx_dot(v, v)) > zero) {
        const casdyn_cvx_vertex *sp[4];
        for (i = 0; i < k; ++i)
            sp[i] = &s[i];
        casdyn_cvx_witness(&p, sp, lam, k, wa, wb);
        memcpy(normal, v, sizeof v);
        casdyn_cvx_normalize(normal);
        vlen = sqrt(casdyn_cvx_dot(v, v)); /* sd lies in [lower, |v|] */
        *bound = lower > -DBL_MAX ? fmax(vlen - lower, 0.0) / p.unit : HUGE_VAL;
        return casdyn_cvx_signed(&p, normal, wa, wb);
    }
    sd = casdyn_cvx_epa(&p, s, k, lam, scale, normal, wa, wb, info, bound);
    *bound /= p.unit;
    return sd;
}

/* The signed distance between the convex hulls of two point sets.
 * va: na points of shape a, va[3*i + k] (k = x, y, z) in a's own frame; vb, nb likewise.
 * pose_a, pose_b: 4x4 homogeneous transforms of the shapes' frames in a common ("world")
 *   frame, column-major as CasADi stores a dense 4x4 matrix: element (row r, col c) at [4*c + r].
 * Returns sd: the distance when apart, minus the penetration depth (length of the shortest
 *   translation of b that separates them) when they overlap, 0 when touching.
 * normal[3]: a world-frame unit vector with sd = normal . (xb - xa), where xa = Ra*wa + pa and
 *   xb = Rb*wb + pb are the witness points; moving b along normal increases sd.
 * wa[3], wb[3]: the witness points in a's and b's own frames (xa is a point of hull a, xb of
 *   hull b): apart, the closest points; overlapping, the contact points of the smallest
 *   separating translation (translating b by |sd| along normal makes xb touch xa).
 * Any number of points >= 1, repeated, coplanar or collinear ones included. With na or nb < 1,
 * or a non-finite number in the input, sd is NaN (normal (0, 0, 1), witnesses 0).
 */
CASDYN_CVX_UNUSED
static double casdyn_convex_distance(const double *va, int na, const double *pose_a,
                                     const double *vb, int nb, const double *pose_b,
                                     double normal[3], double wa[3], double wb[3])
{
    int info[4];
    double bound;
    return casdyn_cvx_query(va, na, pose_a, vb, nb, pose_b, normal, wa, wb, info, &bound);
}

#endif /* CASDYN_CONVEX_DISTANCE_C */
