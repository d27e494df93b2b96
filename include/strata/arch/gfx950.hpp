// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/gfx950.hpp -- AMD CDNA4 (MI350X / MI355X, gfx950).
#pragma once
#include "strata/arch/target.hpp"

namespace strata::arch {

struct gfx950 {
  static constexpr std::string_view name = "gfx950";
  static constexpr std::string_view compiler_target = "gfx950";
  static constexpr vendor vendor_id = vendor::amd;
  static constexpr int warp_size = 64;
  static constexpr int max_threads_per_block = 1024;
  static constexpr std::size_t shared_memory_per_block = 160 * KiB;  // LDS grew to 160 KB per CU
  static constexpr int max_cluster_size = 1;
  static constexpr atom_set atoms = atom_family::fma | atom_family::mfma_f16 | atom_family::mfma_f32 | atom_family::mfma_i8 |
                                    atom_family::mfma_f8 | atom_family::buffer_load |
                                    atom_family::buffer_load_lds;
  // MI355X: 8 XCDs x 32 active CUs, 4 MB L2 per XCD, 256 MB Infinity Cache, round-robin dispatch.
  static constexpr chiplet_topology chiplets{.count = 8,
                                             .units_per_chiplet = 32,
                                             .l2_bytes_per_chiplet = 4 * MiB,
                                             .l2_partitions = 1,
                                             .last_level_cache_bytes = 256 * MiB,
                                             .dispatch = dispatch_model::round_robin,
                                             .experimental = false};
};

}  // namespace strata::arch
