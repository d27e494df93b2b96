// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/gemm/sm90_kernel.hpp -- the Hopper GEMM: warp-specialized, TMA loads onto mbarriers, wgmma
// from shared memory (sm_90a). D = epilogue(A * B) for one pair of operand orders (operand_orders;
// A row-major x B column-major, both K-major, is y = x W^T with W stored (out, in), PyTorch's Linear;
// a_row_b_row is x W with W stored (in, out)), f16 or bf16 inputs, f32 accumulators; OCP fp8 (e4m3,
// e5m2) A row-major x B column-major on fp8 wgmma (m64nNk32, 128 K per stage), the dequantization
// scales in the epilogue chain.
//
//   using K = gemm::sm90_kernel<bf16, 256, epilogue::chain<epilogue::alpha_beta<bf16>, epilogue::convert_to<bf16>>>;
//   const auto p = K::make_params({m, n, k, batch}, a, b, d, ep);   // builds the two tensor maps
//   strata::launch(stream, K::launch_shape_of(p), K{}, p);
//
// A block computes 128 x TileN output tiles over K in steps of tile_k (64, or 128 for fp8) with three warpgroups
// (gemm-forensic.md, section 6.2, the shape CUTLASS's and ThunderKittens' Hopper kernels use):
//   - warpgroup 0, the producer, gives registers back (setmaxnreg 40); one of its threads waits for a
//     free stage ("empty" barrier), announces the stage's bytes and issues the TMA loads (A: 128 x 64,
//     B: TileN x 64, 128-byte swizzle; one box per K-major operand, one per 64 rows of an M- or
//     N-major one, which wgmma reads transposed; K and the M / N edges zero-filled by the copy
//     engine) that complete on the stage's "full" barrier;
//   - warpgroups 1 and 2, the consumers, take registers (setmaxnreg 232) and own rows 0-63 and 64-127
//     of the tile: per stage they wait for "full", issue four chained k16 wgmmas (descriptors advanced
//     32 bytes in the swizzled rows), commit, and wait for all but that group, so one stage of wgmmas
//     stays in flight while the previous stage's are known done and its buffer is released ("empty",
//     one arrival per consumer warpgroup);
//   - the epilogue applies the chain from the accumulator map and writes D (any layout, M / N edges
//     tested; two elements per store where the warpgroup's rows lie inside a row-major D).
// Stages buffers of (128 + TileN) x 64 elements: 4 x 48 KiB for TileN = 256, within the 227 KiB a
// block may have. K = 0 writes epilogue(0). With make_params's `units` (the SM count) the grid is
// persistent: block b takes tiles b, b + units, ... (in the tile order's sequence, batch entries
// after one another), and the stage ring runs on across them, so the next tile's loads overlap this
// tile's epilogue.
//
// Not yet (issue 36): ping-pong consumers (one's epilogue under the other's wgmmas), clusters with TMA
// multicast, the TMA-store epilogue through shared memory, fp8's periodic promotion of the
// accumulators into a second f32 sum (DeepGEMM's, for long K), split-K and stream-K, grouped GEMM. strata::gemm does not pick this kernel yet: it has not run on a GPU (docs/gemm.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "strata/arch/mbarrier.hpp"
#include "strata/arch/registers.hpp"
#include "strata/copy/tma.hpp"
#include "strata/mma/mma_op.hpp"
#include "strata/mma/wgmma.hpp"
#include "strata/ops/gemm/kernel.hpp"

