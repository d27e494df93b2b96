// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/attention/backward_mma.hpp -- the attention backward's dK/dV kernel on tensor cores
// (FlashAttention-2's structure), for the 16-bit mma.sync atoms (f16 / bf16 on sm80, sm90a, sm100a)
// at head dims up to 256 (multiples of 32 up to 128, 192 and 256 above; 192 / 128). backward.hpp
// keeps the scalar fp32 kernel for the other element types, targets and head dims, and the
// preprocess, dQ and dsink kernels both use.
//
// One block of 8 warps per (batch, K/V head, key tile of BN keys), walking 64-row query tiles
// (FlashAttention-2's structure). Up to head dim 128, BN = 64: warp w has key group kg = w % 4 (keys
// n0 + 16 kg .. + 16) and part = w / 4 of two (half the queries of S^T, half the head dim of dK and
// dV); above, BN = 32: two key groups kg = w % 2 and four parts part = w / 2 (a warp's dK and dV stay
// 16 x 64, as at 128). Below for head dim 128 (parts of 32 queries and D / 2 columns). The products
// run in the transposed orientation, keys as the MMA's rows:
//   K, V   the tile's keys, 16-bit in shared memory (rows padded by 16 bytes), loaded once
//   Q, dO  the query tiles, double-buffered by strata::pipeline (cp.async on sm80+) with each row's
//          LSE2 and Di from the preprocess kernel; the walk covers every query head of the GQA group
//          and only the query tiles the windows (causal included) let see this key tile
//   per query tile, on the atom with ldmatrix fragments (mma/ldmatrix_fragments.hpp):
//     1. warp (kg, hf): S^T = K_kg Q^T and dP^T = V_kg dO^T for queries 32 hf .. + 32 (fp32
//        accumulators); P^T = 2^(S^T c - LSE2) and dS^T / scale = P^T o (dP^T - Di) per element, with
//        the masks and modifiers (c = scale log2 e); both written once to shared memory, 16-bit. The
//        softmax scale is applied once at the end instead, as FlashAttention-2 does: to dK before
//        its store and to dQ by the dQ kernel (backward_params::dq_scale), one FMUL per score less
//     2. warp (kg, hf): dV_kg += P^T dO and dK_kg += dS^T Q for head-dim columns hf D/2 .. + D/2, P^T
//        and dS^T read back as A fragments, dO and Q transposed (ldmatrix.trans); the dK and dV
//        accumulators stay in registers for the whole walk (a quarter of a 16 x D tile each per lane)
//     3. warp (qg = w % 4, hf): dQ_t = dS K for query rows 16 qg .. + 16, columns hf D/2 .. + D/2
//        (dS^T read transposed), added into the fp32 dQ accumulator (B, H, SQ, D) that the
//        preprocess kernel zeroed and the dQ kernel converts:
//          default                 fp32 atomic adds (red.global.add.f32; .v2.f32 on sm_90+, a
//                                  C fragment's column pair at once): the order of the key
//                                  tiles' additions varies from run to run, so dQ is not bitwise
//                                  reproducible (dK and dV are)
//          options.deterministic   ordered: the key tiles that walk a query tile add in key-tile
//                                  order, each waiting for its turn on a counter per (batch, head,
//                                  query tile); bitwise reproducible for any schedule. A block waits
//                                  only on blocks of lower rank (the same batch and K/V head, earlier
//                                  key tiles), which the GPU dispatches first, so the wait ends
// dQ_t's halves of the head dim above 128 run in two passes of D / 4 columns, each added when done.
// Splitting the head dim over two warps keeps the accumulators of a warp at 16 x D / 2 each for dK
// and dV: with one warp per key group holding 16 x D of both (4 warps), head dim 96 and 128 spilled
// 48-132 bytes at 255 registers (nvcc 13, sm_90a).
// Query tiles that the windows hide from every key of the tile are not walked.
#pragma once

#include <cstdint>
#include <type_traits>

#include "strata/arch/atomic.hpp"
#include "strata/arch/fast_math.hpp"
#include "strata/arch/narrow.hpp"
#include "strata/config/config.hpp"
#include "strata/copy/tile.hpp"
#include "strata/copy/tile_stream.hpp"
#include "strata/hierarchy/turn.hpp"
#include "strata/mma/ldmatrix_fragments.hpp"
#include "strata/mma/mma.hpp"
#include "strata/ops/attention/backward.hpp"
#include "strata/ops/attention/config.hpp"
#include "strata/ops/attention/mods.hpp"
#include "strata/ops/attention/philox.hpp"
#include "strata/pipeline/pipeline.hpp"

