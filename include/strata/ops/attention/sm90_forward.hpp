// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/attention/sm90_forward.hpp -- the Hopper attention forward (sm_90a): warp-specialized,
// Q, K and V by TMA onto mbarriers, S = Q K^T by wgmma from shared memory, the online softmax on the
// accumulators, O += P V by wgmma with P from registers (FlashAttention-3's structure, issue 37).
//
//   attn::run_sm90_forward<bf16, 128>(stream, q, k, v, o, opt);   // picks the kernel form, launches
// or, one form:
//   using K = attn::sm90_forward_kernel<bf16, 128>;
//   const auto p = K::make_params(q, k, v, o, opt);   // checks the options, builds the tensor maps
//   strata::launch(stream, K::launch_shape_of(p), K{}, p);
//
// A block computes 128 query rows of one (batch, head) against all the keys it may see, with three
// warpgroups:
//   - warpgroup 0, the producer, gives registers back (setmaxnreg 40); one of its threads loads Q once
//     (D / 64 boxes of 128 rows x 64 columns, the 128-byte swizzle) and then each K / V tile into a
//     ring of two stages (block_n keys x D each, K and V on their own "full" barriers, so that Q K^T
//     starts before V has landed). Rows past the sequence are zero-filled by the copy engine;
//   - warpgroups 1 and 2, the consumers (setmaxnreg 232), own query rows 0-63 and 64-127. Per tile:
//     S (64 x block_n, f32) = Q K^T by D / 16 chained wgmmas (both operands K-major); the online
//     softmax in registers (the accumulator map's rows are mma.sync's: two per thread, shared by the 4
//     threads of a quad, reduced by two xor shuffles; masks only on edge tiles; the scale folded into
//     one FFMA and one ex2 per score, m in log2 units); O rescaled by alpha; P rounded to 16 bits in
//     registers, the A operand of O += P V in place (sm90_wgmma_rs: the accumulator map of two
//     8-column blocks is the A map of one k16 step), V read N-major (imm-trans-b). Tile i's Q K^T and
//     tile i - 1's P V are issued together and tile i's softmax runs while that P V is in flight
//     (FlashAttention-3's intra-warpgroup overlap); a stage's K goes back to the producer once its S
//     has landed, its V once its P V has ("empty" barriers, one arrival per consumer warpgroup). The
//     two warpgroups take turns issuing their wgmmas (named barriers: FlashAttention-3's ping-pong),
//     so one's softmax runs under the other's matrix products;
//   - the epilogue divides by l and writes O and LSE: O through the warpgroup's rows of the Q tile
//     (free after its last Q K^T) and TMA stores of 64 x 64 boxes for dense batches, from registers
//     (two elements per store where the strides allow) for packed and padded ones, whose rows past a
//     sequence belong to others.
// Key tiles run from the last visible one down (the diagonal's masked tile first under causality).
// A row with no visible key gives O = 0 and LSE = -inf, as forward.hpp's.
//
// Takes: f16 / bf16, head dim 64, 128 or 256 (V the same), BSHD or BHSD with 16-byte aligned rows,
// GQA / MQA, causal masks of both alignments, sliding windows, sinks, the LSE, packed sequences
// (cu_seqlens, with options.total_q / total_k: the boxes start at a sequence's first packed row) and
// padded ones (seqused). A box may reach past a sequence's keys (into the next packed sequence or a
// padded batch's unused rows): those keys are masked, and the first tile's V rows there are zeroed in
// shared memory before P V (0 times a NaN there would be NaN). Soft-cap, ALiBi and dropout (its mask
// bit for bit the other kernels') in the form with Extras (run_sm90_forward picks it; the form without
// them refuses those options by name, strata::unsupported), and score / mask modifiers (mods.hpp) in
// it too (sm90_forward_kernel<Elem, D, true, ScoreMod, MaskMod>: every tile is an edge tile under a
// mask modifier). Paged caches, fp8 and split-KV have no form of this kernel. Not yet (issue 37): a
// persistent grid. strata::attention does not pick this kernel yet: it has not run on a GPU
// (docs/attention.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "strata/arch/fast_math.hpp"
#include "strata/arch/mbarrier.hpp"
#include "strata/arch/named_barrier.hpp"
#include "strata/arch/narrow.hpp"
#include "strata/arch/registers.hpp"
#include "strata/copy/detail/vector_types.hpp"
#include "strata/copy/tma.hpp"
#include "strata/hierarchy/tile_order.hpp"
#include "strata/mma/accumulator_rows.hpp"
#include "strata/mma/mma_op.hpp"
#include "strata/mma/wgmma.hpp"
#include "strata/ops/attention/host.hpp"
#include "strata/ops/attention/philox.hpp"
#include "strata/ops/attention/sm90_tma.hpp"

