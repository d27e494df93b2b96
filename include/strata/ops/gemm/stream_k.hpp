// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/gemm/stream_k.hpp -- stream-K GEMM: a persistent grid that divides the K steps of all
// output tiles evenly among its blocks, with chiplet-local fix-ups (strata/hierarchy/stream_k.hpp).
//
//   using K  = strata::ops::gemm::kernel<...>;                 // any gemm::kernel instantiation
//   using SK = strata::ops::gemm::stream_k_kernel<K>;
//   auto base = K::make_params(problem, a, b, d, ep);            // split 1
//   const int units = SK::units_per_chiplet_for(blocks);         // blocks: resident blocks of the GPU
//   std::size_t bytes = SK::workspace_bytes(units);              // zero the first SK::zeroed_bytes(units)
//   auto p = SK::make_params(base, units, workspace);
//   strata::launch(stream, SK::launch_shape_of(p), SK{}, p);     // a cooperative launch
//
// When it pays: a problem with few output tiles and a long K (a 3-wave grid whose last wave is a
// quarter full runs at ~75% of the machine under data-parallel tiling), without split-K's extra
// launch or its batch x M x N x splits workspace. Each unit of work runs the GEMM kernel's own
// mainloop (kernel::accumulate) over its K steps; whole tiles go straight through the epilogue.
//
// Partials are stored in fragment order (value v of thread t at [unit][v][t]), so stores and loads
// are contiguous across the block and need no coordinates; the fix-up block has the same thread
// mapping. Batch entries are tiles too: tile = batch * tiles_per_entry + tile_in_entry.
#pragma once

#include <cstddef>

#include "strata/hierarchy/stream_k.hpp"
#include "strata/ops/gemm/kernel.hpp"

namespace strata::ops::gemm {

template <class K>
struct stream_k_kernel {
  using base = K;
  using target = typename K::target;
  using acc_type = typename K::acc_type;
  using accumulator = typename K::warp_tile::accumulator;
  static constexpr const char* name = "strata::ops::gemm::stream_k_kernel";
  static constexpr int threads = K::threads;
  static constexpr int max_threads_per_block = threads;
  static constexpr int min_waves_per_eu = K::min_waves_per_eu;  // HIP: as gemm::kernel (MFMA accumulators in VGPRs)
  // CUDA occupancy: up to 255 registers per thread (2 blocks of 128 threads), not gemm::kernel's 128:
  // the fix-up state comes on top of the mainloop's, and under the 128 cap the tf32 64 x 64 tile
  // spilled 8 bytes on sm_90a (nvcc 13). The 256-thread tiles state none, as in gemm::kernel.
  static constexpr int min_blocks_per_multiprocessor = threads >= 256 ? 0 : 65536 / (threads * 255);
  static constexpr int chiplets = target::chiplets.count;
  /// Accumulator values one thread holds for one tile.
  static constexpr int values_per_thread = K::warp_tile::atoms_m * K::warp_tile::atoms_n * K::atom::c_values;

  // The mainloop's stages first, at offset 0, where K::accumulate finds them.
  struct shared_storage {
    typename K::shared_storage main;
    stream_k_schedule::shared_storage claim;
  };

  struct params {
    typename K::params gemm;  // split 1, mode none
    int units_per_chiplet = 1;
    unsigned* sync = nullptr;       // stream_k_schedule workspace (zero before the launch)
    acc_type* partials = nullptr;   // units x values_per_thread x threads
  };

  /// Work units per chiplet for a grid of `blocks` resident blocks (one unit per block).
  static constexpr int units_per_chiplet_for(int blocks) { return blocks < chiplets ? 1 : (blocks + chiplets - 1) / chiplets; }

  /// Bytes the launch must find zeroed at the start of its workspace (counters and flags).
  static constexpr std::size_t zeroed_bytes(int units_per_chiplet) {
    const std::size_t b = std::size_t(stream_k_schedule::workspace_elements(chiplets, units_per_chiplet)) * sizeof(unsigned);
    return (b + 255) / 256 * 256;
  }
  /// Workspace bytes: the zeroed counters and flags, then one tile of partials per unit.
  static constexpr std::size_t workspace_bytes(int units_per_chiplet) {
    return zeroed_bytes(units_per_chiplet) +
           std::size_t(chiplets) * std::size_t(units_per_chiplet < 1 ? 1 : units_per_chiplet) * values_per_thread *
               threads * sizeof(acc_type);
  }

