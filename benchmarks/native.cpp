// Side-by-side timing of casdyn's generated C and Pinocchio's C++ in one process.
//
// usage: native MODEL.bin LIBRARY.so ROUNDS CALLS [derivatives|second|regressor|-] [ORDER.txt]
// MODEL.bin: a Pinocchio model saved with Model.saveToBinary (built from the same URDF);
// LIBRARY.so: casdyn's export of inverse_dynamics_nofext, forward_dynamics_nofext and
// mass_matrix, and with "derivatives" also inverse_dynamics_derivatives_nofext and
// forward_dynamics_derivatives_nofext (against computeRNEADerivatives and
// computeABADerivatives), with "regressor" also regressor (against
// computeJointTorqueRegressor), with "second" also inverse_dynamics_second_derivatives_nofext
// (against ComputeRNEASecondOrderDerivatives). Both evaluate the same 16 random states, in interleaved rounds; the
// output is one line per quantity: name, casdyn median ns/call, Pinocchio median ns/call,
// max |diff|. ORDER.txt (for floating bases) holds casdyn's q and v as indices into
// Pinocchio's: nq integers, then nv (casdyn's q[i] = Pinocchio's q[order_q[i]]); casdyn gets
// its inputs reordered before the timing, and the results are compared through the order.
#include <pinocchio/multibody.hpp>
#include <pinocchio/serialization.hpp>
#include <pinocchio/algorithm/aba-derivatives.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/regressor.hpp>
#include <pinocchio/algorithm/joint-configuration.hpp>
#include <pinocchio/algorithm/rnea-derivatives.hpp>
#include <pinocchio/algorithm/rnea-second-order-derivatives.hpp>
#include <pinocchio/algorithm/rnea.hpp>

#include "harness.hpp"

// casdyn's exported regressor against computeJointTorqueRegressor (a fixed-base chain, where
// both order the joints and their parameter blocks alike)
static void time_regressor(const pinocchio::Model& model, pinocchio::Data& data, void* lib,
                           const std::vector<Eigen::VectorXd>& q,
                           const std::vector<Eigen::VectorXd>& v,
                           const std::vector<Eigen::VectorXd>& a, int rounds, int calls) {
  const int n = model.nv, p = 10 * (model.njoints - 1);
  Generated regressor(lib, "regressor");
  std::vector<double> Y(n * p);
  volatile double sink = 0;
  regressor({q[0].data(), v[0].data(), a[0].data()}, Y.data());
  pinocchio::computeJointTorqueRegressor(model, data, q[0], v[0], a[0]);
  const double diff = matrix_diff(regressor.dense(lib, "regressor", 0, Y.data()).data(),
                                  data.jointTorqueRegressor, false);
  std::vector<double> t[2];
  for (int r = 0; r < rounds; ++r) {
    t[0].push_back(time_calls(calls, [&](int k) { regressor({q[k].data(), v[k].data(), a[k].data()}, Y.data()); sink = sink + Y[0]; }));
    t[1].push_back(time_calls(calls, [&](int k) { pinocchio::computeJointTorqueRegressor(model, data, q[k], v[k], a[k]); sink = sink + data.jointTorqueRegressor(0, 0); }));
  }
  std::printf("Y %.2f %.2f %.3g\n", median(t[0]), median(t[1]), diff);
}

// Pinocchio's matrix in casdyn's velocity order (a floating base's twist angular first)
static Eigen::MatrixXd permuted(const Eigen::MatrixXd& m, const std::vector<int>& order) {
  const int n = static_cast<int>(order.size());
  Eigen::MatrixXd out(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) out(i, j) = m(order[i], order[j]);
  return out;
}

static Eigen::MatrixXd symmetric(const Eigen::MatrixXd& m) {  // from the upper triangle
  Eigen::MatrixXd full = m.triangularView<Eigen::Upper>();
  full.triangularView<Eigen::StrictlyLower>() = full.transpose();
  return full;
}

// the same random states in Pinocchio's coordinates (q, v, a) and in casdyn's (cq, cv, ca:
// reordered through ORDER.txt)
struct States {
  std::vector<Eigen::VectorXd> q, v, a, cq, cv, ca;
};