namespace strata::ops::gemm {

template <class T, int TileN, class Epilogue, int Stages = 4, operand_orders Orders = operand_orders::a_row_b_col,
          int ClusterM = 1, class Order = order::default_for<arch::sm90a>>
struct sm90_kernel {
  static constexpr bool fp8 = std::is_same_v<T, f8_e4m3> || std::is_same_v<T, f8_e5m2>;
  static_assert(std::is_same_v<T, f16> || std::is_same_v<T, bf16> || fp8,
                "gemm::sm90_kernel takes f16, bf16, f8_e4m3 or f8_e5m2 inputs");
  static_assert(!fp8 || Orders == operand_orders::a_row_b_col,
                "gemm::sm90_kernel: fp8 wgmma reads both operands K-major (A row-major, B column-major)");
  static_assert(TileN == 64 || TileN == 128 || TileN == 256, "gemm::sm90_kernel: TileN is 64, 128 or 256");
  static_assert(Stages >= 2, "gemm::sm90_kernel: at least two stages");
  static_assert(Orders != operand_orders::any, "gemm::sm90_kernel is compiled for one pair of operand orders");
  static_assert(ClusterM == 1 || ClusterM == 2, "gemm::sm90_kernel: clusters of 1 or 2 blocks along M");
  /// Whether A (B) is K-major in global memory: A row-major, B column-major. The other order is read
  /// as M- (N-) major boxes and given to wgmma transposed (imm-trans), not copied twice.
  static constexpr bool a_k_major = Orders == operand_orders::a_row_b_col || Orders == operand_orders::a_row_b_row;
  static constexpr bool b_k_major = Orders == operand_orders::a_row_b_col || Orders == operand_orders::a_col_b_col;
  static constexpr operand_orders orders = Orders;
  /// Blocks of a cluster, along M: they share B's tile, each loading 1 / ClusterM of it and
  /// multicasting it into all (TMA multicast), so B is read from L2 once per cluster.
  static constexpr int cluster_m = ClusterM;
  using target = arch::sm90a;
  using atom = std::conditional_t<fp8, mma::sm90_64xNx32<T, TileN>,
                                  mma::sm90_64xNx16<T, TileN, a_k_major ? mma::wgmma_major::k : mma::wgmma_major::mn,
                                                    b_k_major ? mma::wgmma_major::k : mma::wgmma_major::mn>>;
  using epilogue_type = Epilogue;
  using order_type = Order;
  using ta = T;
  using tb = T;
  using acc_type = float;
  using td = typename Epilogue::output_type;
  static constexpr const char* name = "strata::ops::gemm::sm90_kernel";

  // tile_k: one 128-byte swizzled row of K (64 16-bit or 128 8-bit elements).
  static constexpr int tile_m = 128, tile_n = TileN, tile_k = 128 / int(sizeof(T)), stages = Stages;
  static constexpr int consumers = 2;  // warpgroups of 64 rows each
  static constexpr int threads = 128 * (1 + consumers);
  static constexpr int max_threads_per_block = threads;
  static constexpr int min_blocks_per_multiprocessor = 1;  // fixes the register count at entry (setmaxnreg)
  static constexpr int producer_registers = 40, consumer_registers = 232;  // 128 x (40 + 2 x 232) = 64512
  static constexpr std::size_t a_stage_bytes = std::size_t(tile_m) * tile_k * sizeof(T);
  static constexpr std::size_t b_stage_bytes = std::size_t(tile_n) * tile_k * sizeof(T);
  static constexpr std::size_t stage_bytes = a_stage_bytes + b_stage_bytes;
  /// The stages, and room to start them on a 1024-byte boundary (the 128-byte swizzle's period).
  static constexpr std::size_t dynamic_shared_bytes = Stages * stage_bytes + 1024;
  static_assert(dynamic_shared_bytes + 256 <= arch::sm90a::shared_memory_per_block,
                "gemm::sm90_kernel: the stages do not fit in a block's shared memory; use fewer stages");

  struct shared_storage {
    mbarrier full[Stages];   // the stage's TMA bytes have landed
    mbarrier empty[Stages];  // the consumers' wgmmas no longer read the stage
  };

  struct params {
    problem size;
    copy::tensor_map a, b;  // A (batch, m, k), B (batch, n, k); K innermost
    operand<td> d;
    Order order;
    long long tiles = 0;    // output tiles per batch entry
    long long work = 0;     // tiles x batch entries
    int blocks = 0;         // blocks launched; each (cluster) takes work items b, b + blocks, ... (in clusters)
    int m_groups = 0, n_tiles = 0;  // ClusterM > 1: groups of ClusterM tiles along M, tiles along N
    int k_tiles = 0;
    typename Epilogue::params epilogue;
    /// D may be written two elements per store (row-major, even ld and batch stride, aligned base).
    bool d_row_pairs = false;
  };