  static params make_params(const typename K::params& g, int units_per_chiplet, void* workspace) {
    params p{};
    p.gemm = g;
    p.gemm.splits = 1;
    p.gemm.mode = split_mode::none;
    p.units_per_chiplet = units_per_chiplet < 1 ? 1 : units_per_chiplet;
    p.sync = static_cast<unsigned*>(workspace);
    p.partials = reinterpret_cast<acc_type*>(static_cast<unsigned char*>(workspace) + zeroed_bytes(p.units_per_chiplet));
    return p;
  }

  /// One block per work unit, all resident (cooperative: the fix-up waits on other blocks).
  static launch_shape launch_shape_of(const params& p) {
    return launch_shape{.grid = dims(int(chiplets * p.units_per_chiplet)), .block = dims(threads), .cooperative = true};
  }

  STRATA_HOST_DEVICE static stream_k_schedule schedule_of(const params& p) {
    const long long tiles = p.gemm.size.m > 0 && p.gemm.size.n > 0 ? p.gemm.tiles * p.gemm.size.batch : 0;
    // K = 0 still has one (empty) step per tile, so every tile gets its epilogue.
    return stream_k_schedule(tiles, p.gemm.k_tiles > 0 ? p.gemm.k_tiles : 1, chiplets, p.units_per_chiplet, p.sync);
  }

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    K::atom::template require_target<typename Ctx::target>();
    const stream_k_schedule sched = schedule_of(p);
    auto& s = ctx.template shared<shared_storage>();
    const K k{};
    const int tid = ctx.block().thread_rank();
    for (long long u = sched.next(ctx, s.claim); u >= 0; u = sched.next(ctx, s.claim)) {
      sched.for_each_segment(u, [&](const stream_k_schedule::segment& seg) {
        const int batch = int(seg.tile / p.gemm.tiles);
        const order::tile t = p.gemm.order(seg.tile - (long long)batch * p.gemm.tiles);
        const int k_end = seg.k_end < p.gemm.k_tiles ? seg.k_end : p.gemm.k_tiles;
        accumulator acc;
        ctx.block().sync();  // the previous segment's warps are done with the shared stages
        k.accumulate(ctx, p.gemm, t, batch, seg.k_begin, k_end, acc);
        if (!seg.ends_tile) {  // a unit's last segment: hand the partial to the tile's finisher
          store_partial(acc, p.partials + std::size_t(u) * values_per_thread * threads, tid);
          sched.publish(ctx, u);
          return;
        }
        if (!seg.starts_tile) {  // finish the tile: earlier units' partials in unit order, then ours
          const auto from = sched.contributors(seg.tile, seg.k_begin);
          accumulator sum;
          sum.fill(acc_type(0));
          for (long long v = from.first; v < from.last; ++v) {
            if (!sched.has_work(v)) continue;
            sched.wait_for(ctx, v);
            add_partial(sum, p.partials + std::size_t(v) * values_per_thread * threads, tid);
          }
          add(sum, acc);
          k.store_tile(ctx, p.gemm, t, batch, sum);
          return;
        }
        k.store_tile(ctx, p.gemm, t, batch, acc);
      });
    }
  }

 private:
  template <class F>
  STRATA_HOST_DEVICE static void for_each_value(F&& f) {
    int n = 0;
    STRATA_UNROLL
    for (int i = 0; i < K::warp_tile::atoms_m; ++i)
      STRATA_UNROLL
      for (int j = 0; j < K::warp_tile::atoms_n; ++j)
        STRATA_UNROLL
        for (int v = 0; v < K::atom::c_values; ++v) f(i, j, v, n++);
  }
  STRATA_HOST_DEVICE static void store_partial(const accumulator& acc, acc_type* slot, int tid) {
    for_each_value([&](int i, int j, int v, int n) { slot[std::size_t(n) * threads + tid] = acc.f[i][j].v[v]; });
  }
  STRATA_HOST_DEVICE static void add_partial(accumulator& sum, const acc_type* slot, int tid) {
    for_each_value([&](int i, int j, int v, int n) {
      sum.f[i][j].v[v] = acc_type(sum.f[i][j].v[v] + slot[std::size_t(n) * threads + tid]);
    });
  }
  STRATA_HOST_DEVICE static void add(accumulator& sum, const accumulator& acc) {
    for_each_value([&](int i, int j, int v, int) { sum.f[i][j].v[v] = acc_type(sum.f[i][j].v[v] + acc.f[i][j].v[v]); });
  }
};

}  // namespace strata::ops::gemm
