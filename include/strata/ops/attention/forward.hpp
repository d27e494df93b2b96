// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/attention/forward.hpp -- the fused attention forward kernel (FlashAttention-2's
// algorithm: online softmax over K/V tiles, never materializing the S x S score matrix).
//
// One block computes block_m query rows of one (batch, head) against one range of key tiles (with one
// query row per sequence and GQA, pack_gqa: the rows are the query heads of one K/V head's group, so
// K and V are read once for the group and a block computes the group's rows, not one):
//   Q      each warp owns Cfg.row_atoms x atom-M query rows (2 x 16 in FlashAttention-2's tall tile,
//          config.hpp's forward_tile::tall, else one atom's) and loads them into A fragments once
//          (registers, the whole loop); with Cfg.q_in_shared (wide head dims and the tall tile on
//          mma.sync) the block's Q tile is staged in shared memory with the first K/V tile and each
//          fragment is read from there per key tile. Every K and V fragment serves all of a warp's rows
//   K, V   streamed tile by tile through strata::pipeline (cp.async on sm80+, loads elsewhere): one
//          copy per tile from contiguous K/V (kv_storage::contiguous), or 16-row chunks with a page
//          lookup each from a paged cache (kv_storage::paged; a chunk never crosses a page)
//   S      S = Q K^T with the atom, the K stage read as K^T; stays in the accumulator registers.
//          Stage rows are padded by 16 bytes, so that the eight rows an ldmatrix reads fall in eight
//          distinct bank groups; on the f16/bf16 mma.sync atoms K (and a staged Q) are read with
//          ldmatrix and V with ldmatrix.trans (mma/ldmatrix_fragments.hpp); on the MFMA atoms (CDNA)
//          V's stages hold V^T and K, P and V^T are read 16 bytes at a time (mma/vector_fragments.hpp,
//          v_transposed below); elsewhere element-wise
//   softmax  in registers, on the accumulators (mma/accumulator_rows.hpp: which rows a lane holds and
//          which lanes share them): scale, soft-cap, ALiBi, score_mod and the masks in place, then the
//          running max m per row by xor shuffles inside the row's lane group, and each lane's part of
//          the row's sum l (added across the lanes once, after the key loop). m is kept in
//          log2 units (the logit times log2 e); without the mods each probability is one FFMA and
//          one ex2.approx (arch/fast_math.hpp) from the raw score, the scale folded in, and with them
//          one subtract and one ex2.approx from the logit in log2 units; the rescale factor
//          alpha = 2^(m_old - m_new) never leaves the registers
//   O      O = alpha O + P V with the atom. Where the atom's C layout is its A layout (mma.sync
//          m16n8k16, the FMA atom, MFMA 16x16x16 with its operands exchanged -- S^T = K Q^T,
//          mma/swapped.hpp: mma::c_is_a) P is converted in registers and used directly as the A
//          operand; elsewhere (the 8-bit and tf32 atoms) P goes once through a shared tile
// The epilogue divides by l and writes O and LSE = m ln 2 + log(l), or, for split-KV, fp32 partials
// that combine.hpp merges. Rows with no visible key (fully masked) give O = 0 and LSE = -inf: the
// exponent's reference max is 0 while the running max is still -inf, so 2^(-inf - m) is 0 and no
// 2^(-inf - -inf) = NaN is ever formed.
//
// Key split (Cfg.key_split, config.hpp's forward_tile::split_keys: attention_decode on 16-bit
// mma.sync): the warps share the block's one atom of query rows and each takes its own KW = block_n /
// warps keys of every tile, with its own running max, sum and O; after the key loop the block merges
// them (merge_key_slices) and warp 0 runs the epilogue. A decode block holds 1-16 rows, so the warps
// of the standard tile computed padding rows and each read all of K and V from shared memory.
//
// V column slices (Cfg.v_slices > 1: 16-bit head dim 512 and fp8 V head dims of 192 or more on
// mma.sync): a block computes O for one slice of Dv / v_slices columns. Each slice's block recomputes
// S and the softmax (identical in all of them); only slice 0 writes the LSE. Costs one more Q K^T per extra slice; keeps the O accumulator
// (Dv / 2 registers per thread for the whole Dv) within the register file.
//
// Work placement: block ids are mapped through the chiplet dispatch inverse so that every chiplet
// gets one contiguous range of work items; items are ordered (batch, K/V head) outermost, so the
// query tiles of one GQA group -- which read the same K and V -- land on the same chiplet, and inside
// a group causal tiles run longest first (the last query tiles see the most keys).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "strata/arch/fast_math.hpp"
#include "strata/arch/narrow.hpp"
#include "strata/arch/schedule.hpp"
#include "strata/config/config.hpp"
#include "strata/copy/tile.hpp"
#include "strata/copy/tile_stream.hpp"
#include "strata/hierarchy/tile_order.hpp"
#include "strata/mma/accumulator_rows.hpp"
#include "strata/mma/ldmatrix_fragments.hpp"
#include "strata/mma/mma.hpp"
#include "strata/mma/vector_fragments.hpp"
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
  int pack_gqa;                // 1: one query row per sequence (seqlen_q 1, not varlen), and a block's rows
                               // are the query heads of one K/V head's group (row i: head hk * group + i)
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
          class ScoreMod = no_score_mod, class MaskMod = no_mask_mod, score_features Features = score_features::any,
          kv_storage KV = kv_storage::contiguous>
struct forward_kernel {
  using target = Target;
  using params = detail::forward_params;
  using atom = atom_for<Target, Elem>;
  using out_type = out_elem<Elem>;
  static constexpr float product_scale = detail::product_scale<atom>();  // 4 for OCP fp8 on CDNA3
  static constexpr const char* name = "attention_forward_kernel";
  static constexpr int warp_size = Target::warp_size;
  static constexpr int row_atoms = Cfg.row_atoms;   // atoms of query rows per warp
  static constexpr int WM = atom::M * row_atoms;     // query rows per warp
  // Key split (config.hpp, forward_tile::split_keys): every warp has the block's WM rows and KW of
  // each tile's BN keys; otherwise each warp has WM rows of its own and all BN keys.
  static constexpr bool key_split = Cfg.key_split;
  static constexpr int BM = (key_split ? 1 : Cfg.warps) * WM;  // query rows per block
  static constexpr int BN = Cfg.block_n;             // keys per tile
  static constexpr int KW = key_split ? BN / Cfg.warps : BN;  // keys per warp of each tile
  static constexpr int stages = Cfg.stages;
  static constexpr int chunk = BN < 16 ? BN : 16;    // rows per paged copy: never crosses a 16-multiple page
  static constexpr int max_threads_per_block = Cfg.warps * warp_size;
  // __launch_bounds__(threads, 1): without a minimum, ptxas capped some kernels at 128 registers on its
  // own and spilled (fp8 192 on sm_90a: 4 B at 128 registers; 208 and none with the minimum stated).
  static constexpr int min_blocks_per_multiprocessor = 1;
  // HIP: at least two waves per SIMD (the trampoline's amdgpu_waves_per_eu), under which clang 15
  // accumulates MFMA results in VGPRs; with one wave allowed it kept S and O in AGPRs and copied them
  // through VGPRs every key tile (gfx940, bf16 d128: 72 v_accvgpr moves per 32 MFMA, 192 registers;
  // with the request 160 registers, three waves instead of two). See gemm::kernel::min_waves_per_eu.
  // Head dims over 192 keep one wave (AGPRs as extra registers): under 256 registers the kernels with
  // the optional score features spilled 10 (f16) and 14 (e4m3) VGPRs at D 256 on gfx940.
  static constexpr int min_waves_per_eu = D > 192 || Dv > 192 ? 1 : 2;
  static constexpr bool q_in_shared = Cfg.q_in_shared;
  static constexpr int v_slices = Cfg.v_slices;
  static constexpr int DvB = Dv / v_slices;          // V / O columns per block
  static constexpr bool extras = Features == score_features::any;  // soft-cap, ALiBi, dropout compiled in
  static constexpr bool paged = KV == kv_storage::paged;

