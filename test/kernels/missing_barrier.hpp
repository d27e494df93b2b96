// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/kernels/missing_barrier.hpp -- kernels with barrier bugs that a GPU would hang on (or
// silently mis-execute). The emulator must reject each with an error naming the kernel, the block
// and the threads.
#pragma once

#include "strata/strata.hpp"

namespace strata_test {

struct bug_params {
  int* out;
};

/// Thread 0 returns before the barrier: the other threads wait for an arrival that never comes.
template <class Target>
struct early_exit_kernel {
  using target = Target;
  static constexpr const char* name = "early_exit_kernel";
  struct shared_storage {
    int v[1024];
  };
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const bug_params& p) const {
    auto block = ctx.block();
    const int t = block.thread_rank();
    if (t == 0) return;  // the bug: this thread never arrives
    ctx.template shared<shared_storage>().v[t] = t;
    block.sync();
    p.out[t] = ctx.template shared<shared_storage>().v[block.size() - t];
  }
};

/// Threads of one block wait at two different barriers (divergent __syncthreads).
template <class Target>
struct divergent_barrier_kernel {
  using target = Target;
  static constexpr const char* name = "divergent_barrier_kernel";
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const bug_params& p) const {
    auto block = ctx.block();
    const int t = block.thread_rank();
    if (t % 2 == 0) {
      p.out[t] = 1;
      block.sync();
    } else {
      p.out[t] = 2;
      block.sync();
    }
  }
};

/// Half a warp reaches a warp collective the other half skips.
template <class Target>
struct divergent_shuffle_kernel {
  using target = Target;
  static constexpr const char* name = "divergent_shuffle_kernel";
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const bug_params& p) const {
    const int lane = ctx.lane().index();
    int v = lane;
    if (lane < Ctx::warp_size / 2) v = ctx.warp().shfl_xor(v, 1);
    p.out[ctx.block().thread_rank()] = v;
  }
};

}  // namespace strata_test