namespace strata::attn {

/// Extras: soft-cap, ALiBi and dropout compiled in (the logit formed in natural units first); without
/// them the scale is folded into the exponent (one FFMA and one ex2 per score). Score and mask
/// modifiers (mods.hpp) need the form with Extras: they see the logit in natural units.
template <class Elem, int D, bool Extras = false, class ScoreMod = no_score_mod, class MaskMod = no_mask_mod>
struct sm90_forward_kernel {
  static constexpr bool has_mods = !std::is_same_v<ScoreMod, no_score_mod> || !std::is_same_v<MaskMod, no_mask_mod>;
  static_assert(Extras || !has_mods, "attn::sm90_forward_kernel: score / mask mods need the form with extras (Extras = true)");
  /// Under a mask modifier every tile is an edge tile (its mask is anywhere).
  static constexpr bool has_mask_mod = !std::is_same_v<MaskMod, no_mask_mod>;
  ScoreMod score_mod{};
  MaskMod mask_mod{};
  static_assert(std::is_same_v<Elem, f16> || std::is_same_v<Elem, bf16>, "attn::sm90_forward_kernel takes f16 or bf16");
  static_assert(D == 64 || D == 128 || D == 256, "attn::sm90_forward_kernel: head dim 64, 128 or 256");
  using target = arch::sm90a;
  using out_type = Elem;
  static constexpr const char* name = "strata::attn::sm90_forward_kernel";

  static constexpr int block_m = 128;                    // query rows per block: 64 per consumer warpgroup
  // Keys per tile: 128, or 64 where the stages must fit (d256) or the registers (Extras at d128: with
  // S and P of 128 keys beside O, the dropout draws spilled 196 B under setmaxnreg 232).
  static constexpr int block_n = D <= 128 && !Extras ? 128 : 64;
  static constexpr int stages = 2;
  static constexpr int chunks = D / 64;                  // 128-byte swizzled column blocks of Q, K and V
  static constexpr int consumers = 2;
  static constexpr int threads = 128 * (1 + consumers);
  static constexpr int max_threads_per_block = threads;
  static constexpr int min_blocks_per_multiprocessor = 1;  // fixes the register count at entry (setmaxnreg)
  static constexpr int producer_registers = 40, consumer_registers = 232;  // 128 x (40 + 2 x 232) = 64512
  static constexpr int turn_barrier = 1;  // named barriers 1 and 2: the consumer warpgroups' turns to issue
  static constexpr int zero_barrier = 3;  // named barrier 3: V's rows past the keys are zeroed
  static constexpr int out_barrier = 4;   // named barriers 4 and 5: a warpgroup's O is in shared memory

  /// S = Q K^T: A = this warpgroup's 64 rows of Q, B = the tile's keys, both K-major (D innermost).
  using qk = mma::sm90_64xNx16<Elem, block_n>;
  /// O += P V: A = P from registers, B = V (keys x D, D innermost: N-major).
  using pv = mma::sm90_64xNx16_rs<Elem, D, mma::wgmma_major::mn>;
  static_assert(pv::accumulator_is_a_fragment(), "P's A fragments are S's accumulators, rounded in place");
  using rows = mma::accumulator_rows<typename qk::warp_rows>;
  static_assert(rows::count == 2 && rows::lane_bits == 3, "two rows per thread, shared by the 4 threads of a quad");
  static constexpr int p_steps = block_n / 16;  // k16 steps of P V

  static constexpr std::size_t q_bytes = std::size_t(block_m) * D * sizeof(Elem);
  static constexpr std::size_t kv_bytes = std::size_t(block_n) * D * sizeof(Elem);  // one of K or V, one stage
  static constexpr std::size_t stage_bytes = 2 * kv_bytes;
  /// Q, the stages, and room to start them on a 1024-byte boundary (the 128-byte swizzle's period).
  static constexpr std::size_t dynamic_shared_bytes = q_bytes + stages * stage_bytes + 1024;
  static_assert(dynamic_shared_bytes + 256 <= arch::sm90a::shared_memory_per_block,
                "attn::sm90_forward_kernel: Q and the stages do not fit in a block's shared memory");

  struct shared_storage {
    mbarrier q_full;
    mbarrier k_full[stages];  // the stage's K has landed
    mbarrier v_full[stages];  // the stage's V has landed
    mbarrier k_empty[stages]; // both consumer warpgroups are done with the stage's K
    mbarrier v_empty[stages]; // ... and with its V
  };

  struct params {
    detail::forward_params f;
    copy::tensor_map q, k, v;  // (D, seqlen, heads, batch), D innermost; packed: (D, total rows, heads, 1)
    copy::tensor_map o;        // (D, seqlen, heads, batch) with 64-row boxes, when o_tma
    bool o_tma = false;        // O goes out through shared memory by TMA stores (dense batches, 16-byte rows)
    bool o_pairs = false;      // else: O may be written two elements per store
  };

  /// The first option, by its name, that only the form with extras takes (soft-cap, ALiBi, dropout),
  /// or null: what run_sm90_forward chooses the form by, and what the short form refuses.
  static const char* extra_option(const options& opt) { return detail::sm90_extra_option(opt); }

  /// Whether TMA can move the tensor's rows (sm90_tma.hpp).
  static bool tma_rows(const tensor& t) { return detail::sm90_tma_rows<Elem>(t); }

