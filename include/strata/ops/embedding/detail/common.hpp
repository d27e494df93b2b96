// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/embedding/detail/common.hpp -- pieces every embedding kernel shares: the workspace
// header (status record, per-chiplet work queues), its reset kernel, bad-input recording, and the
// chiplet-aware tile queue. Not a public header.
#pragma once

#include <cstdint>

#include "strata/arch/arch.hpp"
#include "strata/runtime/runtime.hpp"  // first: declares the HIP atomics that arch/atomic.hpp calls
#include "strata/arch/atomic.hpp"
#include "strata/config/config.hpp"
#include "strata/ops/embedding/detail/rows.hpp"
#include "strata/ops/embedding/types.hpp"

namespace strata::embedding::detail {

/// Most chiplets the tile queues serve (MI300X/MI355X: 8 XCDs). A target with more shares queues.
inline constexpr int max_queues = 8;

/// The first 256 bytes of every embedding workspace.
struct workspace_header {
  status_record status;                       // 64 B
  unsigned long long queues[max_queues];      // next tile of each chiplet's range
  unsigned long long scalars[8];              // backward: [0] unique rows, [1] valid (sorted) keys
  unsigned long long reserved[8];
};
static_assert(sizeof(workspace_header) == 256);

/// Kernels that declare a target name it; `void` leaves the backend's default (kernel.hpp).
template <class Target>
struct declared_target {
  using target = Target;
};
template <>
struct declared_target<void> {};

/// Resets the workspace header before a launch (a kernel, so that the whole call stays in stream
/// order, allocates nothing and can be captured in a graph).
template <class Target = void>
struct reset_kernel : declared_target<Target> {
  static constexpr const char* name = "embedding_reset_kernel";
  struct params {
    workspace_header* header;
  };
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    const int t = ctx.block().thread_rank();
    unsigned long long* w = reinterpret_cast<unsigned long long*>(p.header);
    // status: first two fields "none", counters zero; queues, scalars zero.
    if (t < 32) w[t] = (t < 2) ? status_none : 0ull;
  }
};

STRATA_HOST_DEVICE STRATA_FORCEINLINE void record_bad_index(status_record* s, long long position) {
  atomic::add(&s->bad_positions, 1ull);
  atomic::min(&s->first_bad_position, static_cast<unsigned long long>(position));
}
STRATA_HOST_DEVICE STRATA_FORCEINLINE void record_bad_bag(status_record* s, long long bag) {
  atomic::add(&s->bad_bags, 1ull);
  atomic::min(&s->first_bad_bag, static_cast<unsigned long long>(bag));
}

/// The tiles of chiplet queue q out of n queues over `tiles` tiles: a contiguous range. Tiles are in
/// table order, so each chiplet gets a run of whole tables (a table larger than 1/n of the work
/// spans two or more neighbouring chiplets), and a table's hot rows stay in one chiplet's L2.
STRATA_HOST_DEVICE constexpr long long queue_begin(int q, int n, long long tiles) { return tiles * q / n; }

/// Takes the next tile for the calling block: from the queue of the chiplet it runs on
/// (ctx.chiplet().index(): the hardware id where there is one, so correctness never rests on a
/// dispatch model), then, when that range is done, from the other chiplets' queues in turn.
/// Returns -1 when every tile is taken. Call from one thread of the block.
template <class Ctx>
STRATA_HOST_DEVICE long long grab_tile(Ctx& ctx, workspace_header* h, long long tiles) {
  int n = ctx.chiplet().count();
  n = n < 1 ? 1 : (n > max_queues ? max_queues : n);
  const int home = ctx.chiplet().index() % n;
  for (int k = 0; k < n; ++k) {
    const int q = (home + k) % n;
    const long long b = queue_begin(q, n, tiles), e = queue_begin(q + 1, n, tiles);
    if (b == e) continue;
    const unsigned long long got = atomic::add(&h->queues[q], 1ull);
    if (static_cast<long long>(got) < e - b) return b + static_cast<long long>(got);
  }
  return -1;
}

/// Index of the feature (in tile order) that owns `tile`: the last with tile_begin <= tile.
STRATA_HOST_DEVICE STRATA_FORCEINLINE int feature_of_tile(const feature_desc* f, int n, long long tile) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (f[mid].tile_begin <= tile) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

}  // namespace strata::embedding::detail
