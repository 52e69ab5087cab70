// A CUDA program of your own that calls casdyn's exported kernels: the UR5e's inverse
// dynamics on a batch of samples, one GPU thread per sample.
//
// Build (after `python examples/cuda_export.py DIR` wrote DIR/ur5e.cu and DIR/ur5e.h):
//   nvcc -O3 -std=c++17 -I DIR -o ur5e_id examples/cuda/main.cu DIR/ur5e.cu
// Run: ./ur5e_id N   prints sample 0's torques and the kernel's time per sample.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ur5e.h"

#define CHECK(call)                                                        \
  do {                                                                     \
    cudaError_t e = (call);                                                \
    if (e != cudaSuccess) {                                                \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e));     \
      return 1;                                                            \
    }                                                                      \
  } while (0)

int main(int argc, char** argv) {
  const long long n = argc > 1 ? std::atoll(argv[1]) : 1000000;
  const int nv = 6;
  // sample k: q_j = 0.1 (j + 1) + 1e-6 k, qd_j = 0.2, qdd_j = -0.3 (array of structures)
  std::vector<double> q(n * nv), qd(n * nv, 0.2), qdd(n * nv, -0.3), tau(n * nv);
  for (long long k = 0; k < n; ++k)
    for (int j = 0; j < nv; ++j) q[k * nv + j] = 0.1 * (j + 1) + 1e-6 * k;
  double *dq, *dqd, *dqdd, *dtau, *dfext;
  const size_t bytes = sizeof(double) * n * nv;
  CHECK(cudaMalloc(&dq, bytes));
  CHECK(cudaMalloc(&dqd, bytes));
  CHECK(cudaMalloc(&dqdd, bytes));
  CHECK(cudaMalloc(&dtau, bytes));
  CHECK(cudaMalloc(&dfext, sizeof(double) * 10 * 6));  // one fext for all samples
  CHECK(cudaMemset(dfext, 0, sizeof(double) * 10 * 6));
  CHECK(cudaMemcpy(dq, q.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dqd, qd.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dqdd, qdd.data(), bytes, cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  for (int round = 0; round < 2; ++round) {  // the first launch loads the module
    CHECK(cudaEventRecord(start));
    // inputs and outputs (n, size) row-major: sample stride = size, element stride = 1;
    // fext is shared: sample stride 0
    CHECK(ur5e_inverse_dynamics_f64_launch(n, 0, dq, nv, 1, dqd, nv, 1, dqdd, nv, 1,
                                           dfext, 0, 1, dtau, nv, 1, 0));
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
  }
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(cudaMemcpy(tau.data(), dtau, bytes, cudaMemcpyDeviceToHost));
  std::printf("tau[0] = %.17g %.17g %.17g %.17g %.17g %.17g\n", tau[0], tau[1], tau[2],
              tau[3], tau[4], tau[5]);
  std::printf("%lld samples in %.3f ms: %.3f ns per sample\n", n, ms, 1e6 * ms / n);
  cudaFree(dq); cudaFree(dqd); cudaFree(dqdd); cudaFree(dtau); cudaFree(dfext);
  return 0;
}
