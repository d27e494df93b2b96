// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/attention/forward.hpp -- the fused attention forward kernel (FlashAttention-2's
// algorithm: online softmax over K/V tiles, never materializing the S x S score matrix).
//
// One block computes block_m query rows of one (batch, head) against one range of key tiles:
//   Q      each warp loads its atom-M rows into A fragments once (registers, the whole loop); with
//          Cfg.q_in_shared (wide head dims on mma.sync) the block's Q tile is staged in shared memory
//          with the first K/V tile and each fragment is read from there per key tile
//   K, V   streamed tile by tile through strata::pipeline (cp.async on sm80+, loads elsewhere), in
//          16-row chunks, so that a chunk never crosses a page of a paged cache
//   S      S = Q K^T with the atom (warp_tile over the K stage read column-major = K^T), written to
//          the warp's rows of a shared fp32 tile
//   softmax  `lanes_per_row` lanes own one row: they apply scale, soft-cap, ALiBi, score_mod and the
//          masks, update the running max m and sum l (xor-shuffle reductions inside the lane group),
//          write P (input precision) and the rescale factor alpha = exp(m_old - m_new)
//   O      O = alpha O + P V with the atom; P read back from shared as A fragments
// The epilogue divides by l and writes O and LSE = m + log(l), or, for split-KV, fp32 partials that
// combine.hpp merges. Rows with no visible key (fully masked) give O = 0 and LSE = -inf: alpha and P
// are forced to 0 when the running max is still -inf, so no exp(-inf - -inf) = NaN is ever formed.
//
// V column slices (Cfg.v_slices > 1, 16-bit head dim 512 on mma.sync): a block computes O for one
// slice of Dv / v_slices columns. Each slice's block recomputes S and the softmax (identical in all of
// them); only slice 0 writes the LSE. Costs one more Q K^T per extra slice; keeps the O accumulator
// (Dv / 2 registers per thread for the whole Dv) within the register file.
//
// Work placement: block ids are mapped through the chiplet dispatch inverse so that every chiplet
// gets one contiguous range of work items; items are ordered (batch, K/V head) outermost, so the
// query tiles of one GQA group -- which read the same K and V -- land on the same chiplet, and inside
// a group causal tiles run longest first (the last query tiles see the most keys).
#pragma once

#include <cstdint>
#include <type_traits>

#include "strata/config/config.hpp"
#include "strata/copy/tile.hpp"
#include "strata/hierarchy/tile_order.hpp"
#include "strata/mma/mma.hpp"
#include "strata/ops/attention/config.hpp"
#include "strata/ops/attention/mods.hpp"
#include "strata/ops/attention/philox.hpp"
#include "strata/pipeline/pipeline.hpp"

