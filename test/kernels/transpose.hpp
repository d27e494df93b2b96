// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/kernels/transpose.hpp -- out = in^T through a padded shared-memory tile. Shows 2D grid and block
// indices, a tile that is staged by one thread layout and read by another, and edge predication for
// matrices that are not multiples of the tile.
#pragma once

#include "strata/strata.hpp"

namespace strata_test {

struct transpose_params {
  const float* in;  // rows x cols, row-major
  float* out;       // cols x rows, row-major
  int rows, cols;
};

template <class Target, int Tile = 32, int RowsPerPass = 8>
struct transpose_kernel {
  using target = Target;
  static constexpr const char* name = "transpose_kernel";
  static_assert(Tile % RowsPerPass == 0, "transpose_kernel: Tile must be a multiple of RowsPerPass");

  struct shared_storage {
    float tile[Tile][Tile + 1];  // +1 column: rows of the tile fall in different banks when read by column
  };

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const transpose_params& p) const {
    auto block = ctx.block();
    auto& smem = ctx.template shared<shared_storage>();
    const strata::dims b = block.index(), t = block.thread_index();

    const int col0 = b.x * Tile, row0 = b.y * Tile;
    for (int r = t.y; r < Tile; r += RowsPerPass) {
      const int row = row0 + r, col = col0 + t.x;
      if (row < p.rows && col < p.cols) smem.tile[r][t.x] = p.in[static_cast<long long>(row) * p.cols + col];
    }
    block.sync();
    for (int r = t.y; r < Tile; r += RowsPerPass) {
      const int out_row = col0 + r, out_col = row0 + t.x;  // out is cols x rows
      if (out_row < p.cols && out_col < p.rows)
        p.out[static_cast<long long>(out_row) * p.rows + out_col] = smem.tile[t.x][r];
    }
  }
};

}  // namespace strata_test
