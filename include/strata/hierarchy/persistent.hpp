// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/hierarchy/persistent.hpp -- a persistent tile scheduler that keeps tiles on their chiplet.
//
// A persistent kernel launches one resident block per compute unit (a cooperative launch) and loops
// over tiles. The tiles are split into one contiguous range per chiplet (the range a tile order put
// there, e.g. dispatch_inverse then group-M); a block takes tiles from the range of the chiplet it
// is REALLY on -- ctx.chiplet().index(), the hardware id, never the dispatch model -- through that
// chiplet's counter, so tiles that share operands stay in one L2. When its own range is exhausted a
// block steals from the other chiplets' ranges, nearest first, so the tail stays balanced whatever
// the placement. Every tile is handed out exactly once: each chiplet's counter gives each index once.
//
// Workspace: persistent_tiles::workspace_elements(chiplets) counters, zeroed before the launch
// (strata::zero_on_device). The stream-K mode, which divides K steps rather than whole tiles and
// finishes split tiles with fix-ups inside one chiplet, is strata/hierarchy/stream_k.hpp.
#pragma once

#include "strata/arch/atomic.hpp"
#include "strata/config/config.hpp"

namespace strata {

namespace detail {
/// Takes the next index from chiplet `home`'s counter, then from the others', nearest first (tail
/// stealing). Counter c hands out k in [0, size(c)); the result is first(c) + k, or -1 when every
/// range is exhausted. One thread calls this. Shared by persistent_tiles and stream_k_schedule.
template <class Counter, class Size, class First>
STRATA_HOST_DEVICE long long claim_nearest(Counter* counters, int chiplets, int home, Size size, First first) {
  home = (home < 0 ? 0 : home) % chiplets;
  for (int d = 0; d < chiplets; ++d) {
    const int c = (home + d) % chiplets;
    // Relaxed is enough: the counter only hands out indices; the data is ordered by the kernel's own
    // protocol. Skip exhausted ranges without bumping them further.
    if (static_cast<long long>(atomic::load_acquire<atomic::scope::device>(counters + c)) >= size(c)) continue;
    const long long k = static_cast<long long>(atomic::add(counters + c, Counter(1)));
    if (k < size(c)) return first(c) + k;
  }
  return -1;
}

/// Thread 0 of the block computes f(); every thread of the block gets its value, through `slot`
/// (block shared memory).
template <class Ctx, class F>
STRATA_HOST_DEVICE long long from_first_thread(Ctx& ctx, long long& slot, F&& f) {
  auto block = ctx.block();
  if (block.thread_rank() == 0) slot = f();
  block.sync();
  const long long v = slot;
  block.sync();  // nobody overwrites the slot before everyone has read it
  return v;
}
}  // namespace detail

class persistent_tiles {
 public:
  /// Shared storage a block needs to broadcast the tile its first thread claimed.
  struct shared_storage {
    long long tile;
  };

  static constexpr long long workspace_elements(int chiplets) { return chiplets; }

  /// `tiles` tiles over `chiplets` chiplets; `counters` points at workspace_elements(chiplets) zeros.
  STRATA_HOST_DEVICE constexpr persistent_tiles(long long tiles, int chiplets, unsigned long long* counters)
      : tiles_(tiles), chiplets_(chiplets < 1 ? 1 : chiplets), counters_(counters) {}

  STRATA_HOST_DEVICE constexpr long long tiles() const { return tiles_; }
  /// First tile of chiplet c's range; ranges are balanced to within one tile.
  STRATA_HOST_DEVICE constexpr long long range_begin(int c) const {
    const long long q = tiles_ / chiplets_, r = tiles_ % chiplets_;
    return c * q + (c < r ? c : r);
  }
  STRATA_HOST_DEVICE constexpr long long range_size(int c) const {
    return tiles_ / chiplets_ + (c < tiles_ % chiplets_ ? 1 : 0);
  }

  /// Claims the next tile for a block on chiplet `chiplet` (one thread calls this); -1 when all tiles
  /// are taken.
  STRATA_HOST_DEVICE long long claim(int chiplet) const {
    return detail::claim_nearest(
        counters_, chiplets_, chiplet, [&](int c) { return range_size(c); }, [&](int c) { return range_begin(c); });
  }

  /// The block-wide form: thread 0 claims, every thread of the block gets the tile (or -1).
  template <class Ctx>
  STRATA_HOST_DEVICE long long next(Ctx& ctx, shared_storage& s) const {
    return detail::from_first_thread(ctx, s.tile, [&] { return claim(ctx.chiplet().index()); });
  }

 private:
  long long tiles_;
  int chiplets_;
  unsigned long long* counters_;
};

}  // namespace strata