  // Preconditions, in words.
  static_assert(BN > 0, "attention: no K/V tile of this head dim fits the target's shared memory (see "
                        "default_config); this head dim is not supported on this target");
  static_assert(D % atom::K == 0, "attention: the QK head dim must be a multiple of the atom's K");
  static_assert(Dv % atom::N == 0, "attention: the V head dim must be a multiple of the atom's N");
  static_assert(v_slices >= 1 && Dv % v_slices == 0 && DvB % atom::N == 0 && (DvB * sizeof(Elem)) % 16 == 0,
                "attention: v_slices must split Dv into whole atoms and 16-byte vectors");
  static_assert(BN % atom::N == 0 && BN % atom::K == 0, "attention: block_n must be a multiple of the atom's N and K");
  static_assert(BN % chunk == 0, "attention: block_n must be a multiple of the copy chunk");
  static_assert(!key_split || (row_atoms == 1 && BN % Cfg.warps == 0 && KW % atom::N == 0 && KW % atom::K == 0),
                "attention: a key split gives each warp whole atoms of keys, one atom of rows");
  static_assert((D * sizeof(Elem)) % 16 == 0 && (Dv * sizeof(Elem)) % 16 == 0,
                "attention: head dims must be whole 16-byte vectors");

  using s_tile = mma::warp_tile<atom, WM, KW, atom::K>;  // S = Q K^T (the warp's keys), one K step at a time
  // O += P V, one K step at a time, in o_parts column slices of the warp's rows: with Q staged in
  // shared memory (wide head dims), V's fragments are loaded 64 columns at a time, not all Dv at once.
  static constexpr int o_parts = q_in_shared && DvB % 64 == 0 ? DvB / 64 : 1;
  static constexpr int o_cols = DvB / o_parts;
  using o_tile = mma::warp_tile<atom, WM, o_cols, atom::K>;
  // 16-bit K and V of up to 512 bytes per key (head dims up to 128) with Q in registers: the copies
  // know the block's thread count, a compile-time trip count, unrolled (copy/tile.hpp). Wider rows, the
  // staged-Q configurations and fp8 keep the loop: the unrolled copy's addresses, hoisted out of the
  // K-tile loop, made ptxas spill there (sm_80 192/128, sm_90a 512 and fp8 256, sm_100a fp8 128).
  // The tall tile stages Q too and takes the unrolled copies: it compiles without spills.
  static constexpr int copy_rows = paged ? chunk : BN;  // rows per K / V copy
  static constexpr int copy_threads =
      (!q_in_shared || row_atoms > 1) && sizeof(Elem) == 2 && (D + DvB) * static_cast<int>(sizeof(Elem)) <= 512 ? max_threads_per_block : 0;
  using k_copy = copy::tile_copy<Elem, copy_rows, D, 16, 16, copy_threads>;
  using v_copy = copy::tile_copy<Elem, copy_rows, DvB, 16, 16, copy_threads>;
  using q_copy = copy::tile_copy<Elem, BM, D, 16, 16, copy_threads>;
  // The interior loop's K / V copies as streams (run(): contiguous K / V, the thread count known and a
  // multiple of the vectors per row, so that each thread's vectors share a column: not head dim 96).
  static constexpr bool interior_streams = !paged && copy_threads > 0 && copy_threads % k_copy::vectors_per_row == 0 &&
                                           copy_threads % v_copy::vectors_per_row == 0;
  using k_stream = std::conditional_t<interior_streams, copy::tile_stream<k_copy>, void>;
  using v_stream = std::conditional_t<interior_streams, copy::tile_stream<v_copy>, void>;