namespace strata::attn {

/// Features: score_features::none for the kernels without soft-cap, ALiBi and dropout (the common
/// case: a shorter element loop, as in the forward), score_features::any with them. Ordered: dQ added
/// in key-tile order (options.deterministic; the host entry uses it with score_features::any only, so
/// that a configuration has three kernels, not four), else with atomics.
template <class Elem, int D, int Dv, class Target, class ScoreMod = no_score_mod, class MaskMod = no_mask_mod,
          score_features Features = score_features::any, bool Ordered = false>
struct backward_dkdv_mma_kernel {
  using target = Target;
  using params = detail::backward_params;
  using atom = atom_for<Target, Elem>;
  static constexpr const char* name = "attention_backward_dkdv_mma_kernel";
  static_assert(detail::backward_on_tensor_cores<Target, Elem, D, Dv>(),
                "attention backward: the tensor-core dK/dV kernel takes f16/bf16 on the m16n8k16 mma.sync atoms, "
                "head dims multiples of 32 up to 128 or of 64 up to 256, where its tile fits the target's shared memory");
  static_assert(differentiable_score_mod<ScoreMod>,
                "attention backward: the score_mod must state its derivative, a member "
                "float grad(float score, int batch, int head, int q, int k) const (mods.hpp)");
  static constexpr int warps = 8;
  static constexpr int WN = atom::M;  // keys per key group
  // The block's key groups, and the parts each group's work splits into over the 8 warps: 4 x 2 up
  // to head dim 128, 2 x 4 above, so that a warp's dK and dV accumulators stay at 16 x 64 or less.
  static constexpr int key_groups = detail::backward_mma_key_tile(D, Dv) / WN;
  static constexpr int parts = warps / key_groups;
  static constexpr int BN = key_groups * WN;  // keys per block
  static_assert(BN == detail::backward_key_tile<Target, Elem, D, Dv>(), "attention backward: the workspace's key tile");
  static constexpr int BM = backward_query_tile;  // query rows per step
  static constexpr int stages = 2;
  static constexpr int threads = warps * Target::warp_size;
  static constexpr int max_threads_per_block = threads;
  static constexpr int min_blocks_per_multiprocessor = 1;
  static constexpr int pad = 16 / static_cast<int>(sizeof(Elem));
  static constexpr int ldk = D + pad, ldv = Dv + pad, ldq = D + pad, ldo = Dv + pad, lds = BM + pad;
  static constexpr int DP = D / parts, DvP = Dv / parts, BMP = BM / parts;  // a warp's part of the head dims / queries
  // dQ_t: 4 groups of 16 query rows x 2 halves of the head dim, each half in dq_passes passes of DQ
  // columns (one pass up to head dim 128).
  static constexpr int dq_passes = D / 2 > 64 ? 2 : 1;
  static constexpr int DQ = D / 2 / dq_passes;

  using s_tile = mma::warp_tile<atom, WN, BMP, atom::K>;  // 1: S^T, dP^T (16 keys x BMP queries)
  using s_frags = mma::ldmatrix_fragments<atom, WN, BMP, atom::K>;
  using dk_tile = mma::warp_tile<atom, WN, DP, atom::K>;  // 2: dK (16 keys x D / parts)
  using dk_frags = mma::ldmatrix_fragments<atom, WN, DP, atom::K>;
  using dv_tile = mma::warp_tile<atom, WN, DvP, atom::K>;  // 2: dV (16 keys x Dv / parts)
  using dv_frags = mma::ldmatrix_fragments<atom, WN, DvP, atom::K>;
  using dq_tile = mma::warp_tile<atom, WN, DQ, atom::K>;  // 3: dQ_t (16 query rows x DQ)
  using dq_frags = mma::ldmatrix_fragments<atom, WN, DQ, atom::K>;
  static_assert(BM == 4 * WN && BM % 32 == 0 && warps == 8, "attention backward: four 16-row groups x two halves of dQ_t per query tile");
  static_assert(D % (parts * 16) == 0 && Dv % (parts * 16) == 0 && DQ % 16 == 0,
                "attention backward: each warp's part of the head dims is whole x4 ldmatrix loads");
  // P^T and dS^T are stored two values at a time: C values v, v + 1 (v even) are row neighbours.
  static constexpr bool c_pairs = [] {
    for (int l = 0; l < atom::warp_size; ++l)
      for (int v = 0; v + 1 < atom::c_values; v += 2)
        if (atom::c_coord(l, v + 1) != mma::coord{atom::c_coord(l, v).row, atom::c_coord(l, v).col + 1}) return false;
    return atom::c_values % 2 == 0;
  }();
  static_assert(c_pairs, "attention backward: the atom's C values must come in row pairs");
  // The columns of a lane's C values lie within stat_cols of its value 0's (mma.sync: 2).
  static constexpr int stat_cols = [] {
    int n = 1;
    for (int v = 0; v < atom::c_values; ++v) {
      const int d = atom::c_coord(0, v).col - atom::c_coord(0, 0).col;
      if (d < 0) return 0;
      if (d + 1 > n) n = d + 1;
    }
    return n;
  }();
  static_assert(stat_cols > 0, "attention backward: a lane's C values must lie at or right of its value 0's column");