  /// Params for A (m x k) and B (k x n) in the kernel's orders: both read by TMA, so their bases must
  /// be 16-byte aligned and lda, ldb and the batch strides multiples of 16 bytes.
  ///
  /// `units`: blocks to launch, each looping over output tiles (a persistent grid: the SM count); 0 or
  /// at least the tile count gives one block per tile. The stage ring runs on across a block's tiles,
  /// so the producer loads the next tile while the consumers run the previous one's epilogue.
  static params make_params(const problem& pr, operand<const T> a, operand<const T> b, operand<td> d,
                            const typename Epilogue::params& ep, int units = 0) {
    const char* op = "strata::ops::gemm::sm90_kernel::make_params";
    if ((a.order == layout::row_major) != a_k_major)
      throw invalid_argument(op, "a", std::string("must be ") + (a_k_major ? "row" : "column") + "-major: this kernel is compiled for operand_orders::" + name_of(Orders));
    if ((b.order == layout::col_major) != b_k_major)
      throw invalid_argument(op, "b", std::string("must be ") + (b_k_major ? "column" : "row") + "-major: this kernel is compiled for operand_orders::" + name_of(Orders));
    if (pr.m < 0 || pr.n < 0 || pr.k < 0 || pr.batch < 1)
      throw invalid_argument(op, "problem", "has a negative size or a batch below 1");
    const auto tma_ready = [&](const operand<const T>& x, const char* arg) {
      constexpr long long per16 = 16 / static_cast<long long>(sizeof(T));  // elements per 16 bytes
      if (reinterpret_cast<std::uintptr_t>(x.data) % 16 != 0 || x.ld % per16 != 0 || (pr.batch > 1 && x.batch_stride % per16 != 0))
        throw invalid_argument(op, arg, "is read by TMA: its base must be 16-byte aligned and its leading dimension and "
                                        "batch stride multiples of 16 bytes (" + std::to_string(per16) + " elements; ld " +
                                        std::to_string(x.ld) + ")");
    };
    tma_ready(a, "a");
    tma_ready(b, "b");
    params p{};
    p.size = pr;
    p.d = d;
    const auto op_ = order::gemm_problem(pr.m, pr.n, pr.k, tile_m, tile_n, tile_k, int(sizeof(T)), arch::sm90a::chiplets);
    p.order = Order(op_);
    p.tiles = op_.tiles();
    if constexpr (ClusterM == 1) {
      p.work = p.tiles * pr.batch;
      p.blocks = int(units > 0 && units < p.work ? units : p.work);
    } else {
      // Work items are clusters' tile groups: ClusterM tiles along M with one tile of N.
      p.m_groups = ((pr.m + tile_m - 1) / tile_m + ClusterM - 1) / ClusterM;
      p.n_tiles = (pr.n + tile_n - 1) / tile_n;
      p.work = (long long)p.m_groups * p.n_tiles * pr.batch;
      const long long clusters = units >= ClusterM && units / ClusterM < p.work ? units / ClusterM : p.work;
      p.blocks = int(clusters * ClusterM);
    }
    p.k_tiles = (pr.k + tile_k - 1) / tile_k;
    p.epilogue = ep;
    p.d_row_pairs = sizeof(td) <= 4 && d.order == layout::row_major && d.ld % 2 == 0 &&
                    (pr.batch <= 1 || d.batch_stride % 2 == 0) &&
                    reinterpret_cast<std::uintptr_t>(d.data) % sizeof(epilogue::output_pair<td>) == 0;
    if (pr.m > 0 && pr.n > 0 && pr.k > 0) {
      p.a = map_of(a, pr.m, pr.k, pr.batch, tile_m, a_k_major);
      p.b = map_of(b, pr.n, pr.k, pr.batch, tile_n / ClusterM, b_k_major);
    }
    return p;
  }

  /// params::blocks blocks (at least one).
  static launch_shape launch_shape_of(const params& p) {
    return launch_shape{.grid = dims(p.blocks > 0 ? p.blocks : ClusterM), .block = dims(threads),
                        .cluster = dims(ClusterM), .dynamic_shared_bytes = dynamic_shared_bytes};
  }

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    // A build for several GPUs compiles the kernel for each; only sm_90a has wgmma. Elsewhere it traps
    // (the entry never launches it there).
    if constexpr (!mma::available_in_this_pass<atom>) mma::unavailable_in_this_pass();
    else run(ctx, p);
  }