  // The rows of the accumulators as a lane holds them (slots), for the softmax in registers.
  // A lane holds rows::count rows of each of the warp's row_atoms atoms: slot r is row
  // rows::row_of(lane, r % rows::count) of atom r / rows::count.
  using rows = mma::accumulator_rows<atom>;
  static constexpr int slots = rows::count * row_atoms;
  static_assert(row_atoms >= 1 && s_tile::atoms_m == row_atoms && o_tile::atoms_m == row_atoms,
                "attention: a warp owns row_atoms atoms of query rows");
  /// The slot of value v of the accumulator atoms in row i of the warp tile.
  STRATA_HOST_DEVICE static constexpr int slot_of(int i, int v) { return i * rows::count + rows::slot_of(v); }
  /// The row (0 .. WM) of slot r in this lane.
  STRATA_HOST_DEVICE static constexpr int row_of(int lane, int r) {
    return (r / rows::count) * atom::M + rows::row_of(lane, r % rows::count);
  }
  // P stays in registers where the accumulator layout is the A operand's (mma::c_is_a).
  static constexpr bool p_in_registers = mma::c_is_a<atom>;
  // Dropout draws one Philox call per 16 scores (philox.hpp) where the atom's C layout is mma.sync's
  // m16n8 one: lane l holds columns 2 (l % 4) + {0, 1} of each 8, so its 16 scores of a row in 64
  // keys are one dropout group. Elsewhere (MFMA, FMA, tiles of fewer than 64 keys) each score draws
  // its group's bytes itself: the same mask, a call per score.
  static constexpr bool quad_pair_c_layout = [] {
    if constexpr (atom::warp_size != 32 || atom::N != 8) {
      return false;
    } else {
      for (int l = 0; l < 32; ++l)
        for (int v = 0; v < atom::c_values; ++v)
          if (atom::c_coord(l, v).col != 2 * (l % 4) + v % 2) return false;
      return true;
    }
  }();
  static constexpr bool grouped_draws = extras && quad_pair_c_layout && KW % 64 == 0;
  // ldmatrix fragment loads: the f16/bf16 mma.sync atoms, with 16-column multiples everywhere.
  static constexpr bool use_ldmatrix = mma::ldmatrix_loadable<atom> && WM % 16 == 0 && D % 16 == 0 && KW % 16 == 0 && o_cols % 16 == 0;
  using k_frags = mma::ldmatrix_fragments<atom, WM, KW, atom::K>;  // K (B of S) and a staged Q (A of S)
  using v_frags = mma::ldmatrix_fragments<atom, WM, o_cols, atom::K>;  // V (B of O), transposed
  // Stage row strides: 16 bytes of padding per row (rows stay 16-byte aligned for the copies).
  static constexpr int pad = 16 / static_cast<int>(sizeof(Elem));
  // V^T stages (config.hpp, detail::v_transposed_for: MFMA on CDNA): V's stage holds DvB rows of BN
  // keys (ldvt), P's rows are padded, and P V reads both with mma::vector_fragments over the warp's
  // KW keys at once: a lane's share of a row is one run of KW / 4 keys (16 bytes at 32 keys), read
  // with ds_read_b128 / b64, where V read along K took one 2-byte read per element per wave.
  static constexpr bool v_transposed = detail::v_transposed_for<Target, atom>();
  static constexpr int ldvt = BN + pad;                           // V^T row stride (keys)
  static constexpr int ldp = v_transposed ? KW + pad : KW;        // P row stride
  // P V reads V^T in slices of pv_cols columns (all KW keys of each at once): the fragments of all
  // of Dv at once took clang 15 from 160 to 184 VGPRs at D 128 (gfx940: three waves per SIMD to two).
  static constexpr int pv_cols = o_cols % 64 == 0 ? 64 : o_cols;
  using pv_tile = mma::warp_tile<atom, WM, pv_cols, KW>;
  // K's fragments with vector_fragments too (MFMA with Q in registers): K's rows run along S's K (the
  // head dim) already, so a lane's share of a key is one run of elements (ds_read_b128), read in
  // slices of sk_cols of the head dim; Q's fragments are loaded once in the same permuted order.
  static constexpr bool k_vector_reads = v_transposed && !q_in_shared;
  static constexpr int sk_cols = D % 64 == 0 ? 64 : 32;
  static constexpr int sk_steps = sk_cols / atom::K;  // K steps per slice
  using sk_tile = mma::warp_tile<atom, WM, KW, sk_cols>;
  using sk_frags = std::conditional_t<k_vector_reads, mma::vector_fragments<atom, WM, KW, sk_cols>, void>;
  /// The head-dim column of Q / K that K step kk's value v of `lane` holds under k_vector_reads.
  STRATA_HOST_DEVICE static constexpr int q_col(int lane, int kk, int v) {
    if constexpr (k_vector_reads) return (kk / sk_steps) * sk_cols + sk_frags::k_of(lane, kk % sk_steps, v);
    else return 0;
  }
  using pv_frags = std::conditional_t<v_transposed, mma::vector_fragments<atom, WM, pv_cols, KW>, void>;
  // P in registers and V^T read 16 bytes at a time (the swapped MFMA atom): P's K step kk holds, in
  // lane group g, the keys kk K + g kl + v of the warp's (S's own columns), but pv_frags reads a lane
  // group's keys as one run of R = KW / groups: column g R + kk kl + v. So V^T's stages keep key j at
  // that column (v_column, applied by the copy that transposes V anyway), and each lane's run holds
  // exactly the values its P multiplies. With P through shared memory the two reads share the map and
  // V^T keeps the keys in order.
  static constexpr bool v_keys_in_read_order = p_in_registers && v_transposed;
  /// The V^T column of key j of a tile (j past the warp's first key kw, KW keys a warp).
  STRATA_HOST_DEVICE static constexpr int v_column(int j) {
    if constexpr (v_keys_in_read_order) {
      const int w0 = j - j % KW, kk = j % KW / atom::K, c = j % atom::K;
      return w0 + (c / pv_frags::kl) * pv_frags::run + kk * pv_frags::kl + c % pv_frags::kl;
    } else {
      return j;
    }
  }
  // The claim above, from the atom's tables: P's value v of K step kk (its A layout, which is its C
  // layout, c_is_a) is read from V^T's column pv_frags::k_of(lane, kk, v).
  // (checked in run(), where the class is complete)
  STRATA_HOST_DEVICE static constexpr bool v_columns_match_reads() {
    if constexpr (v_keys_in_read_order) {
      for (int l = 0; l < warp_size; ++l)
        for (int kk = 0; kk < KW / atom::K; ++kk)
          for (int v = 0; v < atom::a_values; ++v)
            if (v_column(kk * atom::K + atom::a_coord(l, v).col) != pv_frags::k_of(l, kk, v)) return false;
    }
    return true;
  }
  static constexpr int ldk = D + pad, ldv = DvB + pad, ldq = D + pad;

  struct shared_storage {
    alignas(16) Elem k[stages][BN * ldk];   // (stage, BN, D) in rows of ldk
    alignas(16) Elem v[stages][v_transposed ? DvB * ldvt : BN * ldv];  // (stage, BN, DvB) in rows of ldv: this block's V
                                                                         // columns; V^T: (stage, DvB, BN) in rows of ldvt
    alignas(16) Elem p[p_in_registers ? 16 / sizeof(Elem) : Cfg.warps * WM * ldp];  // (WM, KW) per warp in rows of ldp
    alignas(16) Elem q[q_in_shared ? BM * ldq : 16 / sizeof(Elem)];    // (BM, D) in rows of ldq, when Q is staged here
  };
  static_assert(sizeof(shared_storage) <= shared_bytes<Elem>(BM, BN, stages, D, DvB, q_in_shared, p_in_registers, v_transposed));
  // The key split's merge (merge_key_slices) reuses the K stages: each warp's row maxima and sums, and
  // the O of every warp but the first.
  static constexpr int o_values = o_parts * row_atoms * o_tile::atoms_n * atom::c_values;  // O accumulators per lane
  static constexpr std::size_t merge_floats = 2 * Cfg.warps * WM + (Cfg.warps - 1) * o_values * warp_size;
  static_assert(!key_split || merge_floats * sizeof(float) <= sizeof(shared_storage::k),
                "attention: the key split's merge must fit the K stages it reuses");

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
    static_assert(v_columns_match_reads(), "attention: V^T's key columns must be the ones pv_frags reads for P's registers");
    auto& sm = ctx.template shared<shared_storage>();
    // Blocks are whole warps (Cfg.warps of them): the row reductions' shuffles take the constant
    // full-warp mask, no convergence check per tile.
    auto warp = ctx.warp().whole();
    const int w = warp.index(), lane = ctx.lane().index();
    if constexpr (Ctx::emulated) {
      if (!extras && (p.softcap > 0.f || p.alibi || p.dropout_p > 0.f))
        kernel_bug(ctx.emulated_thread(), "attention forward_kernel compiled with score_features::none got soft-cap, ALiBi or dropout");
      if (p.pack_gqa && (p.seqlen_q != 1 || p.cu_q))
        kernel_bug(ctx.emulated_thread(), "attention forward_kernel: pack_gqa needs one query row per sequence (seqlen_q 1, not varlen)");
      if (paged != (p.block_table != nullptr))
        kernel_bug(ctx.emulated_thread(), paged ? "attention forward_kernel compiled for a paged cache got no block table"
                                                : "attention forward_kernel compiled for contiguous K/V got a block table");
    }

    // ---- which work item: chiplet placement, then (batch, kv head) groups, longest first ----------
    const work_item wi = locate(p, ctx.block().rank());
    const int split = wi.split, c0 = wi.c0, b = wi.b, hk = wi.hk, h = wi.h, m0 = wi.m0, rows_q = wi.rows_q;
    const detail::seq_view sq = wi.sq;
    // The block's rows: query positions of head h, or (pack_gqa) the group's heads at position 0.
    // row_pos: a row's position in the sequence.
    const bool packed = p.pack_gqa != 0;
    auto row_pos = [&](int i) { return packed ? 0 : i; };
    const long long q_ld = packed ? p.q_hs : p.q_rs;  // elements between the block's consecutive rows of Q
    if (m0 >= rows_q) return;  // a tile past this sequence's end (varlen / padded): nothing to write
    const int wm0 = m0 + (key_split ? 0 : w * WM);  // this warp's first query row
    const int kw = key_split ? w * KW : 0;          // this warp's first key of each tile

