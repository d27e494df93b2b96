// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/attention/sm90_backward.hpp -- the Hopper attention backward's dK/dV kernel (sm_90a):
// warp-specialized, K, V, Q, dO and the rows' statistics by TMA onto mbarriers, every product by
// wgmma (FlashAttention-3's backward structure, issue 37).
//
//   const std::size_t bytes = strata::attention_backward_workspace_size<strata::arch::sm90a>(q, k, v, opt);
//   attn::run_sm90_backward<bf16, 128>(stream, q, k, v, o, dout, dq, dk, dv, opt, {ws, bytes});
//
// The backward is backward.hpp's four kernels with this one in the dK/dV step: the preprocess kernel
// (Di = rowsum(dO o O), LSE in log2 units, the zeroed fp32 dQ accumulator), this kernel, the dQ
// conversion and the sink gradient. The workspace is strata::attention_backward's for sm90a (64-row
// query steps, so options.deterministic's counters are the same).
//
// A block owns 128 keys of one (batch, K/V head) and walks every query head of the GQA group and every
// 64-row query tile whose rows can see one of its keys, with three warpgroups:
//   - warpgroup 0, the producer (setmaxnreg 24): one thread loads K and V once (D / 64 boxes of 128
//     rows x 64 columns each, the 128-byte swizzle), then per step Q with the rows' LSE2 and dO with
//     their Di into a ring of two stages ("full" barriers for Q and for dO, one "empty" for both);
//   - warpgroups 1 and 2, the consumers (setmaxnreg 240), own keys 0-63 and 64-127 of the block. Per
//     step, in the transposed orientation (keys are the wgmma's M rows):
//       S^T  = K_c Q^T and dP^T = V_c dO^T   two chains of D / 16 wgmma m64n64k16, both operands
//                                            K-major from shared memory, issued together
//       P^T  = 2^(S^T c - LSE2)              on the accumulators (c = scale log2 e; masks on edge
//       dS^T = P^T o (dP^T - Di) scale       steps only), rounded to 16 bits in registers
//       dV_c += P^T dO, dK_c += dS^T Q       wgmma with A from registers (sm90_wgmma_rs: the
//                                            accumulator map is the A map), dO and Q read N-major
//       dQ_part = dS_c K_c                   dS^T through the warpgroup's tile in shared memory (its
//                                            rows are keys: the wgmma's M-major A), K N-major, 64
//                                            columns at a time; each part through shared memory into
//                                            the fp32 accumulator by TMA reductions (copy::
//                                            tma_reduce_add), unordered, or with options.deterministic
//                                            in key-tile order (a counter per query tile,
//                                            hierarchy/turn.hpp), warpgroup 0's part first
//     dK and dV stay in registers for the whole walk and are written at the end.
// Rows past a sequence inside a box (packed or padded batches: other sequences' rows, unused rows)
// are zeroed in shared memory before any product reads them (0 times a NaN there would be NaN);
// dense batches get zeros from the copy engine.
//
// Takes: f16 / bf16, head dim 64 or 128 (V the same), BSHD or BHSD with 16-byte aligned rows, GQA /
// MQA, causal masks of both alignments, sliding windows, sinks (and their gradient), packed (with
// options.total_q / total_k) and padded batches, options.deterministic; soft-cap, ALiBi and dropout
// (its mask bit for bit the forward's) in the form with Extras (run_sm90_backward picks it; the form
// without them refuses those options by name), and the forward's score / mask modifiers in it too (a
// score modifier stating its derivative, mods.hpp). strata::attention_backward does not pick
// this kernel yet: it has not run on a GPU (docs/attention.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "strata/arch/atomic.hpp"
#include "strata/arch/fast_math.hpp"
#include "strata/arch/mbarrier.hpp"
#include "strata/arch/named_barrier.hpp"
#include "strata/arch/narrow.hpp"
#include "strata/arch/registers.hpp"
#include "strata/arch/schedule.hpp"
#include "strata/copy/detail/vector_types.hpp"
#include "strata/copy/tma.hpp"
#include "strata/hierarchy/turn.hpp"
#include "strata/mma/accumulator_rows.hpp"
#include "strata/mma/mma_op.hpp"
#include "strata/mma/wgmma.hpp"
#include "strata/ops/attention/host.hpp"
#include "strata/ops/attention/sm90_tma.hpp"
#include "strata/tensor/swizzle.hpp"

namespace strata::attn {

/// Extras: soft-cap, ALiBi and dropout compiled in (the logit formed in natural units, as the other
/// backward kernels do); without them P^T is one FFMA and one ex2 per score. Score and mask modifiers
/// (mods.hpp; a score modifier with its derivative) need the form with Extras.
template <class Elem, int D, bool Extras = false, class ScoreMod = no_score_mod, class MaskMod = no_mask_mod>
struct sm90_backward_kernel {
  static constexpr bool has_mods = !std::is_same_v<ScoreMod, no_score_mod> || !std::is_same_v<MaskMod, no_mask_mod>;
  static_assert(Extras || !has_mods, "attn::sm90_backward_kernel: score / mask mods need the form with extras (Extras = true)");
  static_assert(differentiable_score_mod<ScoreMod>,
                "attention backward: the score_mod must state its derivative, a member "
                "float grad(float score, int batch, int head, int q, int k) const (mods.hpp)");
  /// A mask modifier is applied on every step (extras_elements), interior or not: its mask is anywhere.
  static constexpr bool has_mask_mod = !std::is_same_v<MaskMod, no_mask_mod>;
  ScoreMod score_mod{};
  MaskMod mask_mod{};
  static_assert(std::is_same_v<Elem, f16> || std::is_same_v<Elem, bf16>, "attn::sm90_backward_kernel takes f16 or bf16");
  static_assert(D == 64 || D == 128, "attn::sm90_backward_kernel: head dim 64 or 128");
  using target = arch::sm90a;
  static constexpr const char* name = "strata::attn::sm90_backward_kernel";

