// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/embedding/config.hpp -- the embedding kernels' configuration per target, as values.
//
//   threads         threads per block (every target: 256 = 8 warps of 32 or 4 wavefronts of 64)
//   rows_in_flight  rows whose 16-byte loads a lane issues before it consumes the first of them:
//                   the software pipeline that keeps several row fetches in flight per lane
//   accumulators    fp32 accumulators per lane per column pass (the row's chunks a lane owns)
//   max_blocks      cap on the grid; blocks loop over the tile queues, so more tiles than blocks is fine
//   prefetch_indices  load the indices of the next rows_in_flight rows while the current rows are in
//                   flight, so a lane's row loads never wait behind an index load (costs 2 registers
//                   per row in flight)
//
// Provenance: tuned on an H200 on 2026-12-04 with `strata_bench_embedding --sweep` (T = 32 tables of 1M
// rows, B = 8192, L = 32 uniform lookups, sum pooling; docs/performance.md has the tables), per row
// format, after two fixes that the sweep showed were the real limits (descriptors by value, decodes
// of one or two instructions: forward.hpp, arch/widen.hpp). Per format, in % of the device's copy
// bandwidth at D 128 (D 64):
//   fp32          2 rows in flight x 16 accumulators, prefetch: 96 %   (defaults before: 79 %)
//   fp16 / bf16   4 x 16, prefetch: 83 / 80 % (77 % at D 64)           (51 / 50 %, 48 % at D 64)
//   int8 row-wise 2 x 32, prefetch: 38 %                               (29 %)
//   fp8 e4m3      2 x 8, no prefetch: 30 % (the other choices 24-26 %)
//   int4 row-wise 2 x 8, no prefetch (not in the sweep)
// The 1-byte formats stay far below: they decode 16 elements per 16-byte load, one at a time (not
// profiled; the likely limit, see docs/embedding.md).
// These are the NVIDIA and host choices; AMD keeps 2 x 8 without prefetch (see config_for). Every
// choice builds without spills on its targets (test/compile/embedding_kernels.cu).
// max_blocks is 8 blocks per SM/CU. The host emulator runs the same choices (so that the tests run
// the GPUs' code paths), with its own grid cap.
#pragma once

#include "strata/arch/arch.hpp"
#include "strata/ops/embedding/types.hpp"

namespace strata::embedding {

struct kernel_config {
  int threads = 256;
  int rows_in_flight = 2;
  int accumulators = 8;
  int max_blocks = 64;
  bool prefetch_indices = false;
};

/// The forward kernel's configuration for rows stored as `Rows` on `Target` (the backward uses only
/// max_blocks, which does not depend on the format).
template <class Target, scalar Rows = scalar::fp32>
constexpr kernel_config config_for() {
  kernel_config c;
  if constexpr (Target::vendor_id == arch::vendor::host) c.max_blocks = 64;
  else c.max_blocks = 8 * Target::chiplets.units();
  // AMD: the NVIDIA choices are not measured there, and the fp32 one spills 12 SGPRs on gfx940
  // (204 VGPRs): the earlier 2 x 8 without prefetch until an AMD GPU tunes them.
  if constexpr (Target::vendor_id == arch::vendor::amd) return c;
  if constexpr (Rows == scalar::fp32) c.rows_in_flight = 2, c.accumulators = 16, c.prefetch_indices = true;
  else if constexpr (Rows == scalar::fp16 || Rows == scalar::bf16) c.rows_in_flight = 4, c.accumulators = 16, c.prefetch_indices = true;
  else if constexpr (Rows == scalar::int8_rowwise) c.rows_in_flight = 2, c.accumulators = 32, c.prefetch_indices = true;
  return c;
}

}  // namespace strata::embedding