  using k_copy = copy::tile_copy<Elem, BN, D, 16, 16, threads>;
  using v_copy = copy::tile_copy<Elem, BN, Dv, 16, 16, threads>;
  using q_copy = copy::tile_copy<Elem, BM, D, 16, 16, threads>;
  using o_copy = copy::tile_copy<Elem, BM, Dv, 16, 16, threads>;
  using stat_copy = copy::tile_copy<float, 1, BM, 16, 16, threads>;
  // The query tiles' copies run as streams where each thread's vectors share one column (not head
  // dim 96: 12 vectors per row).
  static constexpr bool step_streams = threads % q_copy::vectors_per_row == 0 && threads % o_copy::vectors_per_row == 0 &&
                                       threads % stat_copy::vectors_per_row == 0;
  using q_stream = std::conditional_t<step_streams, copy::tile_stream<q_copy>, void>;
  using o_stream = std::conditional_t<step_streams, copy::tile_stream<o_copy>, void>;
  using stat_stream = std::conditional_t<step_streams, copy::tile_stream<stat_copy>, void>;

  struct shared_storage {
    alignas(16) Elem k[BN * ldk];
    alignas(16) Elem v[BN * ldv];
    alignas(16) Elem q[stages][BM * ldq];
    alignas(16) Elem dout[stages][BM * ldo];
    alignas(16) Elem pt[BN * lds];          // P^T (dropped): (key, query)
    alignas(16) Elem ds[BN * lds];          // dS^T: (key, query)
    alignas(16) float lse2[stages][BM];
    alignas(16) float di[stages][BM];
  };
  static_assert(sizeof(shared_storage) <= Target::shared_memory_per_block,
                "attention backward: the tensor-core dK/dV tile does not fit the target's shared memory");
  static_assert(sizeof(shared_storage) == detail::backward_mma_shared_bytes<Elem>(D, Dv),
                "attention backward: backward_mma_shared_bytes must count this kernel's shared storage");

  ScoreMod score_mod{};
  MaskMod mask_mod{};

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& bp) const {
    if constexpr (mma::available_in_this_pass<atom>) run(ctx, bp);
    else mma::unavailable_in_this_pass();
  }

