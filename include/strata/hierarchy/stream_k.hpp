// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/hierarchy/stream_k.hpp -- stream-K work division whose partial-tile fix-ups stay in a chiplet.
//
// Stream-K (Osama et al., 2023) divides the MAC-loop iterations of all output tiles evenly among the
// resident blocks instead of dividing whole tiles, so the last wave is never half empty. A tile whose
// iterations straddle two work units is finished by a fix-up: the units that did its earlier
// iterations store partial accumulators and raise a flag; the unit that did its last iteration waits
// for the flags, adds the partials and runs the epilogue.
//
// The chiplet-aware form here:
//
//   tiles   [0, T) are split into one contiguous range per chiplet (balanced to within one tile, the
//           ranges persistent_tiles uses), so the tiles a tile order placed on a chiplet stay there;
//   units   each chiplet's iterations (its tiles x iters_per_tile) are split into `units_per_chiplet`
//           contiguous work units of equal size (to within one iteration; a unit may be empty when a
//           chiplet has fewer iterations than units). A unit never crosses its chiplet's range, so
//           every tile split across units is split among units of ONE chiplet: partials and flags
//           are written and read inside that chiplet's L2;
//   claims  a block takes units from the counter of the chiplet it is really on (ctx.chiplet(), the
//           hardware id), lowest first, and steals from other chiplets' counters only when its own
//           is exhausted (the tail; a stolen unit's fix-up traffic then crosses chiplets, correctly).
//
// Deadlock freedom, which needs every block of the grid resident (a cooperative launch): a unit waits
// only for LOWER units of the same chiplet (the earlier iterations of the tile it finishes). A
// chiplet's counter hands out its units in increasing order, so when unit u is claimed every lower
// unit has already been claimed by a running block; the lowest unit of a chiplet starts at a tile
// boundary and never waits. By induction every claimed unit completes.
//
// Determinism: the fix-up adds the partials in unit order and then its own accumulators, and the
// units depend only on (tiles, iters_per_tile, chiplets, units_per_chiplet), never on placement or
// timing, so results are bitwise reproducible run to run.
//
// Workspace: counters (one per chiplet) and flags (one per unit), zero before the launch; the
// kernel's own partial buffer, one tile's accumulators per unit (at most one partial per unit: only
// a unit's last segment can end before its tile ends).
#pragma once

#include "strata/arch/atomic.hpp"
#include "strata/config/config.hpp"
#include "strata/hierarchy/persistent.hpp"
#include "strata/hierarchy/turn.hpp"

namespace strata {

class stream_k_schedule {
 public:
  /// A unit's share of one tile: iterations [k_begin, k_end) of `tile` (0 <= k_begin < k_end <= iters).
  struct segment {
    long long tile;
    int k_begin, k_end;
    bool starts_tile;  // k_begin == 0
    bool ends_tile;    // k_end == iters_per_tile
  };

  /// Shared storage a block needs to broadcast the unit its first thread claimed.
  struct shared_storage {
    long long unit;
  };

  /// Counters (chiplets) then flags (units) the schedule needs, zero before the launch.
  static constexpr long long workspace_elements(int chiplets, int units_per_chiplet) {
    return (chiplets < 1 ? 1 : chiplets) * (1LL + (units_per_chiplet < 1 ? 1 : units_per_chiplet));
  }

  /// `tiles` tiles of `iters_per_tile` iterations (>= 1) over `chiplets` chiplets with
  /// `units_per_chiplet` work units each; `workspace` points at workspace_elements(...) zeros (null
  /// for the pure arithmetic).
  STRATA_HOST_DEVICE constexpr stream_k_schedule(long long tiles, int iters_per_tile, int chiplets,
                                                 int units_per_chiplet, unsigned* workspace)
      : tiles_(tiles < 0 ? 0 : tiles),
        iters_(iters_per_tile < 1 ? 1 : iters_per_tile),
        chiplets_(chiplets < 1 ? 1 : chiplets),
        per_chiplet_(units_per_chiplet < 1 ? 1 : units_per_chiplet),
        counters_(workspace),
        flags_(workspace ? workspace + (chiplets < 1 ? 1 : chiplets) : nullptr) {}

  STRATA_HOST_DEVICE constexpr long long tiles() const { return tiles_; }
  STRATA_HOST_DEVICE constexpr int iters_per_tile() const { return iters_; }
  STRATA_HOST_DEVICE constexpr int chiplets() const { return chiplets_; }
  STRATA_HOST_DEVICE constexpr int units_per_chiplet() const { return per_chiplet_; }
  STRATA_HOST_DEVICE constexpr long long units() const { return (long long)chiplets_ * per_chiplet_; }

