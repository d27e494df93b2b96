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
    const int home = chiplet % chiplets_;
    for (int d = 0; d < chiplets_; ++d) {
      const int c = (home + d) % chiplets_;
      // Relaxed is enough: the counter only hands out indices; the tile's data is ordered by the
      // kernel's own protocol. Skip exhausted ranges without bumping them further.
      if (static_cast<long long>(strata::atomic::load_acquire<strata::atomic::scope::device>(counters_ + c)) >=
          range_size(c))
        continue;
      const long long k = static_cast<long long>(strata::atomic::add(counters_ + c, 1ull));
      if (k < range_size(c)) return range_begin(c) + k;
    }
    return -1;
  }

  /// The block-wide form: thread 0 claims, every thread of the block gets the tile (or -1).
  template <class Ctx>
  STRATA_HOST_DEVICE long long next(Ctx& ctx, shared_storage& s) const {
    auto block = ctx.block();
    if (block.thread_rank() == 0) s.tile = claim(ctx.chiplet().index());
    block.sync();
    const long long t = s.tile;
    block.sync();  // nobody overwrites s.tile before everyone has read it
    return t;
  }

 private:
  long long tiles_;
  int chiplets_;
  unsigned long long* counters_;
};

}  // namespace strata