  static constexpr int block_n = 128;                   // keys per block: 64 per consumer warpgroup
  static constexpr int block_m = backward_query_tile;   // query rows per step (the workspace's)
  static_assert(block_m == 64, "attn::sm90_backward_kernel: 64-row query steps (the N of S^T)");
  static constexpr int stages = 2;
  static constexpr int chunks = D / 64;                 // 128-byte swizzled column blocks
  static constexpr int consumers = 2;
  static constexpr int threads = 128 * (1 + consumers);
  static constexpr int max_threads_per_block = threads;
  static constexpr int min_blocks_per_multiprocessor = 1;  // fixes the register count at entry (setmaxnreg)
  // dK and dV (2 x D / 2 fp32 per thread) live through the walk beside S^T, dP^T and dQ's part:
  // FlashAttention-3's split. 128 x (24 + 2 x 240) = 64512 registers.
  static constexpr int producer_registers = 24, consumer_registers = 240;
  static constexpr int zero_barrier = 1;  // named barrier 1 (256): Q / dO rows past the sequence zeroed
  static constexpr int tile_barrier = 2;  // named barriers 2 and 3 (128): a warpgroup's dS^T (or K rows) written

  /// S^T = K_c Q^T and dP^T = V_c dO^T: 64 keys x 64 queries, both operands K-major (D innermost).
  using st_mma = mma::sm90_64xNx16<Elem, block_m>;
  /// dV += P^T dO and dK += dS^T Q: A from registers (keys x queries), B = dO / Q (queries x D) N-major.
  using grad_mma = mma::sm90_64xNx16_rs<Elem, D, mma::wgmma_major::mn>;
  /// dQ_part = dS_c K_c, 64 columns of D at a time: A = dS (queries x keys) read from dS^T's rows
  /// (M-major), B = K (keys x 64 columns) N-major. One 64 x D accumulator beside dK and dV spilled 48 B
  /// at D 128 under 240 registers (nvcc 13.0).
  using dq_mma = mma::sm90_64xNx16<Elem, 64, mma::wgmma_major::mn, mma::wgmma_major::mn>;
  static_assert(grad_mma::accumulator_is_a_fragment(), "P^T's and dS^T's A fragments are S^T's accumulators, rounded in place");
  using rows = mma::accumulator_rows<typename st_mma::warp_rows>;
  static_assert(rows::count == 2, "two key rows per thread");
  static constexpr int q_steps = block_m / 16;  // k16 steps over the queries (dV, dK) and over 64 keys (dQ)

  static constexpr std::size_t kv_bytes = std::size_t(block_n) * D * sizeof(Elem);  // K or V
  static constexpr std::size_t q_bytes = std::size_t(block_m) * D * sizeof(Elem);   // Q or dO, one stage
  static constexpr std::size_t ds_bytes = std::size_t(64) * block_m * sizeof(Elem); // one warpgroup's dS^T
  static constexpr std::size_t stat_bytes = std::size_t(block_m) * 4;               // LSE2 or Di, one stage
  static constexpr std::size_t dq_bytes = std::size_t(block_m) * 64 * 4;            // one 64-column part of dQ, fp32
  /// K, V, the Q and dO stages, the dS^T tiles, each warpgroup's dQ parts, the statistics, and room to
  /// start on a 1024-byte boundary (the 128-byte swizzle's period).
  static constexpr std::size_t dynamic_shared_bytes =
      2 * kv_bytes + 2 * stages * q_bytes + consumers * ds_bytes + consumers * chunks * dq_bytes + 2 * stages * stat_bytes + 1024;
  static_assert(dynamic_shared_bytes + 256 <= arch::sm90a::shared_memory_per_block,
                "attn::sm90_backward_kernel: the tiles do not fit in a block's shared memory");

  struct shared_storage {
    mbarrier kv_full;           // K and V have landed
    mbarrier q_full[stages];    // the stage's Q and LSE2 have landed
    mbarrier o_full[stages];    // the stage's dO and Di have landed
    mbarrier empty[stages];     // both consumer warpgroups are done with the stage
  };

  struct params {
    detail::backward_params b;
    copy::tensor_map q, k, v, dout;  // (D, seqlen, heads, batch), D innermost; packed: (D, total rows, heads, 1)
    copy::tensor_map lse2, di;       // the workspace's rows: (stat_ld, batch x heads) fp32, 64-row boxes
    copy::tensor_map dq_acc;         // the fp32 dQ accumulator (D, seqlen_q, batch x heads): 64 x 32 boxes, added into
    int k_tiles = 0;                 // key tiles of block_n of the longest sequence
    bool zero_past = false;          // packed or padded: a box's rows past a sequence hold other data
    bool dk_pairs = false, dv_pairs = false;  // dK / dV may be written two elements per store
  };

  /// The first option, by its name, that only the form with extras takes (soft-cap, ALiBi, dropout),
  /// or null: what run_sm90_backward chooses the form by, and what the short form refuses.
  static const char* extra_option(const options& opt) { return detail::sm90_extra_option(opt); }

  /// Params for one call; throws what strata::attention_backward throws for bad tensors, options and
  /// workspaces, and strata::unsupported, naming the option, for what this kernel does not take.
  static params make_params(const tensor& q, const tensor& k, const tensor& v, const tensor& o, const tensor& dout,
                            const tensor& dq, const tensor& dk, const tensor& dv, const options& opt, workspace ws) {
    const std::string op = "strata::attn::sm90_backward_kernel";
    params p{};
    p.b = detail::prepare_backward<target>(op, q, k, v, o, dout, dq, dk, dv, opt, ws);
    if (const char* extra = extra_option(opt); !Extras && extra)
      throw unsupported(op + ": " + extra + " needs the kernel form with extras, sm90_backward_kernel<Elem, D, true> "
                                            "(attn::run_sm90_backward picks it)");
    detail::sm90_check_inputs<Elem, D>(op, "backward", q, v, opt, {{&q, "q"}, {&k, "k"}, {&v, "v"}, {&dout, "dout"}});
    const bool packed = opt.cu_seqlens_q != nullptr;
    // Key and query positions and the clamped windows are summed in 32 bits (windows_of).
    if (static_cast<long long>(q.seqlen) + k.seqlen > (1LL << 31) - 256)
      throw invalid_argument(op, "q", "and k have " + detail::num(q.seqlen) + " + " + detail::num(k.seqlen) +
                                          " rows: the Hopper backward takes at most 2^31 - 256 together");
    p.k_tiles = (k.seqlen + block_n - 1) / block_n;
    const long long q_rows = packed ? opt.total_q : q.seqlen, k_rows = packed ? opt.total_k : k.seqlen;
    if (q_rows > 0 && k_rows > 0 && q.batch > 0) {  // else no block walks a query tile: the maps stay unused
      p.q = map_of(q, block_m, q_rows, packed);
      p.dout = map_of(dout, block_m, q_rows, packed);
      p.k = map_of(k, block_n, k_rows, packed);
      p.v = map_of(v, block_n, k_rows, packed);
      p.lse2 = stat_map(p.b.lse2, p.b.stat_ld, static_cast<long long>(q.batch) * q.heads);
      p.di = stat_map(p.b.di, p.b.stat_ld, static_cast<long long>(q.batch) * q.heads);
      p.dq_acc = accumulator_map(p.b.dq_accum, q.seqlen, static_cast<long long>(q.batch) * q.heads);
    }
    p.zero_past = packed || opt.seqused_q || opt.seqused_k;
    p.dk_pairs = detail::sm90_pair_rows<Elem>(dk);
    p.dv_pairs = detail::sm90_pair_rows<Elem>(dv);
    return p;
  }

