// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/host.hpp -- the host emulator's own target: a portable lowest common denominator.
//
// Warp size 32 and 48 KiB of shared memory (the CUDA limit without opt-in), scalar FMA only: a kernel
// that runs on this target fits every GPU target. To emulate a GPU exactly, launch the kernel with that
// GPU's descriptor instead (sm80, gfx942, ...): the emulator then uses its warp size, shared-memory
// limit, cluster limit and chiplet dispatch model.
#pragma once
#include "strata/arch/target.hpp"

namespace strata::arch {

struct host {
  static constexpr std::string_view name = "host";
  static constexpr std::string_view compiler_target = "host";
  static constexpr vendor vendor_id = vendor::host;
  static constexpr int warp_size = 32;
  static constexpr int max_threads_per_block = 1024;
  static constexpr std::size_t shared_memory_per_block = 48 * KiB;
  static constexpr int max_cluster_size = 8;  // the emulator co-schedules clusters on any target that allows them
  static constexpr atom_set atoms = atom_family::fma;
  static constexpr chiplet_topology chiplets{.count = 1,
                                             .units_per_chiplet = 1,
                                             .l2_bytes_per_chiplet = 0,
                                             .l2_partitions = 1,
                                             .last_level_cache_bytes = 0,
                                             .dispatch = dispatch_model::monolithic,
                                             .experimental = false};
};

}  // namespace strata::arch
