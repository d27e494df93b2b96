// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/epilogue/tile_kernel.hpp -- an epilogue applied to a matrix tile by tile, the way a GEMM's
// last stage does it: each block walks output tiles (more tiles than blocks, so blocks loop), each
// thread holds a fragment of accumulators in registers, and the chain runs on every fragment element
// with its (row, col) in D before the store. The "accumulators" are read from a matrix here, standing
// in for the MMA that would have produced them. Used by epilogue_kernel_test.cpp on the emulator and
// by test/compile/epilogue_kernels.cu for every GPU target.
#pragma once

#include <cstdint>

#include "strata/epilogue/epilogue.hpp"
#include "strata/strata.hpp"

namespace strata_test {

template <class Chain, class Acc>
struct epilogue_tile_params {
  const Acc* acc;                   // (rows, cols) row-major, leading dimension cols
  typename Chain::output_type* d;   // (rows, cols) row-major, leading dimension ldd >= cols
  int rows, cols;
  std::int64_t ldd;
  typename Chain::params ep;        // the whole chain's params, by value
};

template <class Target, class Chain, class Acc, int TileM = 16, int TileN = 32, int Threads = 128>
struct epilogue_tile_kernel {
  using target = Target;
  using params = epilogue_tile_params<Chain, Acc>;
  static constexpr const char* name = "epilogue_tile_kernel";
  static constexpr int max_threads_per_block = Threads;
  static_assert(TileM * TileN % Threads == 0,
                "epilogue_tile_kernel: a tile must split evenly into the fragments of Threads threads");
  static constexpr int fragment = TileM * TileN / Threads;  // accumulators per thread per tile

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    auto block = ctx.block();
    const int t = block.thread_rank();
    const int tiles_n = (p.cols + TileN - 1) / TileN;
    const long long tiles = static_cast<long long>((p.rows + TileM - 1) / TileM) * tiles_n;
    for (long long tile = block.rank(); tile < tiles; tile += ctx.grid().size()) {
      const int row0 = static_cast<int>(tile / tiles_n) * TileM, col0 = static_cast<int>(tile % tiles_n) * TileN;
      // Element v of the fragment sits at linear index t + v * Threads of the (TileM, TileN) tile:
      // consecutive threads own consecutive columns, so loads and stores coalesce.
      Acc frag[fragment];  // (fragment)
      STRATA_UNROLL
      for (int v = 0; v < fragment; ++v) {
        const int i = t + v * Threads, row = row0 + i / TileN, col = col0 + i % TileN;
        frag[v] = row < p.rows && col < p.cols ? p.acc[static_cast<std::int64_t>(row) * p.cols + col] : Acc(0);
      }
      STRATA_UNROLL
      for (int v = 0; v < fragment; ++v) {
        const int i = t + v * Threads, row = row0 + i / TileN, col = col0 + i % TileN;
        if (row < p.rows && col < p.cols) p.d[row * p.ldd + col] = Chain::apply(frag[v], row, col, p.ep);
      }
    }
  }
};

}  // namespace strata_test
