// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Partitions: every element of a tile is owned by exactly one thread, for block-wide thread layouts,
// warp layouts at warp size 32 and 64 (block -> warp -> lane, two partition() calls), and thread
// shapes that do not divide the tile (the identity view and in_bounds mask the extra elements).
#include <catch2/catch.hpp>

#include <vector>

#include "strata/tensor/tensor.hpp"

using namespace strata;

// Partition an (M, N) row-major tile of a larger run-time matrix among the threads of `thr`; count
// how many threads own each element, using the predicate exactly as a kernel does.
template <class TileShape, class Thr>
void check_cover(const TileShape& ts, const Thr& thr, int rows, int cols) {
  const int M = get<0>(ts), N = get<1>(ts);
  std::vector<int> buf(static_cast<std::size_t>(rows) * cols, 0);
  const auto g = global_view(buf.data(), row_major(rows, cols));  // (rows, cols)
  for (int tm = 0; tm * M < rows; ++tm)
    for (int tn = 0; tn * N < cols; ++tn) {
      const auto tc = coord(tm, tn);
      const auto valid = shape(std::min(M, rows - tm * M), std::min(N, cols - tn * N));
      auto tile_view = local_tile(g, ts, tc);  // (M, N)
      for (int t = 0; t < static_cast<int>(size(thr)); ++t) {
        auto mine = partition(tile_view, thr, t);             // (ceil(M/TM), ceil(N/TN))
        auto crd = partition(make_identity(ts), thr, t);      // same shape -> (m, n) in the tile
        REQUIRE(static_cast<int>(size(mine)) == static_cast<int>(size(crd)));
        for (int i = 0; i < static_cast<int>(size(mine)); ++i)
          if (in_bounds(crd[i], valid)) {
            // the coordinate view and the data view agree on which element this is
            REQUIRE(&mine[i] == &g(tm * M + get<0>(crd[i]), tn * N + get<1>(crd[i])));
            ++mine[i];
          }
      }
    }
  for (std::size_t i = 0; i < buf.size(); ++i) {
    INFO("element " << i / cols << "," << i % cols << " of " << rows << " x " << cols);
    REQUIRE(buf[i] == 1);
  }
}

TEST_CASE("partition covers every element exactly once", "[tensor][partition]") {
  for (auto [r, c] : {std::pair{32, 64}, {33, 65}, {1, 1}, {70, 9}}) {
    check_cover(shape(c_<32>, c_<64>), row_major(c_<8>, c_<32>), r, c);    // 256 threads along rows
    check_cover(shape(c_<32>, c_<64>), column_major(c_<8>, c_<32>), r, c); // the same, numbered down columns
    check_cover(shape(c_<32>, c_<64>), row_major(c_<4>, c_<64>), r, c);    // one wavefront of 64 per row group
    check_cover(shape(c_<32>, c_<64>), row_major(c_<6>, c_<16>), r, c);    // 96 threads: 6 does not divide 32
    check_cover(shape(c_<32>, c_<64>), row_major(c_<5>, c_<7>), r, c);     // 35 threads: divides neither
    check_cover(shape(16, 24), row_major(3, 5), r, c);                     // everything at run time
  }
}

// Block tile -> warps -> lanes: a warp layout picks the warp's sub-tile, a lane layout the lane's
// elements inside it. The union over (warp, lane) is every element once.
template <int WarpSize, class WarpLayout, class LaneLayout>
void check_hierarchy(WarpLayout warps, LaneLayout lanes) {
  constexpr int M = 64, N = 64;
  static_assert(decltype(size(LaneLayout{}))::value == WarpSize);
  std::vector<int> buf(M * N, 0);
  const auto blk = shared_view(buf.data(), row_major(c_<M>, c_<N>));  // (M, N)
  const int wm = get<0>(warps.shape()), wn = get<1>(warps.shape());
  for (int w = 0; w < static_cast<int>(size(warps)); ++w) {
    // warp w's sub-tile: the warp grid tiles the block tile into (M / wm, N / wn) blocks
    const auto wc = thread_coord(warps, w);
    auto warp_tile = local_tile(blk, shape(c_<M>, c_<N>) , coord(0, 0));
    auto sub = local_tile(warp_tile, shape(M / wm, N / wn), wc);  // (M/wm, N/wn)
    for (int l = 0; l < WarpSize; ++l) {
      auto mine = partition(sub, lanes, l);
      for (int i = 0; i < static_cast<int>(size(mine)); ++i) ++mine[i];
    }
  }
  for (int v : buf) REQUIRE(v == 1);
}

TEST_CASE("block -> warp -> lane partitions at warp size 32 and 64", "[tensor][partition]") {
  check_hierarchy<32>(row_major(c_<2>, c_<4>), row_major(c_<4>, c_<8>));   // 8 warps of 32 (sm80)
  check_hierarchy<32>(column_major(c_<4>, c_<2>), column_major(c_<8>, c_<4>));
  check_hierarchy<64>(row_major(c_<2>, c_<2>), row_major(c_<8>, c_<8>));   // 4 wavefronts of 64 (gfx942)
  check_hierarchy<64>(row_major(c_<1>, c_<4>), column_major(c_<16>, c_<4>));
}

TEST_CASE("thread_coord inverts a thread layout", "[tensor][partition]") {
  const auto thr = make_layout(shape(c_<4>, c_<8>, c_<2>), stride(c_<2>, c_<8>, c_<1>));
  for (int t = 0; t < 64; ++t) REQUIRE(static_cast<int>(thr(thread_coord(thr, t))) == t);
}
