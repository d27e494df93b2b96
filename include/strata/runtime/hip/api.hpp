// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/hip/api.hpp -- the HIP table behind the shared GPU runtime (runtime/gpu/): the
// entries of gpu/api_table.hpp with the `hip` prefix, and what AMD GPUs report or do differently.
#pragma once

#include <hip/hip_runtime.h>

#include <cstddef>
#include <string>

#include "strata/arch/arch.hpp"
#include "strata/runtime/detail/kfd_topology.hpp"
#include "strata/runtime/device_properties.hpp"
#include "strata/runtime/hip/topology.hpp"

#define STRATA_GPU_API(name) hip##name
#include "strata/runtime/gpu/api_table.hpp"
#undef STRATA_GPU_API

namespace strata::hip::detail {

struct api : strata::detail::gpu_api_table {
  static constexpr const char* prefix = "hip";  // "hipMalloc(...)" in error messages
  using default_target = arch::gfx90a;         // for a kernel without Kernel::target
  using device_prop = hipDeviceProp_t;
  static error_t get_device_properties(device_prop* p, int device) noexcept { return hipGetDeviceProperties(p, device); }

  /// LDS beyond 64 KiB (gfx950 has 160 KiB) is requested explicitly, as on CUDA.
  static constexpr std::size_t default_dynamic_shared_limit = 64 * 1024;
  /// AMD GPUs have no thread block clusters (launch rejects a cluster shape before the call).
  static constexpr bool launch_has_clusters = false;

  /// The fields of device_properties that HIP reports its own way: the architecture is a gfx name,
  /// the LDS per workgroup has no larger opt-in size, and the XCD count comes from the KFD topology
  /// or the CU count (runtime/hip/topology.hpp), since HIP reports none.
  static void vendor_properties(const device_prop& p, device_properties& r) {
    // gcnArchName carries target features after a colon ("gfx942:sramecc+:xnack-"); keep the processor.
    std::string arch = p.gcnArchName;
    if (const auto colon = arch.find(':'); colon != std::string::npos) arch.resize(colon);
    r.arch = arch;
    r.shared_memory_per_block = p.sharedMemPerBlock;
    // The driver's own XCD count where the KFD topology is readable; else from the CU count.
    const int kfd = strata::detail::kfd_num_xcc("/sys/class/kfd/kfd/topology/nodes", p.pciDomainID, p.pciBusID,
                                                p.pciDeviceID);
    r.chiplets = kfd > 0 ? kfd : xcd_count(r.arch, p.multiProcessorCount);
  }
};

}  // namespace strata::hip::detail

namespace strata::detail {
using gpu_api = hip::detail::api;  // this translation unit's GPU backend
}  // namespace strata::detail
