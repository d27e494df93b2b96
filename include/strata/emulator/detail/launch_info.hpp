// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/emulator/detail/launch_info.hpp -- what every thread of one launch shares.
#pragma once

#include <cstddef>
#include <string>

#include "strata/arch/target.hpp"
#include "strata/hierarchy/dims.hpp"

namespace strata::emulator::detail {

struct launch_info {
  std::string kernel;               // name for messages
  std::string target;               // arch name the kernel runs as
  dims grid, block, cluster;
  dims clusters;                    // grid / cluster, per dimension
  long long blocks = 0;             // grid volume
  int threads_per_block = 0;
  int cluster_blocks = 1;
  long long clusters_per_unit = 1;  // a unit runs on one worker: one cluster, or the whole grid when
                                    // the launch is cooperative (every block co-resident)
  bool cooperative = false;
  bool race_check = false;          // the shared-memory race detector is on (race_check.hpp)
  bool count_shared = false;        // count shared-memory wavefronts (statistics.hpp, wavefronts.hpp)
  const int* placement = nullptr;   // chiplet of each block when the placement is shuffled, else null
  int warp_size = 32;
  int warps_per_block = 0;
  std::size_t static_shared = 0;    // bytes reserved for Kernel::shared_storage (rounded up)
  std::size_t dynamic_shared = 0;
  std::size_t shared_total = 0;
  arch::chiplet_topology chiplets;
};

}  // namespace strata::emulator::detail
