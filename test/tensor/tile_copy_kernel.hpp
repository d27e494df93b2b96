// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/tensor/tile_copy_kernel.hpp -- out = in, tile by tile through a swizzled shared-memory tile, with
// every index computed by the tensor layer: local_tile picks the block's tile, partition hands each
// thread its elements, the identity view and in_bounds mask the edges of matrices that are not
// multiples of the tile, and thread counts that do not divide the tile. The tile is loaded with one
// thread arrangement (threads along rows) and stored with another (threads down columns), so each
// thread writes out elements that other threads staged: the block barrier and the swizzle's
// bijectivity are both needed for the result to be right.
#pragma once

#include "strata/strata.hpp"
#include "strata/tensor/tensor.hpp"

namespace strata_test {

struct tile_copy_params {
  const float* in;  // rows x cols, row-major
  float* out;       // rows x cols, row-major
  int rows, cols;
};

template <class Target, int BM = 32, int BN = 64, int TM = 8, int TN = 32>
struct tensor_tile_copy_kernel {
  using target = Target;
  static constexpr const char* name = "tensor_tile_copy_kernel";
  static constexpr int threads = TM * TN;
  // 128-byte rows of fp32 read a column at a time below: swizzle_for spreads them over the banks.
  using smem_layout = strata::swizzled_layout<strata::swizzle_for<float, BN * 4>,
                                              decltype(strata::row_major(strata::c_<BM>, strata::c_<BN>))>;
  struct shared_storage {
    float tile[strata::cosize(smem_layout{})];
  };

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const tile_copy_params& p) const {
    using namespace strata;
    auto block = ctx.block();
    auto& smem = ctx.template shared<shared_storage>();
    const int t = block.thread_rank();
    const auto tc = coord(block.index().y, block.index().x);  // this block's tile
    const auto blk = shape(c_<BM>, c_<BN>);

    auto g_in = local_tile(global_view(p.in, row_major(p.rows, p.cols)), blk, tc);     // (BM, BN)
    auto g_out = local_tile(global_view(p.out, row_major(p.rows, p.cols)), blk, tc);   // (BM, BN)
    auto s_tile = shared_view(smem.tile, smem_layout{});                                // (BM, BN)
    // The part of this tile inside the problem: edge tiles are cut short by rows / cols.
    const int m0 = block.index().y * BM, n0 = block.index().x * BN;
    const auto valid = shape(min_of(BM, p.rows - m0), min_of(BN, p.cols - n0));

    // Stage: threads arranged TM x TN along rows (consecutive threads read consecutive addresses).
    {
      const auto thr = row_major(c_<TM>, c_<TN>);
      auto src = partition(g_in, thr, t);                 // (ceil(BM/TM), ceil(BN/TN))
      auto dst = partition(s_tile, thr, t);               // (ceil(BM/TM), ceil(BN/TN))
      auto crd = partition(make_identity(blk), thr, t);   // (ceil(BM/TM), ceil(BN/TN)) -> (m, n)
      auto frag = make_register_tensor_like<float>(src);  // (ceil(BM/TM), ceil(BN/TN)) in registers
      constexpr int n = decltype(src.size())::value;  // elements per thread, static
      STRATA_UNROLL
      for (int i = 0; i < n; ++i) frag[i] = in_bounds(crd[i], valid) ? src[i] : 0.f;
      STRATA_UNROLL
      for (int i = 0; i < n; ++i)
        if (in_bounds(crd[i], valid)) dst[i] = frag[i];
    }
    block.sync();
    // Write back: threads arranged TM x TN down columns, so each reads elements other threads staged.
    {
      const auto thr = column_major(c_<TM>, c_<TN>);
      auto src = partition(s_tile, thr, t);               // (ceil(BM/TM), ceil(BN/TN))
      auto dst = partition(g_out, thr, t);                // (ceil(BM/TM), ceil(BN/TN))
      auto crd = partition(make_identity(blk), thr, t);   // (ceil(BM/TM), ceil(BN/TN)) -> (m, n)
      constexpr int n = decltype(src.size())::value;
      STRATA_UNROLL
      for (int i = 0; i < n; ++i)
        if (in_bounds(crd[i], valid)) dst[i] = src[i];
    }
  }
};

}  // namespace strata_test