namespace strata::attn {

namespace detail {

STRATA_HOST_DEVICE inline float neg_inf() { return -__builtin_huge_valf(); }
STRATA_HOST_DEVICE inline int imin(int a, int b) { return a < b ? a : b; }
STRATA_HOST_DEVICE inline int imax(int a, int b) { return a < b ? b : a; }

/// Device-side arguments of forward_kernel (host.hpp fills them from the descriptors).
struct forward_params {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  float* lse;
  long long q_bs, q_rs, q_hs;
  long long k_bs, k_rs, k_hs;  // paged: k_bs is the page stride
  long long v_bs, v_rs, v_hs;
  long long o_bs, o_rs, o_hs;
  long long lse_bs, lse_hs;    // LSE of (b, h, row) at b * lse_bs + h * lse_hs + row (varlen: row is packed)
  int batch, heads, heads_k, seqlen_q, seqlen_k, m_tiles;
  const int* cu_q;
  const int* cu_k;
  const int* used_q;
  const int* used_k;
  int k_extra;                 // keys appended after used_k (decode with new K/V)
  const int* block_table;      // paged cache or null
  int bt_stride, page_size;
  int num_pages;               // paged: pages in the pool; a table entry outside [0, num_pages) reads page 0
  float scale, softcap;        // scale includes fp8's q_descale * k_descale
  float o_scale;               // O's factor after the softmax: fp8's v_descale, else 1
  const float* alibi;
  const float* sinks;
  int window_left, window_right, bottom_right, longest_first;
  int num_splits;
  float* part_o;               // (split, B, H, SQ, Dv) fp32, when num_splits > 1
  float* part_lse;             // (split, B, H, SQ)
  float dropout_p;             // > 0: dropout on P (philox.hpp); the softmax sum l is taken before it
  std::uint32_t dropout_threshold;
  unsigned long long seed, offset;
};

/// One sequence's extents and offsets, read once per block.
struct seq_view {
  int sq, sk, q0, k0, off;  // lengths, first packed row of Q and K, diagonal offset
};

STRATA_HOST_DEVICE inline seq_view sequence(const forward_params& p, int b) {
  seq_view s{};
  s.q0 = p.cu_q ? p.cu_q[b] : 0;
  s.k0 = p.cu_k ? p.cu_k[b] : 0;
  s.sq = p.cu_q ? p.cu_q[b + 1] - p.cu_q[b] : (p.used_q ? p.used_q[b] : p.seqlen_q);
  // Device-side lengths (seqused_k, a decode's cache_seqlens) are clamped to what the cache holds, so
  // a bad length can never make the kernel read past it.
  s.sk = p.cu_k ? p.cu_k[b + 1] - p.cu_k[b] : (p.used_k ? imax(0, imin(p.used_k[b], p.seqlen_k - p.k_extra)) : p.seqlen_k);
  s.sk += p.k_extra;
  s.off = p.bottom_right ? s.sk - s.sq : 0;
  return s;
}

}  // namespace detail

/// The forward kernel for element type `Elem` (f16, bf16, float, f8_e4m3), QK head dim D and V head
/// dim Dv, configured for `Target`, with optional score and mask modifiers (mods.hpp). O is written
/// as out_elem<Elem> (bf16 for fp8 inputs). fp8: P is rounded to e4m3 before P V (as in
/// FlashAttention-3), the descale factors ride in params::scale and params::o_scale.
template <class Elem, int D, int Dv, class Target, kernel_config Cfg = default_config<Target, Elem, D, Dv>(),
          class ScoreMod = no_score_mod, class MaskMod = no_mask_mod>
struct forward_kernel {
  using target = Target;
  using params = detail::forward_params;
  using atom = atom_for<Target, Elem>;
  using out_type = out_elem<Elem>;
  static constexpr float product_scale = detail::product_scale<atom>();  // 4 for OCP fp8 on CDNA3
  static constexpr const char* name = "attention_forward_kernel";
  static constexpr int warp_size = Target::warp_size;
  static constexpr int WM = atom::M;                 // query rows per warp
  static constexpr int BM = Cfg.warps * WM;          // query rows per block
  static constexpr int BN = Cfg.block_n;             // keys per tile
  static constexpr int stages = Cfg.stages;
  static constexpr int lanes_per_row = warp_size / WM;
  static constexpr int chunk = BN < 16 ? BN : 16;    // rows per copy: never crosses a 16-multiple page
  static constexpr int max_threads_per_block = Cfg.warps * warp_size;
  static constexpr bool q_in_shared = Cfg.q_in_shared;
  static constexpr int v_slices = Cfg.v_slices;
  static constexpr int DvB = Dv / v_slices;          // V / O columns per block

  // Preconditions, in words.
  static_assert(BN > 0, "attention: no K/V tile of this head dim fits the target's shared memory (see "
                        "default_config); this head dim is not supported on this target");
  static_assert(D % atom::K == 0, "attention: the QK head dim must be a multiple of the atom's K");
  static_assert(Dv % atom::N == 0, "attention: the V head dim must be a multiple of the atom's N");
  static_assert(v_slices >= 1 && Dv % v_slices == 0 && DvB % atom::N == 0 && (DvB * sizeof(Elem)) % 16 == 0,
                "attention: v_slices must split Dv into whole atoms and 16-byte vectors");
  static_assert(BN % atom::N == 0 && BN % atom::K == 0, "attention: block_n must be a multiple of the atom's N and K");
  static_assert(BN % chunk == 0, "attention: block_n must be a multiple of the copy chunk");
  static_assert(warp_size % WM == 0, "attention: the atom's M must divide the warp size");
  static_assert((D * sizeof(Elem)) % 16 == 0 && (Dv * sizeof(Elem)) % 16 == 0,
                "attention: head dims must be whole 16-byte vectors");

