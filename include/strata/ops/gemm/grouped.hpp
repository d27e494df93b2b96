// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/gemm/grouped.hpp -- grouped GEMM: many problems of different shapes in one launch (the
// experts of a mixture-of-experts layer). D_g = epilogue(A_g (m_g x k_g) * B_g (k_g x n_g)) for each g.
//
//   std::vector<gemm::group_entry<bf16, bf16, bf16>> h = {...};      // host: shapes, pointers, lds
//   const long long tiles = gemm::grouped_kernel<K>::prepare(h);    // fills tile_begin (prefix sums)
//   copy h into device memory `problems`, then
//   auto p = gemm::grouped_kernel<K>::make_params(problems, h.size(), tiles, a_order, b_order, d_order, ep);
//   strata::launch(stream, gemm::grouped_kernel<K>::launch_shape_of(p), gemm::grouped_kernel<K>{}, p);
//
// Tile scheduler: one block per output tile of the whole group; block x finds its problem by binary
// search over the problems' tile_begin (in device memory, read by every thread of the block) and its
// tile inside the problem in row-major tile order; the block then runs the GEMM kernel's tile body
// (kernel::run_tile) on that problem. Layouts (A, B, D orders) and the epilogue are shared by the
// group; alpha_beta's C is each problem's own `c` (may be its `d`). No split-K inside a group.
#pragma once

#include <cstddef>
#include <vector>

#include "strata/ops/gemm/kernel.hpp"

namespace strata::ops::gemm {

/// One problem of a grouped launch, as stored in device memory.
template <class TA, class TB, class TD>
struct group_entry {
  int m = 0, n = 0, k = 0;
  const TA* a = nullptr;
  long long lda = 0;
  const TB* b = nullptr;
  long long ldb = 0;
  TD* d = nullptr;
  long long ldd = 0;
  const TD* c = nullptr;  // alpha_beta's C, in D's order (null when beta = 0)
  long long ldc = 0;
  long long tile_begin = 0;  // first group-wide tile of this problem (grouped_kernel::prepare)
};

namespace detail {
template <class Chain>
struct rebase_c;
template <class... Ops>
struct rebase_c<epilogue::chain<Ops...>> {
  template <class P, class T, std::size_t... I>
  STRATA_HOST_DEVICE static void apply(P& p, const epilogue::matrix_ref<T>& c, std::index_sequence<I...>) {
    (one<Ops, I>(p, c), ...);
  }
  template <class Op, std::size_t I, class P, class T>
  STRATA_HOST_DEVICE static void one(P& p, const epilogue::matrix_ref<T>& c) {
    if constexpr (std::is_same_v<Op, epilogue::alpha_beta<T>>) epilogue::get<I>(p).c = c;
  }
};
}  // namespace detail

/// The grouped form of a GEMM kernel K (any gemm::kernel instantiation, shipped or user-built).
template <class K>
struct grouped_kernel {
  using base = K;
  using target = typename K::target;
  using entry = group_entry<typename K::ta, typename K::tb, typename K::td>;
  using epilogue_type = typename K::epilogue_type;
  using shared_storage = typename K::shared_storage;
  static constexpr int threads = K::threads;
  static constexpr int max_threads_per_block = K::max_threads_per_block;
  static constexpr int min_waves_per_eu = K::min_waves_per_eu;  // HIP: as gemm::kernel (MFMA accumulators in VGPRs)
  // CUDA occupancy: the whole register file's share for 2 blocks of 128 threads (255 per thread), not
  // gemm::kernel's 128-register cap. The per-problem params this kernel builds stay live through the
  // mainloop: its 64 x 64 tensor-core tiles take 153-216 registers, and spill 8-116 bytes under the
  // 128 cap and, for int8, 8 bytes under ptxas's own choice (nvcc 13, sm_80).
  static constexpr int min_blocks_per_multiprocessor = threads >= 256 ? 0 : 65536 / (threads * 255);
  static constexpr const char* name = "strata::ops::gemm::grouped_kernel";

  struct params {
    const entry* problems = nullptr;  // device memory, `count` entries
    int count = 0;
    long long tiles = 0;  // total tiles of the group
    layout a_order = layout::row_major, b_order = layout::row_major, d_order = layout::row_major;
    typename epilogue_type::params epilogue;
  };

  STRATA_HOST_DEVICE static constexpr long long tiles_of(int m, int n) {
    return m <= 0 || n <= 0 ? 0 : (long long)((m + K::tiles.tile_m - 1) / K::tiles.tile_m) * ((n + K::tiles.tile_n - 1) / K::tiles.tile_n);
  }

  /// Fills each entry's tile_begin; returns the group's total tiles (the grid).
  static long long prepare(std::vector<entry>& problems) {
    long long t = 0;
    for (auto& e : problems) {
      e.tile_begin = t;
      t += tiles_of(e.m, e.n);
    }
    return t;
  }

  static params make_params(const entry* problems, int count, long long tiles, layout a, layout b, layout d,
                            const typename epilogue_type::params& ep) {
    return params{problems, count, tiles, a, b, d, ep};
  }

  static launch_shape launch_shape_of(const params& p) {
    return launch_shape{.grid = dims(int(p.tiles > 0 ? p.tiles : 1)), .block = dims(threads)};
  }

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    K::atom::template require_target<typename Ctx::target>();
    const long long x = ctx.block().index().x;
    if (x >= p.tiles || p.count <= 0) return;
    // The last problem whose first tile is <= x (problems without tiles are skipped by the search).
    int lo = 0, hi = p.count - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (p.problems[mid].tile_begin <= x) lo = mid;
      else hi = mid - 1;
    }
    const entry e = p.problems[lo];
    const long long local = x - e.tile_begin;
    const long long tiles_n = (e.n + K::tiles.tile_n - 1) / K::tiles.tile_n;
    const order::tile t{local / tiles_n, local % tiles_n};

    typename K::params kp{};
    kp.size = problem{e.m, e.n, e.k, 1};
    kp.a = operand<const typename K::ta>{e.a, e.lda, p.a_order, 0};
    kp.b = operand<const typename K::tb>{e.b, e.ldb, p.b_order, 0};
    kp.d = operand<typename K::td>{e.d, e.ldd, p.d_order, 0};
    kp.d_row_pairs = K::row_pairs_aligned(kp.d);
    kp.tiles = tiles_of(e.m, e.n);
    kp.splits = 1;
    kp.k_tiles = (e.k + K::tiles.tile_k - 1) / K::tiles.tile_k;
    kp.mode = split_mode::none;
    kp.epilogue = p.epilogue;
    const bool row = p.d_order == layout::row_major;
    detail::rebase_c<epilogue_type>::apply(
        kp.epilogue, epilogue::matrix_ref<typename K::td>{e.c, row ? e.ldc : 1, row ? 1 : e.ldc},
        std::make_index_sequence<epilogue_type::size>{});
    K{}.run_tile(ctx, kp, t, 0, 0, 0);
  }
};

}  // namespace strata::ops::gemm
