// casdyn's generated C against Pinocchio's own code generation (CppADCodeGen) in one process.
//
// usage: codegen_anchor MODEL.bin LIBRARY.so WORKDIR ROUNDS CALLS FUNCTIONS FLAGS [ORDER.txt]
// MODEL.bin: a Pinocchio model saved with Model.saveToBinary; LIBRARY.so: casdyn's export of
// inverse_dynamics_nofext, forward_dynamics_nofext, mass_matrix,
// inverse_dynamics_derivatives_nofext and forward_dynamics_derivatives_nofext (those that
// FUNCTIONS names). WORKDIR: where Pinocchio's generated C and its libraries are written.
// FUNCTIONS: a comma-separated subset of ID,FD,M,dID,dFD. FLAGS: the C compiler's flags for
// the generated C, space-separated. ORDER.txt: as in native.cpp (floating bases).
//
// For each function Pinocchio's code generator (CodeGenRNEA, CodeGenABA, CodeGenCRBA,
// CodeGenRNEADerivatives, CodeGenABADerivatives) records the algorithm on CppAD's
// CG<double> scalars, CppADCodeGen writes its C, and gcc builds a shared library that is
// loaded here. Both sides then evaluate the same 16 random states in interleaved rounds. The
// output: one "time" line per function (name, casdyn median ns/call, codegen median ns/call,
// max |diff| between the two), and one "build" line (name, seconds to record the algorithm
// and write the C, bytes of C, seconds to compile and link it).
#include <pinocchio/codegen/cppadcg-algo.hpp>
#include <pinocchio/serialization.hpp>
#include <pinocchio/algorithm/joint-configuration.hpp>

#include <filesystem>
#include <memory>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

#include "harness.hpp"

using Clock = std::chrono::steady_clock;

static double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Pinocchio's code generator G with its library built by our flags and its generated
// zero-order forward function called directly (the members are CodeGenBase's, protected)
template <class G>
struct Anchor : G {
  double record_s = 0, compile_s = 0;
  size_t source_bytes = 0;
  Anchor(const pinocchio::Model& model, const std::string& name) : G(model, name, "cg_" + name) {}

  void build(const std::vector<std::string>& flags) {
    auto start = Clock::now();
    this->build_jacobian = false;  // only the function itself (CodeGenRNEA and ABA add its Jacobian)
    this->initLib();  // records the algorithm on CG<double>, sets up the C writers
    // the C, generated once and kept (the library build below reuses it); through
    // SaveFilesModelLibraryProcessor: CppADCodeGen 2.4.3's ModelLibraryCSourceGen::saveSources
    // does not compile (it calls ModelCSourceGen::getSources without its two arguments)
    const std::string folder = "sources_" + this->function_name;
    CppAD::cg::SaveFilesModelLibraryProcessor<double>::saveLibrarySourcesTo(*this->libcgen_ptr,
                                                                            folder);
    for (const auto& file : std::filesystem::directory_iterator(folder))
      source_bytes += file.file_size();
    record_s = seconds_since(start);
    start = Clock::now();
    CppAD::cg::GccCompiler<double> compiler("/usr/bin/gcc");
    compiler.setCompileFlags(flags);
    this->dynamicLibManager_ptr->createDynamicLibrary(compiler, false);
    compile_s = seconds_since(start);
    this->loadLib(false);
  }

  // y = f(x), x the generator's packed input ([q; v; a] or [q]), y its packed output
  void operator()(const double* x, double* y) {
    this->generatedFun_ptr->ForwardZero(
        CppAD::cg::ArrayView<const double>(x, static_cast<size_t>(this->getInputDimension())),
        CppAD::cg::ArrayView<double>(y, static_cast<size_t>(this->getOutputDimension())));
  }
};

// a dense n x n column-major matrix in casdyn's velocity order from Pinocchio's row-major
// block (upper: only its upper triangle is defined, mirrored)
static std::vector<double> from_row_major(const double* block, int n, const std::vector<int>& order,
                                          bool upper) {
  std::vector<double> out(n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      int r = order[i], c = order[j];
      if (upper && r > c) std::swap(r, c);
      out[i + j * n] = block[r * n + c];
    }
  return out;
}