    // ---- key tiles this block visits: the mask's band, then this split's share ------------------
    int n_lo = 0, n_hi = sq.sk;
    const int last_q = row_pos(detail::imin(m0 + BM, rows_q) - 1), first_q = row_pos(m0);  // positions
    if (p.window_right >= 0) n_hi = detail::imin(n_hi, last_q + sq.off + p.window_right + 1);
    if (p.window_left >= 0) n_lo = detail::imax(n_lo, first_q + sq.off - p.window_left);
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
    if constexpr (k_vector_reads) {
      // In the key order of sk_frags, which reads K's fragments (below): value v of atom (i, kk) is
      // Q(row, q_col(lane, kk, v)); rows past the block's are zero.
      const int rows_here = detail::imax(rows_q - wm0, 0);
      STRATA_UNROLL
      for (int kk = 0; kk < D / atom::K; ++kk) {
        STRATA_UNROLL
        for (int i = 0; i < row_atoms; ++i)
          STRATA_UNROLL
          for (int v = 0; v < atom::a_values; ++v) {
            const int r = i * atom::M + atom::a_coord(lane, v).row;
            qf[kk].f[i][0].v[v] = r < rows_here ? qb[(wm0 + r) * q_ld + q_col(lane, kk, v)] : static_cast<Elem>(0.f);
          }
        prepare(qf[kk]);
      }
    } else if constexpr (!q_in_shared) {
      const mma::matrix_ref<const Elem> qm{qb + wm0 * q_ld, detail::imax(rows_q - wm0, 0), D, q_ld};
      STRATA_UNROLL
      for (int kk = 0; kk < D / atom::K; ++kk) {
        s_tile::template load_a<mma::edges::rows>(ctx, qf[kk], qm, 0, kk * atom::K);
        prepare(qf[kk]);
      }
    }

    // ---- K/V addressing: contiguous (dense or packed: the tile's rows at one stride from a pointer
    // computed once and advanced per tile) or paged (a page lookup per 16-row chunk) -------------
    const Elem* kbase = static_cast<const Elem*>(p.k);
    const Elem* vbase = static_cast<const Elem*>(p.v);
    auto pipe = make_pipeline<stages>(ctx);
    // V's rows j0 .. j0 + copy_rows of a tile into stage memory `dst`: rows of ldv, or (V^T) columns.
    auto copy_v = [&](Elem* dst, int j0, const Elem* src, long long src_ld, int valid) {
      if constexpr (v_keys_in_read_order)
        pipe.template copy_tile_transposed<v_copy>(dst, ldvt, src, src_ld, valid, DvB, [j0](int r) { return v_column(j0 + r); });
      else if constexpr (v_transposed) pipe.template copy_tile_transposed<v_copy>(dst + j0, ldvt, src, src_ld, valid, DvB);
      else pipe.template copy_tile<v_copy>(dst + j0 * ldv, ldv, src, src_ld, valid, DvB);
    };
    // Full: every key of the tile exists (an interior tile, below): no row count to test per copy.
    auto load_tile = [&]<bool Full>(int st, int t) {
      if constexpr (paged) {
        STRATA_UNROLL
        for (int c = 0; c < BN / chunk; ++c) {
          const int j0 = t * BN + c * chunk;
          const int valid = Full ? chunk : detail::imax(0, detail::imin(chunk, sq.sk - j0));
          // The table is read only for a chunk with keys: past the end its entry may not exist.
          const int page = valid ? p.block_table[static_cast<long long>(b) * p.bt_stride + j0 / p.page_size] : 0;
          // A page outside the pool reads page 0 instead: never outside memory (the result of such a
          // sequence is not meaningful; docs/attention.md). A select, not a branch.
          const int safe = static_cast<unsigned>(page) < static_cast<unsigned>(p.num_pages) ? page : 0;
          const long long in_page = j0 % p.page_size;
          // A chunk wholly past the end is still "copied" (zero-filled), so P V never meets poison.
          pipe.template copy_tile<k_copy>(sm.k[st] + c * chunk * ldk, ldk, valid ? kbase + safe * p.k_bs + in_page * p.k_rs + hk * p.k_hs : kbase,
                                          p.k_rs, valid, D);
          copy_v(sm.v[st], c * chunk, valid ? vbase + safe * p.v_bs + in_page * p.v_rs + hk * p.v_hs + c0 : vbase, p.v_rs, valid);
        }
      } else {
        // Rows past the end are zero-filled (never read), so P V never meets poison.
        const int j0 = t * BN;
        const long long row = sq.k0 + j0;
        const int valid = Full ? BN : sq.sk - j0;
        pipe.template copy_tile<k_copy>(sm.k[st], ldk, kbase + b * p.k_bs + row * p.k_rs + hk * p.k_hs, p.k_rs, valid, D);
        copy_v(sm.v[st], 0, vbase + b * p.v_bs + row * p.v_rs + hk * p.v_hs + c0, p.v_rs, valid);
      }
    };

    // ---- per-row softmax state, one slot per accumulator row this lane holds (identical in the
    // lanes of the row's group). m is kept in log2 units, like the scores. ------------------------
    constexpr float log2e = 1.4426950408889634f;
    // Slot r's row of the block, its query position inside the sequence and its diagonal key (sk - sq +
    // position, inside int like both), and its query head (packed rows past the group keep h, so no
    // per-head array is read past its end): recomputed where used rather than held.
    auto qrow = [&](int r) { return wm0 + row_of(lane, r); };
    auto qidx = [&](int r) { return row_pos(qrow(r)); };
    auto qpos = [&](int r) { return qidx(r) + sq.off; };
    auto qhead = [&](int r) { return packed && qrow(r) < rows_q ? h + qrow(r) : h; };
    int j_lo[slots], j_hi[slots];      // its visible keys [j_lo, j_hi)
    // m_run: the row's running max (the same in every lane of the row). l_run: this lane's part of
    // the row's running sum, over the keys it holds; the parts are added across the row's lanes once,
    // after the key loop (FlashAttention-2 does the same): the rescale by alpha is linear, so the
    // sum of the rescaled parts is the rescaled sum, and no tile pays for the sum's shuffles.
    float m_run[slots], l_run[slots];
    float slope[slots];                // ALiBi's slope of the row's head
    STRATA_UNROLL
    for (int r = 0; r < slots; ++r) {
      // The sequence's end and the window folded once into two per-lane values (a row past the
      // sequence sees none): fewer live uniform values in the loop (the MFMA kernels' SGPRs).
      slope[r] = p.alibi ? p.alibi[qhead(r)] : 0.f;
      j_lo[r] = 0;
      j_hi[r] = qrow(r) < rows_q ? sq.sk : 0;
      // (in 64 bits: a window of up to INT_MAX keys on either side must not wrap)
      const long long pos = qpos(r);
      if (p.window_right >= 0) j_hi[r] = static_cast<int>(pos + p.window_right + 1 < j_hi[r] ? pos + p.window_right + 1 : j_hi[r]);
      if (p.window_left >= 0) j_lo[r] = static_cast<int>(pos - p.window_left > 0 ? pos - p.window_left : 0);
      m_run[r] = detail::neg_inf();
      l_run[r] = 0.f;
      if (p.sinks && split == 0 && (!key_split || w == 0)) {  // one more logit in the denominator, with no value (once per row)
        m_run[r] = p.sinks[qhead(r)] * log2e;
        l_run[r] = rows::row_leader(lane) ? 1.f : 0.f;  // counted once per row
      }
    }
    const float drop_scale = p.dropout_p > 0.f ? dropout_scale(p.dropout_threshold) : 1.f;
    // Soft-cap: cap * tanh(x / cap) as a multiply by the reciprocal and arch::tanh_fast (ex2 and rcp),
    // not an IEEE division and tanhf (about 30 instructions and a slow-path call per score).
    const float inv_softcap = p.softcap > 0.f ? 1.f / p.softcap : 0.f;
    const float s_scale = p.scale * product_scale;  // S holds products / product_scale
    // The folded path's one factor from the raw score to log2 units (see the softmax below). Not
    // with a mask mod either: a mask mod and a score mod that returns -inf give bitwise equal rows
    // (test/reliability/numerics_test.cpp), so both take the general path's roundings.
    constexpr bool folded =
        !extras && std::is_same_v<ScoreMod, no_score_mod> && std::is_same_v<MaskMod, no_mask_mod>;
    const float exp2_scale = s_scale * log2e;