  /// Params for one call; throws strata::invalid_argument for bad tensors and options (the checks of
  /// strata::attention) and strata::unsupported, naming the option, for what this kernel does not take.
  static params make_params(const tensor& q, const tensor& k, const tensor& v, const tensor& o, const options& opt) {
    const std::string op = "strata::attn::sm90_forward_kernel";
    detail::validate(op, q, k, v, o, opt, false);
    if (const char* extra = extra_option(opt); !Extras && extra)
      throw unsupported(op + ": " + extra + " needs the kernel form with extras, sm90_forward_kernel<Elem, D, true> "
                                            "(attn::run_sm90_forward picks it)");
    detail::sm90_check_inputs<Elem, D>(op, "forward", q, v, opt, {{&q, "q"}, {&k, "k"}, {&v, "v"}});
    const bool packed = opt.cu_seqlens_q != nullptr;
    params p{};
    p.f = detail::base_params(q, k, v, o, opt);
    p.f.m_tiles = (q.seqlen + block_m - 1) / block_m;
    const long long q_rows = packed ? opt.total_q : q.seqlen, k_rows = packed ? opt.total_k : k.seqlen;
    if (q_rows > 0 && q.batch > 0) p.q = map_of(q, block_m, q_rows, packed);
    if (k_rows > 0 && k.batch > 0) {  // no keys: the consumers see no tile, the maps stay unused
      p.k = map_of(k, block_n, k_rows, packed);
      p.v = map_of(v, block_n, k_rows, packed);
    }
    p.o_pairs = detail::sm90_pair_rows<Elem>(o);
    // A TMA store writes every row of its box inside the tensor: only where the rows past a sequence
    // are outside it (dense batches; not packed or padded ones, whose other rows must stay untouched).
    p.o_tma = !packed && !opt.seqused_q && q.seqlen > 0 && q.batch > 0 && tma_rows(o);
    if (p.o_tma) p.o = map_of(o, 64, o.seqlen, false);
    return p;
  }

  /// One block per (batch, head, 128 query rows).
  static long long blocks_of(const params& p) { return static_cast<long long>(p.f.batch) * p.f.heads * p.f.m_tiles; }
  static launch_shape launch_shape_of(const params& p) {
    return launch_shape{.grid = dims(static_cast<int>(blocks_of(p))), .block = dims(threads), .dynamic_shared_bytes = dynamic_shared_bytes};
  }

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    // A build for several GPUs compiles the kernel for each; only sm_90a has wgmma.
    if constexpr (!mma::available_in_this_pass<qk>) mma::unavailable_in_this_pass();
    else run(ctx, p);
  }

 private:
  /// (D, seqlen, heads, batch) in boxes of 64 columns x `rows` (sm90_tma.hpp).
  static copy::tensor_map map_of(const tensor& t, int rows, long long seq_rows, bool packed) {
    return detail::sm90_head_map<Elem>(t, rows, seq_rows, packed);
  }

  /// The block's work: (batch, head, query tile), with the query tiles of one GQA group on
  /// consecutive blocks (they read the same K and V: the same chiplet's L2), longest first under a
  /// right window (causality).
  struct work {
    int b, h, hk, m0;
  };
  template <class Ctx>
  STRATA_HOST_DEVICE static work work_of(Ctx& ctx, const detail::forward_params& p) {
    order::problem pr;
    pr.tiles_m = static_cast<long long>(p.batch) * p.heads * p.m_tiles;
    pr.topology = target::chiplets;
    const long long item = order::dispatch_inverse<order::contiguous>(pr)(ctx.block().rank());
    const int group = p.heads / p.heads_k;
    const long long per_group = static_cast<long long>(group) * p.m_tiles;
    const int gi = static_cast<int>(item / per_group), r = static_cast<int>(item % per_group);
    work w;
    w.b = gi / p.heads_k;
    w.hk = gi % p.heads_k;
    w.h = w.hk * group + r % group;
    const int mt_rank = r / group;
    w.m0 = (p.longest_first ? p.m_tiles - 1 - mt_rank : mt_rank) * block_m;
    return w;
  }

  /// The key tiles [t_lo, t_hi) the rows [first_q, last_q] see (positions; off: the diagonal's offset).
  struct tile_range {
    int lo, hi;
  };
  STRATA_HOST_DEVICE static tile_range tiles_of(const detail::forward_params& p, int sk, int first_q, int last_q, int off) {
    long long n_lo = 0, n_hi = sk;
    if (p.window_right >= 0 && static_cast<long long>(last_q) + off + p.window_right + 1 < n_hi)
      n_hi = static_cast<long long>(last_q) + off + p.window_right + 1;
    if (p.window_left >= 0 && static_cast<long long>(first_q) + off - p.window_left > n_lo)
      n_lo = static_cast<long long>(first_q) + off - p.window_left;
    if (n_hi <= n_lo) return {0, 0};
    return {static_cast<int>(n_lo / block_n), static_cast<int>((n_hi + block_n - 1) / block_n)};
  }