  /// One block per (batch, K/V head, 128 keys).
  static long long blocks_of(const params& p) { return static_cast<long long>(p.b.f.batch) * p.b.f.heads_k * p.k_tiles; }
  static launch_shape launch_shape_of(const params& p) {
    return launch_shape{.grid = dims(static_cast<int>(blocks_of(p))), .block = dims(threads), .dynamic_shared_bytes = dynamic_shared_bytes};
  }

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    // A build for several GPUs compiles the kernel for each; only sm_90a has wgmma.
    if constexpr (!mma::available_in_this_pass<st_mma>) mma::unavailable_in_this_pass();
    else run(ctx, p);
  }

 private:
  /// (D, seqlen, heads, batch) in boxes of 64 columns x `rows` (sm90_tma.hpp).
  static copy::tensor_map map_of(const tensor& t, int rows, long long seq_rows, bool packed) {
    return detail::sm90_head_map<Elem>(t, rows, seq_rows, packed);
  }

  /// The workspace's per-row statistics (stat_ld rows per (batch, head), 16-byte rows): 64-row boxes.
  static copy::tensor_map stat_map(const float* base, long long stat_ld, long long batch_heads) {
    copy::tma_tensor m;
    m.base = base;
    m.element_bytes = 4;
    m.rank = 2;
    m.dims[0] = stat_ld;
    m.dims[1] = batch_heads;
    m.strides[1] = stat_ld * 4;
    m.box[0] = block_m;
    m.box[1] = 1;
    return copy::make_tensor_map(m);
  }

  /// The workspace's fp32 dQ accumulator (B x H x SQ x D, zeroed by the preprocess kernel), reduced into
  /// by boxes of 64 rows x 32 columns (128-byte rows, swizzled: conflict-free stores of the parts).
  static copy::tensor_map accumulator_map(const float* base, long long seqlen_q, long long batch_heads) {
    copy::tma_tensor m;
    m.base = base;
    m.element_bytes = 4;
    m.element = copy::tma_element::f32;
    m.rank = 3;
    m.dims[0] = D;
    m.dims[1] = seqlen_q;
    m.dims[2] = batch_heads;
    m.strides[1] = static_cast<long long>(D) * 4;
    m.strides[2] = seqlen_q * D * 4;
    m.box[0] = 32;
    m.box[1] = block_m;
    m.box[2] = 1;
    m.swizzle = copy::tma_swizzle::b128;
    return copy::make_tensor_map(m);
  }

  /// The block's shared tiles, from the 1024-byte aligned start of dynamic shared memory.
  struct tiles {
    unsigned char* k;
    unsigned char* v;
    unsigned char* q0;   // stage st at q0 + st q_bytes
    unsigned char* o0;   // dO, likewise
    unsigned char* ds0;  // warpgroup c's dS^T at ds0 + c ds_bytes
    unsigned char* dq0;  // warpgroup c's dQ part k at dq0 + (c chunks + k) dq_bytes: two 64 x 32 boxes
    float* lse0;         // stage st at lse0 + st block_m
    float* di0;
    STRATA_HOST_DEVICE unsigned char* q(int st) const { return q0 + std::size_t(st) * q_bytes; }
    STRATA_HOST_DEVICE unsigned char* dout(int st) const { return o0 + std::size_t(st) * q_bytes; }
    STRATA_HOST_DEVICE unsigned char* ds(int c) const { return ds0 + std::size_t(c) * ds_bytes; }
    STRATA_HOST_DEVICE unsigned char* dq(int c, int k) const { return dq0 + std::size_t(c * chunks + k) * dq_bytes; }
    STRATA_HOST_DEVICE float* lse(int st) const { return lse0 + st * block_m; }
    STRATA_HOST_DEVICE float* di(int st) const { return di0 + st * block_m; }
  };

  /// What every warpgroup of the block knows: its keys, the walked query tiles.
  struct work {
    int b, hk, t, n0, group, m_first, m_end, steps;  // query tiles m_first, m_first + block_m, .. < m_end
    detail::seq_view sq;
  };

  /// Step i's query head and first row, moved on step by step (no division in the loop): the query
  /// tiles of head hk group, then of the next head of the group.
  struct cursor {
    int h, m0;
    STRATA_HOST_DEVICE explicit cursor(const work& w) : h(w.hk * w.group), m0(w.m_first) {}
    STRATA_HOST_DEVICE void next(const work& w) {
      m0 += block_m;
      if (m0 >= w.m_end) m0 = w.m_first, ++h;
    }
  };

