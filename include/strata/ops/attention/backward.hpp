// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/attention/backward.hpp -- the attention backward (FlashAttention-2's algorithm):
// dQ, dK, dV recomputed from Q, K, V, dO and the forward's LSE, never storing the S x S matrices.
//
// Four kernels. dK, dV and dsinks are bitwise reproducible (every sum in a fixed order); dQ gets a
// part from every key tile, added into one fp32 accumulator with atomics, or with
// options.deterministic in key-tile order (a counter per query step says whose turn it is):
//   pre   one warp per (batch, head, query row): Di = rowsum(dO o O) and the LSE in log2 units,
//         once per row into the workspace (every key tile's block reads them there instead of
//         recomputing Di from O and dO: 128 times over at 4 096 keys in 32-key tiles)
//   dkdv  on tensor cores (backward_mma.hpp) or, here, scalar fp32 (fp32, head dim 512 and 256 on
//         sm_80, AMD):
//         one block per (batch, K/V head, key tile of BN keys); it keeps the tile's K and V and its
//         dK, dV accumulators in shared memory (fp32) and walks every query head of the GQA group and
//         every query tile in order:
//           P   = exp(mask(mods(scale * Q K^T)) - LSE)     (recomputed; 0 where masked)
//           Pd  = P o Z / (1 - r)                           (Z: the forward's Philox dropout mask, r its rate)
//           dV += Pd^T dO;   dP = (dO V^T) o Z / (1 - r)
//           Di  = rowsum(dO o O)                            (per query row, from `pre`)
//           dS  = P o (dP - Di) o softcap'(.) * scale
//           dK += dS^T Q;    dQ += dS K   (the accumulator: atomically, or in key-tile order)
//         so dK and dV are summed over the GQA group inside the block.
//   dq    one block per (batch, head, query row): the accumulator converted to dQ's type;
//         also the row's sink term -exp(sink - LSE) * Di when sinks' gradient is requested.
//   dsink one block per head: dsink[h] = sum over (batch, row), in order, of the sink terms.
// The arithmetic is scalar fp32 (one thread per element of each product), from one source for the
// emulator and every GPU: portable and exact enough for training, not tensor-core fast (docs).
// Every forward mask and modifier is supported: causal, window, ALiBi, soft-cap, sinks, dropout,
// mask_mod, and score_mod when it states its derivative (mods.hpp: grad(score, b, h, q, k)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "strata/arch/atomic.hpp"
#include "strata/arch/fast_math.hpp"
#include "strata/config/config.hpp"
#include "strata/hierarchy/turn.hpp"
#include "strata/ops/attention/forward.hpp"
#include "strata/ops/attention/philox.hpp"

