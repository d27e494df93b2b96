// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/sm90a.hpp -- NVIDIA Hopper (H100/H200, sm_90a).
#pragma once
#include "strata/arch/target.hpp"

namespace strata::arch {

struct sm90a {
  static constexpr std::string_view name = "sm90a";
  static constexpr std::string_view compiler_target = "sm_90a";
  static constexpr vendor vendor_id = vendor::nvidia;
  static constexpr int warp_size = 32;
  static constexpr int max_threads_per_block = 1024;
  static constexpr std::size_t shared_memory_per_block = 227 * KiB;  // opt-in maximum
  static constexpr int max_cluster_size = 8;                         // portable limit (16 non-portable)
  static constexpr atom_set atoms = atom_family::fma | atom_family::mma_sync_f16 | atom_family::mma_sync_tf32 |
                                    atom_family::mma_sync_i8 | atom_family::mma_sync_f8 | atom_family::wgmma |
                                    atom_family::cp_async | atom_family::ldmatrix | atom_family::tma |
                                    atom_family::red_vector;
  // H100/H200 SXM: 132 SMs, 50 MB L2 built as two partitions with a "far" half (not exposed by CUDA);
  // modelled as one chiplet.
  static constexpr chiplet_topology chiplets{.count = 1,
                                             .units_per_chiplet = 132,
                                             .l2_bytes_per_chiplet = 50 * MiB,
                                             .l2_partitions = 2,
                                             .last_level_cache_bytes = 0,
                                             .dispatch = dispatch_model::monolithic,
                                             .experimental = false};
};

}  // namespace strata::arch