  template <class Ctx>
  STRATA_HOST_DEVICE void run(Ctx& ctx, const params& p) const {
    const detail::forward_params& f = p.b.f;
    work w;
    // (the launch checks that the grid fits an int: 32-bit divisions)
    const int r = static_cast<int>(ctx.block().rank());
    w.t = r % p.k_tiles;
    w.hk = (r / p.k_tiles) % f.heads_k;
    w.b = r / p.k_tiles / f.heads_k;
    w.sq = detail::sequence(f, w.b);
    w.n0 = w.t * block_n;
    if (w.n0 >= w.sq.sk) return;  // this sequence has no such key tile (the whole block leaves together)
    w.group = f.heads / f.heads_k;
    const detail::walked_rows walk = detail::walked_query_rows(f, w.sq, w.n0, block_n, block_m);
    w.m_first = walk.first;
    w.m_end = walk.first + walk.tiles(block_m) * block_m;
    w.steps = w.group * walk.tiles(block_m);

    auto& s = ctx.template shared<shared_storage>();
    unsigned char* dyn = ctx.template dynamic_shared<unsigned char>();
    const std::uint32_t address = mma::smem_descriptor::of(ctx, dyn, mma::wgmma_swizzle::none, 0, 0).address();
    tiles tl;
    tl.k = dyn + (1024 - address % 1024) % 1024;
    tl.v = tl.k + kv_bytes;
    tl.q0 = tl.v + kv_bytes;
    tl.o0 = tl.q0 + stages * q_bytes;
    tl.ds0 = tl.o0 + stages * q_bytes;
    tl.dq0 = tl.ds0 + consumers * ds_bytes;
    tl.lse0 = reinterpret_cast<float*>(tl.dq0 + consumers * chunks * dq_bytes);
    tl.di0 = tl.lse0 + stages * block_m;
    if (ctx.block().thread_rank() == 0) {
      s.kv_full.init(ctx, 1);
      for (int i = 0; i < stages; ++i) {
        s.q_full[i].init(ctx, 1);
        s.o_full[i].init(ctx, 1);
        s.empty[i].init(ctx, consumers);
      }
    }
    ctx.block().sync();
    if (ctx.warpgroup().index() == 0) {
      arch::decrease_registers<producer_registers>(ctx);
      if (ctx.warpgroup().thread_rank() == 0) produce(ctx, p, s, w, tl);
    } else {
      arch::increase_registers<consumer_registers>(ctx);
      consume(ctx, p, s, w, tl, ctx.warpgroup().index() - 1);
    }
  }

  /// The producer thread: K and V once, then step s's Q (with LSE2) and dO (with Di) into stage
  /// s % stages once both consumers released the round before's (the first round's waits pass at once).
  template <class Ctx>
  STRATA_HOST_DEVICE static void produce(Ctx& ctx, const params& p, shared_storage& s, const work& w, const tiles& tl) {
    if (w.steps == 0) return;  // no query sees these keys: dK = dV = 0, nothing to load
    const detail::forward_params& f = p.b.f;
    const int bb = f.cu_q ? 0 : w.b;  // packed sequences: rows from the sequence's first packed row, batch entry 0
    s.kv_full.arrive_expect_tx(ctx, std::uint32_t(2 * kv_bytes));
    STRATA_UNROLL
    for (int c = 0; c < chunks; ++c) {
      copy::tma_load(ctx, tl.k + c * block_n * 128, p.k, s.kv_full, 64 * c, w.sq.k0 + w.n0, w.hk, bb);
      copy::tma_load(ctx, tl.v + c * block_n * 128, p.v, s.kv_full, 64 * c, w.sq.k0 + w.n0, w.hk, bb);
    }
    cursor at(w);
    for (int i = 0; i < w.steps; ++i, at.next(w)) {
      const int st = i % stages, round = i / stages, h = at.h, m0 = at.m0;
      const int stat_row = w.b * f.heads + h;
      s.empty[st].wait(ctx, (round & 1) ^ 1);
      s.q_full[st].arrive_expect_tx(ctx, std::uint32_t(q_bytes + stat_bytes));
      STRATA_UNROLL
      for (int c = 0; c < chunks; ++c) copy::tma_load(ctx, tl.q(st) + c * block_m * 128, p.q, s.q_full[st], 64 * c, w.sq.q0 + m0, h, bb);
      copy::tma_load(ctx, tl.lse(st), p.lse2, s.q_full[st], m0, stat_row);
      s.o_full[st].arrive_expect_tx(ctx, std::uint32_t(q_bytes + stat_bytes));
      STRATA_UNROLL
      for (int c = 0; c < chunks; ++c) copy::tma_load(ctx, tl.dout(st) + c * block_m * 128, p.dout, s.o_full[st], 64 * c, w.sq.q0 + m0, h, bb);
      copy::tma_load(ctx, tl.di(st), p.di, s.o_full[st], m0, stat_row);
    }
  }

  /// Zeroes rows [from, to) of a tile of Rows rows (D / 64 blocks of Rows x 128 bytes), thread `rank`
  /// of `count` taking every count-th 16-byte unit.
  template <int Rows>
  STRATA_HOST_DEVICE static void zero_rows(unsigned char* tile, int from, int to, int rank, int count) {
    unsigned char* first = tile + from * 128;  // rows are 128 bytes: 16-byte unit u of the rows is byte 16 u
    STRATA_UNROLL
    for (int chunk = 0; chunk < chunks; ++chunk)
      STRATA_NO_UNROLL  // a rare step's few rows: not worth the code in the loop
      for (int u = rank; u < (to - from) * 8; u += count)
        *reinterpret_cast<copy::detail::raw_vector<16>*>(first + chunk * Rows * 128 + u * 16) = {};
  }

