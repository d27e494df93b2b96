// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/hip/device.hpp -- device_count() and get_device_properties() on HIP.
#pragma once

#include <hip/hip_runtime.h>

#include <string>
#include <string_view>

#include "strata/runtime/detail/kfd_topology.hpp"
#include "strata/runtime/device_properties.hpp"
#include "strata/runtime/hip/error.hpp"

namespace strata {

/// Number of HIP devices; 0 (not an error) when there is no device or no driver, so that programs
/// and tests can fall back or skip.
inline int device_count() {
  int n = 0;
  const hipError_t e = hipGetDeviceCount(&n);
  if (e == hipErrorNoDevice || e == hipErrorInsufficientDriver) {
    (void)hipGetLastError();
    return 0;
  }
  hip::detail::check(e, [] { return std::string("hipGetDeviceCount()"); });
  return n;
}

namespace hip::detail {

/// XCDs (chiplets) of a device, from its architecture and CU count. HIP (before ROCm 6) reports no
/// XCD count. gfx940/941/942 (CDNA3) XCDs have 38 active CUs, gfx950 (CDNA4) XCDs 32. Dividing the
/// device's CUs by that gives 8 for MI300X/MI325X/MI355X in SPX mode, and stays right when the
/// device is one partition (CPX: 1 XCD, DPX: 4) or an MI300A (6 XCDs); clamped to 1..8.
inline int xcd_count(std::string_view arch, int compute_units) {
  int cus_per_xcd = 0;
  if (arch == "gfx940" || arch == "gfx941" || arch == "gfx942") cus_per_xcd = 38;
  else if (arch == "gfx950") cus_per_xcd = 32;
  if (cus_per_xcd == 0) return 1;  // gfx90a and older: one die per HIP device (each MI250X GCD is a device)
  const int n = (compute_units + cus_per_xcd / 2) / cus_per_xcd;
  return n < 1 ? 1 : (n > 8 ? 8 : n);
}

}  // namespace hip::detail

inline device_properties get_device_properties(int device = 0) {
  hipDeviceProp_t p{};
  hip::detail::check(hipGetDeviceProperties(&p, device),
                     [device] { return "hipGetDeviceProperties(device " + std::to_string(device) + ")"; });
  device_properties r;
  r.name = p.name;
  // gcnArchName carries target features after a colon ("gfx942:sramecc+:xnack-"); keep the processor.
  std::string arch = p.gcnArchName;
  if (const auto colon = arch.find(':'); colon != std::string::npos) arch.resize(colon);
  r.arch = arch;
  r.multiprocessor_count = p.multiProcessorCount;
  r.warp_size = p.warpSize;
  r.shared_memory_per_block = p.sharedMemPerBlock;  // LDS per workgroup; AMD has no larger opt-in size
  r.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  // The driver's own XCD count where the KFD topology is readable; else from the CU count.
  const int kfd = strata::detail::kfd_num_xcc("/sys/class/kfd/kfd/topology/nodes", p.pciDomainID, p.pciBusID,
                                              p.pciDeviceID);
  r.chiplets = kfd > 0 ? kfd : hip::detail::xcd_count(r.arch, r.multiprocessor_count);
  r.units_per_chiplet = r.multiprocessor_count / r.chiplets;
  return r;
}

}  // namespace strata
