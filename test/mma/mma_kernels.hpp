// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/mma/mma_kernels.hpp -- kernels and host checks shared by the MMA tests (and by
// test/compile/mma_kernels.cu, which builds the same kernels for every GPU target).
//
//   atom_kernel<Target, Atom, Lanes>   each warp loads one A, B, C tile into fragments with the atom's
//                                      maps (lanes permuted by Lanes: the "wrong layout" test), runs
//                                      one atom and stores D with c_coord
//   tile_kernel<Target, Tile, Warps>   C = A * B with warp_tile: each warp one TileM x TileN tile,
//                                      A row- or column-major, any matrix size (partial tiles)
#pragma once

#include <cstdint>

#include "strata/mma/mma.hpp"
#include "strata/strata.hpp"

namespace strata_test {

/// Lane permutations a kernel may (wrongly) use when computing fragment positions.
enum class lane_map {
  identity,
  swap_group_thread,  // NVIDIA: lane = 4*g + t read as 4*t' + g' (lane/4 and lane%4 swapped)
  swap_halves,        // AMD: the two (or four) k-groups of lanes read each other's rows
};

STRATA_HOST_DEVICE constexpr int map_lane(lane_map m, int lane, int warp_size) {
  switch (m) {
    case lane_map::swap_group_thread: return (lane % 4) * (warp_size / 4) + lane / 4;
    case lane_map::swap_halves: return (lane + warp_size / 2) % warp_size;
    default: return lane;
  }
}

template <class Atom>
struct atom_params {
  const typename Atom::a_type* a;  // (instances, M, K) row-major
  const typename Atom::b_type* b;  // (instances, K, N) row-major
  const typename Atom::c_type* c;  // (instances, M, N) row-major
  typename Atom::c_type* d;        // (instances, M, N) row-major
};

template <class Target, class Atom, lane_map Lanes = lane_map::identity>
struct atom_kernel {
  using target = Target;
  static constexpr const char* name = "atom_kernel";

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const atom_params<Atom>& p) const {
    Atom::template require_target<Target>();
    constexpr int M = Atom::M, N = Atom::N, K = Atom::K;
    const auto warp = ctx.warp();
    const long long instance = ctx.block().rank() * warp.count() + warp.index();
    const int lane = ctx.lane().index();
    const int load_lane = map_lane(Lanes, lane, Ctx::warp_size);
    const auto* a = p.a + instance * M * K;
    const auto* b = p.b + instance * K * N;
    const auto* c = p.c + instance * M * N;
    auto* d = p.d + instance * M * N;

    typename Atom::a_fragment fa;
    typename Atom::b_fragment fb;
    typename Atom::c_fragment fc;
    for (int v = 0; v < Atom::a_values; ++v) {
      const auto x = Atom::a_coord(load_lane, v);
      fa[v] = a[x.row * K + x.col];
    }
    for (int v = 0; v < Atom::b_values; ++v) {
      const auto x = Atom::b_coord(lane, v);
      fb[v] = b[x.row * N + x.col];
    }
    for (int v = 0; v < Atom::c_values; ++v) {
      const auto x = Atom::c_coord(lane, v);
      fc[v] = c[x.row * N + x.col];
    }
    strata::mma::mma<Atom>(warp, fa, fb, fc);
    for (int v = 0; v < Atom::c_values; ++v) {
      const auto x = Atom::c_coord(lane, v);
      d[x.row * N + x.col] = fc[v];
    }
  }
};

template <class Atom>
struct tile_params {
  strata::mma::matrix_ref<const typename Atom::a_type> a;  // M x K
  strata::mma::matrix_ref<const typename Atom::b_type> b;  // K x N
  strata::mma::matrix_ref<typename Atom::c_type> c;        // M x N
};

/// Block = Warps warps side by side along N; grid.x over N, grid.y over M.
template <class Target, class Tile, int Warps = 2>
struct tile_kernel {
  using target = Target;
  static constexpr const char* name = "tile_kernel";
  static constexpr int threads = Warps * Target::warp_size;

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const tile_params<typename Tile::atom>& p) const {
    const auto blk = ctx.block().index();
    const int m0 = blk.y * Tile::tile_m;
    const int n0 = (blk.x * Warps + ctx.warp().index()) * Tile::tile_n;
    Tile::run(ctx, p.a, p.b, p.c, m0, n0);
  }
};

}  // namespace strata_test