  /// Consumer warpgroup c: keys w.n0 + 64 c .. + 63.
  template <class Ctx>
  STRATA_HOST_DEVICE void consume(Ctx& ctx, const params& p, shared_storage& s, const work& w, const tiles& tl, int c) const {
    const detail::backward_params& bp = p.b;
    const detail::forward_params& f = bp.f;
    const detail::seq_view& sq = w.sq;
    const int tr = ctx.warpgroup().thread_rank();
    const int lane = tr % 32;
    const int kj0 = w.n0 + 64 * c;                        // this warpgroup's first key
    const int j0 = kj0 + 16 * (tr / 32);                  // this warp's first key
    constexpr float log2e = 1.4426950408889634f;
    const float exp2_scale = f.scale * log2e;
    const bool leader = tr == 0;
    const windows wn = windows_of(f, sq);
    const arch::named_barrier my_tile{tile_barrier + c, 128};
    // dS^T's store offset of value 0 (key row 16 warp + lane / 4, query 2 (lane % 4)), swizzled.
    const unsigned ds_base = span_swizzled(unsigned((16 * (tr / 32) + lane / 4) * 128 + 4 * (lane % 4)), 128);
    static_assert(st_mma::c_coord(5, 0).row == 1 && st_mma::c_coord(5, 0).col == 2 && st_mma::c_coord(5, 2).row == 9 &&
                      st_mma::c_coord(5, 4).col == 10 && st_mma::c_coord(37, 0).row == 17,
                  "dS^T's stores follow wgmma's accumulator map");

    typename grad_mma::c_fragment dk, dv;
    STRATA_UNROLL
    for (int v = 0; v < grad_mma::c_values; ++v) dk[v] = dv[v] = 0.f;

    if (w.steps > 0) {
      s.kv_full.wait(ctx, 0);
      // K rows past the keys (packed or padded batches) meet dS^T's zeros in dQ: zeroed (V's rows there
      // only reach dP^T's rows of those keys, whose dS^T is set to 0 below).
      if (p.zero_past && kj0 + 64 > sq.sk) {
        zero_rows<block_n>(tl.k, detail::imax(kj0, sq.sk) - w.n0, kj0 + 64 - w.n0, tr, 128);
        mma::fence_async_shared(ctx);  // generic stores, read next by the wgmmas (async proxy)
        my_tile.sync(ctx);
      }
    }
    cursor at(w);
    for (int i = 0; i < w.steps; ++i, at.next(w)) {
      const int st = i % stages, h = at.h, m0 = at.m0;
      s.q_full[st].wait(ctx, (i / stages) & 1);
      s.o_full[st].wait(ctx, (i / stages) & 1);
      // Q and dO rows past the sequence (packed or padded batches), shared by both warpgroups.
      if (p.zero_past && m0 + block_m > sq.sq) {
        zero_rows<block_m>(tl.q(st), sq.sq - m0, block_m, tr + 128 * c, 256);
        zero_rows<block_m>(tl.dout(st), sq.sq - m0, block_m, tr + 128 * c, 256);
        mma::fence_async_shared(ctx);
        arch::named_barrier{zero_barrier, 256}.sync(ctx);
      }

      // S^T = K_c Q^T and dP^T = V_c dO^T, issued together.
      typename st_mma::c_fragment sc, dp;
      mma::wgmma_fence(ctx, sc, dp);
      issue_transposed(ctx, tl.k, tl.q(st), c, sc);
      issue_transposed(ctx, tl.v, tl.dout(st), c, dp);
      const bool interior = all_visible(wn, sq, kj0, m0);
      const float* lse2 = tl.lse(st);
      const float* di = tl.di(st);
      if constexpr (Extras) {
        // The dropout mask's bits while S^T and dP^T are on the tensor cores (the Philox rounds then do
        // not sit beside the element work's registers).
        const std::uint32_t kept = f.dropout_p > 0.f ? dropout_bits(p, w, lane, j0, h, m0) : ~0u;
        mma::wgmma_wait<0>(ctx, sc, dp);
        extras_elements(p, w, wn, lane, j0, h, m0, interior, kept, lse2, di, sc, dp);
      } else {
      mma::wgmma_wait<1>(ctx, sc);
      // P^T = 2^(S^T c - LSE2); value v is key slot (v / 2) % 2, query column 8 (v / 4) + 2 (lane % 4) + v % 2.
      if (interior) {
        STRATA_UNROLL
        for (int v = 0; v < st_mma::c_values; ++v)
          sc[v] = arch::exp2_approx(::fmaf(sc[v], exp2_scale, -lse2[st_mma::c_coord(lane, v).col]));
      } else {
        // Each key row this thread holds (a slot) sees the queries [i_lo, i_lo + i_span) of the
        // sequence: one unsigned range test per score. Worked out per edge step, not kept through the
        // loop: the registers are dK's, dV's, S^T's and dP^T's.
        int i_lo[2], i_span[2];
        STRATA_UNROLL
        for (int r = 0; r < 2; ++r) visible_queries(wn, sq, j0 + rows::row_of(lane, r), i_lo[r], i_span[r]);
        STRATA_UNROLL
        for (int v = 0; v < st_mma::c_values; ++v) {
          const int col = st_mma::c_coord(lane, v).col, r = rows::slot_of(v % 4);
          const float x = arch::exp2_approx(::fmaf(sc[v], exp2_scale, -lse2[col]));
          sc[v] = static_cast<unsigned>(m0 + col - i_lo[r]) < static_cast<unsigned>(i_span[r]) ? x : 0.f;
        }
      }
      mma::wgmma_wait<0>(ctx, dp);
      // dS^T = P^T o (dP^T - Di) scale; where P^T is 0 (masked, or past the sequence, where dP^T and Di
      // may be anything) dS^T is 0.
      STRATA_UNROLL
      for (int v = 0; v < st_mma::c_values; ++v) {
        const float x = sc[v] * (dp[v] - di[st_mma::c_coord(lane, v).col]) * f.scale;
        dp[v] = interior || sc[v] != 0.f ? x : 0.f;
      }
      }
      // Both rounded in place: accumulator values 8 k .. 8 k + 7 are the A fragment of k16 step k.
      typename grad_mma::a_registers pr[q_steps], dsr[q_steps];
      STRATA_UNROLL
      for (int k = 0; k < q_steps; ++k)
        STRATA_UNROLL
        for (int x = 0; x < 4; ++x) {
          pr[k][x] = arch::narrow_pair<Elem>(sc[8 * k + 2 * x], sc[8 * k + 2 * x + 1]);
          dsr[k][x] = arch::narrow_pair<Elem>(dp[8 * k + 2 * x], dp[8 * k + 2 * x + 1]);
        }

      // dV_c += P^T dO, dK_c += dS^T Q: dO and Q (queries x D) N-major, 64-column blocks 64 x 128
      // bytes apart (LBO), groups of 8 queries 1024 bytes apart (SBO), a k16 step 2048 bytes on.
      STRATA_UNROLL
      for (int k = 0; k < q_steps; ++k) {
        mma::wgmma_fence_operand(pr[k]);
        mma::wgmma_fence_operand(dsr[k]);
      }
      mma::wgmma_fence(ctx, dv, dk);
      {
        const auto od = mma::smem_descriptor::of(ctx, tl.dout(st), mma::wgmma_swizzle::b128, block_m * 128, 1024);
        const auto qd = mma::smem_descriptor::of(ctx, tl.q(st), mma::wgmma_swizzle::b128, block_m * 128, 1024);
        STRATA_UNROLL
        for (int k = 0; k < q_steps; ++k) grad_mma::mma_async(ctx, pr[k], od.advanced(2048 * k), dv);
        STRATA_UNROLL
        for (int k = 0; k < q_steps; ++k) grad_mma::mma_async(ctx, dsr[k], qd.advanced(2048 * k), dk);
        mma::wgmma_commit(ctx);
      }
      // dS^T into the warpgroup's tile while they run: rows are keys, 128 bytes of 64 queries, swizzled
      // (the offset from the 1024-byte aligned tile swizzled is the address swizzled). Values 8 k + 2 x
      // and the next are key row 16 warp + lane / 4 + 8 (x % 2), queries 16 k + 8 (x / 2) + 2 (lane % 4)
      // and the next: 16-byte unit 2 k + x / 2 of the row, XORed with the row's (lane / 4) under the
      // swizzle. So every store is one base XOR an immediate (plus 1024 bytes for the second row),
      // not sixteen offsets kept live through the loop (which spilled).
      // (arch::opaque: the eight offsets are worked out here each step, not hoisted and kept live.)
      unsigned char* ds_tile = tl.ds(c);
      const unsigned ds_at = arch::opaque(ds_base);
      STRATA_UNROLL
      for (int k = 0; k < q_steps; ++k)
        STRATA_UNROLL
        for (int x = 0; x < 4; ++x) {
          const unsigned unit = unsigned(2 * k + x / 2) << 4;
          *reinterpret_cast<std::uint32_t*>(ds_tile + ((ds_at ^ unit) + 1024u * unsigned(x % 2))) = dsr[k][x];
        }
      mma::fence_async_shared(ctx);  // generic stores, read next by the dQ wgmmas (async proxy)
      // The dQ parts' tiles are free again once the last step's reductions have read them (long since).
      if (leader) copy::tma_store_wait<0>(ctx);
      my_tile.sync(ctx);

      // dQ's part from these 64 keys, per 64 columns: A = dS (queries x keys) from dS^T's rows, M-major
      // (one 64-query block, LBO unused); B = K_c's block of 64 columns (keys x 64) N-major. The first
      // part is issued behind dV and dK, before waiting for them, so the tensor cores have it queued
      // (38.22 -> 36.69 static per HGMMA at d128); not in the form with modifiers, where its
      // accumulator beside the modifiers' state spilled 20 B (nvcc 13.0).
      constexpr bool dq_behind = !has_mods;
      if constexpr (!dq_behind) {
        mma::wgmma_wait<0>(ctx, dv, dk);
        if (leader) s.empty[st].arrive(ctx);  // Q, dO and their rows' statistics are read
      }
      const auto ad = mma::smem_descriptor::of(ctx, ds_tile, mma::wgmma_swizzle::b128, std::uint32_t(ds_bytes), 1024);
      STRATA_UNROLL
      for (int part = 0; part < chunks; ++part) {
        typename dq_mma::c_fragment dq;
        mma::wgmma_fence(ctx, dq);
        const auto kd = mma::smem_descriptor::of(ctx, tl.k + part * block_n * 128 + c * 64 * 128, mma::wgmma_swizzle::b128, 16, 1024);
        STRATA_UNROLL
        for (int k = 0; k < q_steps; ++k) dq_mma::mma_async(ctx, ad.advanced(2048 * k), kd.advanced(2048 * k), dq, k > 0);
        mma::wgmma_commit(ctx);
        if (dq_behind && part == 0) {
          mma::wgmma_wait<1>(ctx, dv, dk);
          if (leader) s.empty[st].arrive(ctx);
        }
        mma::wgmma_wait<0>(ctx, dq);
        add_dq(ctx, p, w, tl, h, m0, tr, c, part, dq);
      }
    }
    if (leader) copy::tma_store_wait<0>(ctx);  // the last reductions have read their tiles
    store(p, w, tr, c, dk, dv);
  }