 private:
  template <class Ctx>
  STRATA_HOST_DEVICE void run(Ctx& ctx, const params& p) const {
    if (p.size.m <= 0 || p.size.n <= 0) return;
    auto& s = ctx.template shared<shared_storage>();
    unsigned char* dyn = ctx.template dynamic_shared<unsigned char>();
    const std::uint32_t address = mma::smem_descriptor::of(ctx, dyn, mma::wgmma_swizzle::none, 0, 0).address();
    unsigned char* stage0 = dyn + (1024 - address % 1024) % 1024;
    if (ctx.block().thread_rank() == 0) {
      // A stage is free once every consumer warpgroup of the cluster has released it: the cluster's
      // other blocks multicast into it.
      for (int i = 0; i < Stages; ++i) {
        s.full[i].init(ctx, 1);
        s.empty[i].init(ctx, consumers * ClusterM);
      }
      if constexpr (ClusterM > 1) mbarrier::fence_init(ctx);
    }
    if constexpr (ClusterM > 1) ctx.cluster().sync();
    else ctx.block().sync();
    const int group = ctx.warpgroup().index();
    if (group == 0) {
      arch::decrease_registers<producer_registers>(ctx);
      if (ctx.warpgroup().thread_rank() == 0) produce(ctx, p, s, stage0);
    } else {
      arch::increase_registers<consumer_registers>(ctx);
      consume(ctx, p, s, stage0, group - 1);
    }
    // No block leaves while another of its cluster may still multicast into it or arrive on its barriers.
    if constexpr (ClusterM > 1) ctx.cluster().sync();
  }

  /// This block's first work item and the stride between its items: blocks, or clusters.
  template <class Ctx>
  STRATA_HOST_DEVICE static long long first_item(Ctx& ctx) {
    if constexpr (ClusterM == 1) return ctx.block().rank();
    else return ctx.cluster().index();
  }
  STRATA_HOST_DEVICE static long long item_stride(const params& p) { return p.blocks / ClusterM; }

  /// This block's rank in its cluster (0 without clusters).
  template <class Ctx>
  STRATA_HOST_DEVICE static int cluster_rank(Ctx& ctx) {
    if constexpr (ClusterM == 1) return 0;
    else return ctx.cluster().block_rank();
  }

  /// The output tile and batch entry of work item w.
  struct work_item {
    int m0, n0, batch;
  };
  STRATA_HOST_DEVICE static work_item item(const params& p, long long w, int rank) {
    if constexpr (ClusterM == 1) {
      const order::tile t = p.order(w % p.tiles);
      return {int(t.m) * tile_m, int(t.n) * tile_n, int(w / p.tiles)};
    } else {
      // Along M first, so that clusters running at once share B's tiles in L2 as well.
      const long long per_batch = (long long)p.m_groups * p.n_tiles;
      const long long in_batch = w % per_batch;
      const int mg = int(in_batch % p.m_groups), nt = int(in_batch / p.m_groups);
      return {(mg * ClusterM + rank) * tile_m, nt * tile_n, int(w / per_batch)};
    }
  }

  /// The tensor map of an operand with `rows` rows of M or N and k of K. K-major: boxes of box_rows x
  /// tile_k, one per stage. M- or N-major (16-bit only): boxes of 64 k x 64 (M or N), box_rows / 64 per
  /// stage.
  static copy::tensor_map map_of(const operand<const T>& x, int rows, int k, int batch, int box_rows, bool k_major) {
    copy::tma_tensor t;
    t.base = x.data;
    t.element_bytes = int(sizeof(T));
    t.rank = 3;
    t.dims[0] = k_major ? k : rows;
    t.dims[1] = k_major ? rows : k;
    t.dims[2] = batch;
    t.strides[1] = x.ld * (long long)sizeof(T);
    // One batch entry: any stride the TMA takes (it is never stepped).
    t.strides[2] = batch > 1 ? x.batch_stride * (long long)sizeof(T) : t.strides[1] * t.dims[1];
    t.box[0] = 128 / int(sizeof(T));  // 128 bytes: the swizzle's row
    t.box[1] = k_major ? box_rows : tile_k;
    t.box[2] = 1;
    t.swizzle = copy::tma_swizzle::b128;
    return copy::make_tensor_map(t);
  }

  STRATA_HOST_DEVICE static unsigned char* a_stage(unsigned char* stage0, int st) { return stage0 + std::size_t(st) * stage_bytes; }
  STRATA_HOST_DEVICE static unsigned char* b_stage(unsigned char* stage0, int st) { return a_stage(stage0, st) + a_stage_bytes; }