  using s_tile = mma::warp_tile<atom, WM, BN, atom::K>;  // S = Q K^T, one K step at a time
  // O += P V, one K step at a time, in o_parts column slices of the warp's rows: with Q staged in
  // shared memory (wide head dims), V's fragments are loaded 64 columns at a time, not all Dv at once.
  static constexpr int o_parts = q_in_shared && DvB % 64 == 0 ? DvB / 64 : 1;
  static constexpr int o_cols = DvB / o_parts;
  using o_tile = mma::warp_tile<atom, WM, o_cols, atom::K>;
  using k_copy = copy::tile_copy<Elem, chunk, D, 16>;
  using v_copy = copy::tile_copy<Elem, chunk, DvB, 16>;
  using q_copy = copy::tile_copy<Elem, BM, D, 16>;

  struct shared_storage {
    alignas(16) Elem k[stages][BN * D];   // (stage, BN, D)
    alignas(16) Elem v[stages][BN * DvB];  // (stage, BN, DvB): this block's V columns
    alignas(16) float s[BM * BN];         // (BM, BN) scores, then masked logits
    alignas(16) Elem p[BM * BN];          // (BM, BN) probabilities
    alignas(16) Elem q[q_in_shared ? BM * D : 16 / sizeof(Elem)];  // (BM, D) when Q is staged here
    float alpha[BM], l[BM], m[BM];        // per row: rescale factor, final sum and max
  };
  static_assert(sizeof(shared_storage) <= shared_bytes<Elem>(BM, BN, stages, D, DvB, q_in_shared));

  ScoreMod score_mod{};
  MaskMod mask_mod{};

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    // fp8 kernels of sm90a / gfx942 are compiled by every pass of a multi-architecture build; the
    // sm_80 / gfx90a passes have no fp8 instruction (mma_op.hpp).
    if constexpr (mma::available_in_this_pass<atom>) run(ctx, p);
    else mma::unavailable_in_this_pass();
  }