  template <class Ctx>
  STRATA_HOST_DEVICE void run(Ctx& ctx, const params& p) const {
    const work w = work_of(ctx, p.f);
    const detail::seq_view sq = detail::sequence(p.f, w.b);
    if (w.m0 >= sq.sq) return;  // nothing to write (the whole block leaves together)
    auto& s = ctx.template shared<shared_storage>();
    unsigned char* dyn = ctx.template dynamic_shared<unsigned char>();
    const std::uint32_t address = mma::smem_descriptor::of(ctx, dyn, mma::wgmma_swizzle::none, 0, 0).address();
    unsigned char* q_tile = dyn + (1024 - address % 1024) % 1024;
    unsigned char* stage0 = q_tile + q_bytes;
    if (ctx.block().thread_rank() == 0) {
      s.q_full.init(ctx, 1);
      for (int i = 0; i < stages; ++i) {
        s.k_full[i].init(ctx, 1);
        s.v_full[i].init(ctx, 1);
        s.k_empty[i].init(ctx, consumers);
        s.v_empty[i].init(ctx, consumers);
      }
    }
    ctx.block().sync();
    const int last_row = detail::imin(w.m0 + block_m, sq.sq) - 1;
    const tile_range t = tiles_of(p.f, sq.sk, w.m0, last_row, sq.off);
    const int group = ctx.warpgroup().index();
    if (group == 0) {
      arch::decrease_registers<producer_registers>(ctx);
      if (ctx.warpgroup().thread_rank() == 0) produce(ctx, p, s, w, sq, t, q_tile, stage0);
    } else {
      arch::increase_registers<consumer_registers>(ctx);
      consume(ctx, p, s, w, sq, t, q_tile, stage0, group - 1);
    }
  }

  STRATA_HOST_DEVICE static unsigned char* k_stage(unsigned char* stage0, int st) { return stage0 + std::size_t(st) * stage_bytes; }
  STRATA_HOST_DEVICE static unsigned char* v_stage(unsigned char* stage0, int st) { return k_stage(stage0, st) + kv_bytes; }

  /// The producer thread: Q, then the tiles from the last down, tile i of the order in stage
  /// i % stages of round i / stages: its K once both consumers released the round before's K (after
  /// its Q K^T), its V once they released that V (after its P V). The first round's waits pass at once.
  template <class Ctx>
  STRATA_HOST_DEVICE static void produce(Ctx& ctx, const params& p, shared_storage& s, const work& w, const detail::seq_view& sq,
                                         tile_range t, unsigned char* q_tile, unsigned char* stage0) {
    // Packed sequences (cu_seqlens): rows from the sequence's first packed row, batch entry 0.
    const int b = p.f.cu_q ? 0 : w.b;
    s.q_full.arrive_expect_tx(ctx, std::uint32_t(q_bytes));
    STRATA_UNROLL
    for (int c = 0; c < chunks; ++c) copy::tma_load(ctx, q_tile + c * block_m * 128, p.q, s.q_full, 64 * c, sq.q0 + w.m0, w.h, b);
    for (int i = 0; i < t.hi - t.lo; ++i) {
      const int st = i % stages, round = i / stages, n0 = sq.k0 + (t.hi - 1 - i) * block_n;
      s.k_empty[st].wait(ctx, (round & 1) ^ 1);
      s.k_full[st].arrive_expect_tx(ctx, std::uint32_t(kv_bytes));
      STRATA_UNROLL
      for (int c = 0; c < chunks; ++c) copy::tma_load(ctx, k_stage(stage0, st) + c * block_n * 128, p.k, s.k_full[st], 64 * c, n0, w.hk, b);
      s.v_empty[st].wait(ctx, (round & 1) ^ 1);
      s.v_full[st].arrive_expect_tx(ctx, std::uint32_t(kv_bytes));
      STRATA_UNROLL
      for (int c = 0; c < chunks; ++c) copy::tma_load(ctx, v_stage(stage0, st) + c * block_n * 128, p.v, s.v_full[st], 64 * c, n0, w.hk, b);
    }
  }