static void time_derivatives(const pinocchio::Model& model, pinocchio::Data& data, void* lib,
                             const States& s, const std::vector<int>& order_v, int rounds,
                             int calls) {
  const int n = model.nv;
  Generated did(lib, "inverse_dynamics_derivatives_nofext"),
      dfd(lib, "forward_dynamics_derivatives_nofext");
  std::vector<double> o1(n * n), o2(n * n), o3(n * n);
  volatile double sink = 0;
  double diff[2] = {0, 0};
  const std::string id_name = "inverse_dynamics_derivatives_nofext",
                    fd_name = "forward_dynamics_derivatives_nofext";
  did({s.cq[0].data(), s.cv[0].data(), s.ca[0].data()}, {o1.data(), o2.data(), o3.data()});
  pinocchio::computeRNEADerivatives(model, data, s.q[0], s.v[0], s.a[0]);
  diff[0] = std::max({matrix_diff(did.dense(lib, id_name, 0, o1.data()).data(), permuted(data.dtau_dq, order_v), false),
                      matrix_diff(did.dense(lib, id_name, 1, o2.data()).data(), permuted(data.dtau_dv, order_v), false),
                      matrix_diff(did.dense(lib, id_name, 2, o3.data()).data(), permuted(symmetric(data.M), order_v), false)});
  dfd({s.cq[0].data(), s.cv[0].data(), s.ca[0].data()}, {o1.data(), o2.data(), o3.data()});
  pinocchio::computeABADerivatives(model, data, s.q[0], s.v[0], s.a[0]);
  diff[1] = std::max({matrix_diff(dfd.dense(lib, fd_name, 0, o1.data()).data(), permuted(data.ddq_dq, order_v), false),
                      matrix_diff(dfd.dense(lib, fd_name, 1, o2.data()).data(), permuted(data.ddq_dv, order_v), false),
                      matrix_diff(dfd.dense(lib, fd_name, 2, o3.data()).data(), permuted(symmetric(data.Minv), order_v), false)});
  std::vector<double> t[4];
  for (int r = 0; r < rounds; ++r) {
    t[0].push_back(time_calls(calls, [&](int k) { did({s.cq[k].data(), s.cv[k].data(), s.ca[k].data()}, {o1.data(), o2.data(), o3.data()}); sink = sink + o1[0]; }));
    t[1].push_back(time_calls(calls, [&](int k) { pinocchio::computeRNEADerivatives(model, data, s.q[k], s.v[k], s.a[k]); sink = sink + data.dtau_dq(0, 0); }));
    t[2].push_back(time_calls(calls, [&](int k) { dfd({s.cq[k].data(), s.cv[k].data(), s.ca[k].data()}, {o1.data(), o2.data(), o3.data()}); sink = sink + o1[0]; }));
    t[3].push_back(time_calls(calls, [&](int k) { pinocchio::computeABADerivatives(model, data, s.q[k], s.v[k], s.a[k]); sink = sink + data.ddq_dq(0, 0); }));
  }
  std::printf("dID %.2f %.2f %.3g\n", median(t[0]), median(t[1]), diff[0]);
  std::printf("dFD %.2f %.2f %.3g\n", median(t[2]), median(t[3]), diff[1]);
}

// casdyn's second-order inverse-dynamics derivatives against ComputeRNEASecondOrderDerivatives:
// casdyn's output m (nv x nv^2, column k nv + j holding [:, j, k]) against Pinocchio's tensor
// m through the order, [i, j, k] = Pinocchio's [order[i], order[j], order[k]]
static void time_second(const pinocchio::Model& model, pinocchio::Data& data, void* lib,
                        const States& s, const std::vector<int>& order_v, int rounds,
                        int calls) {
  const int n = model.nv;
  const std::string name = "inverse_dynamics_second_derivatives_nofext";
  Generated so(lib, name);
  std::vector<double> o[4];
  for (auto& out : o) out.resize(static_cast<size_t>(n) * n * n);
  volatile double sink = 0;
  so({s.cq[0].data(), s.cv[0].data(), s.ca[0].data()}, {o[0].data(), o[1].data(), o[2].data(), o[3].data()});
  pinocchio::ComputeRNEASecondOrderDerivatives(model, data, s.q[0], s.v[0], s.a[0]);
  const Eigen::Tensor<double, 3>* theirs[4] = {&data.d2tau_dqdq, &data.d2tau_dvdv, &data.d2tau_dqdv,
                                               &data.d2tau_dadq};
  double diff = 0;
  for (int m = 0; m < 4; ++m) {
    const std::vector<double> ours = so.dense(lib, name, m, o[m].data());
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
          diff = std::max(diff, std::abs(ours[i + (k * n + j) * n] -
                                         (*theirs[m])(order_v[i], order_v[j], order_v[k])));
  }
  std::vector<double> t[2];
  for (int r = 0; r < rounds; ++r) {
    t[0].push_back(time_calls(calls, [&](int k) { so({s.cq[k].data(), s.cv[k].data(), s.ca[k].data()}, {o[0].data(), o[1].data(), o[2].data(), o[3].data()}); sink = sink + o[0][0]; }));
    t[1].push_back(time_calls(calls, [&](int k) { pinocchio::ComputeRNEASecondOrderDerivatives(model, data, s.q[k], s.v[k], s.a[k]); sink = sink + data.d2tau_dqdq(0, 0, 0); }));
  }
  std::printf("d2ID %.2f %.2f %.3g\n", median(t[0]), median(t[1]), diff);
}