  /// The windows clamped to what can bind inside the sequence (right at most sk - off, left at most
  /// sq + off, -1 for none): every sum below then fits 32 bits (make_params: sq + sk <= 2^31 - 256), and a
  /// consumer keeps no 64-bit values through its loop.
  struct windows {
    int right, left;
  };
  STRATA_HOST_DEVICE static windows windows_of(const detail::forward_params& f, const detail::seq_view& sq) {
    const int right_max = sq.sk - sq.off, left_max = sq.sq + sq.off;
    return {f.window_right < 0 ? -1 : detail::imin(f.window_right, right_max), f.window_left < 0 ? -1 : detail::imin(f.window_left, left_max)};
  }

  /// The queries [lo, lo + span) key j sees: the windows (causal: right 0) and the sequence ends.
  STRATA_HOST_DEVICE static void visible_queries(const windows& wn, const detail::seq_view& sq, int j, int& lo, int& span) {
    int l = 0, h = j < sq.sk ? sq.sq : 0;
    if (wn.right >= 0) l = detail::imax(l, j - sq.off - wn.right);       // j <= i + off + right
    if (wn.left >= 0) h = detail::imin(h, j - sq.off + wn.left + 1);     // j >= i + off - left
    lo = detail::imin(l, h);
    span = detail::imax(h - l, 0);
  }

  /// Whether every key of [kj0, kj0 + 64) sees every query of [m0, m0 + 64): a step without masks.
  STRATA_HOST_DEVICE static bool all_visible(const windows& wn, const detail::seq_view& sq, int kj0, int m0) {
    if (kj0 + 64 > sq.sk || m0 + block_m > sq.sq) return false;
    if (wn.right >= 0 && kj0 + 63 - sq.off - wn.right > m0) return false;
    if (wn.left >= 0 && kj0 - sq.off + wn.left + 1 < m0 + block_m) return false;
    return true;
  }

  /// The forward's dropout mask at this thread's 32 scores, bit v for accumulator value v (1: kept).
  /// Key rows j and j + 8 of a thread share a 64-key group and a (j / 2) % 4, so one Philox call per
  /// query column gives both of its bytes (philox.hpp: the mask bit for bit the other kernels').
  STRATA_HOST_DEVICE static std::uint32_t dropout_bits(const params& p, const work& w, int lane, int j0, int h, int m0) {
    const detail::forward_params& f = p.b.f;
    static_assert(rows::row_of(0, 1) - rows::row_of(0, 0) == 8, "a thread's two key rows are 8 apart: one dropout draw");
    const int j = j0 + rows::row_of(lane, 0);
    std::uint32_t bits = 0;
    STRATA_UNROLL
    for (int jn = 0; jn < st_mma::c_values / 4; ++jn)
      STRATA_UNROLL
      for (int x = 0; x < 2; ++x) {
        const int i = m0 + st_mma::c_coord(lane, 4 * jn + x).col;
        const philox_u32x4 draw = dropout_draw(f.seed, f.offset, w.b, f.heads, h, i, dropout_group_of(j));
        STRATA_UNROLL
        for (int r = 0; r < 2; ++r)
          bits |= std::uint32_t(dropout_byte(draw, dropout_byte_of(j + 8 * r)) >= f.dropout_threshold) << (4 * jn + 2 * r + x);
      }
    return bits;
  }