 private:
  template <class Ctx>
  STRATA_HOST_DEVICE void run(Ctx& ctx, const params& bp) const {
    auto& sm = ctx.template shared<shared_storage>();
    const detail::forward_params& p = bp.f;
    const int w = ctx.warp().index(), lane = ctx.lane().index();
    const int kg = w % key_groups, part = w / key_groups;  // key group, its part of the head dims / queries
    const int qg = w % 4, qh = w / 4;                       // dQ_t: row group, half of the head dim
    // (the launch checks that the grid fits an int: 32-bit divisions, no 64-bit division calls)
    const int r = static_cast<int>(ctx.block().rank());
    const int t = r % bp.k_tiles;
    const int hk = (r / bp.k_tiles) % p.heads_k;
    const int b = r / bp.k_tiles / p.heads_k;
    const detail::seq_view sq = detail::sequence(p, b);
    const int n0 = t * BN;
    if (n0 >= sq.sk) return;  // this sequence has no such key tile (no dK / dV rows, no dQ part)
    const int group = p.heads / p.heads_k;

    // Only the query tiles whose rows can see a key of [n0, n0 + BN) are walked.
    const detail::walked_rows walk = detail::walked_query_rows(p, sq, n0, BN, BM);
    const int m_first = walk.first, m_tiles = walk.tiles(BM);
    const int steps = group * m_tiles;

    const long long kv_row = static_cast<long long>(sq.k0) + n0;
    const Elem* qbase = static_cast<const Elem*>(p.q) + b * p.q_bs + static_cast<long long>(sq.q0) * p.q_rs;
    const Elem* obase = static_cast<const Elem*>(bp.dout) + b * bp.do_bs + static_cast<long long>(sq.q0) * bp.do_rs;
    auto pipe = make_pipeline<stages>(ctx);
    // Step s: query head hk * group + s / m_tiles, query rows m_first + (s % m_tiles) BM, walked by
    // advancing a (head, first row) pair rather than dividing s in every step.
    struct step_at {
      int h, m0;
    };
    const int m_end = m_first + m_tiles * BM;
    const auto next_step = [&](step_at x) {
      x.m0 += BM;
      if (x.m0 >= m_end) x.m0 = m_first, ++x.h;
      return x;
    };
    // The producer's copies of one step (Q, dO and their rows' LSE2 and Di, rows past the sequence
    // zero-filled) into stage st, for the step after the one it copied last: load_next(st).
    auto load_next = [&] {
      if constexpr (step_streams && decltype(pipe)::asynchronous) {
        // Streams (copy/tile_stream.hpp): each thread's sources are set once, for the first step, and
        // then advance by a query tile or, at the end of a head's tiles, to the next head's first.
        // The generic copy rebuilt a 64-bit address per vector in every step (about 170 of the loop's
        // instructions at head dim 128, sm_90a).
        // (Everything of this outer lambda that the copier uses is captured by value: it outlives it.)
        const int h0 = hk * group;
        const long long at0 = detail::stat_index(bp, b, h0, m_first);
        return [&, q = q_stream(ctx, qbase + h0 * p.q_hs + m_first * p.q_rs, p.q_rs, q_stream::whole_rows),
                o = o_stream(ctx, obase + h0 * bp.do_hs + m_first * bp.do_rs, bp.do_rs, o_stream::whole_rows),
                lse2 = stat_stream(ctx, bp.lse2 + at0, BM, stat_stream::whole_rows),
                di = stat_stream(ctx, bp.di + at0, BM, stat_stream::whole_rows), ahead = step_at{h0, m_first},
                q_tile = BM * p.q_rs, o_tile = BM * bp.do_rs, q_head = p.q_hs - (m_tiles - 1) * BM * p.q_rs,
                o_head = bp.do_hs - (m_tiles - 1) * BM * bp.do_rs,
                stat_head = bp.stat_ld - static_cast<long long>(m_tiles - 1) * BM](int st) mutable {
          const int valid = sq.sq - ahead.m0;
          q.template copy_async_first_rows<ldq>(ctx, sm.q[st], valid);
          o.template copy_async_first_rows<ldo>(ctx, sm.dout[st], valid);
          lse2.template copy_async_partial<BM>(ctx, sm.lse2[st], valid);
          di.template copy_async_partial<BM>(ctx, sm.di[st], valid);
          const step_at next = next_step(ahead);
          const bool new_head = next.h != ahead.h;
          q.advance(new_head ? q_head : q_tile);
          o.advance(new_head ? o_head : o_tile);
          lse2.advance(new_head ? stat_head : BM);
          di.advance(new_head ? stat_head : BM);
          ahead = next;
        };
      } else {
        return [&, ahead = step_at{hk * group, m_first}](int st) mutable {
          const int h = ahead.h, m0 = ahead.m0;
          const int valid = sq.sq - m0;
          pipe.template copy_tile<q_copy>(sm.q[st], ldq, qbase + h * p.q_hs + static_cast<long long>(m0) * p.q_rs, p.q_rs, valid, D);
          pipe.template copy_tile<o_copy>(sm.dout[st], ldo, obase + h * bp.do_hs + static_cast<long long>(m0) * bp.do_rs, bp.do_rs, valid,
                                          Dv);
          const long long at = detail::stat_index(bp, b, h, m0);
          pipe.template copy_tile<stat_copy>(sm.lse2[st], BM, bp.lse2 + at, BM, 1, valid);
          pipe.template copy_tile<stat_copy>(sm.di[st], BM, bp.di + at, BM, 1, valid);
          ahead = next_step(ahead);
        };
      }
    }();
    {
      // K and V ride with the first step (rows past the sequence zero-filled).
      const int st = pipe.producer_acquire();
      pipe.template copy_tile<k_copy>(sm.k, ldk, static_cast<const Elem*>(p.k) + b * p.k_bs + kv_row * p.k_rs + hk * p.k_hs, p.k_rs,
                                      sq.sk - n0, D);
      pipe.template copy_tile<v_copy>(sm.v, ldv, static_cast<const Elem*>(p.v) + b * p.v_bs + kv_row * p.v_rs + hk * p.v_hs, p.v_rs,
                                      sq.sk - n0, Dv);
      if (steps > 0) load_next(st);
      pipe.producer_commit();
    }

    typename dk_tile::accumulator dk;
    typename dv_tile::accumulator dv;
    dk.fill(0.f);
    dv.fill(0.f);

    constexpr float log2e = 1.4426950408889634f;
    const float exp2_scale = p.scale * log2e;
    const float drop_scale = p.dropout_p > 0.f ? dropout_scale(p.dropout_threshold) : 1.f;
    const float inv_softcap = p.softcap > 0.f ? 1.f / p.softcap : 0.f;
    constexpr bool extras = Features == score_features::any;
    // Without a score modifier or the extras, P = 2^(s c - LSE2) is one FFMA and one ex2 per score.
    constexpr bool folded = !extras && std::is_same_v<ScoreMod, no_score_mod>;
    if constexpr (Ctx::emulated) {
      if (!extras && (p.softcap > 0.f || p.alibi || p.dropout_p > 0.f))
        kernel_bug(ctx.emulated_thread(), "attention backward_dkdv_mma_kernel compiled with score_features::none got soft-cap, ALiBi or dropout");
    }
    const int j_base = n0 + kg * WN;  // this warp's first key
    // Each key row this lane holds (a slot) sees the queries [i_lo, i_lo + i_span) of the sequence:
    // the windows (causal: right 0) and the sequence ends folded into two integers once (in 64 bits:
    // a window may be INT_MAX wide), so that the element loop tests one unsigned range per score.
    using rows = mma::accumulator_rows<atom>;
    int i_lo[rows::count], i_span[rows::count];
    STRATA_UNROLL
    for (int r = 0; r < rows::count; ++r) {
      const long long j = j_base + rows::row_of(lane, r);
      long long lo = 0, hi = j < sq.sk ? sq.sq : 0;
      if (p.window_right >= 0 && j - sq.off - p.window_right > lo) lo = j - sq.off - p.window_right;
      if (p.window_left >= 0 && j - sq.off + p.window_left + 1 < hi) hi = j - sq.off + p.window_left + 1;
      i_lo[r] = static_cast<int>(lo < hi ? lo : hi);
      i_span[r] = static_cast<int>(lo < hi ? hi - lo : 0);
    }

    step_at at{hk * group, m_first};
    // This warp's first dQ accumulator element of the step, advanced with the step (a 64-bit address
    // rebuilt from (b, h, m0) took about 20 instructions per step).
    float* dq_at = bp.dq_accum + ((static_cast<long long>(b) * p.heads + at.h) * p.seqlen_q + m_first + qg * WN) * D + qh * (D / 2);
    const long long dq_head = (static_cast<long long>(p.seqlen_q) - static_cast<long long>(m_tiles - 1) * BM) * D;
    for (int s = 0; s < steps; ++s) {
      const int st = pipe.consumer_wait();
      {
        const int ps = pipe.producer_acquire();
        if (s + 1 < steps) load_next(ps);
        pipe.producer_commit();
      }
      const int h = at.h, m0 = at.m0;

      // ---- 1. S^T = K_kg Q^T and dP^T = V_kg dO^T for queries BMP part .. + BMP: A = the group's 16
      // key rows, B(d, i) = Q(i, d) / dO(i, d) (the stages read k-contiguous, as the forward reads K);
      // the K loops in groups of 4 K steps (product).
      typename s_tile::accumulator sacc, pacc;
      sacc.fill(0.f);
      pacc.fill(0.f);
      product<s_tile, s_frags, D, true>(ctx, sacc, sm.k, ldk, true, kg * WN, sm.q[st], ldq, true, part * BMP);
      product<s_tile, s_frags, Dv, true>(ctx, pacc, sm.v, ldv, true, kg * WN, sm.dout[st], ldo, true, part * BMP);

      // Per score (key j = row, query i = column): P^T with dropout applied (what multiplied V) and
      // dS^T, both to shared memory as 16-bit pairs along a row (one 32-bit store each). Masked: 0.
      const float slope = extras && p.alibi ? p.alibi[h] : 0.f;
      // i - i_lo[r] for this lane's first column: each score's range test is then that plus a
      // constant (the C layout's column offsets are the same in every lane, c_offsets_uniform).
      int rel[rows::count];
      STRATA_UNROLL
      for (int r = 0; r < rows::count; ++r) rel[r] = m0 + part * BMP + atom::c_coord(lane, 0).col - i_lo[r];
      STRATA_UNROLL
      for (int jn = 0; jn < s_tile::atoms_n; ++jn) {
        // The LSE2 and Di of this atom's columns, read once: a lane's rows share its columns (on
        // mma.sync, rows g and g + 8 of columns 2t, 2t + 1: one 64-bit load each). Read per score,
        // ptxas loaded them again for the second row (the P^T / dS^T stores in between may alias).
        const int c0 = part * BMP + jn * atom::N + atom::c_coord(lane, 0).col;
        float lse2_at[stat_cols], di_at[stat_cols];
        STRATA_UNROLL
        for (int d = 0; d < stat_cols; ++d) lse2_at[d] = sm.lse2[st][c0 + d], di_at[d] = sm.di[st][c0 + d];
        STRATA_UNROLL
        for (int v = 0; v < atom::c_values; v += 2) {
          float pd[2], ds[2];
          STRATA_UNROLL
          for (int u = 0; u < 2; ++u) {
            const mma::coord c = atom::c_coord(lane, v + u);
            const int j = j_base + c.row, i = m0 + part * BMP + jn * atom::N + c.col;
            const int r = rows::slot_of(v + u);
            const int dcol = atom::c_coord(0, v + u).col - atom::c_coord(0, 0).col;
            const float lse2 = lse2_at[dcol], di = di_at[dcol];
            bool keep = static_cast<unsigned>(rel[r] + jn * atom::N + dcol) < static_cast<unsigned>(i_span[r]);
            // A row whose every key a mask mod hides has LSE -inf (without one, the windows above
            // already hide all of its keys).
            if constexpr (!std::is_same_v<MaskMod, no_mask_mod>) keep = keep & (lse2 != detail::neg_inf()) & mask_mod(b, h, i, j);
            const float sv = sacc.f[0][jn].v[v + u], dp = pacc.f[0][jn].v[v + u];
            if constexpr (folded) {
              const float pr = keep ? arch::exp2_approx(::fmaf(sv, exp2_scale, -lse2)) : 0.f;
              pd[u] = pr;
              ds[u] = pr * (dp - di);  // times scale: at the end
            } else {
              float x = sv * p.scale, dfac = 1.f;  // dS / scale, as above
              if (extras && p.softcap > 0.f) {
                const float th = arch::tanh_fast(x * inv_softcap);  // the forward's (forward.hpp)
                x = p.softcap * th;
                dfac *= 1.f - th * th;
              }
              if (extras && p.alibi) {
                const long long dist = static_cast<long long>(i) + sq.off - j;
                x -= slope * static_cast<float>(dist < 0 ? -dist : dist);
              }
              dfac *= score_mod.grad(x, b, h, i, j);  // at the score score_mod was given
              x = score_mod(x, b, h, i, j);
              const float pr = keep ? arch::exp2_approx(::fmaf(x, log2e, -lse2)) : 0.f;
              float dpd = dp;
              pd[u] = pr;
              if (extras && p.dropout_p > 0.f) {
                const bool kept = keep && dropout_keep(p.seed, p.offset, p.dropout_threshold, b, p.heads, h, i, j);
                pd[u] = kept ? pr * drop_scale : 0.f;
                dpd = kept ? dp * drop_scale : 0.f;
              }
              ds[u] = keep ? pr * (dpd - di) * dfac : 0.f;
            }
          }
          const mma::coord c = atom::c_coord(lane, v);
          const int at = (kg * WN + c.row) * lds + part * BMP + jn * atom::N + c.col;
          arch::store_narrow_pair(sm.pt + at, pd[0], pd[1]);
          arch::store_narrow_pair(sm.ds + at, ds[0], ds[1]);
        }
      }
      ctx.block().sync();  // every warp's P^T and dS^T are in shared memory

      // ---- 2. dV_kg += P^T dO, dK_kg += dS^T Q over the step's BM queries, for head-dim columns
      // DvP part / DP part: A(j, i) = P^T / dS^T (k-contiguous), B(i, d) = dO(i, d) / Q(i, d) read
      // transposed (ldmatrix.trans).
      product<dv_tile, dv_frags, BM, false>(ctx, dv, sm.pt, lds, true, kg * WN, sm.dout[st], ldo, false, part * DvP);
      product<dk_tile, dk_frags, BM, false>(ctx, dk, sm.ds, lds, true, kg * WN, sm.q[st], ldq, false, part * DP);

      // ---- 3. dQ_t = dS K for query rows 16 qg .. + 16, columns D/2 qh .. + D/2 (in dq_passes passes
      // of DQ columns): A(i, j) = dS^T(j, i) and B(j, d) = K(j, d), both read transposed; added into
      // the fp32 accumulator (rows past the sequence not added).
      {
        const int rows_left = sq.sq - m0 - qg * WN;  // rows past the sequence are not added
        if constexpr (Ctx::emulated) {
          if (Ordered != (bp.dq_turn != nullptr))
            kernel_bug(ctx.emulated_thread(), "attention backward_dkdv_mma_kernel: its dQ mode (ordered or atomic) is not the workspace's");
        }
        const auto add_passes = [&](const auto& add) {
          STRATA_UNROLL
          for (int pass = 0; pass < dq_passes; ++pass) {
            typename dq_tile::accumulator q_acc;
            q_acc.fill(0.f);
            product<dq_tile, dq_frags, BN, false>(ctx, q_acc, sm.ds, lds, false, qg * WN, sm.k, ldk, false, qh * (D / 2) + pass * DQ);
            add_dq(ctx, q_acc, dq_at + pass * DQ, rows_left, add);
          }
        };
        if constexpr (!Ordered) {
          add_passes([](float* at, float x0, float x1) { atomic::add_pair(at, x0, x1); });
        } else {
          // This key tile's turn: the key tiles before it that walk query tile m0 / BM (all of
          // first_key_tile(m0) .. t - 1, see detail::first_key_tile) have added.
          unsigned* turn = bp.dq_turn + (static_cast<long long>(b) * p.heads + h) * bp.q_tiles + m0 / BM;
          const unsigned mine = static_cast<unsigned>(t - detail::first_key_tile(p, sq, m0, BN));
          wait_turn(ctx, turn, mine);
          add_passes([](float* at, float x0, float x1) { at[0] += x0, at[1] += x1; });
          pass_turn(ctx, turn, mine + 1u);
        }
      }
      pipe.consumer_release();
      const step_at next = next_step(at);
      dq_at += next.h != at.h ? dq_head : BM * D;
      at = next;
    }

    // dK and dV of the group's keys, its part of the columns (rows past the sequence not stored); dK gets the
    // softmax scale its dS^T left out.
    STRATA_UNROLL
    for (int jn = 0; jn < dk_tile::atoms_n; ++jn)
      STRATA_UNROLL
      for (int v = 0; v < atom::c_values; ++v) dk.f[0][jn].v[v] *= p.scale;
    const long long key0 = kv_row + kg * WN;
    const int keys_left = detail::imax(0, sq.sk - n0 - kg * WN);
    Elem* dkg = static_cast<Elem*>(bp.dk) + b * bp.dk_bs + key0 * bp.dk_rs + hk * bp.dk_hs;
    Elem* dvg = static_cast<Elem*>(bp.dv) + b * bp.dv_bs + key0 * bp.dv_rs + hk * bp.dv_hs;
    dk_tile::template store_c<mma::edges::rows>(ctx, dk, mma::matrix_ref<Elem>{dkg, keys_left, D, bp.dk_rs}, 0, part * DP);
    dv_tile::template store_c<mma::edges::rows>(ctx, dv, mma::matrix_ref<Elem>{dvg, keys_left, Dv, bp.dv_rs}, 0, part * DvP);
  }