static double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

struct Inputs {  // the 16 states in both layouts
  std::vector<Eigen::VectorXd> cq, cv, ca, x, xq;
};

// times one function: casdyn's `ours` (3 inputs or q only) against Pinocchio's generated `theirs`
template <class G>
static void time_pair(const char* name, Generated& ours, Anchor<G>& theirs, const Inputs& in,
                      bool q_only, const std::function<double()>& compare, int rounds,
                      int calls) {
  const auto& x = q_only ? in.xq : in.x;
  std::vector<double> o1(in.cv[0].size() * in.cv[0].size()), o2(o1.size()), o3(o1.size());
  std::vector<double> y(theirs.getOutputDimension());
  volatile double sink = 0;
  const double diff = compare();
  std::vector<double> t[2];
  for (int r = 0; r < rounds; ++r) {
    if (q_only)
      t[0].push_back(time_calls(calls, [&](int k) { ours({in.cq[k].data()}, o1.data()); sink = sink + o1[0]; }));
    else if (ours.res.size() == 1)
      t[0].push_back(time_calls(calls, [&](int k) { ours({in.cq[k].data(), in.cv[k].data(), in.ca[k].data()}, o1.data()); sink = sink + o1[0]; }));
    else
      t[0].push_back(time_calls(calls, [&](int k) { ours({in.cq[k].data(), in.cv[k].data(), in.ca[k].data()}, {o1.data(), o2.data(), o3.data()}); sink = sink + o1[0]; }));
    t[1].push_back(time_calls(calls, [&](int k) { theirs(x[k].data(), y.data()); sink = sink + y[0]; }));
  }
  std::printf("time %s %.2f %.2f %.3g\n", name, median(t[0]), median(t[1]), diff);
  std::printf("build %s %.3f %zu %.3f\n", name, theirs.record_s, theirs.source_bytes,
              theirs.compile_s);
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  if (argc < 8 || argc > 9) {
    std::fprintf(stderr, "usage: codegen_anchor MODEL.bin LIBRARY.so WORKDIR ROUNDS CALLS "
                         "FUNCTIONS FLAGS [ORDER.txt]\n");
    return 2;
  }
  pinocchio::Model model;
  model.loadFromBinary(argv[1]);
  void* lib = open_library(argv[2]);
  const int rounds = std::atoi(argv[4]), calls = std::atoi(argv[5]), n = model.nv;
  const std::string wanted = "," + std::string(argv[6]) + ",";
  auto asked = [&](const char* f) { return wanted.find("," + std::string(f) + ",") != std::string::npos; };
  std::vector<std::string> flags;
  {
    std::istringstream words(argv[7]);
    for (std::string w; words >> w;) flags.push_back(w);
  }
  std::vector<int> order_q(model.nq), order_v(n);
  read_order(argc == 9 ? argv[8] : nullptr, order_q, order_v);
  if (chdir(argv[3]) != 0) { std::perror(argv[3]); return 2; }  // CppADCodeGen writes here

  Inputs in;
  std::srand(1);
  for (int k = 0; k < 16; ++k) {
    Eigen::VectorXd q = pinocchio::randomConfiguration(model), v = Eigen::VectorXd::Random(n),
                    a = Eigen::VectorXd::Random(n);
    in.cq.push_back(reordered(q, order_q));
    in.cv.push_back(reordered(v, order_v));
    in.ca.push_back(reordered(a, order_v));
    Eigen::VectorXd x(model.nq + 2 * n);
    x << q, v, a;
    in.x.push_back(x);
    in.xq.push_back(q);
  }
  // the vector outputs: casdyn's entry i against Pinocchio's entry order_v[i]
  auto vector_diff = [&](Generated& ours, auto& theirs) {
    std::vector<double> o(n), y(n);
    ours({in.cq[0].data(), in.cv[0].data(), in.ca[0].data()}, o.data());
    theirs(in.x[0].data(), y.data());
    double d = 0;
    for (int i = 0; i < n; ++i) d = std::max(d, std::abs(o[i] - y[order_v[i]]));
    return d;
  };
  // three n x n outputs (the third symmetric, Pinocchio's upper triangle) of (q, v, a)
  auto blocks_diff = [&](Generated& ours, const char* fname, auto& theirs) {
    std::vector<double> o1(n * n), o2(n * n), o3(n * n), y(3 * n * n);
    ours({in.cq[0].data(), in.cv[0].data(), in.ca[0].data()}, {o1.data(), o2.data(), o3.data()});
    theirs(in.x[0].data(), y.data());
    double* outs[3] = {o1.data(), o2.data(), o3.data()};
    double d = 0;
    for (int b = 0; b < 3; ++b)
      d = std::max(d, max_diff(ours.dense(lib, fname, b, outs[b]),
                               from_row_major(y.data() + b * n * n, n, order_v, b == 2)));
    return d;
  };

  // every library first, at the priority the harness was started with (a benchmark started
  // under nice builds at a low priority), then the timings at the default priority where the
  // user may raise it back (root), so that other work on a shared machine preempts the
  // interleaved rounds less
  std::unique_ptr<Anchor<pinocchio::CodeGenRNEA<double>>> rnea;
  std::unique_ptr<Anchor<pinocchio::CodeGenABA<double>>> aba;
  std::unique_ptr<Anchor<pinocchio::CodeGenCRBA<double>>> crba;
  std::unique_ptr<Anchor<pinocchio::CodeGenRNEADerivatives<double>>> drnea;
  std::unique_ptr<Anchor<pinocchio::CodeGenABADerivatives<double>>> daba;
  auto make = [&](auto& anchor, const char* quantity, const char* name) {
    if (!asked(quantity)) return;
    anchor.reset(new typename std::decay_t<decltype(anchor)>::element_type(model, name));
    anchor->build(flags);
    std::fprintf(stderr, "%s: recorded and written in %.2f s, compiled in %.1f s\n", quantity,
                 anchor->record_s, anchor->compile_s);
  };
  make(rnea, "ID", "rnea");
  make(aba, "FD", "aba");
  make(crba, "M", "crba");
  make(drnea, "dID", "partial_rnea");
  make(daba, "dFD", "partial_aba");
  if (getpriority(PRIO_PROCESS, 0) > 0) setpriority(PRIO_PROCESS, 0, 0);

  if (rnea) {
    Generated ours(lib, "inverse_dynamics_nofext");
    time_pair("ID", ours, *rnea, in, false, [&] { return vector_diff(ours, *rnea); }, rounds, calls);
  }
  if (aba) {
    Generated ours(lib, "forward_dynamics_nofext");
    time_pair("FD", ours, *aba, in, false, [&] { return vector_diff(ours, *aba); }, rounds, calls);
  }
  if (crba) {
    Generated ours(lib, "mass_matrix");
    auto compare = [&] {
      std::vector<double> o(n * n), y(n * (n + 1) / 2), full(n * n);
      ours({in.cq[0].data()}, o.data());
      (*crba)(in.xq[0].data(), y.data());
      for (int i = 0, k = 0; i < n; ++i)  // Pinocchio's packed upper triangle, row by row
        for (int j = i; j < n; ++j, ++k) full[i * n + j] = full[j * n + i] = y[k];
      return max_diff(ours.dense(lib, "mass_matrix", 0, o.data()),
                      from_row_major(full.data(), n, order_v, false));
    };
    time_pair("M", ours, *crba, in, true, compare, rounds, calls);
  }
  if (drnea) {
    const char* fname = "inverse_dynamics_derivatives_nofext";
    Generated ours(lib, fname);
    time_pair("dID", ours, *drnea, in, false, [&] { return blocks_diff(ours, fname, *drnea); }, rounds, calls);
  }
  if (daba) {
    const char* fname = "forward_dynamics_derivatives_nofext";
    Generated ours(lib, fname);
    time_pair("dFD", ours, *daba, in, false, [&] { return blocks_diff(ours, fname, *daba); }, rounds, calls);
  }
  return 0;
}
