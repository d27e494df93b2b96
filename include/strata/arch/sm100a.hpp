// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/sm100a.hpp -- NVIDIA Blackwell (B200, sm_100a).
#pragma once
#include "strata/arch/target.hpp"

namespace strata::arch {

struct sm100a {
  static constexpr std::string_view name = "sm100a";
  static constexpr std::string_view compiler_target = "sm_100a";
  static constexpr vendor vendor_id = vendor::nvidia;
  static constexpr int warp_size = 32;
  static constexpr int max_threads_per_block = 1024;
  static constexpr std::size_t shared_memory_per_block = 227 * KiB;
  static constexpr int max_cluster_size = 8;
  static constexpr atom_set atoms = atom_family::fma | atom_family::mma_sync_f16 | atom_family::mma_sync_tf32 |
                                    atom_family::mma_sync_i8 | atom_family::mma_sync_f8 | atom_family::tcgen05 |
                                    atom_family::cp_async | atom_family::ldmatrix | atom_family::tma |
                                    atom_family::red_vector;
  // B200: two dies of 74 active SMs (148 in all), ~126 MB L2 in total (secondary sources), joined by
  // NV-HBI and presented as one GPU. NVIDIA documents no die id nor how blocks are placed on dies:
  // the contiguous split below is a model and marked experimental.
  static constexpr chiplet_topology chiplets{.count = 2,
                                             .units_per_chiplet = 74,
                                             .l2_bytes_per_chiplet = 63 * MiB,
                                             .l2_partitions = 1,
                                             .last_level_cache_bytes = 0,
                                             .dispatch = dispatch_model::contiguous,
                                             .experimental = true};
};

}  // namespace strata::arch