namespace strata::attn {

namespace detail {

/// Device-side arguments of the backward kernels (forward_params for the shared fields: q, k, v,
/// o, lse and their strides, lengths, masks, dropout).
struct backward_params {
  forward_params f;
  const void* dout;
  void* dq;
  void* dk;
  void* dv;
  long long do_bs, do_rs, do_hs;
  long long dq_bs, dq_rs, dq_hs;
  long long dk_bs, dk_rs, dk_hs;
  long long dv_bs, dv_rs, dv_hs;
  float* dq_accum;     // (B, H, SQ, D) fp32: dQ, every key tile's part added (zeroed by `pre`)
  unsigned* dq_turn;   // options.deterministic: (B, H, q_tiles) counters of the key tiles that added
                       // to each query tile (zeroed by `pre`); null: atomic adds
  int q_tile_rows;     // query rows per counter: the dK/dV kernel's query step
  int q_tiles;         // counters per (batch, head)
  int dq_dim;          // D (the preprocess kernel zeroes dq_accum rows of it)
  float* lse2;         // (B, H, stat_ld) fp32: the row's LSE times log2(e) (`pre`; -inf: no visible key)
  float* di;           // (B, H, stat_ld) fp32: rowsum(dO o O) (`pre`)
  long long stat_ld;   // rows of lse2 / di per (batch, head): seqlen_q rounded up to 4 (16-byte rows)
  float* sink_part;    // (B, H, SQ) fp32, or null
  float* dsinks;       // (H) fp32, or null
  int k_tiles;         // key tiles of the longest sequence
  float dq_scale = 1.f;  // the dQ kernel writes dq_accum x dq_scale: the softmax scale where the dK/dV
                         // kernel adds dS / scale (the tensor-core one, backward_mma.hpp), else 1
};

/// Where row i of (b, h) keeps its LSE2 and Di (i inside the sequence, not packed).
STRATA_HOST_DEVICE inline long long stat_index(const backward_params& bp, int b, int h, int i) {
  return (static_cast<long long>(b) * bp.f.heads + h) * bp.stat_ld + i;
}

/// The query rows [first, end) a dK/dV block of key tile [n0, n0 + bn) walks, in whole query tiles of
/// `bm` rows: the windows (causal is window_right 0) bound the rows that can see one of its keys. In
/// 64 bits: windows up to INT_MAX.
struct walked_rows {
  int first, end;
  STRATA_HOST_DEVICE int tiles(int bm) const { return (end - first + bm - 1) / bm; }
};
STRATA_HOST_DEVICE inline walked_rows walked_query_rows(const forward_params& p, const seq_view& sq, int n0, int bn, int bm) {
  long long lo = 0, hi = sq.sq;  // [lo, hi)
  if (p.window_right >= 0) {
    const long long first = static_cast<long long>(n0) - sq.off - p.window_right;  // j <= i + off + right
    lo = first > 0 ? first : 0;
  }
  if (p.window_left >= 0) {
    const long long end = static_cast<long long>(n0) + bn - sq.off + p.window_left;  // j >= i + off - left
    hi = end < hi ? end : hi;
  }
  if (lo > hi) lo = hi;
  const int first = static_cast<int>(lo) / bm * bm;
  return {first, hi > lo ? static_cast<int>(hi) : first};
}

/// The first key tile (of `bn` keys) that walks the query tile at row m0, in the deterministic dQ
/// mode's order: the walked rows of key tile t end at min(sq, (t + 1) bn - off + window_left) (see
/// walked_query_rows), which grows with t, so the key tiles walking a query tile are consecutive, from
/// the first whose walk ends past m0 (0 without a left window). Their walks start at or before the
/// query tile's, and none is empty (a walk ends at least bn rows after it starts, or at the
/// sequence's end).
STRATA_HOST_DEVICE inline int first_key_tile(const forward_params& p, const seq_view& sq, int m0, int bn) {
  if (p.window_left < 0) return 0;
  const long long x = static_cast<long long>(m0) + sq.off - p.window_left - bn;  // first > x / bn
  const long long f = (x >= 0 ? x / bn : -((-x + bn - 1) / bn)) + 1;             // floor(x / bn) + 1
  return f > 0 ? static_cast<int>(f) : 0;
}

constexpr std::size_t backward_shared_bytes(int bn, int d, int dv) {
  return static_cast<std::size_t>(bn) * (2 * d + 2 * dv) * 4 + 3 * 16 * static_cast<std::size_t>(bn) * 4 + 2 * 16 * 4 + 256;
}

/// The widest key tile of {32, 16, 8, 4} whose shared storage fits the target.
template <class Target, int D, int Dv>
constexpr int backward_block_n() {
  for (int bn : {32, 16, 8, 4})
    if (backward_shared_bytes(bn, D, Dv) <= Target::shared_memory_per_block) return bn;
  return 0;
}

/// Query rows per step of the tensor-core dK/dV kernel (backward_query_tile below).
inline constexpr int backward_mma_query_tile = 64;

/// Keys per block of the tensor-core dK/dV kernel: 4 groups of 16 up to head dim 128, 2 above, where
/// each group's work is split 4 ways over the head dim instead of 2 (backward_mma.hpp).
constexpr int backward_mma_key_tile(int d, int dv) { return d > 128 || dv > 128 ? 32 : 64; }

/// The tensor-core dK/dV kernel's shared storage in bytes (its shared_storage, which checks it):
/// K and V of the key tile, Q and dO in two stages, P^T and dS^T, LSE2 and Di in two stages; rows
/// padded by 16 bytes.
template <class Elem>
constexpr std::size_t backward_mma_shared_bytes(int d, int dv) {
  const std::size_t pad = 16 / sizeof(Elem), bn = static_cast<std::size_t>(backward_mma_key_tile(d, dv)),
                    bm = backward_mma_query_tile;
  const std::size_t elems = bn * (d + pad) + bn * (dv + pad) + 2 * bm * (d + pad) + 2 * bm * (dv + pad) + 2 * bn * (bm + pad);
  return elems * sizeof(Elem) + 2 * 2 * bm * sizeof(float);
}

/// Whether the tensor-core dK/dV kernel (backward_mma.hpp) serves (target, element type, head dims):
/// f16 / bf16 on the m16n8k16 mma.sync atoms, head dims up to 256 that split into the kernel's parts
/// (multiples of 32 up to 128, of 64 above: 192, 256, 192 / 128), where its tile fits the target's
/// shared memory (head dim 256: not an A100's 163 KiB).
template <class Target, class Elem, int D, int Dv>
constexpr bool backward_on_tensor_cores() {
  if constexpr (std::is_same_v<Elem, f16> || std::is_same_v<Elem, bf16>) {
    using A = atom_for<Target, Elem>;
    constexpr int split = backward_mma_key_tile(D, Dv) == 64 ? 32 : 64;
    return mma::ldmatrix_loadable<A> && mma::c_is_a<A> && D <= 256 && Dv <= 256 && D % split == 0 && Dv % split == 0 &&
           backward_mma_shared_bytes<Elem>(D, Dv) <= Target::shared_memory_per_block;
  } else {
    return false;
  }
}

/// Keys per dK/dV block of the kernel that serves the configuration.
template <class Target, class Elem, int D, int Dv>
constexpr int backward_key_tile() {
  if constexpr (backward_on_tensor_cores<Target, Elem, D, Dv>()) return backward_mma_key_tile(D, Dv);
  else return backward_block_n<Target, D, Dv>();
}

}  // namespace detail

/// Query rows per step of the tensor-core and the scalar dK/dV kernels (and per dq_turn counter).
inline constexpr int backward_query_tile = detail::backward_mma_query_tile;
inline constexpr int backward_scalar_query_tile = 16;

/// Per query row, once: Di = rowsum(dO o O) (a fixed lane order: warp.sum's tree) and LSE2 = LSE
/// log2(e); also the row of the dQ accumulator zeroed (and each query step's counter, in the
/// deterministic mode). One warp per (batch, head, row); rows a sequence does
/// not have are left alone.
template <class Elem, int Dv, class Target>
struct backward_preprocess_kernel {
  using target = Target;
  using params = detail::backward_params;
  static constexpr const char* name = "attention_backward_preprocess_kernel";
  static constexpr int warps = 4;
  static constexpr int threads = warps * Target::warp_size;
  static constexpr int max_threads_per_block = threads;

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& bp) const {
    const detail::forward_params& p = bp.f;
    auto warp = ctx.warp();
    const long long row = ctx.block().rank() * warps + warp.index();  // (b, h, i)
    if (row >= static_cast<long long>(p.batch) * p.heads * p.seqlen_q) return;
    const int i = static_cast<int>(row % p.seqlen_q);
    const int h = static_cast<int>((row / p.seqlen_q) % p.heads);
    const int b = static_cast<int>(row / (static_cast<long long>(p.heads) * p.seqlen_q));
    const detail::seq_view sq = detail::sequence(p, b);
    if (i >= sq.sq) return;  // the whole warp leaves together: warp.sum below sees every lane
    const Elem* o = static_cast<const Elem*>(p.o) + b * p.o_bs + static_cast<long long>(sq.q0 + i) * p.o_rs + h * p.o_hs;
    const Elem* dout = static_cast<const Elem*>(bp.dout) + b * bp.do_bs + static_cast<long long>(sq.q0 + i) * bp.do_rs + h * bp.do_hs;
    float part = 0.f;
    for (int c = ctx.lane().index(); c < Dv; c += Target::warp_size) part += static_cast<float>(dout[c]) * static_cast<float>(o[c]);
    const float di = warp.sum(part);
    {  // the dK/dV kernels add their dQ parts into a zeroed accumulator
      float* acc = bp.dq_accum + ((static_cast<long long>(b) * p.heads + h) * p.seqlen_q + i) * bp.dq_dim;
      for (int c = ctx.lane().index(); c < bp.dq_dim; c += Target::warp_size) acc[c] = 0.f;
      if (bp.dq_turn && i % bp.q_tile_rows == 0 && ctx.lane().index() == 0)
        bp.dq_turn[(static_cast<long long>(b) * p.heads + h) * bp.q_tiles + i / bp.q_tile_rows] = 0u;
    }
    if (ctx.lane().index() == 0) {
      const float lse = p.lse[b * p.lse_bs + h * p.lse_hs + sq.q0 + i];
      const long long at = detail::stat_index(bp, b, h, i);
      bp.di[at] = di;
      bp.lse2[at] = lse * 1.4426950408889634f;  // -inf stays -inf
    }
  }
};