  /// The producer thread: the block's K steps, tile after tile, numbered `it` across tiles: stage
  /// it % Stages of round it / Stages, once the consumers released the previous round's use of it
  /// (the first round's wait passes at once).
  template <class Ctx>
  STRATA_HOST_DEVICE void produce(Ctx& ctx, const params& p, shared_storage& s, unsigned char* stage0) const {
    unsigned it = 0;
    for (long long w = first_item(ctx); w < p.work; w += item_stride(p)) {
      const work_item x = item(p, w, cluster_rank(ctx));
      for (int kt = 0; kt < p.k_tiles; ++kt, ++it) {
        const int st = int(it % Stages), round = int(it / Stages);
        s.empty[st].wait(ctx, (round & 1) ^ 1);
        s.full[st].arrive_expect_tx(ctx, std::uint32_t(stage_bytes));
        load_operand<a_k_major, tile_m>(ctx, a_stage(stage0, st), p.a, s.full[st], kt * tile_k, x.m0, x.batch);
        if constexpr (ClusterM == 1) {
          load_operand<b_k_major, tile_n>(ctx, b_stage(stage0, st), p.b, s.full[st], kt * tile_k, x.n0, x.batch);
        } else {
          // This block's 1 / ClusterM of B's tile, into every block of the cluster.
          constexpr int part = tile_n / ClusterM;
          const int rank = cluster_rank(ctx);
          load_operand<b_k_major, part, true>(ctx, b_stage(stage0, st) + b_part_offset(rank), p.b, s.full[st],
                                              kt * tile_k, x.n0 + rank * part, x.batch);
        }
      }
    }
  }

  /// One operand's stage: a K-major box of Rows x 64 k, or Rows / 64 M- (N-) major boxes of 64 k x 64,
  /// 8 KiB apart (each 64 k-rows of 128 bytes).
  template <bool KMajor, int Rows, bool Multicast = false, class Ctx>
  STRATA_HOST_DEVICE static void load_operand(Ctx& ctx, unsigned char* stage, const copy::tensor_map& map, mbarrier& bar,
                                              int k0, int r0, int batch) {
    const auto load = [&](unsigned char* dst, int c0, int c1) {
      if constexpr (Multicast) copy::tma_load_multicast(ctx, dst, map, bar, std::uint16_t((1u << ClusterM) - 1), c0, c1, batch);
      else copy::tma_load(ctx, dst, map, bar, c0, c1, batch);
    };
    if constexpr (KMajor) {
      load(stage, k0, r0);
    } else {
      STRATA_UNROLL
      for (int j = 0; j < Rows / 64; ++j) load(stage + j * 64 * 128, r0 + 64 * j, k0);
    }
  }

  /// Where block `rank`'s part of B's stage starts: K-major rows of 128 bytes, or N-major blocks of
  /// 64 rows x 64 k-rows (8 KiB), either way 128 bytes per row of N.
  STRATA_HOST_DEVICE static constexpr std::size_t b_part_offset(int rank) {
    return std::size_t(rank) * (tile_n / ClusterM) * 128;
  }

  /// The wgmma descriptor of an operand's stage from row `r` (a multiple of 64) on. K-major: 128-byte
  /// rows of tile_k, 8-row atoms 1024 bytes apart (SBO), each wgmma's K (16 16-bit or 32 8-bit
  /// elements) 32 bytes on. M- / N-major: blocks of 64 rows 8 KiB apart (LBO), each 64 k-rows of 128
  /// bytes, groups of 8 k-rows 1024 bytes apart (SBO), each k16 step 2048 bytes on.
  template <bool KMajor, class Ctx>
  STRATA_HOST_DEVICE static mma::smem_descriptor descriptor(Ctx& ctx, unsigned char* stage, int r) {
    if constexpr (KMajor) return mma::smem_descriptor::of(ctx, stage + r * 128, mma::wgmma_swizzle::b128, 16, 1024);
    else return mma::smem_descriptor::of(ctx, stage + (r / 64) * 64 * 128, mma::wgmma_swizzle::b128, 64 * 128, 1024);
  }
  STRATA_HOST_DEVICE static constexpr std::uint32_t k_step_bytes(bool k_major) { return k_major ? 32u : 2048u; }

  /// Consumer warpgroup c: rows 64c .. 64c + 63 of the tile, all TileN columns.
  template <class Ctx>
  STRATA_HOST_DEVICE void consume(Ctx& ctx, const params& p, shared_storage& s, unsigned char* stage0, int c) const {
    const bool leader = ctx.warpgroup().thread_rank() == 0;
    unsigned it = 0;
    for (long long w = first_item(ctx); w < p.work; w += item_stride(p)) {
      const work_item x = item(p, w, cluster_rank(ctx));
      typename atom::c_fragment acc;
      STRATA_UNROLL
      for (int v = 0; v < atom::c_values; ++v) acc[v] = 0.f;
      it = mainloop(ctx, p, s, stage0, c, leader, it, acc);
      store(ctx, p, c, x.m0, x.n0, x.batch, acc);
    }
  }

