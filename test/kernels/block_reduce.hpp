// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/kernels/block_reduce.hpp -- sum of an array: grid-stride loads, warp tree reduction, one value
// per warp through shared memory, then the first warp reduces those. Shows: block/warp/lane indices,
// ctx.shared<T>(), block barriers, warp reductions, for warp size 32 and 64.
#pragma once

#include "strata/strata.hpp"

namespace strata_test {

struct reduce_params {
  const float* in;
  float* out;  // one partial sum per block
  long long n;
};

template <class Target, int Threads = 256>
struct block_reduce_kernel {
  using target = Target;
  static constexpr int warps = Threads / Target::warp_size;
  static_assert(Threads % Target::warp_size == 0, "block_reduce_kernel: Threads must be a multiple of the warp size");
  static_assert(warps <= Target::warp_size, "block_reduce_kernel: the first warp must be able to reduce one value per warp");
  static constexpr const char* name = "block_reduce_kernel";

  struct shared_storage {
    float warp_sums[warps];
  };

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const reduce_params& p) const {
    auto block = ctx.block();
    auto warp = ctx.warp();
    auto& smem = ctx.template shared<shared_storage>();

    float v = 0.f;
    const long long stride = static_cast<long long>(ctx.grid().size()) * block.size();
    for (long long i = block.rank() * block.size() + block.thread_rank(); i < p.n; i += stride) v += p.in[i];

    v = warp.sum(v);
    if (ctx.lane().index() == 0) smem.warp_sums[warp.index()] = v;
    block.sync();
    if (warp.index() == 0) {
      float w = ctx.lane().index() < warps ? smem.warp_sums[ctx.lane().index()] : 0.f;
      w = warp.sum(w);
      if (ctx.lane().index() == 0) p.out[block.rank()] = w;
    }
  }
};

}  // namespace strata_test