  // acc += A B over k = 0 .. K on the atom, both operands from shared memory with ldmatrix: A(m, k)
  // rows m0 .. of the stage `a` (element (m, k) at a[m lda + k] when a_kc, else a[k lda + m]), B(k, n)
  // columns n0 .. of the stage `b` (at b[n ldb + k] when b_kc, else b[k ldb + n]). `partial`: the K
  // loop in groups of up to 4 K steps, not fully unrolled (fully unrolled, ptxas hoisted the fragment
  // loads of all 16 K steps of S^T and dP^T ahead of the MMAs and spilled 72-80 bytes at 255
  // registers, head dim 128, sm_90a); a group's fragments lie at constant offsets from two pointers
  // that advance per group (indexed by the K step, ptxas rebuilt each address: 15 integer
  // instructions per group against 4).
  template <class Tile, class Frags, int K, bool partial, class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void product(Ctx& ctx, typename Tile::accumulator& acc, const Elem* a, int lda, bool a_kc,
                                                           int m0, const Elem* b, int ldb, bool b_kc, int n0) {
    const auto step = [&](const Elem* a, const Elem* b, int kk) {
      typename Tile::a_fragments fa;
      typename Tile::b_fragments fb;
      Frags::load_a(ctx, fa, a + (a_kc ? kk * atom::K : kk * atom::K * lda), lda, a_kc, m0);
      Frags::load_b(ctx, fb, b + (b_kc ? kk * atom::K : kk * atom::K * ldb), ldb, b_kc, n0);
      Tile::mma(ctx, fa, fb, acc);
    };
    if constexpr (partial) {
      // Groups of `chunk` K steps at constant offsets from two pointers that advance per group.
      constexpr int steps = K / atom::K, chunk = steps % 4 == 0 ? 4 : steps % 3 == 0 ? 3 : steps % 2 == 0 ? 2 : 1;
      const int a_group = chunk * atom::K * (a_kc ? 1 : lda), b_group = chunk * atom::K * (b_kc ? 1 : ldb);
      STRATA_NO_UNROLL
      for (int g = 0; g < steps / chunk; ++g, a += a_group, b += b_group)
        STRATA_UNROLL
        for (int kk = 0; kk < chunk; ++kk) step(a, b, kk);
    } else {
      STRATA_UNROLL
      for (int kk = 0; kk < K / atom::K; ++kk) step(a, b, kk);
    }
  }

