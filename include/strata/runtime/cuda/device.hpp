// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/cuda/device.hpp -- device_count() and get_device_properties() on CUDA.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "strata/runtime/cuda/error.hpp"
#include "strata/runtime/device_properties.hpp"

namespace strata {

/// Number of CUDA devices; 0 (not an error) when there is no device or no driver, so that programs
/// and tests can fall back or skip.
inline int device_count() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
    (void)cudaGetLastError();
    return 0;
  }
  cuda::detail::check(e, [] { return std::string("cudaGetDeviceCount()"); });
  return n;
}

inline device_properties get_device_properties(int device = 0) {
  cudaDeviceProp p{};
  cuda::detail::check(cudaGetDeviceProperties(&p, device),
                      [device] { return "cudaGetDeviceProperties(device " + std::to_string(device) + ")"; });
  device_properties r;
  r.name = p.name;
  r.arch = "sm_" + std::to_string(p.major * 10 + p.minor);
  r.multiprocessor_count = p.multiProcessorCount;
  r.warp_size = p.warpSize;
  r.shared_memory_per_block = p.sharedMemPerBlockOptin;
  r.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  // B200 (sm_100) is two dies presented as one device; CUDA exposes no die count, so the figure comes
  // from the architecture (experimental, like the sm100a topology). Earlier GPUs are one die.
  r.chiplets = (p.major == 10 && p.minor == 0) ? 2 : 1;
  r.units_per_chiplet = r.multiprocessor_count / r.chiplets;
  return r;
}

}  // namespace strata