int main(int argc, char** argv) {
  if (argc < 5 || argc > 7) {
    std::fprintf(stderr, "usage: native MODEL.bin LIBRARY.so ROUNDS CALLS [derivatives|second|regressor|-] [ORDER.txt]\n");
    return 2;
  }
  const bool derivatives = argc >= 6 && std::string(argv[5]) == "derivatives";
  pinocchio::Model model;
  model.loadFromBinary(argv[1]);
  pinocchio::Data data(model);
  void* lib = open_library(argv[2]);
  const int rounds = std::atoi(argv[3]), calls = std::atoi(argv[4]), n = model.nv;
  Generated id(lib, "inverse_dynamics_nofext"), fd(lib, "forward_dynamics_nofext"),
      mm(lib, "mass_matrix");

  std::vector<int> order_q(model.nq), order_v(n);
  read_order(argc == 7 ? argv[6] : nullptr, order_q, order_v);  // floating base: reordered
  States s;
  for (int k = 0; k < 16; ++k) {
    s.q.push_back(pinocchio::randomConfiguration(model));
    s.v.push_back(Eigen::VectorXd::Random(n));
    s.a.push_back(Eigen::VectorXd::Random(n));
    s.cq.push_back(reordered(s.q[k], order_q));
    s.cv.push_back(reordered(s.v[k], order_v));
    s.ca.push_back(reordered(s.a[k], order_v));
  }
  const auto &q = s.q, &v = s.v, &a = s.a, &cq = s.cq, &cv = s.cv, &ca = s.ca;
  std::vector<double> out(n * n);
  volatile double sink = 0;

  // agreement on one state, through the orders
  double diff[3] = {0, 0, 0};
  id({cq[0].data(), cv[0].data(), ca[0].data()}, out.data());
  pinocchio::rnea(model, data, q[0], v[0], a[0]);
  for (int i = 0; i < n; ++i) diff[0] = std::max(diff[0], std::abs(out[i] - data.tau[order_v[i]]));
  fd({cq[0].data(), cv[0].data(), ca[0].data()}, out.data());
  pinocchio::aba(model, data, q[0], v[0], a[0]);
  for (int i = 0; i < n; ++i) diff[1] = std::max(diff[1], std::abs(out[i] - data.ddq[order_v[i]]));
  mm({cq[0].data()}, out.data());
  pinocchio::crba(model, data, q[0]);
  diff[2] = matrix_diff(mm.dense(lib, "mass_matrix", 0, out.data()).data(),
                        permuted(symmetric(data.M), order_v), false);

  std::vector<double> t[6];
  for (int r = 0; r < rounds; ++r) {
    t[0].push_back(time_calls(calls, [&](int k) { id({cq[k].data(), cv[k].data(), ca[k].data()}, out.data()); sink = sink + out[0]; }));
    t[1].push_back(time_calls(calls, [&](int k) { pinocchio::rnea(model, data, q[k], v[k], a[k]); sink = sink + data.tau[0]; }));
    t[2].push_back(time_calls(calls, [&](int k) { fd({cq[k].data(), cv[k].data(), ca[k].data()}, out.data()); sink = sink + out[0]; }));
    t[3].push_back(time_calls(calls, [&](int k) { pinocchio::aba(model, data, q[k], v[k], a[k]); sink = sink + data.ddq[0]; }));
    t[4].push_back(time_calls(calls, [&](int k) { mm({cq[k].data()}, out.data()); sink = sink + out[0]; }));
    t[5].push_back(time_calls(calls, [&](int k) { pinocchio::crba(model, data, q[k]); sink = sink + data.M(0, 0); }));
  }
  const char* names[3] = {"ID", "FD", "M"};
  for (int k = 0; k < 3; ++k)
    std::printf("%s %.2f %.2f %.3g\n", names[k], median(t[2 * k]), median(t[2 * k + 1]), diff[k]);
  if (derivatives) time_derivatives(model, data, lib, s, order_v, rounds, calls);
  if (argc >= 6 && std::string(argv[5]) == "second")
    time_second(model, data, lib, s, order_v, rounds, calls);
  if (argc >= 6 && std::string(argv[5]) == "regressor")
    time_regressor(model, data, lib, q, v, a, rounds, calls);
  return 0;
}
