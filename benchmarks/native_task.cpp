// Side-by-side timing of casdyn's generated contact dynamics and centroidal momentum matrix
// against Pinocchio's constraintDynamics and computeCentroidalMap, in one process.
//
// usage: native_task MODEL.bin LIBRARY.so ROUNDS CALLS ORDER.txt CONTACTS.txt
// MODEL.bin, ORDER.txt: as for native.cpp (a floating base). LIBRARY.so: casdyn's export of
// centroidal_momentum_matrix and of contact_dynamics without fext. CONTACTS.txt: the C name
// of casdyn's contact function, then one line per contact: a frame name and 3 (a point
// contact, forces compared in LOCAL_WORLD_ALIGNED axes) or 6 (a 6-D contact, Pinocchio's
// wrench in LOCAL axes: accelerations compared only). Output lines as native.cpp's.
#include <pinocchio/multibody.hpp>
#include <pinocchio/serialization.hpp>
#include <pinocchio/algorithm/centroidal.hpp>
#include <pinocchio/algorithm/constrained-dynamics.hpp>
#include <pinocchio/algorithm/frames.hpp>
#include <pinocchio/algorithm/jacobian.hpp>
#include <pinocchio/algorithm/joint-configuration.hpp>

#include "harness.hpp"

using Constraint = pinocchio::RigidConstraintModel;
using ConstraintData = pinocchio::RigidConstraintData;

// v with the contacts' velocities removed (v - J^T (J J^T)^-1 J v): a state the contacts
// allow, where Pinocchio's spatial 6-D drift and casdyn's classical one agree (they differ
// by w x v terms while a held frame moves)
static Eigen::VectorXd consistent(const pinocchio::Model& model, pinocchio::Data& data,
                                  const PINOCCHIO_STD_VECTOR_WITH_EIGEN_ALLOCATOR(Constraint)& constraints,
                                  const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  pinocchio::computeJointJacobians(model, data, q);
  std::vector<Eigen::MatrixXd> rows;
  int size = 0;
  for (const auto& c : constraints) {
    Eigen::MatrixXd J = Eigen::MatrixXd::Zero(6, model.nv);
    pinocchio::getFrameJacobian(model, data, c.joint1_id, c.joint1_placement, c.reference_frame, J);
    rows.push_back(c.type == pinocchio::CONTACT_3D ? Eigen::MatrixXd(J.topRows(3)) : J);
    size += static_cast<int>(rows.back().rows());
  }
  Eigen::MatrixXd J(size, model.nv);
  int at = 0;
  for (const auto& r : rows) { J.middleRows(at, r.rows()) = r; at += static_cast<int>(r.rows()); }
  return v - J.transpose() * (J * J.transpose()).ldlt().solve(J * v);
}

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: native_task MODEL.bin LIBRARY.so ROUNDS CALLS ORDER.txt CONTACTS.txt\n");
    return 2;
  }
  pinocchio::Model model;
  model.loadFromBinary(argv[1]);
  pinocchio::Data data(model);
  void* lib = open_library(argv[2]);
  const int rounds = std::atoi(argv[3]), calls = std::atoi(argv[4]), n = model.nv;
  std::vector<int> order_q(model.nq), order_v(n);
  read_order(argv[5], order_q, order_v);

  char name[256];
  FILE* f = std::fopen(argv[6], "r");
  if (std::fscanf(f, "%255s", name) != 1) return 2;
  const std::string contact_name = name;
  PINOCCHIO_STD_VECTOR_WITH_EIGEN_ALLOCATOR(Constraint) constraints;
  int size = 0;
  bool points = true;
  int kind;
  while (std::fscanf(f, "%255s %d", name, &kind) == 2) {
    const pinocchio::Frame& frame = model.frames[model.getFrameId(name)];
    constraints.push_back(Constraint(kind == 3 ? pinocchio::CONTACT_3D : pinocchio::CONTACT_6D,
                                     model, frame.parentJoint, frame.placement,
                                     kind == 3 ? pinocchio::LOCAL_WORLD_ALIGNED : pinocchio::LOCAL));
    size += kind;
    points = points && kind == 3;
  }
  std::fclose(f);
  const int n_contacts = static_cast<int>(constraints.size());
  PINOCCHIO_STD_VECTOR_WITH_EIGEN_ALLOCATOR(ConstraintData) datas;
  for (const auto& c : constraints) datas.push_back(ConstraintData(c));
  pinocchio::initConstraintDynamics(model, data, constraints, datas);
  pinocchio::ProximalSettings settings(1e-12, 0.0, 1);  // mu = 0: the exact KKT solve

  Generated cmm(lib, "centroidal_momentum_matrix"), contact(lib, contact_name);
  std::vector<Eigen::VectorXd> q(16), v(16), tau(16), cq(16), cv(16), ctau(16);
  for (int k = 0; k < 16; ++k) {
    q[k] = pinocchio::randomConfiguration(model);
    v[k] = consistent(model, data, constraints, q[k], Eigen::VectorXd::Random(n));
    tau[k] = Eigen::VectorXd::Random(n);
    cq[k] = reordered(q[k], order_q);
    cv[k] = reordered(v[k], order_v);
    ctau[k] = reordered(tau[k], order_v);
  }
  std::vector<double> A(6 * n), qdd(n), forces(6 * n_contacts);
  const double damping = 0.0;
  volatile double sink = 0;

  // agreement on one state, through the orders (casdyn's A_G rows: angular first)
  double diff[2] = {0, 0};
  cmm({cq[0].data()}, A.data());
  pinocchio::computeCentroidalMap(model, data, q[0]);
  for (int i = 0; i < n; ++i)
    for (int r = 0; r < 6; ++r)
      diff[0] = std::max(diff[0], std::abs(A[r + 6 * i] - data.Ag((r + 3) % 6, order_v[i])));
  contact({cq[0].data(), cv[0].data(), ctau[0].data(), &damping}, {qdd.data(), forces.data()});
  pinocchio::constraintDynamics(model, data, q[0], v[0], tau[0], constraints, datas, settings);
  for (int i = 0; i < n; ++i) diff[1] = std::max(diff[1], std::abs(qdd[i] - data.ddq[order_v[i]]));
  if (points)  // casdyn's forces: n_contacts x 3, column-major
    for (int c = 0; c < n_contacts; ++c)
      for (int k = 0; k < 3; ++k)
        diff[1] = std::max(diff[1], std::abs(forces[c + k * n_contacts] - data.lambda_c[3 * c + k]));

  std::vector<double> t[4];
  for (int r = 0; r < rounds; ++r) {
    t[0].push_back(time_calls(calls, [&](int k) { cmm({cq[k].data()}, A.data()); sink = sink + A[0]; }));
    t[1].push_back(time_calls(calls, [&](int k) { pinocchio::computeCentroidalMap(model, data, q[k]); sink = sink + data.Ag(0, 0); }));
    t[2].push_back(time_calls(calls, [&](int k) { contact({cq[k].data(), cv[k].data(), ctau[k].data(), &damping}, {qdd.data(), forces.data()}); sink = sink + qdd[0]; }));
    t[3].push_back(time_calls(calls, [&](int k) { pinocchio::constraintDynamics(model, data, q[k], v[k], tau[k], constraints, datas, settings); sink = sink + data.ddq[0]; }));
  }
  std::printf("A_G %.2f %.2f %.3g\n", median(t[0]), median(t[1]), diff[0]);
  std::printf("contact %.2f %.2f %.3g\n", median(t[2]), median(t[3]), diff[1]);
  return 0;
}
