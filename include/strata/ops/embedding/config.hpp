// strata/ops/embedding/config.hpp -- the embedding kernels' configuration per target, as values.
//
//   threads         threads per block (every target: 256 = 8 warps of 32 or 4 wavefronts of 64)
//   rows_in_flight  rows whose 16-byte loads a lane issues before it consumes the first of them:
//                   the software pipeline that keeps several row fetches in flight per lane
//   accumulators    fp32 accumulators per lane per column pass (the row's chunks a lane owns)
//   max_blocks      cap on the grid; blocks loop over the tile queues, so more tiles than blocks is fine
//
// Provenance: not tuned on a GPU yet (none was available). rows_in_flight = 2 and 8 accumulators are
// what the compile report (test/compile/embedding_kernels.cu) allowed without spills on sm_90a; 16
// accumulators spilled the fp32 kernel under nvcc 13 and every format under hipcc at 128 VGPRs. max_blocks is 8 blocks per SM/CU.
#pragma once

#include "strata/arch/arch.hpp"

namespace strata::embedding {

struct kernel_config {
  int threads = 256;
  int rows_in_flight = 2;
  int accumulators = 8;
  int max_blocks = 64;
};

template <class Target>
constexpr kernel_config config_for() {
  if constexpr (Target::vendor_id == arch::vendor::host) return {.max_blocks = 64};
  else return {.max_blocks = 8 * Target::chiplets.units()};
}

}  // namespace strata::embedding