  /// Consumer warpgroup c: query rows w.m0 + 64 c .. + 63.
  template <class Ctx>
  STRATA_HOST_DEVICE void consume(Ctx& ctx, const params& p, shared_storage& s, const work& w, const detail::seq_view& sq,
                                  tile_range t, unsigned char* q_tile, unsigned char* stage0, int c) const {
    auto warp = ctx.warp().whole();
    const int tr = ctx.warpgroup().thread_rank();
    const int lane = tr % 32;
    const int r0 = w.m0 + 64 * c + 16 * (tr / 32);  // this warp's first row
    const auto row_of = [&](int slot) { return r0 + rows::row_of(lane, slot); };
    constexpr float log2e = 1.4426950408889634f;
    const float exp2_scale = p.f.scale * log2e;

    // Each row's visible keys [j_lo, j_hi) (none for a row past the sequence) and softmax state.
    int j_lo[2], j_hi[2];
    float m_run[2], l_run[2];
    STRATA_UNROLL
    for (int r = 0; r < 2; ++r) {
      const long long pos = static_cast<long long>(row_of(r)) + sq.off;
      long long hi = row_of(r) < sq.sq ? sq.sk : 0, lo = 0;
      if (p.f.window_right >= 0 && pos + p.f.window_right + 1 < hi) hi = pos + p.f.window_right + 1;
      if (p.f.window_left >= 0 && pos - p.f.window_left > 0) lo = pos - p.f.window_left;
      j_lo[r] = static_cast<int>(lo);
      j_hi[r] = static_cast<int>(hi < lo ? lo : hi);
      m_run[r] = detail::neg_inf();
      l_run[r] = 0.f;
      if (p.f.sinks) {  // one more logit in the denominator, attending to nothing
        m_run[r] = p.f.sinks[w.h] * log2e;
        l_run[r] = 1.f;
      }
    }
    // The keys every row of this warpgroup sees: tiles inside need no mask.
    long long in_lo = 0, in_hi = sq.sk;
    {
      const int first = w.m0 + 64 * c, last = detail::imin(w.m0 + 64 * c + 63, sq.sq - 1);
      if (p.f.window_left >= 0) in_lo = static_cast<long long>(last) + sq.off - p.f.window_left;
      if (p.f.window_right >= 0) in_hi = detail::imin(sq.sk, first + sq.off + p.f.window_right + 1);
      if (last < first) in_hi = in_lo;  // a warpgroup past the sequence: every tile is an edge tile
    }

    typename pv::c_fragment o;
    STRATA_UNROLL
    for (int v = 0; v < pv::c_values; ++v) o[v] = 0.f;
    const bool leader = tr == 0;
    const int tiles = t.hi - t.lo;
    // Tile i of the order: stage i % stages, round i / stages, keys from (t.hi - 1 - i) * block_n. The
    // barrier waits come before the wgmma fence: a spin loop between the fence and the wgmmas makes
    // ptxas fence each wgmma again (C7519).
    const auto k_ready = [&](int i) { s.k_full[i % stages].wait(ctx, (i / stages) & 1); };
    const auto v_ready = [&](int i) { s.v_full[i % stages].wait(ctx, (i / stages) & 1); };
    const auto issue_qk = [&](int i, typename qk::c_fragment& sc) {
      const int st = i % stages;
      STRATA_UNROLL
      for (int step = 0; step < D / 16; ++step) {
        const auto qd = mma::smem_descriptor::of(ctx, q_tile + (step / 4) * block_m * 128 + c * 64 * 128, mma::wgmma_swizzle::b128, 16, 1024);
        const auto kd = mma::smem_descriptor::of(ctx, k_stage(stage0, st) + (step / 4) * block_n * 128, mma::wgmma_swizzle::b128, 16, 1024);
        qk::mma_async(ctx, qd.advanced(32 * (step % 4)), kd.advanced(32 * (step % 4)), sc, step > 0);
      }
      mma::wgmma_commit(ctx);
    };
    // V (block_n keys x D): N-major, 64-column blocks block_n x 128 bytes apart (LBO), groups of 8
    // keys 1024 bytes apart (SBO), a k16 step 2048 bytes on.
    const auto issue_pv = [&](int i, const typename pv::a_registers (&pr)[p_steps]) {
      const int st = i % stages;
      const auto vd = mma::smem_descriptor::of(ctx, v_stage(stage0, st), mma::wgmma_swizzle::b128, block_n * 128, 1024);
      STRATA_UNROLL
      for (int k = 0; k < p_steps; ++k) pv::mma_async(ctx, pr[k], vd.advanced(2048 * k), o);
      mma::wgmma_commit(ctx);
    };
    // The softmax of tile i on its scores; returns alpha for O.
    // Soft-cap and ALiBi (Extras): the factors, and each row's position for ALiBi's distance.
    logit_terms lt{};
    if constexpr (Extras) {
      lt.scale = p.f.scale;
      lt.softcap = p.f.softcap;
      lt.inv_softcap = p.f.softcap > 0.f ? 1.f / p.f.softcap : 0.f;
      lt.slope = p.f.alibi ? p.f.alibi[w.h] : 0.f;
      for (int r = 0; r < 2; ++r) lt.pos[r] = row_of(r) + sq.off, lt.row[r] = row_of(r);
      lt.dropout = p.f.dropout_p > 0.f;
      lt.threshold = p.f.dropout_threshold;
      lt.drop_scale = lt.dropout ? dropout_scale(p.f.dropout_threshold) : 1.f;
      lt.seed = p.f.seed, lt.offset = p.f.offset;
      lt.batch = w.b, lt.heads = p.f.heads, lt.head = w.h;
    }
    const auto softmax_of = [&](int i, typename qk::c_fragment& sc, float (&alpha)[2]) {
      const int n0 = (t.hi - 1 - i) * block_n;
      if (!has_mask_mod && n0 >= in_lo && n0 + block_n <= in_hi)
        softmax<false>(warp, sc, n0, lane, j_lo, j_hi, exp2_scale, lt, m_run, l_run, alpha);
      else
        softmax<true>(warp, sc, n0, lane, j_lo, j_hi, exp2_scale, lt, m_run, l_run, alpha);
    };
    // P in place: accumulator values 8 k .. 8 k + 7 are the A fragment of k16 step k, two per register.
    const auto round_p = [&](const typename qk::c_fragment& sc, typename pv::a_registers (&pr)[p_steps]) {
      STRATA_UNROLL
      for (int k = 0; k < p_steps; ++k)
        STRATA_UNROLL
        for (int r = 0; r < 4; ++r) pr[k][r] = arch::narrow_pair<Elem>(sc[8 * k + 2 * r], sc[8 * k + 2 * r + 1]);
    };

    // Tile i's softmax runs while tile i - 1's P V is in flight (FlashAttention-3's intra-warpgroup
    // overlap): per step, Q K_i^T and then P_{i-1} V_{i-1} are issued as two groups; waiting for all
    // but the newest group lands S_i, whose softmax runs under P V; O is rescaled once P V has landed.
    // A stage's K goes back to the producer when its S has landed, its V when its P V has.
    //
    // And the two consumer warpgroups take turns issuing (FlashAttention-3's ping-pong): each of the
    // tiles + 1 issue points of a warpgroup waits for its turn (named barrier 1 + c: its 128 threads
    // sync, the other warpgroup's 128 arrive) and then hands the turn over, so that one warpgroup's
    // softmax runs while the other's wgmmas hold the tensor cores. Warpgroup 1 hands the first turn
    // to warpgroup 0, which takes one more turn after its last issue (waiting for warpgroup 1's last
    // hand-over): every round of both barriers has its 256 arrivals, none is left open. The loop
    // itself does not depend on c (a branch on it there made nvcc compile the loop twice).
    const arch::named_barrier my_turn{turn_barrier + c, 256}, their_turn{turn_barrier + 1 - c, 256};
    const auto take_turn = [&] { my_turn.sync(ctx); };
    const auto pass_turn = [&] { their_turn.arrive(ctx); };
    s.q_full.wait(ctx, 0);
    if (tiles > 0) {
      if (c == 1) their_turn.arrive(ctx);
      typename pv::a_registers pr[p_steps];
      {
        typename qk::c_fragment sc;
        k_ready(0);
        take_turn();
        mma::wgmma_fence(ctx, sc);
        issue_qk(0, sc);
        pass_turn();
        mma::wgmma_wait<0>(ctx, sc);
        if (leader) s.k_empty[0].arrive(ctx);
        float alpha[2];  // O is still 0: nothing to rescale
        softmax_of(0, sc, alpha);
        round_p(sc, pr);
      }
      // The first tile of the order may reach past the sequence's keys: its rows there hold another
      // sequence's keys (packed), a padded batch's unused rows, or the copy engine's zeros. P is 0
      // there, but 0 times a NaN or an infinity in V is NaN: those rows of V are zeroed before any
      // P V reads them, by both consumer warpgroups (half each), ordered by named barrier 3.
      if (const int past = sq.sk - (t.hi - 1) * block_n; past < block_n) {
        v_ready(0);
        unsigned char* v0 = v_stage(stage0, 0);
        const int units = (block_n - past) * 8;  // 16-byte units of the rows past the keys, per 64 columns
        for (int u = tr + 128 * c; u < units * chunks; u += 256) {
          const int chunk = u / units, r = past + (u % units) / 8;
          *reinterpret_cast<copy::detail::raw_vector<16>*>(v0 + chunk * block_n * 128 + r * 128 + (u % 8) * 16) = {};
        }
        mma::fence_async_shared(ctx);  // generic stores, read next by the wgmmas (async proxy)
        arch::named_barrier{zero_barrier, 256}.sync(ctx);
      }
      for (int i = 1; i < tiles; ++i) {
        typename qk::c_fragment sc;
        k_ready(i);
        v_ready(i - 1);
        take_turn();
        STRATA_UNROLL
        for (int k = 0; k < p_steps; ++k) mma::wgmma_fence_operand(pr[k]);
        mma::wgmma_fence(ctx, sc, o);
        issue_qk(i, sc);
        issue_pv(i - 1, pr);
        pass_turn();
        mma::wgmma_wait<1>(ctx, sc);  // S_i has landed; P_{i-1} V_{i-1} may still run
        if (leader) s.k_empty[i % stages].arrive(ctx);
        float alpha[2];
        softmax_of(i, sc, alpha);
        mma::wgmma_wait<0>(ctx, o);
        if (leader) s.v_empty[(i - 1) % stages].arrive(ctx);
        STRATA_UNROLL
        for (int v = 0; v < pv::c_values; ++v) o[v] *= alpha[rows::slot_of(v % 4)];
        round_p(sc, pr);
      }
      v_ready(tiles - 1);
      take_turn();
      STRATA_UNROLL
      for (int k = 0; k < p_steps; ++k) mma::wgmma_fence_operand(pr[k]);
      mma::wgmma_fence(ctx, o);
      issue_pv(tiles - 1, pr);
      pass_turn();
      if (c == 0) take_turn();
      mma::wgmma_wait<0>(ctx, o);
      if (leader) s.v_empty[(tiles - 1) % stages].arrive(ctx);
    }
    store(ctx, p, w, sq, tr, c, q_tile, o, m_run, l_run);
  }