  // dQ_t's 16 x DQ accumulator of this warp into dQ(rows, columns) at `at` (row stride D) with
  // `add(address, value, next value)` per pair of row neighbours (c_pairs), rows at or past rows_left
  // skipped.
  template <class Ctx, class Add>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void add_dq(Ctx& ctx, const typename dq_tile::accumulator& acc, float* at, int rows_left,
                                                          const Add& add) {
    // One base pointer per lane; every value at a constant offset from it (c_offsets_uniform); one
    // row test per row the lane holds (a slot), not per value.
    using rows = mma::accumulator_rows<atom>;
    const int lane = ctx.lane().index();
    const mma::coord c0 = atom::c_coord(lane, 0);
    float* base = at + c0.row * D + c0.col;
    STRATA_UNROLL
    for (int r = 0; r < rows::count; ++r) {
      if (rows::row_of(lane, r) >= rows_left) continue;
      STRATA_UNROLL
      for (int jn = 0; jn < dq_tile::atoms_n; ++jn)
        STRATA_UNROLL
        for (int v = 0; v < atom::c_values; v += 2) {
          if (rows::slot_of(v) != r) continue;
          const int dr = atom::c_coord(0, v).row - atom::c_coord(0, 0).row, dc = atom::c_coord(0, v).col - atom::c_coord(0, 0).col;
          add(base + dr * D + jn * atom::N + dc, acc.f[0][jn].v[v], acc.f[0][jn].v[v + 1]);
        }
    }
  }
  // Every lane's C values lie at the same offsets from its value 0 (mma.sync: rows g, g + 8, columns
  // 2t, 2t + 1), so add_dq addresses them from one pointer.
  static constexpr bool c_offsets_uniform = [] {
    for (int l = 0; l < atom::warp_size; ++l)
      for (int v = 0; v < atom::c_values; ++v)
        if (atom::c_coord(l, v).row - atom::c_coord(l, 0).row != atom::c_coord(0, v).row - atom::c_coord(0, 0).row ||
            atom::c_coord(l, v).col - atom::c_coord(l, 0).col != atom::c_coord(0, v).col - atom::c_coord(0, 0).col)
          return false;
    return true;
  }();
  static_assert(c_offsets_uniform, "attention backward: the atom's C layout must be the same pattern in every lane");
};

}  // namespace strata::attn
