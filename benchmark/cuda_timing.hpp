// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// benchmark/cuda_timing.hpp -- what every CUDA benchmark here shares: fatal error reports that name the
// program, and the event timing (median of event-timed calls after warm-ups), so each library in one
// table is timed the same way.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

namespace strata_bench {

/// The name error reports start with; each benchmark sets it first thing in main.
inline const char* program = "strata_bench";

[[noreturn]] inline void die(const char* what, const char* detail) {
  std::fprintf(stderr, "%s: %s: %s\n", program, what, detail);
  std::exit(1);
}

inline void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) die(what, cudaGetErrorString(e));
}

/// Median seconds of one call over `reps` event-timed calls on `st`, after two warm-ups. The median,
/// not the mean: one preempted call must not move the figure.
template <class F>
double median_seconds(cudaStream_t st, int reps, F&& fn) {
  fn();
  fn();
  cuda_ok(cudaStreamSynchronize(st), "warm-up");
  std::vector<cudaEvent_t> ev(2 * reps);
  for (auto& e : ev) cuda_ok(cudaEventCreate(&e), "cudaEventCreate");
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(ev[2 * r], st);
    fn();
    cudaEventRecord(ev[2 * r + 1], st);
  }
  cuda_ok(cudaStreamSynchronize(st), "timed calls");
  cuda_ok(cudaGetLastError(), "timed calls");
  std::vector<float> ms(reps);
  for (int r = 0; r < reps; ++r) cudaEventElapsedTime(&ms[r], ev[2 * r], ev[2 * r + 1]);
  for (auto& e : ev) cudaEventDestroy(e);
  std::nth_element(ms.begin(), ms.begin() + reps / 2, ms.end());
  return ms[reps / 2] / 1e3;
}

}  // namespace strata_bench
