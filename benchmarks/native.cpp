// Side-by-side timing of casdyn's generated C and Pinocchio's C++ in one process.
//
// usage: native MODEL.bin LIBRARY.so ROUNDS CALLS
// MODEL.bin: a Pinocchio model saved with Model.saveToBinary (built from the same URDF);
// LIBRARY.so: casdyn's export of inverse_dynamics_nofext, forward_dynamics_nofext and
// mass_matrix. Both evaluate the same 16 random states, in interleaved rounds; the output is
// one line per quantity: name, casdyn median ns/call, Pinocchio median ns/call, max |diff|.
#include <pinocchio/multibody.hpp>
#include <pinocchio/serialization.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/joint-configuration.hpp>
#include <pinocchio/algorithm/rnea.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

using casadi_int = long long int;
using Eval = int (*)(const double**, double**, casadi_int*, double*, int);
using Work = int (*)(casadi_int*, casadi_int*, casadi_int*, casadi_int*);

struct Generated {  // one CasADi function from the shared library, with its work arrays
  Eval eval;
  std::vector<const double*> arg;
  std::vector<double*> res;
  std::vector<casadi_int> iw;
  std::vector<double> w;
  Generated(void* lib, const std::string& name) {
    eval = reinterpret_cast<Eval>(dlsym(lib, name.c_str()));
    auto work = reinterpret_cast<Work>(dlsym(lib, (name + "_work").c_str()));
    if (!eval || !work) { std::fprintf(stderr, "missing %s\n", name.c_str()); std::exit(2); }
    casadi_int n_arg, n_res, n_iw, n_w;
    work(&n_arg, &n_res, &n_iw, &n_w);
    arg.resize(n_arg); res.resize(n_res); iw.resize(n_iw); w.resize(n_w);
  }
  void operator()(std::initializer_list<const double*> in, double* out) {
    std::copy(in.begin(), in.end(), arg.begin());
    res[0] = out;
    eval(arg.data(), res.data(), iw.data(), w.data(), 0);
  }
};

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// ns per call of body(k) over `calls` calls, one value per round, interleaved by the caller
static double time_calls(int calls, const std::function<void(int)>& body) {
  auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < calls; ++k) body(k & 15);
  auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(stop - start).count() / calls;
}

int main(int argc, char** argv) {
  if (argc != 5) { std::fprintf(stderr, "usage: native MODEL.bin LIBRARY.so ROUNDS CALLS\n"); return 2; }
  pinocchio::Model model;
  model.loadFromBinary(argv[1]);
  pinocchio::Data data(model);
  void* lib = dlopen(argv[2], RTLD_NOW);
  if (!lib) { std::fprintf(stderr, "%s\n", dlerror()); return 2; }
  const int rounds = std::atoi(argv[3]), calls = std::atoi(argv[4]), n = model.nv;
  Generated id(lib, "inverse_dynamics_nofext"), fd(lib, "forward_dynamics_nofext"),
      mm(lib, "mass_matrix");

  std::vector<Eigen::VectorXd> q(16), v(16), a(16);
  for (int k = 0; k < 16; ++k) {
    q[k] = pinocchio::randomConfiguration(model);
    v[k] = Eigen::VectorXd::Random(n);
    a[k] = Eigen::VectorXd::Random(n);
  }
  std::vector<double> out(n * n);
  volatile double sink = 0;

  // agreement on one state (revolute chains: same coordinate order in both)
  double diff[3] = {0, 0, 0};
  id({q[0].data(), v[0].data(), a[0].data()}, out.data());
  pinocchio::rnea(model, data, q[0], v[0], a[0]);
  for (int i = 0; i < n; ++i) diff[0] = std::max(diff[0], std::abs(out[i] - data.tau[i]));
  fd({q[0].data(), v[0].data(), a[0].data()}, out.data());
  pinocchio::aba(model, data, q[0], v[0], a[0]);
  for (int i = 0; i < n; ++i) diff[1] = std::max(diff[1], std::abs(out[i] - data.ddq[i]));
  mm({q[0].data()}, out.data());
  pinocchio::crba(model, data, q[0]);
  for (int i = 0; i < n; ++i)
    for (int j = i; j < n; ++j) diff[2] = std::max(diff[2], std::abs(out[i + j * n] - data.M(i, j)));

  std::vector<double> t[6];
  for (int r = 0; r < rounds; ++r) {
    t[0].push_back(time_calls(calls, [&](int k) { id({q[k].data(), v[k].data(), a[k].data()}, out.data()); sink = sink + out[0]; }));
    t[1].push_back(time_calls(calls, [&](int k) { pinocchio::rnea(model, data, q[k], v[k], a[k]); sink = sink + data.tau[0]; }));
    t[2].push_back(time_calls(calls, [&](int k) { fd({q[k].data(), v[k].data(), a[k].data()}, out.data()); sink = sink + out[0]; }));
    t[3].push_back(time_calls(calls, [&](int k) { pinocchio::aba(model, data, q[k], v[k], a[k]); sink = sink + data.ddq[0]; }));
    t[4].push_back(time_calls(calls, [&](int k) { mm({q[k].data()}, out.data()); sink = sink + out[0]; }));
    t[5].push_back(time_calls(calls, [&](int k) { pinocchio::crba(model, data, q[k]); sink = sink + data.M(0, 0); }));
  }
  const char* names[3] = {"ID", "FD", "M"};
  for (int k = 0; k < 3; ++k)
    std::printf("%s %.2f %.2f %.3g\n", names[k], median(t[2 * k]), median(t[2 * k + 1]), diff[k]);
  return 0;
}
