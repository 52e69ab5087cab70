// What both native harnesses share: CasADi's generated functions called through dlopen,
// interleaved timing with medians, and comparisons through casdyn's coordinate order.
#pragma once

#include <Eigen/Core>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
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
  // output i as a dense column-major matrix (CasADi stores only the structural nonzeros)
  std::vector<double> dense(void* lib, const std::string& name, int i, const double* nz) const {
    using Pattern = const casadi_int* (*)(casadi_int);
    auto pattern = reinterpret_cast<Pattern>(dlsym(lib, (name + "_sparsity_out").c_str()));
    // nrow, ncol, then 1 for a dense matrix, else colind[ncol + 1] (starting with 0), row[nnz]
    const casadi_int* sp = pattern(i);
    const casadi_int nrow = sp[0], ncol = sp[1], *colind = sp + 2, *row = sp + 3 + ncol;
    if (sp[2] == 1) return std::vector<double>(nz, nz + nrow * ncol);
    std::vector<double> out(nrow * ncol, 0.0);
    for (casadi_int j = 0; j < ncol; ++j)
      for (casadi_int k = colind[j]; k < colind[j + 1]; ++k) out[row[k] + j * nrow] = nz[k];
    return out;
  }
  void operator()(std::initializer_list<const double*> in, double* out) { (*this)(in, {out}); }
  void operator()(std::initializer_list<const double*> in, std::initializer_list<double*> out) {
    std::copy(in.begin(), in.end(), arg.begin());
    std::copy(out.begin(), out.end(), res.begin());
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

// max |a - b| over n x n column-major a and Eigen b (symmetric: b's upper triangle only)
static double matrix_diff(const double* a, const Eigen::MatrixXd& b, bool symmetric) {
  double d = 0;
  for (int j = 0; j < b.cols(); ++j)
    for (int i = 0; i < b.rows(); ++i) {
      double bij = symmetric && i > j ? b(j, i) : b(i, j);
      d = std::max(d, std::abs(a[i + j * b.rows()] - bij));
    }
  return d;
}

static Eigen::VectorXd reordered(const Eigen::VectorXd& x, const std::vector<int>& order) {
  Eigen::VectorXd y(order.size());
  for (size_t i = 0; i < order.size(); ++i) y[i] = x[order[i]];
  return y;
}

// the generated library, or exit with the loader's message
static void* open_library(const char* path) {
  void* lib = dlopen(path, RTLD_NOW);
  if (!lib) { std::fprintf(stderr, "%s\n", dlerror()); std::exit(2); }
  return lib;
}

// casdyn's q and v as indices into Pinocchio's (nq integers, then nv) from ORDER.txt, or the
// identity where path is null
static void read_order(const char* path, std::vector<int>& order_q, std::vector<int>& order_v) {
  for (size_t i = 0; i < order_q.size(); ++i) order_q[i] = static_cast<int>(i);
  for (size_t i = 0; i < order_v.size(); ++i) order_v[i] = static_cast<int>(i);
  if (!path) return;
  FILE* f = std::fopen(path, "r");
  for (int& i : order_q) if (std::fscanf(f, "%d", &i) != 1) std::exit(2);
  for (int& i : order_v) if (std::fscanf(f, "%d", &i) != 1) std::exit(2);
  std::fclose(f);
}