  /// Chiplet c's tiles: [tile_begin(c), tile_begin(c) + tile_count(c)).
  STRATA_HOST_DEVICE constexpr long long tile_begin(int c) const {
    const long long q = tiles_ / chiplets_, r = tiles_ % chiplets_;
    return c * q + (c < r ? c : r);
  }
  STRATA_HOST_DEVICE constexpr long long tile_count(int c) const {
    return tiles_ / chiplets_ + (c < tiles_ % chiplets_ ? 1 : 0);
  }
  STRATA_HOST_DEVICE constexpr int chiplet_of_unit(long long u) const { return int(u / per_chiplet_); }

  /// Unit u's iterations, as global iteration indices (tile * iters_per_tile + k).
  STRATA_HOST_DEVICE constexpr long long unit_begin(long long u) const {
    const int c = chiplet_of_unit(u);
    return tile_begin(c) * iters_ + local_begin(c, u % per_chiplet_);
  }
  STRATA_HOST_DEVICE constexpr long long unit_end(long long u) const {
    const int c = chiplet_of_unit(u);
    return tile_begin(c) * iters_ + local_begin(c, u % per_chiplet_ + 1);
  }

  /// The unit that does global iteration i.
  STRATA_HOST_DEVICE constexpr long long unit_of(long long i) const {
    const long long tile = i / iters_;
    int c = chiplet_of_tile(tile);
    const long long local = i - tile_begin(c) * iters_;
    const long long n = tile_count(c) * iters_;
    // The largest j with local_begin(j) = floor(n * j / U) <= local.
    const long long j = ((local + 1) * per_chiplet_ - 1) / n;
    return (long long)c * per_chiplet_ + j;
  }

  STRATA_HOST_DEVICE constexpr int chiplet_of_tile(long long t) const {
    const long long q = tiles_ / chiplets_, r = tiles_ % chiplets_;
    // The first r chiplets hold q + 1 tiles.
    if (t < r * (q + 1)) return int(t / (q + 1));
    return q == 0 ? chiplets_ - 1 : int(r + (t - r * (q + 1)) / q);
  }

  /// Calls f(segment) for each tile share of unit u, in iteration order.
  template <class F>
  STRATA_HOST_DEVICE constexpr void for_each_segment(long long u, F&& f) const {
    const long long end = unit_end(u);
    for (long long i = unit_begin(u); i < end;) {
      const long long tile = i / iters_;
      const int k0 = int(i - tile * iters_);
      const long long left = end - i;
      const int k1 = left < iters_ - k0 ? int(k0 + left) : iters_;
      f(segment{tile, k0, k1, k0 == 0, k1 == iters_});
      i += k1 - k0;
    }
  }

  /// The units that did iterations [0, k_begin) of `tile` (whose partials a fix-up adds), as the
  /// half-open range [first, last); empty units inside it have no partial and are skipped by
  /// has_work().
  struct unit_range {
    long long first, last;
  };
  STRATA_HOST_DEVICE constexpr unit_range contributors(long long tile, int k_begin) const {
    if (k_begin <= 0) return {0, 0};
    const long long i0 = tile * iters_;
    return {unit_of(i0), unit_of(i0 + k_begin - 1) + 1};
  }
  STRATA_HOST_DEVICE constexpr bool has_work(long long u) const { return unit_end(u) > unit_begin(u); }

  /// Claims the next unit for a block on chiplet `chiplet` (one thread calls this); -1 when none is
  /// left. Own chiplet first, then the others, nearest first.
  STRATA_HOST_DEVICE long long claim(int chiplet) const {
    return detail::claim_nearest(
        counters_, chiplets_, chiplet, [&](int) { return (long long)per_chiplet_; },
        [&](int c) { return (long long)c * per_chiplet_; });
  }

  /// The block-wide form: thread 0 claims, every thread of the block gets the unit (or -1).
  template <class Ctx>
  STRATA_HOST_DEVICE long long next(Ctx& ctx, shared_storage& s) const {
    return detail::from_first_thread(ctx, s.unit, [&] { return claim(ctx.chiplet().index()); });
  }

  /// Publishes unit u's partial: every thread's stores before this call become visible to the
  /// threads that wait_for(u). Called by the whole block.
  template <class Ctx>
  STRATA_HOST_DEVICE void publish(Ctx& ctx, long long u) const {
    pass_turn(ctx, flags_ + u, 1u);
  }

  /// Waits until unit u has published its partial. Every thread acquires the flag itself, so the
  /// partial is visible to it.
  template <class Ctx>
  STRATA_HOST_DEVICE void wait_for(Ctx& ctx, long long u) const {
    wait_turn(ctx, flags_ + u, 1u);  // a flag is 0 until its unit publishes, then 1
  }

 private:
  // floor(n * j / U) with n = chiplet c's iterations: unit j's first local iteration.
  STRATA_HOST_DEVICE constexpr long long local_begin(int c, long long j) const {
    return tile_count(c) * iters_ * j / per_chiplet_;
  }

  long long tiles_;
  int iters_;
  int chiplets_;
  int per_chiplet_;
  unsigned* counters_;
  unsigned* flags_;
};

}  // namespace strata
