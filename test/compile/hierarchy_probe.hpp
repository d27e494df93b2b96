// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/hierarchy_probe.hpp -- a kernel that touches every member of the hierarchy context,
// so the compile tests build all of them for every target (the test kernels use only a subset),
// and so that the hallmark instructions of each level (chiplet id, cluster barrier, distributed
// shared memory, ballot, multi-word shuffles) appear in the generated code. Written against the
// context API only, like every kernel.
#pragma once

#include "strata/strata.hpp"

namespace strata_test {

struct probe_params {
  long long* out;  // per thread: 32 values
};

/// A 12-byte value: the shuffles split it into three 32-bit words.
struct probe_triple {
  int a;
  float b;
  short c;
};

template <class Target>
struct hierarchy_probe_kernel {
  using target = Target;
  static constexpr const char* name = "hierarchy_probe_kernel";
  static constexpr int max_threads_per_block = 256;  // exercises the optional launch-bounds trait

  struct shared_storage {
    int flags[256];
  };

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const probe_params& p) const {
    static_assert(strata::kernel_context<Ctx>);
    static_assert(Ctx::warp_size == Target::warp_size);
    auto grid = ctx.grid();
    auto chiplet = ctx.chiplet();
    auto cluster = ctx.cluster();
    auto block = ctx.block();
    auto warp = ctx.warp();
    const int t = block.thread_rank();
    long long* o = p.out + (block.rank() * block.size() + t) * 32;

    auto& smem = ctx.template shared<shared_storage>();
    double* dyn = ctx.template dynamic_shared<double>();
    smem.flags[t] = t;
    dyn[t] = t * 0.5;
    cluster.sync();
    const shared_storage& remote = cluster.shared_of(smem, (cluster.block_rank() + 1) % cluster.size());

    o[0] = grid.shape().x + grid.shape().y + grid.shape().z;
    o[1] = grid.size();
    o[2] = chiplet.index();
    o[3] = chiplet.count();
    o[4] = cluster.index();
    o[5] = cluster.count();
    o[6] = cluster.shape().x * 100 + cluster.shape().y * 10 + cluster.shape().z;
    o[7] = cluster.size();
    o[8] = cluster.block_rank();
    o[9] = block.index().x + block.index().y + block.index().z;
    o[10] = block.shape().x * block.shape().y * block.shape().z;
    o[11] = block.thread_index().x + block.thread_index().y + block.thread_index().z;
    o[12] = warp.index();
    o[13] = warp.count();
    o[14] = warp.size();
    o[15] = ctx.lane().index();
    o[16] = remote.flags[(t + 1) % block.size()];

    const probe_triple mine{t, t * 0.25f, static_cast<short>(t)};
    const probe_triple from0 = warp.shfl(mine, 0);
    const double dx = warp.shfl_xor(dyn[t], 1);
    const long long up = warp.shfl_up(static_cast<long long>(t), 1);
    const probe_triple down = warp.shfl_down(mine, 2);
    o[17] = from0.a + down.c;
    o[18] = static_cast<long long>(dx * 4);
    o[19] = up;
    o[20] = static_cast<long long>(warp.ballot(t % 3 == 0));
    o[21] = warp.any(t == 5);
    o[22] = warp.all(t >= 0);
    o[23] = warp.reduce(t, strata::plus{});
    o[24] = static_cast<long long>(warp.sum(static_cast<double>(t)));
    o[25] = warp.max(t);
    o[26] = warp.min(static_cast<long long>(t));
    warp.sync();
    block.sync();
    cluster.sync();  // keeps this block's shared memory alive until the neighbour has read it
  }
};

}  // namespace strata_test