  /// The online softmax over one tile's scores, in place: sc becomes P = 2^(s c - m) (c = scale
  /// log2 e), m_run and l_run move on, alpha = 2^(m_old - m_new) per slot. Edge: keys outside
  /// [j_lo, j_hi) of the row are masked. While a row has seen no visible key its m is -inf and the
  /// exponent's reference is 0, so every exponent is 2^-inf = 0, never NaN.
  /// What Extras adds to a score before the softmax: x = scale s; x = softcap tanh(x / softcap) when
  /// softcap > 0; x -= slope |pos - j| (ALiBi; slope 0 without it). As forward.hpp forms it. And
  /// dropout on P after the row sum (philox.hpp's mask, bit for bit the other kernels').
  struct logit_terms {
    float scale, softcap, inv_softcap, slope;
    int pos[2];  // each slot's query position plus the diagonal's offset
    int row[2];  // each slot's query position (dropout's row)
    bool dropout;
    std::uint32_t threshold;
    float drop_scale;
    unsigned long long seed, offset;
    int batch, heads, head;
  };

  template <bool Edge, class Warp>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE void softmax(Warp& warp, typename qk::c_fragment& sc, int n0, int lane,
                                                     const int (&j_lo)[2], const int (&j_hi)[2], float exp2_scale,
                                                     const logit_terms& lt, float (&m_run)[2], float (&l_run)[2],
                                                     float (&alpha)[2]) const {
    constexpr float log2e = 1.4426950408889634f;
    // Without extras the max is taken of the raw scores (the scale is positive) and folded in below;
    // with them each score becomes its logit in log2 units here.
    float raw_max[2] = {detail::neg_inf(), detail::neg_inf()};
    STRATA_UNROLL
    for (int v = 0; v < qk::c_values; ++v) {
      const int r = rows::slot_of(v % 4);
      const int j = n0 + qk::c_coord(lane, v).col;
      if constexpr (Extras) {
        float x = sc[v] * lt.scale;
        if (lt.softcap > 0.f) x = lt.softcap * arch::tanh_fast(x * lt.inv_softcap);
        const int dist = lt.pos[r] - j;
        x -= lt.slope * static_cast<float>(dist < 0 ? -dist : dist);
        if constexpr (has_mods) x = score_mod(x, lt.batch, lt.head, lt.row[r], j);  // after soft-cap and ALiBi
        sc[v] = x * log2e;
      }
      if constexpr (Edge) sc[v] = (j >= j_lo[r]) & (j < j_hi[r]) & mask_mod(lt.batch, lt.head, lt.row[r], j) ? sc[v] : detail::neg_inf();
      raw_max[r] = ::fmaxf(raw_max[r], sc[v]);
    }
    float m_ref[2], sum[2] = {0.f, 0.f};
    STRATA_UNROLL
    for (int r = 0; r < 2; ++r) {
      const float row_max = rows::reduce_max(warp, raw_max[r]);
      const float mx = ::fmaxf(m_run[r], Extras ? row_max : row_max * exp2_scale);  // -inf stays -inf
      m_ref[r] = mx == detail::neg_inf() ? 0.f : mx;
      alpha[r] = arch::exp2_approx(m_run[r] - m_ref[r]);
      m_run[r] = mx;
    }
    STRATA_UNROLL
    for (int v = 0; v < qk::c_values; ++v) {
      const int r = rows::slot_of(v % 4);
      sc[v] = Extras ? arch::exp2_approx(sc[v] - m_ref[r]) : arch::exp2_approx(::fmaf(sc[v], exp2_scale, -m_ref[r]));
      sum[r] += sc[v];
    }
    if constexpr (Extras) {
      // Dropout, after the sums: one Philox call per slot and 64 keys gives this thread's 16 scores of
      // the row there (the accumulator map's columns 8 jn + 2 (lane % 4) + {0, 1}, as mma.sync's), value
      // v's byte is (jn % 8) * 2 + v % 2 of draw jn / 8 (philox.hpp).
      // One slot and 64 keys at a time: four registers of draws live, not sixteen.
      if (lt.dropout) {
        STRATA_UNROLL
        for (int r = 0; r < 2; ++r)
          STRATA_UNROLL
          for (int q = 0; q < block_n / 64; ++q) {
            const philox_u32x4 draw = dropout_draw(lt.seed, lt.offset, lt.batch, lt.heads, lt.head, lt.row[r],
                                                   dropout_group_of(n0 + q * 64 + 2 * (lane % 4)));
            STRATA_UNROLL
            for (int jn = 8 * q; jn < 8 * q + 8; ++jn)
              STRATA_UNROLL
              for (int x = 0; x < 2; ++x) {
                const int v = 4 * jn + 2 * r + x;  // slot r's values of column block jn
                const bool keep = dropout_byte(draw, (jn % 8) * 2 + x) >= lt.threshold;
                sc[v] = keep ? sc[v] * lt.drop_scale : 0.f;
              }
          }
      }
    }
    STRATA_UNROLL
    for (int r = 0; r < 2; ++r) l_run[r] = l_run[r] * alpha[r] + rows::reduce_sum(warp, sum[r]);
  }

