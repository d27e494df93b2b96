// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/chiplet/persistent_kernels.hpp -- persistent kernels over the chiplet level, shared by the
// emulator tests and the compile checks.
#pragma once

#include "strata/hierarchy/chiplet_barrier.hpp"
#include "strata/hierarchy/persistent.hpp"
#include "strata/strata.hpp"

namespace strata_test {

struct persistent_params {
  long long tiles;
  unsigned long long* counters;  // persistent_tiles workspace
  unsigned* visits;              // [tiles] times each tile was processed
  int* chiplet_of_tile;          // [tiles] chiplet of the block that processed it
};

/// Every block loops over tiles until none are left; uneven work per tile makes blocks drift apart.
template <class Target>
struct persistent_kernel {
  using target = Target;
  static constexpr const char* name = "persistent_kernel";
  using shared_storage = strata::persistent_tiles::shared_storage;

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const persistent_params& p) const {
    auto& s = ctx.template shared<shared_storage>();
    const strata::persistent_tiles sched(p.tiles, ctx.chiplet().count(), p.counters);
    for (long long t = sched.next(ctx, s); t >= 0; t = sched.next(ctx, s)) {
      int v = ctx.lane().index();
      for (long long i = 0; i < t % 5; ++i) v = ctx.warp().shfl_xor(v, 1);  // uneven work
      if (ctx.block().thread_rank() == 0) {
        strata::atomic::add(p.visits + t, 1u + static_cast<unsigned>(v & 0));
        p.chiplet_of_tile[t] = ctx.chiplet().index();
      }
    }
  }
};

struct barrier_params {
  int rounds;
  unsigned* workspace;  // chiplet_barrier workspace
  int* data;            // [blocks][threads]
  unsigned* errors;
  bool use_barrier;     // false: the planted bug (no barrier between writing and reading)
};

/// Each round every thread writes its slot, the grid meets, every thread reads its neighbour block's
/// slot (which must hold this round's value), and the grid meets again before the next round.
template <class Target>
struct chiplet_barrier_kernel {
  using target = Target;
  static constexpr const char* name = "chiplet_barrier_kernel";
  using shared_storage = strata::chiplet_barrier::shared_storage;

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const barrier_params& p) const {
    auto& s = ctx.template shared<shared_storage>();
    auto block = ctx.block();
    const long long blocks = ctx.grid().size();
    const strata::chiplet_barrier bar(ctx.chiplet().count(), blocks, p.workspace);
    bar.init(ctx, s);
    const long long me = block.rank() * block.size() + block.thread_rank();
    const long long other = ((block.rank() + 1) % blocks) * block.size() + block.thread_rank();
    for (int r = 1; r <= p.rounds; ++r) {
      strata::atomic::store_release(p.data + me, r);
      if (p.use_barrier) bar.sync(ctx, s);
      if (strata::atomic::load_acquire(p.data + other) != r) strata::atomic::add(p.errors, 1u);
      if (p.use_barrier) bar.sync(ctx, s);
    }
  }
};

}  // namespace strata_test