  /// One tile's K steps from ring position `it` on; returns the position after them. Every stage this
  /// tile used is released on return (the last one after the final wait), so the producer may refill
  /// it with the next tile's operands while this warpgroup runs the epilogue.
  template <class Ctx>
  STRATA_HOST_DEVICE unsigned mainloop(Ctx& ctx, const params& p, shared_storage& s, unsigned char* stage0, int c,
                                       bool leader, unsigned it, typename atom::c_fragment& acc) const {
    for (int kt = 0; kt < p.k_tiles; ++kt, ++it) {
      const int st = int(it % Stages), round = int(it / Stages);
      s.full[st].wait(ctx, round & 1);
      // This warpgroup's 64 rows of A, every column of B.
      const auto da = descriptor<a_k_major>(ctx, a_stage(stage0, st), 64 * c);
      const auto db = descriptor<b_k_major>(ctx, b_stage(stage0, st), 0);
      mma::wgmma_fence(ctx, acc);
      STRATA_UNROLL
      for (int k = 0; k < tile_k / atom::K; ++k)
        atom::mma_async(ctx, da.advanced(k_step_bytes(a_k_major) * k), db.advanced(k_step_bytes(b_k_major) * k), acc);
      mma::wgmma_commit(ctx);
      // The previous stage's wgmmas are done: its buffer goes back to the producer.
      mma::wgmma_wait<1>(ctx, acc);
      if (kt > 0 && leader) release(ctx, s.empty[(it - 1) % Stages]);
    }
    mma::wgmma_wait<0>(ctx, acc);
    if (p.k_tiles > 0 && leader) release(ctx, s.empty[(it - 1) % Stages]);
    return it;
  }

  /// One consumer warpgroup's release of a stage: on its own block's "empty" barrier, and with clusters
  /// on the barrier at the same place in every block of the cluster (whose producers multicast into it).
  template <class Ctx>
  STRATA_HOST_DEVICE static void release(Ctx& ctx, mbarrier& empty) {
    if constexpr (ClusterM == 1) {
      empty.arrive(ctx);
    } else {
      STRATA_UNROLL
      for (int r = 0; r < ClusterM; ++r) empty.arrive_cluster(ctx, r);
    }
  }

  /// D = epilogue(acc) for the warpgroup's 64 rows; nothing past M or N. Where the warpgroup's 64 x
  /// TileN lie inside a D that allows it (params::d_row_pairs), two elements per store from one base
  /// pointer without bounds tests: the accumulator map pairs columns 2t and 2t + 1 of a row (as
  /// mma.sync's does). Elsewhere element by element.
  template <class Ctx>
  STRATA_HOST_DEVICE void store(Ctx& ctx, const params& p, int c, int m0, int n0, int batch,
                                const typename atom::c_fragment& acc) const {
    auto ep = p.epilogue;
    detail::shift_epilogue<Epilogue>(ep, batch * p.d.batch_stride);
    const operand<td> dd{p.d.data + batch * p.d.batch_stride, p.d.ld, p.d.order, 0};
    const int tr = ctx.warpgroup().thread_rank();
    const int r0 = m0 + c * 64;
    if (p.d_row_pairs && r0 + 64 <= p.size.m && n0 + tile_n <= p.size.n) {
      const mma::coord first = atom::c_coord(tr, 0);
      td* const base = dd.data + (r0 + first.row) * dd.ld + n0 + first.col;
      STRATA_UNROLL
      for (int v = 0; v < atom::c_values; v += 2) {
        // Value v's offset from value 0 is the same in every thread (the map's rows and column blocks).
        const mma::coord o = atom::c_coord(0, v), o0 = atom::c_coord(0, 0);
        const int dr = o.row - o0.row, dc = o.col - o0.col;
        const int r = r0 + first.row + dr, col = n0 + first.col + dc;
        *reinterpret_cast<epilogue::output_pair<td>*>(base + dr * dd.ld + dc) =
            Epilogue::apply_pair(acc[v], acc[v + 1], r, col, r, col + 1, ep);
      }
      return;
    }
    STRATA_UNROLL
    for (int v = 0; v < atom::c_values; ++v) {
      const mma::coord x = atom::c_coord(tr, v);
      const int r = m0 + c * 64 + x.row, col = n0 + x.col;
      if (r < p.size.m && col < p.size.n) *detail::at(dd, r, col) = Epilogue::apply(acc[v], r, col, ep);
    }
  }
};

}  // namespace strata::ops::gemm
