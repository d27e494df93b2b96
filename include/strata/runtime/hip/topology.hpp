// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/hip/topology.hpp -- the XCD count of an AMD GPU when the KFD topology does not say.
// AMD only: NVIDIA's die count comes from the architecture alone (runtime/cuda/api.hpp).
#pragma once

#include <string_view>

namespace strata::hip::detail {

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

}  // namespace strata::hip::detail