/// dK and dV of one key tile (and its dQ contribution). Elem: f16, bf16 or float.
template <class Elem, int D, int Dv, class Target, class ScoreMod = no_score_mod, class MaskMod = no_mask_mod>
struct backward_dkdv_kernel {
  using target = Target;
  using params = detail::backward_params;
  static constexpr const char* name = "attention_backward_dkdv_kernel";
  static constexpr int BN = detail::backward_block_n<Target, D, Dv>();
  static constexpr int BM = backward_scalar_query_tile;
  static constexpr int threads = 128;
  static constexpr int max_threads_per_block = threads;
  // Up to 255 registers (CUDA; docs/design.md item 16): given only the thread count, ptxas aimed at
  // 56-64 and spilled 20-120 bytes in every configuration; at 128 the fp32 ones still spilled (they
  // take 154 with the unrolled dot products). nvcc 13, sm_80.
  static constexpr int min_blocks_per_multiprocessor = 65536 / (threads * 255);
  static_assert(BN > 0, "attention backward: no key tile of this head dim fits the target's shared memory");
  static_assert(differentiable_score_mod<ScoreMod>,
                "attention backward: the score_mod must state its derivative, a member "
                "float grad(float score, int batch, int head, int q, int k) const (mods.hpp)");

  ScoreMod score_mod{};
  MaskMod mask_mod{};