 private:
  template <class Ctx>
  STRATA_HOST_DEVICE void run(Ctx& ctx, const params& p) const {
    auto& sm = ctx.template shared<shared_storage>();
    auto warp = ctx.warp();
    const int w = warp.index(), lane = ctx.lane().index();

    // ---- which work item: chiplet placement, then (batch, kv head) groups, longest first ----------
    const int group = p.heads / p.heads_k;
    const long long items = static_cast<long long>(p.batch) * p.heads * p.m_tiles;
    order::problem pr;
    pr.tiles_m = items * p.num_splits * v_slices;
    pr.topology = Target::chiplets;
    long long logical = order::dispatch_inverse<order::contiguous>(pr)(ctx.block().rank());
    const int split = static_cast<int>(logical % p.num_splits);
    logical /= p.num_splits;
    const int c0 = v_slices > 1 ? static_cast<int>(logical % v_slices) * DvB : 0;  // first V / O column
    const long long item = logical / v_slices;
    const long long per_group = static_cast<long long>(group) * p.m_tiles;
    const int gi = static_cast<int>(item / per_group);
    const int b = gi / p.heads_k, hk = gi % p.heads_k;
    const int r = static_cast<int>(item % per_group);
    const int mt_rank = r / group;
    const int h = hk * group + r % group;
    const int mt = p.longest_first ? p.m_tiles - 1 - mt_rank : mt_rank;

    const detail::seq_view sq = detail::sequence(p, b);
    const int m0 = mt * BM;
    if (m0 >= sq.sq) return;  // a tile past this sequence's end (varlen / padded): nothing to write
    const int wm0 = m0 + w * WM;            // this warp's first query row

    // ---- key tiles this block visits: the mask's band, then this split's share ------------------
    int n_lo = 0, n_hi = sq.sk;
    const int last_q = detail::imin(m0 + BM, sq.sq) - 1;
    if (p.window_right >= 0) n_hi = detail::imin(n_hi, last_q + sq.off + p.window_right + 1);
    if (p.window_left >= 0) n_lo = detail::imax(n_lo, m0 + sq.off - p.window_left);
    if (sq.sq <= 0) n_hi = n_lo;
    int t_lo = n_lo / BN, t_hi = n_hi > n_lo ? (n_hi + BN - 1) / BN : t_lo;
    {
      const int per = (t_hi - t_lo + p.num_splits - 1) / p.num_splits;
      const int a = t_lo + split * per;
      t_hi = detail::imin(t_hi, a + per);
      t_lo = detail::imin(a, t_hi);
    }
    const int tiles = t_hi - t_lo;

    // ---- Q fragments: this warp's WM rows, all of D, kept in registers (or, q_in_shared, the
    // block's BM rows staged in shared memory with the first K/V tile and read per key tile) --------
    const Elem* qb = static_cast<const Elem*>(p.q) + b * p.q_bs + static_cast<long long>(sq.q0) * p.q_rs + h * p.q_hs;
    typename s_tile::a_fragments qf[q_in_shared ? 1 : D / atom::K];
    if constexpr (!q_in_shared) {
      const mma::matrix_ref<const Elem> qm{qb + static_cast<long long>(wm0) * p.q_rs, detail::imax(sq.sq - wm0, 0), D, p.q_rs};
      STRATA_UNROLL
      for (int kk = 0; kk < D / atom::K; ++kk) {
        s_tile::template load_a<mma::edges::rows>(ctx, qf[kk], qm, 0, kk * atom::K);
        prepare(qf[kk]);
      }
    }

    // ---- K/V addressing: contiguous (dense or packed) or paged ----------------------------------
    const Elem* kbase = static_cast<const Elem*>(p.k);
    const Elem* vbase = static_cast<const Elem*>(p.v);
    auto row_ptr = [&](const Elem* base, long long bs, long long rs, long long hs, int j) -> const Elem* {
      if (p.block_table) {
        const int page = p.block_table[static_cast<long long>(b) * p.bt_stride + j / p.page_size];
        // A page outside the pool reads page 0 instead: never outside memory (the result of such a
        // sequence is not meaningful; docs/attention.md). A select, not a branch: no extra live state.
        const int safe = static_cast<unsigned>(page) < static_cast<unsigned>(p.num_pages) ? page : 0;
        return base + safe * bs + static_cast<long long>(j % p.page_size) * rs + hk * hs;
      }
      return base + b * bs + static_cast<long long>(sq.k0 + j) * rs + hk * hs;
    };
    auto pipe = make_pipeline<stages>(ctx);
    auto load_tile = [&](int st, int t) {
      STRATA_UNROLL
      for (int c = 0; c < BN / chunk; ++c) {
        const int j0 = t * BN + c * chunk;
        const int valid = detail::imax(0, detail::imin(chunk, sq.sk - j0));
        // A chunk wholly past the end is still "copied" (zero-filled), so P V never meets poison.
        pipe.template copy_tile<k_copy>(sm.k[st] + c * chunk * D, D, valid ? row_ptr(kbase, p.k_bs, p.k_rs, p.k_hs, j0) : kbase,
                                        p.k_rs, valid, D);
        pipe.template copy_tile<v_copy>(sm.v[st] + c * chunk * DvB, DvB,
                                        valid ? row_ptr(vbase, p.v_bs, p.v_rs, p.v_hs, j0) + c0 : vbase, p.v_rs, valid, DvB);
      }
    };

    // ---- per-row softmax state (identical in the lanes_per_row lanes of a row) -------------------
    const int my_row = lane / lanes_per_row, part = lane % lanes_per_row;
    const int brow = w * WM + my_row;  // row inside the block tile
    const int qi = wm0 + my_row;       // query position inside the sequence
    float m_run = detail::neg_inf(), l_run = 0.f;
    if (p.sinks && split == 0) {       // the sink is one more logit in the denominator, with no value
      m_run = p.sinks[h];
      l_run = 1.f;
    }
    const float slope = p.alibi ? p.alibi[h] : 0.f;
    // This row's visible keys [j_lo, j_hi): the sequence's end and the window, folded once into two
    // per-lane values (a row past the sequence sees none). The softmax loop then keeps these two
    // instead of five uniform values live: 5-10 fewer SGPRs in the MFMA kernels (gfx90a has 104).
    const long long qpos = static_cast<long long>(qi) + sq.off;  // the row's diagonal key
    int j_lo = 0, j_hi = qi < sq.sq ? sq.sk : 0;
    if (p.window_right >= 0) j_hi = static_cast<int>(qpos + p.window_right + 1 < j_hi ? qpos + p.window_right + 1 : j_hi);
    if (p.window_left >= 0) j_lo = static_cast<int>(qpos - p.window_left > 0 ? qpos - p.window_left : 0);
    const float drop_scale = p.dropout_p > 0.f ? 1.f / (1.f - p.dropout_p) : 1.f;
    const float s_scale = p.scale * product_scale;  // S holds products / product_scale

    typename o_tile::accumulator acc[o_parts];
    STRATA_UNROLL
    for (int op = 0; op < o_parts; ++op) acc[op].fill(0.f);

    for (int s = 0; s < stages - 1; ++s) {
      const int st = pipe.producer_acquire();
      // Q rides with the first K/V tile: the first consumer_wait covers both. Rows past the sequence
      // are zero-filled, so the fragment loads below need no bounds test.
      if (q_in_shared && s == 0 && tiles > 0)
        pipe.template copy_tile<q_copy>(sm.q, D, qb + static_cast<long long>(m0) * p.q_rs, p.q_rs, detail::imin(BM, sq.sq - m0), D);
      if (s < tiles) load_tile(st, t_lo + s);
      pipe.producer_commit();
    }
    for (int it = 0; it < tiles; ++it) {
      const int st = pipe.consumer_wait();
      {
        const int ps = pipe.producer_acquire();
        if (it + stages - 1 < tiles) load_tile(ps, t_lo + it + stages - 1);
        pipe.producer_commit();
      }
      const int n0 = (t_lo + it) * BN;

      // S = Q K^T: B(d, j) = K(j, d), i.e. the K stage read column-major. The shared tiles (K, V, S, P)
      // are whole (rows past the sequence are zero-filled or masked), so the fragment loads and stores
      // skip per-element bounds tests (mma::edges::inside; the emulator still checks them).
      typename s_tile::accumulator sacc;
      sacc.fill(0.f);
      const mma::matrix_ref<const Elem> kt{sm.k[st], D, BN, D, mma::major::col};
      STRATA_UNROLL
      for (int kk = 0; kk < D / atom::K; ++kk) {
        typename s_tile::b_fragments kf;
        s_tile::template load_b<mma::edges::inside>(ctx, kf, kt, kk * atom::K, 0);
        prepare(kf);
        if constexpr (q_in_shared) {
          const mma::matrix_ref<const Elem> qs{sm.q + w * WM * D, WM, D, D};
          s_tile::template load_a<mma::edges::inside>(ctx, qf[0], qs, 0, kk * atom::K);
          prepare(qf[0]);
          s_tile::mma(ctx, qf[0], kf, sacc);
        } else {
          s_tile::mma(ctx, qf[kk], kf, sacc);
        }
      }
      const mma::matrix_ref<float> sw{sm.s + w * WM * BN, WM, BN, BN};
      s_tile::template store_c<mma::edges::inside>(ctx, sacc, sw, 0, 0);
      warp.sync();

      // Online softmax over this tile, lanes_per_row lanes per row.
      float* srow = sm.s + brow * BN;
      Elem* prow = sm.p + brow * BN;
      float mx = m_run;
      for (int c = part; c < BN; c += lanes_per_row) {
        const int j = n0 + c;
        float x = srow[c] * s_scale;
        if (p.softcap > 0.f) x = p.softcap * ::tanhf(x / p.softcap);
        if (p.alibi) {
          const long long dist = qpos - j;
          x -= slope * static_cast<float>(dist < 0 ? -dist : dist);
        }
        x = score_mod(x, b, h, qi, j);
        const bool keep = j >= j_lo && j < j_hi && mask_mod(b, h, qi, j);
        x = keep ? x : detail::neg_inf();
        srow[c] = x;
        mx = x > mx ? x : mx;
      }
      STRATA_UNROLL
      for (int o = lanes_per_row / 2; o > 0; o >>= 1) {
        const float other = warp.shfl_xor(mx, o);
        mx = other > mx ? other : mx;
      }
      const bool none = mx == detail::neg_inf();  // nothing visible yet: keep O and l at zero
      const float alpha = none || m_run == detail::neg_inf() ? 0.f : ::expf(m_run - mx);
      float sum = 0.f;
      for (int c = part; c < BN; c += lanes_per_row) {
        const float pv = none ? 0.f : ::expf(srow[c] - mx);
        float kept = pv;
        if (p.dropout_p > 0.f)
          kept = dropout_keep(p.seed, p.offset, p.dropout_threshold, b, p.heads, h, qi, n0 + c) ? pv * drop_scale : 0.f;
        prow[c] = static_cast<Elem>(kept);
        sum += pv;
      }
      STRATA_UNROLL
      for (int o = lanes_per_row / 2; o > 0; o >>= 1) sum += warp.shfl_xor(sum, o);
      l_run = l_run * alpha + sum;
      m_run = none ? m_run : mx;
      if (part == 0) sm.alpha[brow] = alpha;
      warp.sync();

      // O = alpha O + P V.
      rescale(ctx, acc, sm.alpha + w * WM);
      const mma::matrix_ref<const Elem> pm{sm.p + w * WM * BN, WM, BN, BN};
      const mma::matrix_ref<const Elem> vm{sm.v[st], BN, DvB, DvB};
      STRATA_UNROLL
      for (int kk = 0; kk < BN / atom::K; ++kk) {
        typename o_tile::a_fragments pf;
        o_tile::template load_a<mma::edges::inside>(ctx, pf, pm, 0, kk * atom::K);
        prepare(pf);
        STRATA_UNROLL
        for (int op = 0; op < o_parts; ++op) {
          typename o_tile::b_fragments vf;
          o_tile::template load_b<mma::edges::inside>(ctx, vf, vm, kk * atom::K, op * o_cols);
          prepare(vf);
          o_tile::mma(ctx, pf, vf, acc[op]);
        }
      }
      pipe.consumer_release();
    }

    // ---- epilogue: O / l and LSE (or the split's fp32 partials) ---------------------------------
    if (part == 0) {
      sm.l[brow] = l_run;
      sm.m[brow] = m_run;
    }
    warp.sync();
    {
      // 1 / l, with fp8's V descale and the atom's product scale folded in.
      const float o_scale = p.o_scale * product_scale;
      float inv[WM];
      STRATA_UNROLL
      for (int i = 0; i < WM; ++i) inv[i] = sm.l[w * WM + i] > 0.f ? o_scale / sm.l[w * WM + i] : 0.f;
      rescale(ctx, acc, inv);
    }
    const int rows = detail::imax(sq.sq - wm0, 0);
    const float lse = l_run > 0.f ? m_run + ::logf(l_run) : detail::neg_inf();
    if (p.num_splits == 1) {
      out_type* ob = static_cast<out_type*>(p.o) + b * p.o_bs + static_cast<long long>(sq.q0 + wm0) * p.o_rs + h * p.o_hs;
      STRATA_UNROLL
      for (int op = 0; op < o_parts; ++op)
        o_tile::template store_c<mma::edges::rows>(ctx, acc[op], mma::matrix_ref<out_type>{ob + c0, rows, DvB, p.o_rs}, 0, op * o_cols);
      if (p.lse && part == 0 && qi < sq.sq && c0 == 0) p.lse[b * p.lse_bs + h * p.lse_hs + sq.q0 + qi] = lse;
    } else {
      const long long row0 = ((static_cast<long long>(split) * p.batch + b) * p.heads + h) * p.seqlen_q;
      STRATA_UNROLL
      for (int op = 0; op < o_parts; ++op)
        o_tile::template store_c<mma::edges::rows>(ctx, acc[op], mma::matrix_ref<float>{p.part_o + (row0 + wm0) * Dv + c0, rows, DvB, Dv}, 0,
                                                   op * o_cols);
      if (part == 0 && qi < sq.sq && c0 == 0) p.part_lse[row0 + qi] = lse;
    }
  }

  // The atom's operand rewrite after each fragment load (mfma_ocp_fp8.hpp); nothing for the others.
  template <class Fragments>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void prepare(Fragments& x) {
    if constexpr (mma::has_operand_prepare<atom>)
      for (auto& row : x.f)
        for (auto& f : row) atom::prepare(f);
  }

  // acc(r, c) *= f[r] for the warp's rows, in every column slice; r from the atom's accumulator layout.
  template <class Ctx>
  STRATA_HOST_DEVICE static void rescale(Ctx& ctx, typename o_tile::accumulator (&acc)[o_parts], const float* f) {
    const int lane = ctx.lane().index();
    STRATA_UNROLL
    for (int op = 0; op < o_parts; ++op)
      STRATA_UNROLL
      for (int i = 0; i < o_tile::atoms_m; ++i)
        STRATA_UNROLL
        for (int j = 0; j < o_tile::atoms_n; ++j)
          STRATA_UNROLL
          for (int v = 0; v < atom::c_values; ++v) acc[op].f[i][j].v[v] *= f[i * atom::M + atom::c_coord(lane, v).row];
  }
};

}  // namespace strata::attn