  /// P^T with dropout applied (what multiplied V in the forward: dV's A operand) into sc and dS^T into
  /// dp, from the scores and dP^T, with soft-cap, ALiBi and dropout (Extras), as backward_mma.hpp forms
  /// them: x = scale s, soft-capped (its derivative 1 - tanh^2 into dS), ALiBi's distance subtracted;
  /// P = 2^(x log2 e - LSE2); dS = P (dP Z / (1 - r) - Di) dfac, Z the forward's dropout mask (`kept`,
  /// dropout_bits).
  STRATA_HOST_DEVICE void extras_elements(const params& p, const work& w, const windows& wn, int lane, int j0, int h, int m0,
                                          bool interior, std::uint32_t kept, const float* lse2, const float* di,
                                          typename st_mma::c_fragment& sc, typename st_mma::c_fragment& dp) const {
    const detail::forward_params& f = p.b.f;
    constexpr float log2e = 1.4426950408889634f;
    const float inv_softcap = f.softcap > 0.f ? 1.f / f.softcap : 0.f;
    const float slope = f.alibi ? f.alibi[h] : 0.f;
    const float drop_scale = f.dropout_p > 0.f ? dropout_scale(f.dropout_threshold) : 1.f;
    int i_lo[2], i_span[2], j[2];
    STRATA_UNROLL
    for (int r = 0; r < 2; ++r) {
      j[r] = j0 + rows::row_of(lane, r);
      visible_queries(wn, w.sq, j[r], i_lo[r], i_span[r]);
    }
    STRATA_UNROLL
    for (int v = 0; v < st_mma::c_values; ++v) {
      const int col = st_mma::c_coord(lane, v).col, r = rows::slot_of(v % 4), i = m0 + col;
      bool keep = interior || static_cast<unsigned>(i - i_lo[r]) < static_cast<unsigned>(i_span[r]);
      // A row whose every key a mask modifier hides has LSE -inf (without one the windows above already
      // hide all of its keys).
      if constexpr (has_mask_mod) keep = keep & (lse2[col] != detail::neg_inf()) & mask_mod(w.b, h, i, j[r]);
      float y = sc[v] * f.scale, dfac = f.scale;
      if (f.softcap > 0.f) {
        const float th = arch::tanh_fast(y * inv_softcap);  // the forward's
        y = f.softcap * th;
        dfac *= 1.f - th * th;
      }
      const int dist = i + w.sq.off - j[r];
      y -= slope * static_cast<float>(dist < 0 ? -dist : dist);
      if constexpr (has_mods) {
        dfac *= score_mod.grad(y, w.b, h, i, j[r]);  // at the score the modifier was given
        y = score_mod(y, w.b, h, i, j[r]);
      }
      const float pr = keep ? arch::exp2_approx(::fmaf(y, log2e, -lse2[col])) : 0.f;
      const bool z = (kept >> v) & 1u;  // all ones without dropout (drop_scale 1)
      dp[v] = keep ? pr * ((z ? dp[v] * drop_scale : 0.f) - di[col]) * dfac : 0.f;
      sc[v] = z ? pr * drop_scale : 0.f;
    }
  }

  /// The 16-byte-row swizzled operand chains of S^T (dP^T): A = warpgroup c's 64 rows of K (V), B = the
  /// stage's 64 rows of Q (dO), both K-major, D / 16 k16 steps (32 bytes apart inside a 128-byte row,
  /// the next 64 columns a block of rows further on).
  template <class Ctx>
  STRATA_HOST_DEVICE static void issue_transposed(Ctx& ctx, unsigned char* keys, unsigned char* queries, int c,
                                                  typename st_mma::c_fragment& acc) {
    STRATA_UNROLL
    for (int step = 0; step < D / 16; ++step) {
      const auto kd = mma::smem_descriptor::of(ctx, keys + (step / 4) * block_n * 128 + c * 64 * 128, mma::wgmma_swizzle::b128, 16, 1024);
      const auto qd = mma::smem_descriptor::of(ctx, queries + (step / 4) * block_m * 128, mma::wgmma_swizzle::b128, 16, 1024);
      st_mma::mma_async(ctx, kd.advanced(32 * (step % 4)), qd.advanced(32 * (step % 4)), acc, step > 0);
    }
    mma::wgmma_commit(ctx);
  }