  struct shared_storage {
    float k[BN * D], v[BN * Dv], dk[BN * D], dv[BN * Dv];
    float pr[BM * BN];   // P (undropped)
    float pd[BM * BN];   // P with dropout applied and scaled (what multiplied V in the forward)
    float ds[BM * BN];   // softcap'(.) * scale, then dS
    float lse[BM], di[BM];
  };
  static_assert(sizeof(shared_storage) <= detail::backward_shared_bytes(BN, D, Dv));

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& bp) const {
    auto& sm = ctx.template shared<shared_storage>();
    const detail::forward_params& p = bp.f;
    const int tid = ctx.block().thread_rank();
    const long long r = ctx.block().rank();
    const int t = static_cast<int>(r % bp.k_tiles);
    const int hk = static_cast<int>((r / bp.k_tiles) % p.heads_k);
    const int b = static_cast<int>(r / (static_cast<long long>(bp.k_tiles) * p.heads_k));
    const detail::seq_view sq = detail::sequence(p, b);
    const int n0 = t * BN;
    if (n0 >= sq.sk) return;  // this sequence has no such key tile (the dq kernel does not read it)
    const int group = p.heads / p.heads_k;
    const float drop_scale = p.dropout_p > 0.f ? dropout_scale(p.dropout_threshold) : 1.f;
    const float inv_softcap = p.softcap > 0.f ? 1.f / p.softcap : 0.f;

    const Elem* kg = static_cast<const Elem*>(p.k) + b * p.k_bs + static_cast<long long>(sq.k0) * p.k_rs + hk * p.k_hs;
    const Elem* vg = static_cast<const Elem*>(p.v) + b * p.v_bs + static_cast<long long>(sq.k0) * p.v_rs + hk * p.v_hs;
    for (int e = tid; e < BN * D; e += threads) {
      const int j = n0 + e / D;
      sm.k[e] = j < sq.sk ? static_cast<float>(kg[static_cast<long long>(j) * p.k_rs + e % D]) : 0.f;
      sm.dk[e] = 0.f;
    }
    for (int e = tid; e < BN * Dv; e += threads) {
      const int j = n0 + e / Dv;
      sm.v[e] = j < sq.sk ? static_cast<float>(vg[static_cast<long long>(j) * p.v_rs + e % Dv]) : 0.f;
      sm.dv[e] = 0.f;
    }
    ctx.block().sync();

    for (int g = 0; g < group; ++g) {
      const int h = hk * group + g;
      const Elem* qg = static_cast<const Elem*>(p.q) + b * p.q_bs + static_cast<long long>(sq.q0) * p.q_rs + h * p.q_hs;
      const Elem* dog = static_cast<const Elem*>(bp.dout) + b * bp.do_bs + static_cast<long long>(sq.q0) * bp.do_rs + h * bp.do_hs;
      float* dqa = bp.dq_accum + ((static_cast<long long>(b) * p.heads + h) * p.seqlen_q) * D;
      const float slope = p.alibi ? p.alibi[h] : 0.f;
      for (int m0 = 0; m0 < sq.sq; m0 += BM) {
        // Per row: LSE and Di (the preprocess kernel's).
        for (int i = tid; i < BM; i += threads) {
          const int qi = m0 + i;
          float lse = detail::neg_inf(), di = 0.f;
          if (qi < sq.sq) {
            lse = p.lse[b * p.lse_bs + h * p.lse_hs + sq.q0 + qi];
            di = bp.di[detail::stat_index(bp, b, h, qi)];
          }
          sm.lse[i] = lse;
          sm.di[i] = di;
        }
        ctx.block().sync();
        // P (recomputed from the LSE) and the soft-cap derivative.
        for (int e = tid; e < BM * BN; e += threads) {
          const int i = e / BN, c = e % BN, qi = m0 + i, j = n0 + c;
          float pr = 0.f, pd = 0.f, dfac = 0.f;
          bool keep = qi < sq.sq && j < sq.sk && sm.lse[i] != detail::neg_inf();
          if (p.window_right >= 0) keep = keep && j <= qi + sq.off + p.window_right;
          if (p.window_left >= 0) keep = keep && j >= qi + sq.off - p.window_left;
          keep = keep && mask_mod(b, h, qi, j);
          if (keep) {
            float s = 0.f;
            for (int d = 0; d < D; ++d) s += static_cast<float>(qg[static_cast<long long>(qi) * p.q_rs + d]) * sm.k[c * D + d];
            float x = s * p.scale;
            dfac = p.scale;
            if (p.softcap > 0.f) {
              const float th = arch::tanh_fast(x * inv_softcap);  // the forward's (forward.hpp)
              x = p.softcap * th;
              dfac *= 1.f - th * th;
            }
            if (p.alibi) {
              const int dist = qi + sq.off - j;
              x -= slope * static_cast<float>(dist < 0 ? -dist : dist);
            }
            dfac *= score_mod.grad(x, b, h, qi, j);  // at the score score_mod was given
            x = score_mod(x, b, h, qi, j);
            pr = ::expf(x - sm.lse[i]);
            pd = pr;
            if (p.dropout_p > 0.f)
              pd = dropout_keep(p.seed, p.offset, p.dropout_threshold, b, p.heads, h, qi, j) ? pr * drop_scale : 0.f;
          }
          sm.pr[e] = pr;
          sm.pd[e] = pd;
          sm.ds[e] = dfac;
        }
        ctx.block().sync();
        // dV += Pd^T dO.
        const int rows = detail::imin(BM, sq.sq - m0);
        for (int e = tid; e < BN * Dv; e += threads) {
          const int c = e / Dv, d = e % Dv;
          float acc = sm.dv[e];
          for (int i = 0; i < rows; ++i) acc += sm.pd[i * BN + c] * static_cast<float>(dog[static_cast<long long>(m0 + i) * bp.do_rs + d]);
          sm.dv[e] = acc;
        }
        // dS = P o (dP o Z / (1 - p) - Di) o softcap' * scale, dP = dO V^T.
        for (int e = tid; e < BM * BN; e += threads) {
          const int i = e / BN, c = e % BN;
          float ds = 0.f;
          if (sm.pr[e] != 0.f) {
            float dp = 0.f;
            for (int d = 0; d < Dv; ++d) dp += static_cast<float>(dog[static_cast<long long>(m0 + i) * bp.do_rs + d]) * sm.v[c * Dv + d];
            if (p.dropout_p > 0.f) dp = sm.pd[e] != 0.f ? dp * drop_scale : 0.f;
            ds = sm.pr[e] * (dp - sm.di[i]) * sm.ds[e];
          }
          sm.ds[e] = ds;
        }
        ctx.block().sync();
        // dK += dS^T Q;  this tile's dQ part dS K added into the accumulator: atomically, or (options.
        // deterministic) in key-tile order, every key tile walking every query step, so that its turn
        // is t (as the tensor-core kernel's; hierarchy/turn.hpp).
        unsigned* turn = bp.dq_turn ? bp.dq_turn + (static_cast<long long>(b) * p.heads + h) * bp.q_tiles + m0 / BM : nullptr;
        if (turn) wait_turn(ctx, turn, static_cast<unsigned>(t));
        for (int e = tid; e < BN * D; e += threads) {
          const int c = e / D, d = e % D;
          float acc = sm.dk[e];
          for (int i = 0; i < rows; ++i) acc += sm.ds[i * BN + c] * static_cast<float>(qg[static_cast<long long>(m0 + i) * p.q_rs + d]);
          sm.dk[e] = acc;
        }
        for (int e = tid; e < rows * D; e += threads) {
          const int i = e / D, d = e % D;
          float acc = 0.f;
          for (int c = 0; c < BN; ++c) acc += sm.ds[i * BN + c] * sm.k[c * D + d];
          float* at = dqa + static_cast<long long>(m0 + i) * D + d;
          if (turn) *at += acc;
          else atomic::add(at, acc);
        }
        if (turn) pass_turn(ctx, turn, static_cast<unsigned>(t) + 1u);
        else ctx.block().sync();
      }
    }
    Elem* dkg = static_cast<Elem*>(bp.dk) + b * bp.dk_bs + static_cast<long long>(sq.k0) * bp.dk_rs + hk * bp.dk_hs;
    Elem* dvg = static_cast<Elem*>(bp.dv) + b * bp.dv_bs + static_cast<long long>(sq.k0) * bp.dv_rs + hk * bp.dv_hs;
    for (int e = tid; e < BN * D; e += threads) {
      const int j = n0 + e / D;
      if (j < sq.sk) dkg[static_cast<long long>(j) * bp.dk_rs + e % D] = static_cast<Elem>(sm.dk[e]);
    }
    for (int e = tid; e < BN * Dv; e += threads) {
      const int j = n0 + e / Dv;
      if (j < sq.sk) dvg[static_cast<long long>(j) * bp.dv_rs + e % Dv] = static_cast<Elem>(sm.dv[e]);
    }
  }
};

