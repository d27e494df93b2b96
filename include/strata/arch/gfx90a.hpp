// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/gfx90a.hpp -- AMD CDNA2 (MI200 series, gfx90a).
#pragma once
#include "strata/arch/target.hpp"

namespace strata::arch {

struct gfx90a {
  static constexpr std::string_view name = "gfx90a";
  static constexpr std::string_view compiler_target = "gfx90a";
  static constexpr vendor vendor_id = vendor::amd;
  static constexpr int warp_size = 64;  // wavefront
  static constexpr int max_threads_per_block = 1024;
  static constexpr std::size_t shared_memory_per_block = 64 * KiB;  // LDS per workgroup
  static constexpr int max_cluster_size = 1;
  static constexpr atom_set atoms =
      atom_family::fma | atom_family::mfma_f16 | atom_family::mfma_f32 | atom_family::mfma_i8 | atom_family::buffer_load;
  // Each MI250X GCD is its own HIP device: 110 CUs and 8 MB L2, so one chiplet per device.
  static constexpr chiplet_topology chiplets{.count = 1,
                                             .units_per_chiplet = 110,
                                             .l2_bytes_per_chiplet = 8 * MiB,
                                             .l2_partitions = 1,
                                             .last_level_cache_bytes = 0,
                                             .dispatch = dispatch_model::monolithic,
                                             .experimental = false};
};

}  // namespace strata::arch
