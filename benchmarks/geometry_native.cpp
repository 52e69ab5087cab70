// Side-by-side timing of collision distances: casdyn's generated C (forward kinematics, every
// pair's signed distance, and with the Jacobian) against coal's distance() over the same pairs
// at the same poses, in one process. Input: a text file written by benchmarks/geometry.py, and
// the calls per round.
#include <coal/collision_object.h>
#include <coal/distance.h>
#include <coal/shape/geometric_shapes.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

extern "C" {
#include "casdyn_geometry.h"
}

using Clock = std::chrono::steady_clock;

static std::shared_ptr<coal::ShapeBase> read_shape(std::ifstream& in) {
  std::string kind;
  in >> kind;
  if (kind == "sphere") { double r; in >> r; return std::make_shared<coal::Sphere>(r); }
  if (kind == "capsule") { double r, l; in >> r >> l; return std::make_shared<coal::Capsule>(r, l); }
  if (kind == "convex") {  // coal's hull of the points, as Pinocchio builds a mesh's
    unsigned int n; in >> n;
    auto points = std::make_shared<std::vector<coal::Vec3s>>(n);
    for (auto& p : *points) in >> p[0] >> p[1] >> p[2];
    return std::shared_ptr<coal::ShapeBase>(coal::ConvexBase::convexHull(points, n, false));
  }
  double x, y, z; in >> x >> y >> z;  // box
  return std::make_shared<coal::Box>(x, y, z);
}

// the fastest of the rounds: on a shared machine the other rounds measure the neighbours
template <class F>
static double best_ns(F&& call, int calls, int rounds) {
  std::vector<double> times;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) call(i);
    times.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / calls);
  }
  return *std::min_element(times.begin(), times.end());
}

int main(int argc, char** argv) {
  std::ifstream in(argv[1]);
  int n_geoms, n_pairs, n_configs, nq, nv;
  in >> n_geoms >> n_pairs >> n_configs >> nq >> nv;
  std::vector<std::shared_ptr<coal::ShapeBase>> shapes;
  for (int g = 0; g < n_geoms; ++g) shapes.push_back(read_shape(in));
  std::vector<std::pair<int, int>> pairs(n_pairs);
  for (auto& p : pairs) in >> p.first >> p.second;
  std::vector<double> q(n_configs * nq);
  std::vector<coal::Transform3s> poses(n_configs * n_geoms);
  for (int c = 0; c < n_configs; ++c) {
    for (int i = 0; i < nq; ++i) in >> q[c * nq + i];
    for (int g = 0; g < n_geoms; ++g) {
      coal::Matrix3s R; coal::Vec3s p;
      for (int r = 0; r < 3; ++r) { for (int k = 0; k < 3; ++k) in >> R(r, k); in >> p(r); }
      poses[c * n_geoms + g] = coal::Transform3s(R, p);
    }
  }
  std::vector<double> d(n_pairs), J(n_pairs * nv), w_d(collision_distances_SZ_W),
      w_j(collision_jacobian_SZ_W), w_a(collision_jacobian_ad_SZ_W);
  std::vector<casadi_int> iw(1 + std::max({collision_distances_SZ_IW, collision_jacobian_SZ_IW,
                                           collision_jacobian_ad_SZ_IW}));
  const double* arg[64] = {nullptr};
  double* res_d[64] = {d.data()};
  double* res_j[64] = {d.data(), J.data()};
  auto ours = [&](int i) { arg[0] = &q[(i % n_configs) * nq];
                           collision_distances(arg, res_d, iw.data(), w_d.data(), 0); };
  auto ours_j = [&](int i) { arg[0] = &q[(i % n_configs) * nq];
                             collision_jacobian(arg, res_j, iw.data(), w_j.data(), 0); };
  auto ours_ad = [&](int i) { arg[0] = &q[(i % n_configs) * nq];
                              collision_jacobian_ad(arg, res_j, iw.data(), w_a.data(), 0); };
  coal::DistanceRequest request;  // timed at coal's default tolerances (1e-6)
  request.enable_signed_distance = true;
  coal::DistanceRequest exact = request;  // compared with GJK and EPA run to 1e-12
  exact.gjk_tolerance = exact.epa_tolerance = 1e-12;
  exact.gjk_max_iterations = exact.epa_max_iterations = 1000;
  coal::DistanceResult result;
  double sink = 0;
  auto theirs = [&](int i) {
    const coal::Transform3s* at = &poses[(i % n_configs) * n_geoms];
    for (auto& p : pairs) {
      result.clear();
      coal::distance(shapes[p.first].get(), at[p.first], shapes[p.second].get(), at[p.second],
                     request, result);
      sink += result.min_distance;
    }
  };
  double worst = 0;
  for (int c = 0; c < n_configs; ++c) {
    ours(c);
    for (int k = 0; k < n_pairs; ++k) {
      const coal::Transform3s* at = &poses[c * n_geoms];
      result.clear();
      coal::distance(shapes[pairs[k].first].get(), at[pairs[k].first],
                     shapes[pairs[k].second].get(), at[pairs[k].second], exact, result);
      double gap = std::abs(result.min_distance - d[k]);
      if (!(gap < 1e-6)) std::fprintf(stderr, "config %d pair %d: casdyn %g coal %g\n", c, k,
                                      d[k], result.min_distance);
      worst = std::max(worst, gap);
    }
  }
  const int calls = argc > 2 ? std::atoi(argv[2]) : 20000, rounds = 15;
  double t_d = best_ns(ours, calls, rounds), t_j = best_ns(ours_j, calls, rounds),
         t_a = best_ns(ours_ad, calls, rounds), t_c = best_ns(theirs, calls / 4, rounds);
  std::printf("{\"pairs\": %d, \"casdyn_d_ns\": %.1f, \"casdyn_d_J_ns\": %.1f, "
              "\"casdyn_d_J_ad_ns\": %.1f, \"coal_ns\": %.1f, \"max_difference\": %.3g}\n",
              n_pairs, t_d, t_j, t_a, t_c, worst + sink * 0);
  return 0;
}