  /// O / l and LSE = m ln 2 + ln l for this thread's two rows; nothing past the sequence. With o_tma
  /// the warpgroup's 64 rows go through its rows of the Q tile (its last Q K^T has landed: free now),
  /// laid out as a TMA box lands (64-column blocks of 128-byte rows, swizzled), and one thread stores
  /// them with TMA, a 64 x 64 box per block of columns; rows past the tensor are not written.
  template <class Ctx>
  STRATA_HOST_DEVICE static void store(Ctx& ctx, const params& p, const work& w, const detail::seq_view& sq, int tr, int c,
                                       unsigned char* q_tile, const typename pv::c_fragment& o, const float (&m_run)[2],
                                       const float (&l_run)[2]) {
    const int lane = tr % 32, r0 = w.m0 + 64 * c + 16 * (tr / 32);
    float inv[2], lse[2];
    STRATA_UNROLL
    for (int r = 0; r < 2; ++r) {
      inv[r] = l_run[r] > 0.f ? 1.f / l_run[r] : 0.f;
      lse[r] = l_run[r] > 0.f ? m_run[r] * 0.6931471805599453f + ::logf(l_run[r]) : detail::neg_inf();
    }
    const detail::forward_params& f = p.f;
    if (p.o_tma) {
      unsigned char* out = q_tile + c * 64 * 128;  // this warpgroup's rows of each 64-column block
      STRATA_UNROLL
      for (int v = 0; v < pv::c_values; v += 2) {
        const mma::coord x = pv::c_coord(tr, v);  // row 0..63 of the warpgroup, column 0..D-1
        const int r = rows::slot_of(v % 4);
        const Elem x0 = static_cast<Elem>(o[v] * inv[r]), x1 = static_cast<Elem>(o[v + 1] * inv[r]);
        const std::uint32_t pair = static_cast<std::uint32_t>(x0.bits()) | static_cast<std::uint32_t>(x1.bits()) << 16;
        // The swizzle on the offset from the 1024-byte aligned tile is the swizzle on the address.
        const std::uint32_t at = span_swizzled(std::uint32_t((x.col / 64) * block_m * 128 + x.row * 128 + (x.col % 64) * 2), 128);
        *reinterpret_cast<std::uint32_t*>(out + at) = pair;
      }
      mma::fence_async_shared(ctx);  // generic stores, read next by the TMA (async proxy)
      arch::named_barrier{out_barrier + c, 128}.sync(ctx);
      if (tr == 0) {
        STRATA_UNROLL
        for (int k = 0; k < chunks; ++k) copy::tma_store(ctx, p.o, out + k * block_m * 128, 64 * k, w.m0 + 64 * c, w.h, w.b);
        copy::tma_store_commit(ctx);
        copy::tma_store_wait<0>(ctx);
      }
    }
    Elem* ob = static_cast<Elem*>(f.o) + w.b * f.o_bs + static_cast<long long>(sq.q0) * f.o_rs + w.h * f.o_hs;
    STRATA_UNROLL
    for (int r = 0; r < 2; ++r) {
      const int row = r0 + rows::row_of(lane, r);
      if (row >= sq.sq) continue;
      if (f.lse && rows::row_leader(lane)) f.lse[w.b * f.lse_bs + w.h * f.lse_hs + sq.q0 + row] = lse[r];
      if (p.o_tma) continue;
      Elem* orow = ob + static_cast<long long>(row) * f.o_rs;
      // Values 4 j + 2 r and 4 j + 2 r + 1: columns 8 j + 2 (lane % 4) and the next.
      STRATA_UNROLL
      for (int j = 0; j < D / 8; ++j) {
        const int v = 4 * j + 2 * r, col = pv::c_coord(lane, v).col;
        const Elem x0 = static_cast<Elem>(o[v] * inv[r]), x1 = static_cast<Elem>(o[v + 1] * inv[r]);
        if (p.o_pairs) {
          const std::uint32_t pair = static_cast<std::uint32_t>(x0.bits()) | static_cast<std::uint32_t>(x1.bits()) << 16;
          *reinterpret_cast<std::uint32_t*>(orow + col) = pair;
        } else {
          orow[col] = x0;
          orow[col + 1] = x1;
        }
      }
    }
  }
};

/// Runs the Hopper forward for (Elem, D) on `s`: the kernel form with soft-cap, ALiBi and dropout
/// compiled in when the options ask for any or a score / mask modifier is given (mods.hpp, as
/// strata::attention takes them), the shorter one otherwise. Throws what make_params throws.
template <class Elem, int D, class ScoreMod = no_score_mod, class MaskMod = no_mask_mod>
void run_sm90_forward(stream& s, const tensor& q, const tensor& k, const tensor& v, const tensor& o, const options& opt = {},
                      const ScoreMod& score_mod = {}, const MaskMod& mask_mod = {}) {
  const auto run = [&](auto kernel) {
    using K = decltype(kernel);
    const auto p = K::make_params(q, k, v, o, opt);
    if (K::blocks_of(p) > 0) launch(s, K::launch_shape_of(p), kernel, p);
  };
  detail::with_sm90_form<sm90_forward_kernel, Elem, D>(opt, score_mod, mask_mod, run);
}

}  // namespace strata::attn
