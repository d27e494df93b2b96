// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/hierarchy/turn.hpp -- blocks that write the same memory in a fixed order take turns on one
// counter.
//
// Serial split-K (each split adds its partial into the tile in split order), stream-K's fix-ups (a
// unit publishes its partial, the tile's owner waits for it) and the deterministic dQ of the
// attention backward (key tiles add into a query tile's dQ in key-tile order) all follow one
// protocol: the counter holds the number of the turn now running; a block waits until it reads its
// own number, does its plain (non-atomic) writes, and hands the turn on by storing the next number.
// Ordering: every thread acquires the counter itself, so the previous holder's writes are visible
// to each of them; before the hand-on the whole block syncs, and thread 0 fences and releases, so
// every thread's writes are ordered before the next holder's reads.
//
// The blocks taking turns must be resident at the same time as the ones whose turns come earlier
// (cooperative launches, or grids whose earlier turns belong to earlier-scheduled blocks), or the
// wait never ends.
#pragma once

#include "strata/arch/atomic.hpp"
#include "strata/config/config.hpp"

namespace strata {

/// Waits until `*counter == mine`. Called by every thread of the block.
template <class Ctx>
STRATA_HOST_DEVICE void wait_turn(Ctx& ctx, unsigned* counter, unsigned mine) {
  ctx.wait_until([&] { return atomic::load_acquire<atomic::scope::device>(counter) == mine; });
}

/// pass_turn for the part of a block that took the turn (the consumer warps of a warp-specialized
/// kernel): `sync_takers()` syncs exactly those threads (a named barrier), `leader` is true on one
/// of them. Called by every thread that took the turn.
template <class Ctx, class Sync>
STRATA_HOST_DEVICE void pass_turn(Ctx& ctx, unsigned* counter, unsigned next, const Sync& sync_takers, bool leader) {
  (void)ctx;
  sync_takers();
  if (leader) {
    atomic::fence<atomic::scope::device>();
    atomic::store_release<atomic::scope::device>(counter, next);
  }
}

/// Ends this block's turn: after every thread's writes, stores `next` (the next holder's number, or
/// the counter's starting value to leave it ready for the next launch). Called by every thread of
/// the block.
template <class Ctx>
STRATA_HOST_DEVICE void pass_turn(Ctx& ctx, unsigned* counter, unsigned next) {
  pass_turn(ctx, counter, next, [&] { ctx.block().sync(); }, ctx.block().thread_rank() == 0);
}

}  // namespace strata