    typename o_tile::accumulator acc[o_parts];
    STRATA_UNROLL
    for (int op = 0; op < o_parts; ++op) acc[op].fill(0.f);

    // ---- the order of the tiles: edge tiles first, then the interior ones ----------------------
    // A tile is interior when every one of its keys is visible to every row of the block: the
    // sequence's end, the windows and causality cut none of it (rows past the sequence's end do not
    // count: they are never written). Its scores need no mask and its copies no row count. The
    // interior tiles are one run [ti_lo, ti_hi) of this block's range; the edge tiles on either side
    // run first (FlashAttention-2 also runs its masked steps first), then the interior ones in a loop
    // of their own, compiled without the mask code. Under a mask mod every tile is an edge tile.
    // Only in the kernels whose registers hold both loops' state (the 16-bit mma.sync kernels with P
    // in registers and Q in registers or in the tall tile, without the optional score features): elsewhere the second copy of the
    // loop made the compilers spill (compile check, 2026-12-06: 20-172 B on sm_80 / sm_90a / sm_100a
    // in the feature, fp8 and staged-Q kernels, 6-94 VGPRs in the MFMA ones). The MFMA kernels with P
    // in registers (2026-12-08) do not spill with it, but issue more: gfx940 bf16 D 128, interior
    // loop 11.59 per MFMA against 11.00 for the one loop, 178 VGPRs (two waves per SIMD) against 144.
    constexpr bool interior_form =
        std::is_same_v<MaskMod, no_mask_mod> && !extras && p_in_registers && use_ldmatrix && (!q_in_shared || row_atoms > 1);
    int ti_lo = t_hi, ti_hi = t_hi;
    if constexpr (interior_form) {
      long long in_lo = 0, in_hi = sq.sk;  // the keys every row sees (64 bits: windows up to INT_MAX)
      if (p.window_left >= 0) in_lo = static_cast<long long>(last_q) + sq.off - p.window_left;
      if (p.window_right >= 0) in_hi = static_cast<long long>(first_q) + sq.off + p.window_right + 1;
      if (in_lo < 0) in_lo = 0;
      if (in_hi > sq.sk) in_hi = sq.sk;
      if (in_hi - in_lo >= BN) {
        ti_lo = detail::imax(t_lo, detail::imin(t_hi, static_cast<int>((in_lo + BN - 1) / BN)));
        ti_hi = detail::imax(ti_lo, detail::imin(t_hi, static_cast<int>(in_hi / BN)));
      }
    }
    const int n_left = ti_lo - t_lo, n_edge = tiles - (ti_hi - ti_lo);
    // The warp's rows of a staged Q tile.
    [[maybe_unused]] const Elem* const q_warp = sm.q + (key_split ? 0 : w * WM) * ldq;
    auto tile_of = [&](int i) { return i < n_left ? t_lo + i : i < n_edge ? ti_hi + (i - n_left) : ti_lo + (i - n_edge); };

