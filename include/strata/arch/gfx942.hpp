// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/gfx942.hpp -- AMD CDNA3 (MI300X / MI325X, gfx942).
//
// Debian's clang-15 hipcc predates gfx942; builds here use gfx940 (the same CDNA3 ISA family, with
// MFMA bf16 and fp8) as the stand-in. Note that CDNA3's fp8 units use the FNUZ encodings, not OCP.
#pragma once
#include "strata/arch/target.hpp"

namespace strata::arch {

struct gfx942 {
  static constexpr std::string_view name = "gfx942";
  static constexpr std::string_view compiler_target = "gfx942";
  static constexpr vendor vendor_id = vendor::amd;
  static constexpr int warp_size = 64;
  static constexpr int max_threads_per_block = 1024;
  static constexpr std::size_t shared_memory_per_block = 64 * KiB;
  static constexpr int max_cluster_size = 1;
  static constexpr atom_set atoms = atom_family::fma | atom_family::mfma_f16 | atom_family::mfma_f32 | atom_family::mfma_i8 |
                                    atom_family::mfma_f8 | atom_family::buffer_load |
                                    atom_family::buffer_load_lds;
  // MI300X in SPX mode: 8 XCDs x 38 active CUs, 4 MB private L2 per XCD, 256 MB Infinity Cache;
  // workgroup b is dispatched to XCD b % 8 (a model; the hardware id is HW_REG_XCC_ID).
  static constexpr chiplet_topology chiplets{.count = 8,
                                             .units_per_chiplet = 38,
                                             .l2_bytes_per_chiplet = 4 * MiB,
                                             .l2_partitions = 1,
                                             .last_level_cache_bytes = 256 * MiB,
                                             .dispatch = dispatch_model::round_robin,
                                             .experimental = false};
};

}  // namespace strata::arch
