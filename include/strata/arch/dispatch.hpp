// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/dispatch.hpp -- the dispatch model as pure, invertible functions.
//
// A dispatch model predicts on which chiplet the hardware runs the block with linear id `block` of an
// ordinary (non-persistent) grid of `blocks` blocks, and which one of that chiplet's blocks it is:
//
//   locate(topo, block, blocks)        -> {chiplet c, rank k}   "block is the k-th block of chiplet c"
//   block_of(topo, c, k, blocks)       -> block                 the inverse of locate
//   blocks_on(topo, c, blocks)         -> n_c                   how many blocks chiplet c receives
//   first_block_of_range(topo, c, blocks) -> sum of n_c' for c' < c (where c's range starts once the
//                                         blocks are renumbered chiplet by chiplet)
//
// The models (arch::dispatch_model), with X = topo.count, q = blocks / X, r = blocks % X:
//   round_robin  c = block % X, k = block / X               (AMD SPX mode: workgroup i -> XCD i % 8)
//   contiguous   c owns [c*q + min(c, r), ... + n_c)          (balanced contiguous ranges; a guess for
//                                                            B200's two dies, marked experimental)
//   monolithic   c = 0, k = block
// In both chiplet models the first r chiplets receive q + 1 blocks and the others q, so every chiplet
// gets floor(blocks / X) or ceil(blocks / X) blocks.
//
// THE MODEL IS NOT A GUARANTEE. The round-robin rule comes from vendor statements and measurements (see
// docs/chiplets.md); it does not hold in CPX/DPX partition modes, for grids launched concurrently on
// several streams, or on future firmware. Tile orders use it to *place* work (a wrong guess only costs
// cache hits). Any protocol whose correctness relies on two blocks sharing an L2 (chiplet-scope
// synchronization without device fences, per-chiplet queues of a persistent kernel) must read where the
// block really is -- ctx.chiplet().index(), i.e. HW_REG_XCC_ID on gfx94x/gfx950 -- never this model.
//
// Everything here is constexpr and STRATA_HOST_DEVICE with no intrinsics (STYLE habit 2); property
// tests live in test/chiplet/.
#pragma once

#include "strata/arch/target.hpp"
#include "strata/config/config.hpp"

namespace strata::chiplet {

/// Where the dispatch model puts one block: the k-th block (`rank`) of chiplet `chiplet`.
struct placement {
  int chiplet = 0;
  long long rank = 0;
  friend constexpr bool operator==(const placement&, const placement&) = default;
};

namespace detail {
/// Chiplets that take part in the model: 1 for a monolithic model or a one-chiplet topology.
STRATA_HOST_DEVICE constexpr int model_count(const arch::chiplet_topology& t) {
  return (t.count <= 1 || t.dispatch == arch::dispatch_model::monolithic) ? 1 : t.count;
}
}  // namespace detail

/// Blocks the model gives chiplet `c` out of `blocks`: floor(blocks / X) plus one for the first
/// blocks % X chiplets (both chiplet models are balanced to within one block).
STRATA_HOST_DEVICE constexpr long long blocks_on(const arch::chiplet_topology& t, int c, long long blocks) {
  const int x = detail::model_count(t);
  if (x == 1) return c == 0 ? blocks : 0;
  return blocks / x + (c < blocks % x ? 1 : 0);
}

/// Number of blocks on chiplets 0..c-1: where chiplet c's range starts when blocks are renumbered
/// chiplet after chiplet. Closed form of the prefix sum of blocks_on().
STRATA_HOST_DEVICE constexpr long long first_block_of_range(const arch::chiplet_topology& t, int c,
                                                            long long blocks) {
  const int x = detail::model_count(t);
  if (x == 1) return c == 0 ? 0 : blocks;
  const long long q = blocks / x, r = blocks % x;
  return c * q + (c < r ? c : r);
}

/// The chiplet and rank the model predicts for `block` (0 <= block < blocks).
STRATA_HOST_DEVICE constexpr placement locate(const arch::chiplet_topology& t, long long block, long long blocks) {
  const int x = detail::model_count(t);
  if (x == 1) return {0, block};
  if (t.dispatch == arch::dispatch_model::round_robin) return {static_cast<int>(block % x), block / x};
  // contiguous: the first r chiplets own q + 1 blocks each, the rest q.
  const long long q = blocks / x, r = blocks % x;
  const long long big = r * (q + 1);  // blocks owned by the first r chiplets
  if (block < big) return {static_cast<int>(block / (q + 1)), block % (q + 1)};
  return {static_cast<int>(r + (block - big) / q), (block - big) % q};
}

/// The chiplet the model predicts for `block`.
STRATA_HOST_DEVICE constexpr int chiplet_of(const arch::chiplet_topology& t, long long block, long long blocks) {
  return locate(t, block, blocks).chiplet;
}

/// Inverse of locate(): the linear id of the k-th block of chiplet c (0 <= k < blocks_on(t, c, blocks)).
STRATA_HOST_DEVICE constexpr long long block_of(const arch::chiplet_topology& t, int c, long long k,
                                                long long blocks) {
  const int x = detail::model_count(t);
  if (x == 1) return k;
  if (t.dispatch == arch::dispatch_model::round_robin) return k * x + c;
  return first_block_of_range(t, c, blocks) + k;
}

}  // namespace strata::chiplet

namespace strata::arch {
/// The chiplet that the target's dispatch model predicts for the block with linear index `block` among
/// `blocks` blocks (what the emulator reports as ctx.chiplet().index()). A model, not a guarantee.
STRATA_HOST_DEVICE constexpr int modelled_chiplet(const chiplet_topology& t, long long block, long long blocks) {
  return chiplet::chiplet_of(t, block, blocks);
}
}  // namespace strata::arch