    for (int s = 0; s < stages - 1; ++s) {
      const int st = pipe.producer_acquire();
      // Q rides with the first K/V tile: the first consumer_wait covers both. Rows past the sequence
      // are zero-filled, so the fragment loads below need no bounds test.
      if (q_in_shared && s == 0 && tiles > 0)
        pipe.template copy_tile<q_copy>(sm.q, ldq, qb + m0 * q_ld, q_ld, detail::imin(BM, rows_q - m0), D);
      if (s < tiles) load_tile.template operator()<false>(st, tile_of(s));
      pipe.producer_commit();
    }
    // One step: the it-th tile of the order, tile t. Edge: its scores are masked.
    // prefetch(stage, it + stages - 1) fills a stage with a later tile of the order.
    auto step = [&]<bool Edge>(int it, int t, auto&& prefetch) {
      const int st = pipe.consumer_wait();
      {
        const int ps = pipe.producer_acquire();
        if (it + stages - 1 < tiles) prefetch(ps, it + stages - 1);
        pipe.producer_commit();
      }
      const int n0 = t * BN + kw;  // the warp's first key of the tile

      // S = Q K^T: B(d, j) = K(j, d), i.e. the K stage read column-major. The shared tiles are whole
      // (rows past the sequence are zero-filled), so the element-wise fragment loads skip per-element
      // bounds tests (mma::edges::inside; the emulator still checks them).
      typename s_tile::accumulator sacc;
      sacc.fill(0.f);
      const mma::matrix_ref<const Elem> kt{sm.k[st], D, BN, ldk, mma::major::col};  // the whole tile's K^T
      [[maybe_unused]] typename sk_tile::b_fragments kb;  // k_vector_reads: a slice of the warp's K fragments
      STRATA_UNROLL
      for (int kk = 0; kk < D / atom::K; ++kk) {
        typename s_tile::b_fragments kf;
        if constexpr (k_vector_reads) {
          if (kk % sk_steps == 0) sk_frags::load_b(ctx, kb, sm.k[st] + kk / sk_steps * sk_cols, ldk, kw);
          STRATA_UNROLL
          for (int j = 0; j < s_tile::atoms_n; ++j) kf.f[0][j] = kb.f[kk % sk_steps][j];
        } else if constexpr (use_ldmatrix) k_frags::load_b(ctx, kf, sm.k[st] + kk * atom::K, ldk, true, kw);
        else s_tile::template load_b<mma::edges::inside>(ctx, kf, kt, kk * atom::K, kw);
        prepare(kf);
        if constexpr (q_in_shared) {
          if constexpr (use_ldmatrix) {
            k_frags::load_a(ctx, qf[0], q_warp + kk * atom::K, ldq, true, 0);
          } else {
            const mma::matrix_ref<const Elem> qs{q_warp, WM, D, ldq};
            s_tile::template load_a<mma::edges::inside>(ctx, qf[0], qs, 0, kk * atom::K);
          }
          prepare(qf[0]);
          s_tile::mma(ctx, qf[0], kf, sacc);
        } else {
          s_tile::mma(ctx, qf[kk], kf, sacc);
        }
      }

      // Online softmax over this tile, in registers: the logits in log2 units (masked: -inf) and
      // each slot's row max over the row's lanes. Without soft-cap, ALiBi, dropout and mods
      // (`folded`) the scores stay as the MMA left them and the scale is folded into the
      // exponent: the max is taken of the raw scores (the scale is positive, the host checks it) and
      // P = 2^(s c - m) is one FFMA and one ex2 per score, c = scale log2(e), as FlashAttention-2
      // computes it; otherwise the logit is formed in natural units first, for the mods to see.
      float mx[slots], raw_max[slots];
      STRATA_UNROLL
      for (int r = 0; r < slots; ++r) mx[r] = m_run[r], raw_max[r] = detail::neg_inf();
      STRATA_UNROLL
      for (int i = 0; i < row_atoms; ++i)
        STRATA_UNROLL
        for (int jn = 0; jn < s_tile::atoms_n; ++jn)
          STRATA_UNROLL
          for (int v = 0; v < atom::c_values; ++v) {
            const int r = slot_of(i, v);
            const int j = n0 + jn * atom::N + atom::c_coord(lane, v).col;
            // Bitwise, not short-circuit: a select per score, no branch.
            const bool keep = Edge ? (j >= j_lo[r]) & (j < j_hi[r]) & mask_mod(b, qhead(r), qidx(r), j) : true;
            if constexpr (folded) {
              const float x = keep ? sacc.f[i][jn].v[v] : detail::neg_inf();
              sacc.f[i][jn].v[v] = x;
              raw_max[r] = ::fmaxf(raw_max[r], x);
              continue;
            }
            // The logit in natural units, then log2 units.
            float x = sacc.f[i][jn].v[v] * s_scale;
            if constexpr (extras) {
              if (p.softcap > 0.f) x = p.softcap * arch::tanh_fast(x * inv_softcap);
              if (p.alibi) {
                const int dist = qpos(r) - j;
                x -= slope[r] * static_cast<float>(dist < 0 ? -dist : dist);
              }
            }
            x = score_mod(x, b, qhead(r), qidx(r), j) * log2e;
            x = keep ? x : detail::neg_inf();
            sacc.f[i][jn].v[v] = x;
            mx[r] = ::fmaxf(mx[r], x);
          }
      if constexpr (folded) {
        STRATA_UNROLL
        for (int r = 0; r < slots; ++r) mx[r] = ::fmaxf(mx[r], raw_max[r] * exp2_scale);  // -inf stays -inf
      }
      // P = 2^(x - m) and the row sums; alpha = 2^(m_old - m_new). While a row has seen no visible
      // key, m is -inf and the reference is 0 instead, so every exponent is 2^-inf = 0, not NaN.
      float m_ref[slots], alpha[slots], sum[slots];
      STRATA_UNROLL
      for (int r = 0; r < slots; ++r) {
        mx[r] = rows::reduce_max(warp, mx[r]);
        m_ref[r] = mx[r] == detail::neg_inf() ? 0.f : mx[r];
        alpha[r] = arch::exp2_approx(m_run[r] - m_ref[r]);
        sum[r] = 0.f;
      }
      // Dropout: with grouped draws, one Philox call per slot and 64 keys (this lane's 16 scores of
      // the row there); score (jn, v) is byte (jn % 8) * 2 + v % 2 of draw jn / 8 (philox.hpp).
      [[maybe_unused]] philox_u32x4 draws[grouped_draws ? slots : 1][grouped_draws ? BN / 64 : 1];
      if constexpr (grouped_draws) {
        if (p.dropout_p > 0.f) {
          STRATA_UNROLL
          for (int r = 0; r < slots; ++r)
            STRATA_UNROLL
            for (int q = 0; q < BN / 64; ++q)
              draws[r][q] = dropout_draw(p.seed, p.offset, b, p.heads, qhead(r), qidx(r), dropout_group_of(n0 + q * 64 + 2 * (lane % 4)));
        }
      }
      STRATA_UNROLL
      for (int i = 0; i < row_atoms; ++i)
        STRATA_UNROLL
        for (int jn = 0; jn < s_tile::atoms_n; ++jn)
          STRATA_UNROLL
          for (int v = 0; v < atom::c_values; ++v) {
            const int r = slot_of(i, v);
            const float pv = folded ? arch::exp2_approx(::fmaf(sacc.f[i][jn].v[v], exp2_scale, -m_ref[r]))
                                    : arch::exp2_approx(sacc.f[i][jn].v[v] - m_ref[r]);
            sum[r] += pv;
            float kept = pv;
            if (extras && p.dropout_p > 0.f) {
              bool keep = false;
              if constexpr (grouped_draws) {
                keep = dropout_byte(draws[r][jn / 8], (jn % 8) * 2 + v % 2) >= p.dropout_threshold;
              } else {
                const int j = n0 + jn * atom::N + atom::c_coord(lane, v).col;
                keep = dropout_keep(p.seed, p.offset, p.dropout_threshold, b, p.heads, qhead(r), qidx(r), j);
              }
              kept = keep ? pv * drop_scale : 0.f;
            }
            sacc.f[i][jn].v[v] = kept;
          }
      STRATA_UNROLL
      for (int r = 0; r < slots; ++r) {
        l_run[r] = l_run[r] * alpha[r] + sum[r];  // this lane's part (reduced after the loop)
        m_run[r] = mx[r];
      }

      // O = alpha O + P V.
      rescale(acc, alpha);
      if constexpr (!p_in_registers) {  // P once through the warp's rows of a shared tile
        s_tile::template store_c<mma::edges::inside>(ctx, sacc, mma::matrix_ref<Elem>{sm.p + w * WM * ldp, WM, KW, ldp}, 0, 0);
        warp.sync();
      }
      if constexpr (v_transposed) {
        // P (A, k = the warp's keys along P's rows) and V^T (B, element (k, n) at V^T[n][k]) with
        // vector_fragments over all KW keys at once: both in its permuted key order, so the sum over
        // the keys is the same (in another order).
        typename pv_tile::a_fragments pa;
        if constexpr (p_in_registers) {
          STRATA_UNROLL
          for (int i = 0; i < row_atoms; ++i)
            STRATA_UNROLL
            for (int kk = 0; kk < KW / atom::K; ++kk) p_fragment(sacc, i, kk, pa.f[i][kk]);
        } else {
          pv_frags::load_a(ctx, pa, sm.p + w * WM * ldp, ldp, 0);
          prepare(pa);
        }
        STRATA_UNROLL
        for (int op = 0; op < o_parts; ++op)
          STRATA_UNROLL
          for (int c = 0; c < o_cols / pv_cols; ++c) {
            typename pv_tile::b_fragments vb;
            pv_frags::load_b(ctx, vb, sm.v[st] + kw, ldvt, op * o_cols + c * pv_cols);
            prepare(vb);
            STRATA_UNROLL
            for (int kk = 0; kk < KW / atom::K; ++kk)
              STRATA_UNROLL
              for (int i = 0; i < row_atoms; ++i)
                STRATA_UNROLL
                for (int j = 0; j < pv_tile::atoms_n; ++j)
                  mma::mma<atom>(ctx.warp(), pa.f[i][kk], vb.f[kk][j], acc[op].f[i][c * pv_tile::atoms_n + j]);
          }
      } else {
        const mma::matrix_ref<const Elem> pm{sm.p + w * WM * ldp, WM, KW, ldp};
        const mma::matrix_ref<const Elem> vm{sm.v[st], BN, DvB, ldv};
        STRATA_UNROLL
        for (int kk = 0; kk < KW / atom::K; ++kk) {
          typename o_tile::a_fragments pf;
          if constexpr (p_in_registers) {
            STRATA_UNROLL
            for (int i = 0; i < row_atoms; ++i) p_fragment(sacc, i, kk, pf.f[i][0]);
          } else {
            o_tile::template load_a<mma::edges::inside>(ctx, pf, pm, 0, kk * atom::K);
            prepare(pf);
          }
          STRATA_UNROLL
          for (int op = 0; op < o_parts; ++op) {
            typename o_tile::b_fragments vf;
            if constexpr (use_ldmatrix) v_frags::load_b(ctx, vf, sm.v[st] + (kw + kk * atom::K) * ldv, ldv, false, op * o_cols);
            else o_tile::template load_b<mma::edges::inside>(ctx, vf, vm, kw + kk * atom::K, op * o_cols);
            prepare(vf);
            o_tile::mma(ctx, pf, vf, acc[op]);
          }
        }
      }
      pipe.consumer_release();
    };
    int it = 0;
    const auto edge_prefetch = [&](int ps, int i) { load_tile.template operator()<false>(ps, tile_of(i)); };
    for (; it < n_edge; ++it) step.template operator()<true>(it, tile_of(it), edge_prefetch);
    if constexpr (interior_form) {
      // Every tile an interior step prefetches is interior (they come last): whole tiles. Where the
      // copies can be streams (copy/tile_stream.hpp: contiguous K / V, the block's thread count known,
      // cp.async), each thread's source pointers are set up once, for the first tile the interior
      // loop prefetches, and advanced by block_n rows per tile: two integer instructions per cp.async
      // instead of a 64-bit address rebuilt from the tile's row.
      if constexpr (interior_streams && decltype(pipe)::asynchronous) {
        const long long row = sq.k0 + static_cast<long long>(ti_lo + (it + stages - 1 - n_edge)) * BN;
        k_stream ks(ctx, kbase + b * p.k_bs + row * p.k_rs + hk * p.k_hs, p.k_rs, k_stream::whole_rows);
        v_stream vs(ctx, vbase + b * p.v_bs + row * p.v_rs + hk * p.v_hs + c0, p.v_rs, v_stream::whole_rows);
        const long long k_step = BN * p.k_rs, v_step = BN * p.v_rs;
        const auto stream_prefetch = [&](int ps, int) {
          ks.template copy_async<ldk>(ctx, sm.k[ps]);
          vs.template copy_async<ldv>(ctx, sm.v[ps]);
          ks.advance(k_step);
          vs.advance(v_step);
        };
        for (; it < tiles; ++it) step.template operator()<false>(it, ti_lo + (it - n_edge), stream_prefetch);
      } else {
        const auto whole_prefetch = [&](int ps, int i) { load_tile.template operator()<true>(ps, ti_lo + (i - n_edge)); };
        for (; it < tiles; ++it) step.template operator()<false>(it, ti_lo + (it - n_edge), whole_prefetch);
      }
    }

