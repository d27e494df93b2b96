// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Every level of the hierarchy context on the emulator: each thread records where it is, and the
// records must cover grid x block exactly once with consistent block/warp/lane/cluster/chiplet ids.
#include <catch2/catch.hpp>

#include <set>

#include "support.hpp"

using namespace strata_test;
namespace arch = strata::arch;

namespace {

struct where {
  int block_x, block_y, block_z, thread_x, thread_y, thread_z;
  long long block_rank;
  int thread_rank, warp, warps, lane, cluster_rank, cluster_size, chiplet, chiplets;
  long long cluster_index, grid_size;
};

struct where_params {
  where* out;
};

template <class Target>
struct where_kernel {
  using target = Target;
  template <class Ctx>
  void operator()(Ctx& ctx, const where_params& p) const {
    static_assert(strata::kernel_context<Ctx>);
    static_assert(Ctx::warp_size == Target::warp_size);
    auto b = ctx.block();
    const long long slot = b.rank() * b.size() + b.thread_rank();
    where w{};
    w.block_x = b.index().x, w.block_y = b.index().y, w.block_z = b.index().z;
    w.thread_x = b.thread_index().x, w.thread_y = b.thread_index().y, w.thread_z = b.thread_index().z;
    w.block_rank = b.rank();
    w.thread_rank = b.thread_rank();
    w.warp = ctx.warp().index();
    w.warps = ctx.warp().count();
    w.lane = ctx.lane().index();
    w.cluster_rank = ctx.cluster().block_rank();
    w.cluster_size = ctx.cluster().size();
    w.cluster_index = ctx.cluster().index();
    w.chiplet = ctx.chiplet().index();
    w.chiplets = ctx.chiplet().count();
    w.grid_size = ctx.grid().size();
    p.out[slot] = w;
  }
};

template <class Target>
void check_where(strata::dims grid, strata::dims block, strata::dims cluster) {
  strata::stream s;
  const long long nb = grid.volume(), nt = block.volume();
  strata::device_buffer<where> out(static_cast<std::size_t>(nb * nt));
  std::vector<where> poison(out.size());
  std::memset(poison.data(), 0xFF, poison.size() * sizeof(where));
  strata::copy_to_device(s, out.data(), poison.data(), poison.size());
  strata::launch(s, {.grid = grid, .block = block, .cluster = cluster}, where_kernel<Target>{}, where_params{out.data()});
  const auto h = to_host(s, out);
  constexpr int W = Target::warp_size;
  std::set<std::tuple<int, int, int, int, int, int>> seen;
  for (long long slot = 0; slot < nb * nt; ++slot) {
    const where& w = h[slot];
    const long long br = slot / nt;
    const int tr = static_cast<int>(slot % nt);
    INFO(Target::name << " slot " << slot);
    REQUIRE(w.block_rank == br);
    REQUIRE(w.thread_rank == tr);
    REQUIRE(grid.linear(strata::dims(w.block_x, w.block_y, w.block_z)) == br);
    REQUIRE(block.linear(strata::dims(w.thread_x, w.thread_y, w.thread_z)) == tr);
    REQUIRE(w.warp == tr / W);
    REQUIRE(w.lane == tr % W);
    REQUIRE(w.warps == (nt + W - 1) / W);
    REQUIRE(w.grid_size == nb);
    REQUIRE(w.cluster_size == cluster.volume());
    const strata::dims in(w.block_x % cluster.x, w.block_y % cluster.y, w.block_z % cluster.z);
    REQUIRE(w.cluster_rank == cluster.linear(in));
    const strata::dims clusters(grid.x / cluster.x, grid.y / cluster.y, grid.z / cluster.z);
    REQUIRE(w.cluster_index ==
            clusters.linear(strata::dims(w.block_x / cluster.x, w.block_y / cluster.y, w.block_z / cluster.z)));
    REQUIRE(w.chiplets == Target::chiplets.count);
    REQUIRE(w.chiplet == arch::modelled_chiplet(Target::chiplets, br, nb));
    seen.insert({w.block_x, w.block_y, w.block_z, w.thread_x, w.thread_y, w.thread_z});
  }
  REQUIRE(seen.size() == static_cast<std::size_t>(nb * nt));
}

}  // namespace

TEST_CASE("every thread sees a consistent position at every level", "[hierarchy][emulator]") {
  check_where<arch::host>(strata::dims(3, 2, 2), strata::dims(5, 3, 2), strata::dims(1));
  check_where<arch::sm90a>(strata::dims(4, 2, 1), strata::dims(32, 2), strata::dims(2, 2, 1));
  check_where<arch::gfx942>(strata::dims(19, 1, 1), strata::dims(100), strata::dims(1));   // 8 XCDs, round robin
  check_where<arch::gfx950>(strata::dims(4, 5, 1), strata::dims(64, 2), strata::dims(1));
  check_where<arch::sm100a>(strata::dims(7), strata::dims(33), strata::dims(1));           // two dies, modelled
}

TEST_CASE("on gfx942 the emulated chiplet of block b is b % 8", "[hierarchy][chiplet]") {
  strata::stream s;
  const int blocks = 37;
  strata::device_buffer<where> out(blocks * 64);
  strata::launch(s, {.grid = blocks, .block = 64}, where_kernel<arch::gfx942>{}, where_params{out.data()});
  const auto h = to_host(s, out);
  for (int b = 0; b < blocks; ++b) CHECK(h[b * 64].chiplet == b % 8);
}
