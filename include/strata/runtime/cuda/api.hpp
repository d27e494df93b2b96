// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/cuda/api.hpp -- the CUDA table behind the shared GPU runtime (runtime/gpu/).
//
// runtime/gpu/ implements streams, device buffers, copies, error checking, device queries and the
// launch path once for both vendors and reaches the vendor runtime only through
// strata::detail::gpu_api: on CUDA the table below, the shared entries of gpu/api_table.hpp with the
// `cuda` prefix plus what only CUDA has or does differently.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "strata/arch/arch.hpp"
#include "strata/runtime/device_properties.hpp"

#define STRATA_GPU_API(name) cuda##name
#include "strata/runtime/gpu/api_table.hpp"
#undef STRATA_GPU_API

namespace strata::cuda::detail {

struct api : strata::detail::gpu_api_table {
  /// Error messages build the real call's name from it: "cudaMalloc(...)", "cudaMemcpyHostToDevice".
  static constexpr const char* prefix = "cuda";
  /// A kernel without Kernel::target is configured for sm_80.
  using default_target = arch::sm80;
  /// Above 48 KiB a block's dynamic shared memory needs an explicit opt-in per function.
  static constexpr std::size_t default_dynamic_shared_limit = 48 * 1024;
  /// The launch error names the cluster shape: cluster launch is CUDA only (an attribute of
  /// cudaLaunchKernelEx, runtime/cuda/trampoline.hpp).
  static constexpr bool launch_has_clusters = true;

  using device_prop = cudaDeviceProp;
  static error_t get_device_properties(device_prop* p, int device) noexcept { return cudaGetDeviceProperties(p, device); }

  /// The fields of device_properties that CUDA reports its own way.
  static void vendor_properties(const device_prop& p, device_properties& r) {
    r.arch = "sm_" + std::to_string(p.major * 10 + p.minor);
    r.shared_memory_per_block = p.sharedMemPerBlockOptin;
    // B200 (sm_100) is two dies presented as one device; CUDA exposes no die count, so the figure comes
    // from the architecture (experimental, like the sm100a topology). Earlier GPUs are one die.
    r.chiplets = (p.major == 10 && p.minor == 0) ? 2 : 1;
  }
};

}  // namespace strata::cuda::detail

namespace strata::detail {
/// This translation unit's GPU backend (one per translation unit, chosen by the compiler).
using gpu_api = cuda::detail::api;
}  // namespace strata::detail