    // ---- epilogue: O / l and LSE (or the split's fp32 partials) ---------------------------------
    // 1 / l, with fp8's V descale and the atom's product scale folded in.
    const float o_scale = p.o_scale * product_scale;
    STRATA_UNROLL
    for (int r = 0; r < slots; ++r) l_run[r] = rows::reduce_sum(warp, l_run[r]);  // the row's sum from its lanes' parts
    if constexpr (key_split) {
      if (!merge_key_slices(ctx, sm, w, lane, acc, m_run, l_run)) return;  // warp 0 writes the rows
    }
    float inv[slots], lse[slots];
    STRATA_UNROLL
    for (int r = 0; r < slots; ++r) {
      inv[r] = l_run[r] > 0.f ? o_scale / l_run[r] : 0.f;
      lse[r] = l_run[r] > 0.f ? m_run[r] * 0.6931471805599453f + ::logf(l_run[r]) : detail::neg_inf();
    }
    rescale(acc, inv);
    // The work item again, from the block's rank behind an opaque copy: recomputed here (a few
    // dozen integer instructions once per block) rather than held in registers through the key loop,
    // where the tall tile's kernels have none to spare (ptxas spilled the warp's first row on sm_80).
    const work_item we = locate(p, arch::opaque(static_cast<unsigned>(ctx.block().rank())));
    const int wm0_out = we.m0 + (key_split ? 0 : w * WM);  // (under the key split only warp 0 is here)
    auto out_row = [&](int r) { return wm0_out + row_of(lane, r); };
    const int rows_left = detail::imax(we.rows_q - wm0_out, 0);
    const bool lse_writer = rows::row_leader(lane) && we.c0 == 0;
    if (p.num_splits == 1) {
      const long long o_ld = packed ? p.o_hs : p.o_rs;
      // The LSE of row i: position i of head h, or (packed) head h + i.
      const long long lse0 = we.b * p.lse_bs + we.h * p.lse_hs + we.sq.q0, lse_step = packed ? p.lse_hs : 1;
      out_type* ob = static_cast<out_type*>(p.o) + we.b * p.o_bs + static_cast<long long>(we.sq.q0) * p.o_rs + we.h * p.o_hs +
                     wm0_out * o_ld;
      STRATA_UNROLL
      for (int op = 0; op < o_parts; ++op)
        o_tile::template store_c<mma::edges::rows>(ctx, acc[op], mma::matrix_ref<out_type>{ob + we.c0, rows_left, DvB, o_ld}, 0, op * o_cols);
      STRATA_UNROLL
      for (int r = 0; r < slots; ++r)
        if (p.lse && lse_writer && out_row(r) < we.rows_q) p.lse[lse0 + out_row(r) * lse_step] = lse[r];
    } else {
      // Partials of (split, b, head, position): with packed rows (seqlen_q 1) row i is head h + i,
      // one row further, as a position is without packing.
      const long long row0 = ((static_cast<long long>(we.split) * p.batch + we.b) * p.heads + we.h) * p.seqlen_q;
      STRATA_UNROLL
      for (int op = 0; op < o_parts; ++op)
        o_tile::template store_c<mma::edges::rows>(
            ctx, acc[op], mma::matrix_ref<float>{p.part_o + (row0 + wm0_out) * Dv + we.c0, rows_left, DvB, Dv}, 0, op * o_cols);
      STRATA_UNROLL
      for (int r = 0; r < slots; ++r)
        if (lse_writer && out_row(r) < we.rows_q) p.part_lse[row0 + out_row(r)] = lse[r];
    }
  }

  /// A block's work item: its split, first V / O column, batch entry, K/V head, query head (packed:
  /// the group's first), first query row, the rows that exist and its sequence. Block ids are mapped
  /// through the chiplet dispatch inverse, then items are ordered (batch, K/V head) outermost and,
  /// inside a group, causal tiles longest first.
  struct work_item {
    int split, c0, b, hk, h, m0, rows_q;
    detail::seq_view sq;
  };
  STRATA_HOST_DEVICE static work_item locate(const params& p, long long rank) {
    work_item wi{};
    const int group = p.heads / p.heads_k;
    // Query heads with work items of their own per (batch, K/V head): all of the group's, or one when
    // the group's heads are packed into the rows of one item (pack_gqa).
    const int own = p.pack_gqa ? 1 : group;
    const long long items = static_cast<long long>(p.batch) * p.heads_k * own * p.m_tiles;
    order::problem pr;
    pr.tiles_m = items * p.num_splits * v_slices;
    pr.topology = Target::chiplets;
    long long logical = order::dispatch_inverse<order::contiguous>(pr)(rank);
    wi.split = static_cast<int>(logical % p.num_splits);
    logical /= p.num_splits;
    wi.c0 = v_slices > 1 ? static_cast<int>(logical % v_slices) * DvB : 0;
    const long long item = logical / v_slices;
    const long long per_group = static_cast<long long>(own) * p.m_tiles;
    const int gi = static_cast<int>(item / per_group);
    wi.b = gi / p.heads_k, wi.hk = gi % p.heads_k;
    const int r = static_cast<int>(item % per_group);
    const int mt_rank = r / own;
    wi.h = wi.hk * group + r % own;
    const int mt = p.longest_first ? p.m_tiles - 1 - mt_rank : mt_rank;
    wi.m0 = mt * BM;
    wi.sq = detail::sequence(p, wi.b);
    // Packed rows are the group's heads at position 0; otherwise the sequence's query positions.
    wi.rows_q = p.pack_gqa ? (wi.sq.sq > 0 ? group : 0) : wi.sq.sq;
    return wi;
  }

  // The atom's operand rewrite after each fragment load (mfma_ocp_fp8.hpp); nothing for the others.
  template <class Fragments>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void prepare(Fragments& x) {
    if constexpr (mma::has_operand_prepare<atom>)
      for (auto& row : x.f)
        for (auto& f : row) atom::prepare(f);
  }

  // K step kk of P for O += P V, rows of atom i, from the softmax's registers (p_in_registers: the
  // atom's C layout is its A layout, mma::c_is_a): A value v is C value v % c_values of S atom
  // kk (K / N) + v / c_values, converted to Elem.
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void p_fragment(const typename s_tile::accumulator& sacc, int i, int kk,
                                                               typename atom::a_fragment& f) {
    constexpr int per_step = atom::K / atom::N;
    const auto p_at = [&](int v) { return sacc.f[i][kk * per_step + v / atom::c_values].v[v % atom::c_values]; };
    if constexpr (arch::half_float<Elem> && atom::a_values % 2 == 0 && atom::c_values % 2 == 0) {
      // Two at a time: one cvt.rn.{f16,bf16}x2.f32 on CUDA (arch/narrow.hpp; a NaN in P makes O NaN
      // whatever its bits, so the canonical-NaN fix-up of a stored conversion is not needed).
      STRATA_UNROLL
      for (int v = 0; v < atom::a_values; v += 2) {
        const std::uint32_t two = arch::narrow_pair<Elem>(p_at(v), p_at(v + 1));
        f.v[v] = Elem::from_bits(static_cast<std::uint16_t>(two));
        f.v[v + 1] = Elem::from_bits(static_cast<std::uint16_t>(two >> 16));
      }
    } else {
      STRATA_UNROLL
      for (int v = 0; v < atom::a_values; ++v) f.v[v] = static_cast<Elem>(p_at(v));
    }
  }

  // fn(value, x, slot) for each O accumulator value of this lane: x its place in the order (column
  // slice op, atom (i, j), value v), slot its row's softmax slot.
  template <class Fn>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void for_each_o(typename o_tile::accumulator (&acc)[o_parts], Fn&& fn) {
    int x = 0;
    STRATA_UNROLL
    for (int op = 0; op < o_parts; ++op)
      STRATA_UNROLL
      for (int i = 0; i < row_atoms; ++i)
        STRATA_UNROLL
        for (int j = 0; j < o_tile::atoms_n; ++j)
          STRATA_UNROLL
          for (int v = 0; v < atom::c_values; ++v, ++x) fn(acc[op].f[i][j].v[v], x, slot_of(i, v));
  }

  // acc(r, c) *= f[slot of r], in every column slice: the factor of the accumulator row's slot.
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void rescale(typename o_tile::accumulator (&acc)[o_parts], const float (&f)[slots]) {
    for_each_o(acc, [&](float& a, int, int slot) { a *= f[slot]; });
  }

  // The key split's merge: warp u has (m_u, l_u, O_u) of the block's rows over its keys of every tile
  // (l_u already summed over its lanes). Warp 0 ends with M = max m_u, L = sum 2^(m_u - M) l_u and O =
  // sum 2^(m_u - M) O_u, which the epilogue then divides as usual; the other warps are done (false).
  // Through the K stages (no copy is in flight after the key loop): the maxima and sums, then the
  // scaled O of warps 1 .. in the accumulators' own order (lane-major: no bank conflicts).
  // A row no warp saw a key of has M = -inf: the reference is then 0, so every factor is 2^-inf = 0.
  template <class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static bool merge_key_slices(Ctx& ctx, shared_storage& sm, int w, int lane,
                                                                    typename o_tile::accumulator (&acc)[o_parts], float (&m_run)[slots],
                                                                    float (&l_run)[slots]) {
    constexpr int warps = Cfg.warps;
    float* const m_sh = reinterpret_cast<float*>(&sm.k[0][0]);
    float* const l_sh = m_sh + warps * WM;
    float* const o_sh = l_sh + warps * WM;
    ctx.block().sync();  // every warp is done reading the stages
    if (rows::row_leader(lane)) {
      STRATA_UNROLL
      for (int r = 0; r < slots; ++r) m_sh[w * WM + row_of(lane, r)] = m_run[r], l_sh[w * WM + row_of(lane, r)] = l_run[r];
    }
    ctx.block().sync();
    float f[slots];
    STRATA_UNROLL
    for (int r = 0; r < slots; ++r) {
      const int row = row_of(lane, r);
      float mx = detail::neg_inf();
      STRATA_UNROLL
      for (int u = 0; u < warps; ++u) mx = ::fmaxf(mx, m_sh[u * WM + row]);
      const float ref = mx == detail::neg_inf() ? 0.f : mx;
      float l = 0.f;
      STRATA_UNROLL
      for (int u = 0; u < warps; ++u) l += arch::exp2_approx(m_sh[u * WM + row] - ref) * l_sh[u * WM + row];
      f[r] = arch::exp2_approx(m_run[r] - ref);
      m_run[r] = mx;
      l_run[r] = l;
    }
    rescale(acc, f);
    if (w > 0) for_each_o(acc, [&](float& a, int x, int) { o_sh[((w - 1) * o_values + x) * warp_size + lane] = a; });
    ctx.block().sync();
    if (w > 0) return false;
    STRATA_UNROLL
    for (int u = 1; u < warps; ++u) for_each_o(acc, [&](float& a, int x, int) { a += o_sh[((u - 1) * o_values + x) * warp_size + lane]; });
    return true;
  }
};

}  // namespace strata::attn
