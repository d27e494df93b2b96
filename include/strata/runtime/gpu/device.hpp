// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/gpu/device.hpp -- device_count() and get_device_properties() on CUDA and HIP.
#pragma once

#include <cstddef>
#include <string>

#include "strata/runtime/device_properties.hpp"
#include "strata/runtime/gpu/api.hpp"
#include "strata/runtime/gpu/error.hpp"

namespace strata {

/// Number of GPUs; 0 (not an error) when there is no device or no driver, so that programs and tests
/// can fall back or skip.
inline int device_count() {
  using api = detail::gpu_api;
  int n = 0;
  const api::error_t e = api::get_device_count(&n);
  if (api::no_device(e)) {
    (void)api::get_last_error();
    return 0;
  }
  detail::gpu::check(e, [] { return std::string(api::prefix) + "GetDeviceCount()"; });
  return n;
}

/// The fields every vendor reports alike are read here; the architecture name, the shared memory per
/// block and the chiplet count come from the vendor table (runtime/cuda/api.hpp, runtime/hip/api.hpp).
inline device_properties get_device_properties(int device = 0) {
  using api = detail::gpu_api;
  api::device_prop p{};
  detail::gpu::check(api::get_device_properties(&p, device), [device] {
    return std::string(api::prefix) + "GetDeviceProperties(device " + std::to_string(device) + ")";
  });
  device_properties r;
  r.name = p.name;
  r.multiprocessor_count = p.multiProcessorCount;
  r.warp_size = p.warpSize;
  r.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  api::vendor_properties(p, r);
  r.units_per_chiplet = r.multiprocessor_count / r.chiplets;
  return r;
}

}  // namespace strata
