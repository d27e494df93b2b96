// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/sm80.hpp -- NVIDIA Ampere (A100, sm_80).
#pragma once
#include "strata/arch/target.hpp"

namespace strata::arch {

struct sm80 {
  static constexpr std::string_view name = "sm80";
  static constexpr std::string_view compiler_target = "sm_80";
  static constexpr vendor vendor_id = vendor::nvidia;
  static constexpr int warp_size = 32;
  static constexpr int max_threads_per_block = 1024;
  // 163 KiB with the opt-in attribute (cudaFuncAttributeMaxDynamicSharedMemorySize); 48 KiB without.
  static constexpr std::size_t shared_memory_per_block = 163 * KiB;
  static constexpr int max_cluster_size = 1;  // no thread block clusters before sm90
  static constexpr atom_set atoms = atom_family::fma | atom_family::mma_sync_f16 | atom_family::mma_sync_tf32 |
                                    atom_family::mma_sync_i8 | atom_family::cp_async | atom_family::ldmatrix;
  // A100 SXM: 108 SMs, 40 MB L2 in two partitions, one die.
  static constexpr chiplet_topology chiplets{.count = 1,
                                             .units_per_chiplet = 108,
                                             .l2_bytes_per_chiplet = 40 * MiB,
                                             .l2_partitions = 2,
                                             .last_level_cache_bytes = 0,
                                             .dispatch = dispatch_model::monolithic,
                                             .experimental = false};
};

}  // namespace strata::arch