/// dQ of one (batch, head, query row): the accumulator converted to the element type; and the row's
/// sink-gradient term.
template <class Elem, int D, int Dv, class Target>
struct backward_dq_kernel {
  using target = Target;
  using params = detail::backward_params;
  static constexpr const char* name = "attention_backward_dq_kernel";
  static constexpr int threads = Target::warp_size;
  static constexpr int max_threads_per_block = threads;

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& bp) const {
    const detail::forward_params& p = bp.f;
    const long long row = ctx.block().rank();  // (b, h, i)
    const int i = static_cast<int>(row % p.seqlen_q);
    const int h = static_cast<int>((row / p.seqlen_q) % p.heads);
    const int b = static_cast<int>(row / (static_cast<long long>(p.heads) * p.seqlen_q));
    const detail::seq_view sq = detail::sequence(p, b);
    if (i >= sq.sq) return;
    Elem* dq = static_cast<Elem*>(bp.dq) + b * bp.dq_bs + static_cast<long long>(sq.q0 + i) * bp.dq_rs + h * bp.dq_hs;
    const float* acc = bp.dq_accum + row * D;
    for (int d = ctx.block().thread_rank(); d < D; d += threads) dq[d] = static_cast<Elem>(acc[d] * bp.dq_scale);
    if (bp.sink_part && ctx.block().thread_rank() == 0) {
      const float lse = p.lse[b * p.lse_bs + h * p.lse_hs + sq.q0 + i];
      float term = 0.f;
      if (lse != detail::neg_inf()) term = -::expf(p.sinks[h] - lse) * bp.di[detail::stat_index(bp, b, h, i)];
      bp.sink_part[row] = term;
    }
  }
};

/// dsink[h] = sum over (batch, row) of the rows' sink terms, in order.
template <class Target>
struct backward_dsink_kernel {
  using target = Target;
  using params = detail::backward_params;
  static constexpr const char* name = "attention_backward_dsink_kernel";
  static constexpr int threads = Target::warp_size;
  static constexpr int max_threads_per_block = threads;

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& bp) const {
    const detail::forward_params& p = bp.f;
    const int h = static_cast<int>(ctx.block().rank());
    if (ctx.block().thread_rank() != 0) return;
    float acc = 0.f;
    for (int b = 0; b < p.batch; ++b) {
      const int n = detail::sequence(p, b).sq;
      for (int i = 0; i < n; ++i) acc += bp.sink_part[(static_cast<long long>(b) * p.heads + h) * p.seqlen_q + i];
    }
    bp.dsinks[h] = acc;
  }
};

}  // namespace strata::attn