  /// Adds warpgroup c's part k of dQ (64 query rows from m0, columns 64 k .. + 63) into the fp32
  /// accumulator: through the part's tile in shared memory (two 64 x 32 boxes, 128-byte swizzled rows)
  /// and one TMA reduction per box (the L2 adds whole lines: no atomic per element). Rows past the
  /// sequence add zeros (dS^T is 0 there) into rows the dQ kernel never reads. Unordered by default;
  /// with options.deterministic in key-tile order: warpgroup c's part k of the r-th key tile walking
  /// this query tile is turn (r chunks + k) consumers + c on the tile's counter, and the reduction is
  /// complete (its writes done) before the turn passes on.
  template <class Ctx>
  STRATA_HOST_DEVICE static void add_dq(Ctx& ctx, const params& p, const work& w, const tiles& tl, int h, int m0, int tr, int c,
                                        int part, const typename dq_mma::c_fragment& dq) {
    const detail::backward_params& bp = p.b;
    const detail::forward_params& f = bp.f;
    // Value v is row 16 warp + lane / 4 + 8 ((v / 2) % 2), column 8 (v / 4) + 2 (lane % 4) + v % 2
    // (wgmma's accumulator map); columns 32 b .. + 31 are box b, whose row holds them in 16-byte units
    // XORed with the row % 8 (lane / 4). So a value pair's offset is the thread's base XOR the unit
    // (2 (v / 4) % 8 units: 32 bytes per 8 columns), plus 1024 bytes for the second row and a box on.
    static_assert(dq_mma::c_coord(37, 0).row == 17 && dq_mma::c_coord(37, 0).col == 2 && dq_mma::c_coord(37, 3).row == 25 &&
                      dq_mma::c_coord(37, 3).col == 3 && dq_mma::c_coord(37, 4).col == 10,
                  "dQ's stores follow wgmma's accumulator map");
    const int lane = tr % 32;
    const unsigned base = span_swizzled(unsigned((16 * (tr / 32) + lane / 4) * 128 + (lane % 4) * 8), 128);
    unsigned char* tile = tl.dq(c, part);
    STRATA_UNROLL
    for (int jn = 0; jn < dq_mma::c_values / 4; ++jn)
      STRATA_UNROLL
      for (int hi = 0; hi < 2; ++hi) {
        const unsigned at = (base ^ (unsigned(jn % 4) << 5)) + 1024u * unsigned(hi) + 8192u * unsigned(jn / 4);
        *reinterpret_cast<copy::detail::raw_vector<8>*>(tile + at) = pair_bits(dq[4 * jn + 2 * hi], dq[4 * jn + 2 * hi + 1]);
      }
    mma::fence_async_shared(ctx);  // generic stores, read next by the TMA (async proxy)
    arch::named_barrier{tile_barrier + c, 128}.sync(ctx);
    if (tr != 0) return;
    const int plane = w.b * f.heads + h;
    unsigned* turn = bp.dq_turn ? bp.dq_turn + static_cast<long long>(plane) * bp.q_tiles + m0 / block_m : nullptr;
    const unsigned mine =
        static_cast<unsigned>(((w.t - detail::first_key_tile(f, w.sq, m0, block_n)) * chunks + part) * consumers + c);
    if (turn) wait_turn(ctx, turn, mine);
    STRATA_UNROLL
    for (int box = 0; box < 2; ++box) copy::tma_reduce_add(ctx, p.dq_acc, tile + box * 8192, 64 * part + 32 * box, m0, plane);
    copy::tma_store_commit(ctx);
    if (turn) {
      copy::tma_store_complete<0>(ctx);
      pass_turn(ctx, turn, mine + 1u, [] {}, true);
    }
  }

  /// Two floats' bits as one 8-byte vector (a value pair's store).
  STRATA_HOST_DEVICE static copy::detail::raw_vector<8> pair_bits(float x0, float x1) {
    copy::detail::raw_vector<8> r;
    std::memcpy(&r.w[0], &x0, 4);
    std::memcpy(&r.w[1], &x1, 4);
    return r;
  }

  /// dK and dV of this warpgroup's keys (rows past the sequence not written).
  STRATA_HOST_DEVICE static void store(const params& p, const work& w, int tr, int c, const typename grad_mma::c_fragment& dk,
                                       const typename grad_mma::c_fragment& dv) {
    const detail::backward_params& bp = p.b;
    const long long key0 = static_cast<long long>(w.sq.k0) + w.n0 + 64 * c;
    Elem* dkg = static_cast<Elem*>(bp.dk) + w.b * bp.dk_bs + key0 * bp.dk_rs + w.hk * bp.dk_hs;
    Elem* dvg = static_cast<Elem*>(bp.dv) + w.b * bp.dv_bs + key0 * bp.dv_rs + w.hk * bp.dv_hs;
    const int keys_left = w.sq.sk - w.n0 - 64 * c;
    const auto put = [&](Elem* base, long long rs, bool pairs, const typename grad_mma::c_fragment& acc) {
      STRATA_UNROLL
      for (int v = 0; v < grad_mma::c_values; v += 2) {
        const mma::coord x = grad_mma::c_coord(tr, v);  // v and v + 1: columns x.col and x.col + 1
        if (x.row >= keys_left) continue;
        Elem* at = base + x.row * rs + x.col;
        if (pairs) {
          arch::store_narrow_pair(at, acc[v], acc[v + 1]);
        } else {
          at[0] = static_cast<Elem>(acc[v]);
          at[1] = static_cast<Elem>(acc[v + 1]);
        }
      }
    };
    put(dkg, bp.dk_rs, p.dk_pairs, dk);
    put(dvg, bp.dv_rs, p.dv_pairs, dv);
  }
};

/// The Hopper backward for (Elem, D) on `s`: the preprocess kernel, sm90_backward_kernel (the form with
/// soft-cap, ALiBi and dropout compiled in when the options ask for any or the forward's score / mask
/// modifiers are given, the shorter one otherwise),
/// the dQ conversion and the sink gradient. `ws` holds attention_backward_workspace_size<arch::sm90a>(q, k,
/// v, opt) bytes. Throws what sm90_backward_kernel::make_params throws, and what
/// strata::attention_backward throws for overlapping pointers.
template <class Elem, int D, class ScoreMod = no_score_mod, class MaskMod = no_mask_mod>
void run_sm90_backward(stream& s, const tensor& q, const tensor& k, const tensor& v, const tensor& o, const tensor& dout,
                       const tensor& dq, const tensor& dk, const tensor& dv, const options& opt, workspace ws,
                       const ScoreMod& score_mod = {}, const MaskMod& mask_mod = {}) {
  const auto run = [&](auto kernel) {
    using K = decltype(kernel);
    const std::string op = "strata::attn::sm90_backward_kernel";
    const auto p = K::make_params(q, k, v, o, dout, dq, dk, dv, opt, ws);
    const long long rows = static_cast<long long>(q.batch) * q.heads * q.seqlen;
    if (K::blocks_of(p) > 0x7fffffffLL || rows > 0x7fffffffLL) throw invalid_argument(op, "q", "is too large for one grid");
    detail::backward_pointers(op, q, k, v, o, dout, dq, dk, dv, opt, ws, attention_backward_workspace_size<arch::sm90a>(q, k, v, opt)).check();
    detail::launch_backward_around<Elem, D, D, arch::sm90a>(s, p.b, [&] {
      if (K::blocks_of(p) > 0) launch(s, K::launch_shape_of(p), kernel, p);
    });
  };
  detail::with_sm90_form<sm90_backward_kernel, Elem, D>(opt, score_mod, mask_mod, run);
}

}  // namespace strata::attn
