// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/attention/host.hpp -- the host entries: validate -> choose the configuration -> launch.
//
//   strata::attention(stream, q, k, v, o, options)                     forward, any supported type/dims
//   strata::attention<Target, ScoreMod, MaskMod>(..., score_mod, mask_mod)   with user modifiers
//   strata::attention_decode_workspace_size(q, v_dim, num_splits)
//   strata::attention_decode(stream, q, k_cache, v_cache, o, decode, options, workspace)
//       split-KV decoding against a contiguous or paged cache, appending new K/V first
//
// Errors: strata::invalid_argument naming "strata::attention" (or "strata::attention_decode") and the
// argument; strata::unsupported for a head dim that no configuration of the target holds. The
// pointers follow each entry's pointer table (forward_pointers, backward_pointers, the decode table;
// strata/runtime/pointer_table.hpp): tensors and workspaces 16-byte aligned, the option arrays
// float- or int-aligned, no null where elements exist, and outputs that overlap no input (o may be
// exactly q) and no other output.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "strata/ops/attention/backward.hpp"
#include "strata/ops/attention/backward_mma.hpp"
#include "strata/ops/attention/config.hpp"
#include "strata/ops/attention/decode.hpp"
#include "strata/ops/attention/forward.hpp"
#include "strata/ops/attention/mods.hpp"
#include "strata/ops/attention/philox.hpp"
#include "strata/ops/attention/types.hpp"
#include "strata/runtime/pointer_table.hpp"
#include "strata/runtime/runtime.hpp"

namespace strata::attn {

/// Decode-only inputs.
struct decode_args {
  const int* cache_seqlens = nullptr;  // (batch) on the device: rows already in the cache
  paged_kv paged{};                    // block_table null: k_cache / v_cache are dense (B, S_max, HK, D)
  tensor k_new{}, v_new{};             // data null: nothing to append; else (B, s_new, HK, D) rows
  int num_splits = 0;                  // 0: chosen from the key length
};

/// (QK, V) head-dim pairs with a shipped kernel.
inline bool supported_dims(int d, int dv) {
  if (d == 192 && dv == 128) return true;
  return d == dv && (d == 32 || d == 64 || d == 96 || d == 128 || d == 192 || d == 256 || d == 512);
}

namespace detail {

inline std::string num(long long x) { return std::to_string(x); }

inline void check_tensor(const std::string& op, const char* name, const tensor& t) {
  if (t.batch < 0 || t.seqlen < 0 || t.heads <= 0 || t.dim <= 0)
    throw invalid_argument(op, name, "has a negative extent or no heads / dim (batch " + num(t.batch) + ", seqlen " +
                                         num(t.seqlen) + ", heads " + num(t.heads) + ", dim " + num(t.dim) + ")");
  // strata::dtype names more types than attention has kernels for; say so before sizes are asked.
  if (!takes(t.type))
    throw invalid_argument(op, name, std::string("has dtype ") + to_string(t.type) +
                                         "; attention takes fp16, bf16 or fp32 (and e4m3 inputs to the forward)");
  // The pointer (null, 16-byte alignment, overlaps) is the pointer table's: forward_pointers.
  const long long e = element_bytes(t.type);
  for (long long st : {t.batch_stride, t.row_stride, t.head_stride})
    if ((st * e) % 16 != 0)
      throw invalid_argument(op, name, "strides (" + num(t.batch_stride) + ", " + num(t.row_stride) + ", " +
                                           num(t.head_stride) + " elements) must be multiples of 16 bytes");
}

/// The element types of the backward and decode (fp8 is forward only: validate_not_fp8).
template <class F>
void with_dtype(strata::dtype t, F&& f) {
  switch (t) {
    case strata::dtype::fp16: f(f16{}); return;
    case strata::dtype::bf16: f(bf16{}); return;
    case strata::dtype::fp32: f(float{}); return;
    default: return;  // e4m3 (the forward's own path) and the types check_tensor refuses
  }
}
/// The forward's: those and fp8 e4m3.
template <class F>
void with_forward_dtype(strata::dtype t, F&& f) {
  if (t == strata::dtype::e4m3) return f(f8_e4m3{});
  with_dtype(t, f);
}
template <class Elem>
constexpr strata::dtype dtype_of() {
  if constexpr (std::is_same_v<Elem, float>) return strata::dtype::fp32;
  else if constexpr (std::is_same_v<Elem, bf16>) return strata::dtype::bf16;
  else if constexpr (std::is_same_v<Elem, f8_e4m3>) return strata::dtype::e4m3;
  else return strata::dtype::fp16;
}
template <class Elem>
std::string type_words() {
  if constexpr (std::is_same_v<Elem, float>) return "fp32";
  else if constexpr (std::is_same_v<Elem, f8_e4m3>) return "fp8 e4m3";
  else return "16-bit";
}
/// The entries without an fp8 path (the backward, decode) say so instead of reading bytes as fp16.
inline void validate_not_fp8(const std::string& op, const tensor& q) {
  if (q.type == strata::dtype::e4m3)
    throw invalid_argument(op, "q", "has dtype e4m3: fp8 attention is forward only (strata::attention); "
                                    "dequantize to bf16 for this entry");
}

template <class F>
void with_dims(int d, int dv, F&& f) {
  auto pick = [&](auto dd, auto vv) { f(dd, vv); };
  if (d == 192 && dv == 128) return pick(std::integral_constant<int, 192>{}, std::integral_constant<int, 128>{});
  switch (d) {
    case 32: return pick(std::integral_constant<int, 32>{}, std::integral_constant<int, 32>{});
    case 64: return pick(std::integral_constant<int, 64>{}, std::integral_constant<int, 64>{});
    case 96: return pick(std::integral_constant<int, 96>{}, std::integral_constant<int, 96>{});
    case 128: return pick(std::integral_constant<int, 128>{}, std::integral_constant<int, 128>{});
    case 192: return pick(std::integral_constant<int, 192>{}, std::integral_constant<int, 192>{});
    case 256: return pick(std::integral_constant<int, 256>{}, std::integral_constant<int, 256>{});
    case 512: return pick(std::integral_constant<int, 512>{}, std::integral_constant<int, 512>{});
  }
}

/// The bytes a tensor's elements span from its pointer, whatever the pointer (0: no elements).
inline std::uint64_t span_of_bytes(const tensor& t) {
  if (t.batch <= 0 || t.seqlen <= 0 || t.heads <= 0 || t.dim <= 0) return 0;
  auto mag = [](long long x) { return static_cast<unsigned long long>(x < 0 ? -x : x); };
  const unsigned long long elems = (unsigned long long)(t.batch - 1) * mag(t.batch_stride) +
                                   (unsigned long long)(t.seqlen - 1) * mag(t.row_stride) +
                                   (unsigned long long)(t.heads - 1) * mag(t.head_stride) + (unsigned long long)t.dim;
  return elems * static_cast<unsigned long long>(element_bytes(t.type));
}
/// What "o is exactly q" compares besides the pointer: dtype, extents and strides.
inline std::uint64_t tensor_key(const tensor& t) {
  return layout_key({(long long)t.type, t.batch, t.seqlen, t.heads, t.dim, t.batch_stride, t.row_stride, t.head_stride});
}

/// A tensor's row: 16-byte aligned (rows move as 16-byte vectors), its span. Packed variable-length
/// batches (cu_seqlens) have descriptors that give the longest sequence's extent per batch entry, an
/// overestimate of the packed rows: there the row says only that elements exist (null and alignment
/// are checked, overlaps are not).
inline pointer_arg& tensor_row(pointer_arg& r, const tensor& t, bool packed) {
  r.aligned(16).keyed(tensor_key(t));
  const bool any = static_cast<long long>(t.batch) * t.seqlen > 0 && t.heads > 0 && t.dim > 0;
  if (packed) r.exists(any);
  else r.spans(span_of_bytes(t));
  return r;
}

/// The option pointers the forward, decode and backward share (all inputs):
///   options.alibi_slopes  heads floats;  options.sinks  heads floats
///   options.cu_seqlens_q / _k  batch + 1 ints;  options.seqused_q / _k  batch ints
inline void option_rows(pointer_table& t, const tensor& q, const options& opt) {
  const auto floats = [](long long n) { return std::uint64_t(n > 0 ? n : 0) * sizeof(float); };
  const auto ints = [](long long n) { return std::uint64_t(n > 0 ? n : 0) * sizeof(int); };
  t.input("options.alibi_slopes", opt.alibi_slopes).aligned(alignof(float), "a float").spans(opt.alibi_slopes ? floats(q.heads) : 0);
  t.input("options.sinks", opt.sinks).aligned(alignof(float), "a float").spans(opt.sinks ? floats(q.heads) : 0);
  t.input("options.cu_seqlens_q", opt.cu_seqlens_q).aligned(alignof(int), "an int").spans(opt.cu_seqlens_q ? ints(q.batch + 1LL) : 0);
  t.input("options.cu_seqlens_k", opt.cu_seqlens_k).aligned(alignof(int), "an int").spans(opt.cu_seqlens_k ? ints(q.batch + 1LL) : 0);
  t.input("options.seqused_q", opt.seqused_q).aligned(alignof(int), "an int").spans(opt.seqused_q ? ints(q.batch) : 0);
  t.input("options.seqused_k", opt.seqused_k).aligned(alignof(int), "an int").spans(opt.seqused_k ? ints(q.batch) : 0);
}

/// options.lse's bytes: (B, H, SQ) floats, or (H, total_q) with cu_seqlens.
inline std::uint64_t lse_bytes(const tensor& q, const options& opt) {
  if (!opt.lse) return 0;
  const long long rows = opt.cu_seqlens_q ? opt.total_q : static_cast<long long>(q.batch) * q.seqlen;
  return std::uint64_t(rows > 0 && q.heads > 0 ? rows * q.heads : 0) * sizeof(float);
}

/// The forward's pointer table (strata::attention, attn::run):
///   q, k, v           inputs, 16-byte aligned, their spans (inputs may share memory: packed QKV)
///   options.*         inputs (option_rows)
///   o                 output; may be q exactly (same pointer and layout: each block reads its Q rows
///                     before it writes them), nothing else
///   options.lse       output, float-aligned, (B, H, SQ) floats
///   options.dsinks    backward only: not read or written here
inline pointer_table forward_pointers(const std::string& op, const tensor& q, const tensor& k, const tensor& v, const tensor& o,
                                      const options& opt) {
  pointer_table t(op);
  const bool packed = opt.cu_seqlens_q != nullptr;
  tensor_row(t.input("q", q.data), q, packed);
  tensor_row(t.input("k", k.data), k, packed);
  tensor_row(t.input("v", v.data), v, packed);
  option_rows(t, q, opt);
  tensor_row(t.output("o", o.data), o, packed).may_be("q", tensor_key(o));
  t.output("options.lse", opt.lse).aligned(alignof(float), "a float").spans(lse_bytes(q, opt));
  t.output("options.dsinks", opt.dsinks);
  return t;
}

/// The backward's pointer table (attention_backward, attn::run_backward): the forward's tensors and
/// its log-sum-exp (options.lse) are inputs here, then
///   dq, dk, dv        outputs, 16-byte aligned; no overlap with any input or each other
///   options.dsinks    output, heads floats
///   workspace         16-byte aligned, attention_backward_workspace_size bytes
inline pointer_table backward_pointers(const std::string& op, const tensor& q, const tensor& k, const tensor& v, const tensor& o,
                                       const tensor& dout, const tensor& dq, const tensor& dk, const tensor& dv,
                                       const options& opt, const workspace& ws, std::size_t need) {
  pointer_table t(op);
  const bool packed = opt.cu_seqlens_q != nullptr;
  tensor_row(t.input("q", q.data), q, packed);
  tensor_row(t.input("k", k.data), k, packed);
  tensor_row(t.input("v", v.data), v, packed);
  tensor_row(t.input("o", o.data), o, packed);
  tensor_row(t.input("dout", dout.data), dout, packed);
  t.input("options.lse", opt.lse).aligned(alignof(float), "a float").spans(lse_bytes(q, opt));
  option_rows(t, q, opt);
  tensor_row(t.output("dq", dq.data), dq, packed);
  tensor_row(t.output("dk", dk.data), dk, packed);
  tensor_row(t.output("dv", dv.data), dv, packed);
  t.output("options.dsinks", opt.dsinks).aligned(alignof(float), "a float")
      .spans(opt.dsinks ? std::uint64_t(q.heads > 0 ? q.heads : 0) * sizeof(float) : 0);
  t.workspace("workspace", ws.data, ws.bytes).aligned(16).spans(need).needs("attention_backward_workspace_size");
  return t;
}

inline void validate(const std::string& op, const tensor& q, const tensor& k, const tensor& v, const tensor& o,
                     const options& opt, bool paged) {
  check_tensor(op, "q", q);
  check_tensor(op, "k", k);
  check_tensor(op, "v", v);
  check_tensor(op, "o", o);
  if (k.type != q.type) throw invalid_argument(op, "k", std::string("has dtype ") + to_string(k.type) + " but q has " + to_string(q.type));
  if (v.type != q.type) throw invalid_argument(op, "v", std::string("has dtype ") + to_string(v.type) + " but q has " + to_string(q.type));
  const strata::dtype o_want = q.type == strata::dtype::e4m3 ? strata::dtype::bf16 : q.type;  // fp8 writes bf16 (config.hpp, out_elem)
  if (o.type != o_want)
    throw invalid_argument(op, "o", std::string("has dtype ") + to_string(o.type) + " but q's " + to_string(q.type) +
                                        " needs " + to_string(o_want));
  for (auto [name, x] : {std::pair{"options.q_descale", opt.q_descale}, std::pair{"options.k_descale", opt.k_descale},
                         std::pair{"options.v_descale", opt.v_descale}}) {
    if (!(std::isfinite(x) && x > 0.f)) throw invalid_argument(op, name, "must be positive and finite, is " + std::to_string(x));
    if (q.type != strata::dtype::e4m3 && x != 1.f)
      throw invalid_argument(op, name, std::string("applies to fp8 (e4m3) inputs only; q has dtype ") + to_string(q.type));
  }
  if (k.dim != q.dim) throw invalid_argument(op, "k", "has head dim " + num(k.dim) + " but q has " + num(q.dim));
  if (o.dim != v.dim) throw invalid_argument(op, "o", "has head dim " + num(o.dim) + " but v has " + num(v.dim));
  if (!supported_dims(q.dim, v.dim))
    throw invalid_argument(op, "q", "head dim " + num(q.dim) + " with V head dim " + num(v.dim) +
                                        " is not supported (32, 64, 96, 128, 192, 256, 512, or 192 with 128)");
  if (k.heads != v.heads) throw invalid_argument(op, "v", "has " + num(v.heads) + " heads but k has " + num(k.heads));
  if (q.heads % k.heads != 0)
    throw invalid_argument(op, "heads_k", "(" + num(k.heads) + ", the heads of k) must divide the heads of q (" + num(q.heads) + ")");
  if (o.heads != q.heads || o.seqlen != q.seqlen || o.batch != q.batch)
    throw invalid_argument(op, "o", "must have q's batch, seqlen and heads");
  if (!paged) {
    if (k.batch != q.batch || v.batch != q.batch) throw invalid_argument(op, "k", "must have q's batch (" + num(q.batch) + ")");
    if (v.seqlen != k.seqlen) throw invalid_argument(op, "v", "has seqlen " + num(v.seqlen) + " but k has " + num(k.seqlen));
  }
  if (!(std::isnan(opt.scale) || (std::isfinite(opt.scale) && opt.scale > 0.f)))
    throw invalid_argument(op, "options.scale", "must be positive and finite (or NaN for 1/sqrt(dim))");
  if (opt.window_left < -1 || opt.window_right < -1)
    throw invalid_argument(op, "options.window", "sides must be >= 0, or -1 for unbounded");
  if (!(opt.softcap >= 0.f) || !std::isfinite(opt.softcap))
    throw invalid_argument(op, "options.softcap", "must be finite and >= 0 (0: off)");
  if ((opt.cu_seqlens_q == nullptr) != (opt.cu_seqlens_k == nullptr))
    throw invalid_argument(op, "options.cu_seqlens_q", "and cu_seqlens_k must be given together");
  if (opt.cu_seqlens_q && (opt.seqused_q || opt.seqused_k))
    throw invalid_argument(op, "options.seqused_q", "cannot be combined with cu_seqlens (packed sequences have no padding)");
  if (!(opt.dropout_p >= 0.f && opt.dropout_p < 1.f))
    throw invalid_argument(op, "options.dropout_p", "must be in [0, 1)");
  if (opt.cu_seqlens_q && opt.lse && opt.total_q <= 0)
    throw invalid_argument(op, "options.total_q", "must be the packed row count when lse is requested with cu_seqlens");
}

inline forward_params base_params(const tensor& q, const tensor& k, const tensor& v, const tensor& o, const options& opt) {
  forward_params p{};
  p.q = q.data, p.k = k.data, p.v = v.data, p.o = o.data, p.lse = opt.lse;
  p.q_bs = opt.cu_seqlens_q ? 0 : q.batch_stride, p.q_rs = q.row_stride, p.q_hs = q.head_stride;
  p.k_bs = opt.cu_seqlens_k ? 0 : k.batch_stride, p.k_rs = k.row_stride, p.k_hs = k.head_stride;
  p.v_bs = opt.cu_seqlens_k ? 0 : v.batch_stride, p.v_rs = v.row_stride, p.v_hs = v.head_stride;
  p.o_bs = opt.cu_seqlens_q ? 0 : o.batch_stride, p.o_rs = o.row_stride, p.o_hs = o.head_stride;
  if (opt.cu_seqlens_q) p.lse_bs = 0, p.lse_hs = opt.total_q;
  else p.lse_bs = static_cast<long long>(q.heads) * q.seqlen, p.lse_hs = q.seqlen;
  p.batch = q.batch, p.heads = q.heads, p.heads_k = k.heads, p.seqlen_q = q.seqlen, p.seqlen_k = k.seqlen;
  p.cu_q = opt.cu_seqlens_q, p.cu_k = opt.cu_seqlens_k, p.used_q = opt.seqused_q, p.used_k = opt.seqused_k;
  p.scale = std::isnan(opt.scale) ? 1.f / std::sqrt(static_cast<float>(q.dim)) : opt.scale;
  p.o_scale = 1.f;
  if (q.type == strata::dtype::e4m3) p.scale *= opt.q_descale * opt.k_descale, p.o_scale = opt.v_descale;
  p.softcap = opt.softcap, p.alibi = opt.alibi_slopes, p.sinks = opt.sinks;
  p.window_left = opt.window_left, p.window_right = opt.window_right;
  if (opt.causal) p.window_right = 0;  // causal is a window with no keys to the right of the diagonal
  p.bottom_right = opt.align == alignment::bottom_right;
  p.longest_first = p.window_right >= 0;
  p.num_splits = 1;
  p.dropout_p = opt.dropout_p;
  p.dropout_threshold = opt.dropout_p > 0.f ? dropout_threshold(opt.dropout_p) : 0u;
  p.seed = opt.seed, p.offset = opt.offset;
  return p;
}

template <class Elem, int D, int Dv, class Target>
constexpr bool fits = fits_every_tile<Target, Elem, D, Dv>();

/// Whether the forward packs the query heads of a GQA group into one block's rows (forward.hpp,
/// pack_gqa): one query row per sequence, not packed sequences, more query heads than K/V heads.
inline bool packs_gqa(int seqlen_q, bool varlen, int heads, int heads_k) {
  return seqlen_q == 1 && !varlen && heads_k > 0 && heads > heads_k;
}

/// Launches the forward kernel of (Elem, D, Dv) with fp.num_splits splits.
/// `before` runs the checks that come after the configuration is known to exist (aliasing).
struct no_check {
  void operator()() const {}
};
/// `Tile`: the query tile of the plain kernel (config.hpp, forward_tile); the kernels with optional
/// score features or mods take the standard one, or the key split where that is asked for (decode).
template <class Elem, int D, int Dv, class Target, class SM, class MM, class Before = no_check,
          kv_storage KV = kv_storage::contiguous, forward_tile Tile = forward_tile::tall>
void launch_forward(stream& s, const std::string& op, forward_params fp, const SM& sm, const MM& mm,
                    const Before& before = {}) {
  if constexpr (!fits<Elem, D, Dv, Target>) {
    (void)s, (void)fp, (void)sm, (void)mm, (void)before;
    throw unsupported(op + ": head dim " + num(D) + " (V " + num(Dv) + ") in " + type_words<Elem>() +
                      " does not fit the shared memory of target " + std::string(Target::name));
  } else if constexpr ((STRATA_BACKEND_CUDA || STRATA_BACKEND_HIP) && !shipped<Target, Elem, D, Dv>()) {
    (void)s, (void)fp, (void)sm, (void)mm, (void)before;
    throw unsupported(op + ": head dim " + num(D) + " (V " + num(Dv) + ") in " + type_words<Elem>() +
                      " is not shipped for target " + std::string(Target::name) +
                      (std::is_same_v<Elem, f8_e4m3> && atom_for<Target, Elem>::K != 32
                           ? std::string(" (it has no fp8 tensor cores: sm_89+ and gfx942 have them)")
                           : std::string(" (it spills registers there; see docs/attention.md, feature matrix)")));
  } else {
    // Two kernels: without the optional score features (the common case, a shorter element loop) and
    // with them (config.hpp, score_features).
    constexpr bool plain = std::is_same_v<SM, no_score_mod> && std::is_same_v<MM, no_mask_mod>;
    constexpr forward_tile tile_x = Tile == forward_tile::split_keys ? Tile : forward_tile::standard;
    constexpr forward_tile tile = plain ? Tile : tile_x;
    using K = forward_kernel<Elem, D, Dv, Target, default_config<Target, Elem, D, Dv, tile>(), SM, MM, score_features::none, KV>;
    using KX = forward_kernel<Elem, D, Dv, Target, default_config<Target, Elem, D, Dv, tile_x>(), SM, MM, score_features::any, KV>;
    static_assert(K::v_slices == KX::v_slices && K::max_threads_per_block == KX::max_threads_per_block);
    // One query row per sequence and GQA (decode's common case): the group's query heads share the
    // rows of one block (pack_gqa), which reads K and V once for all of them, instead of one block per
    // head computing one real row.
    fp.pack_gqa = packs_gqa(fp.seqlen_q, fp.cu_q != nullptr, fp.heads, fp.heads_k) ? 1 : 0;
    const int rows = fp.pack_gqa ? fp.heads / fp.heads_k : fp.seqlen_q;
    const bool extras = fp.softcap > 0.f || fp.alibi || fp.dropout_p > 0.f;
    const int block_m = extras ? KX::BM : K::BM;  // the launched kernel's query rows per block
    fp.m_tiles = (rows + block_m - 1) / block_m;
    const long long blocks =
        static_cast<long long>(fp.batch) * (fp.pack_gqa ? fp.heads_k : fp.heads) * fp.m_tiles * fp.num_splits * K::v_slices;
    if (blocks == 0) return;
    if (blocks > 0x7fffffffLL) throw invalid_argument(op, "q", "needs " + num(blocks) + " blocks, more than one grid holds");
    before();
    const launch_shape shape{.grid = static_cast<int>(blocks), .block = K::max_threads_per_block};
    if (extras) {
      KX kernel{};
      kernel.score_mod = sm;
      kernel.mask_mod = mm;
      launch(s, shape, kernel, fp);
    } else {
      K kernel{};
      kernel.score_mod = sm;
      kernel.mask_mod = mm;
      launch(s, shape, kernel, fp);
    }
  }
}

}  // namespace detail
}  // namespace strata::attn

namespace strata {

/// Fused attention forward: o = softmax(mask(mods(scale * q k^T))) v, per (batch, head), with
/// GQA/MQA by heads_k dividing heads. See docs/attention.md for every option.
template <class Target = attn::default_target, class ScoreMod = attn::no_score_mod,
          class MaskMod = attn::no_mask_mod>
void attention(stream& s, const attn::tensor& q, const attn::tensor& k, const attn::tensor& v,
               const attn::tensor& o, const attn::options& opt = {}, const ScoreMod& score_mod = {},
               const MaskMod& mask_mod = {}) {
  namespace A = strata::attn;
  const std::string op = "strata::attention";
  A::detail::validate(op, q, k, v, o, opt, false);
  const A::detail::forward_params fp = A::detail::base_params(q, k, v, o, opt);
  const auto aliasing = [&] { A::detail::forward_pointers(op, q, k, v, o, opt).check(); };
  A::detail::with_forward_dtype(q.type, [&](auto e) {
    A::detail::with_dims(q.dim, v.dim, [&](auto d, auto dv) {
      A::detail::launch_forward<decltype(e), decltype(d)::value, decltype(dv)::value, Target>(s, op, fp, score_mod, mask_mod,
                                                                                             aliasing);
    });
  });
}

namespace attn {
/// The same for one compile-time (element type, head dims): instantiates one kernel instead of every
/// supported combination (the runtime-typed entry above instantiates all of them).
template <class Elem, int D, int Dv, class Target = default_target, class ScoreMod = no_score_mod,
          class MaskMod = no_mask_mod>
void run(stream& s, const tensor& q, const tensor& k, const tensor& v, const tensor& o, const options& opt = {},
         const ScoreMod& score_mod = {}, const MaskMod& mask_mod = {}) {
  const std::string op = "strata::attention";
  detail::validate(op, q, k, v, o, opt, false);
  const strata::dtype want = detail::dtype_of<Elem>();
  if (q.type != want) throw invalid_argument(op, "q", std::string("has dtype ") + to_string(q.type) + " but this entry is " + to_string(want));
  if (q.dim != D || v.dim != Dv) throw invalid_argument(op, "q", "head dims do not match this entry's " + detail::num(D) + "/" + detail::num(Dv));
  detail::launch_forward<Elem, D, Dv, Target>(s, op, detail::base_params(q, k, v, o, opt), score_mod, mask_mod,
                                              [&] { detail::forward_pointers(op, q, k, v, o, opt).check(); });
}
}  // namespace attn

namespace attn::detail {
/// Splits for `blocks` independent (b, h, m-tile) items over `keys` keys: enough blocks to fill a
/// large GPU (~256), each split keeping at least 4 tiles of 64 keys. Fewer blocks never get fewer
/// splits (attention_decode_workspace_size relies on it).
inline int choose_splits(long long blocks, int keys) {
  int s = 1;
  while (s < 64 && blocks * s * 2 <= 256 && keys / (s * 2) >= 256) s *= 2;
  return s;
}
}  // namespace attn::detail

/// Scratch bytes of attention_decode for q (B, SQ, H, D), V head dim dv and `num_splits` splits
/// (pass the same num_splits as in decode_args; 0 is resolved from max_seqlen_k). With one query token
/// (SQ 1) and 0, it covers any number of K/V heads: a GQA group's heads then share one block per split
/// (pack_gqa), so attention_decode chooses the splits from batch x K/V heads blocks, and this size is
/// that of the most splits any K/V head count can choose (one K/V head).
inline std::size_t attention_decode_workspace_size(const attn::tensor& q, int dv, int num_splits, int max_seqlen_k = 0) {
  if (num_splits <= 0)
    num_splits = attn::detail::choose_splits(static_cast<long long>(q.batch) * (q.seqlen == 1 ? 1 : q.heads), max_seqlen_k);
  if (num_splits <= 1) return 0;
  const long long rows = static_cast<long long>(num_splits) * q.batch * q.heads * q.seqlen;
  return static_cast<std::size_t>(rows * (dv + 1) * 4 + 256);
}

/// Decoding: 1..16 query tokens per sequence against a KV cache holding decode.cache_seqlens[b]
/// rows (plus the decode.k_new / v_new rows, appended first). k_cache / v_cache: dense
/// (B, S_max, HK, D) or, with decode.paged.block_table, page pools described as tensors of
/// batch = num_pages, seqlen = page_size (batch_stride = the page stride). Split-KV with a combine
/// step when num_splits > 1 (scratch from `ws`, sized by attention_decode_workspace_size).
template <class Target = attn::default_target>
void attention_decode(stream& s, const attn::tensor& q, const attn::tensor& k_cache,
                      const attn::tensor& v_cache, const attn::tensor& o, const attn::decode_args& dec,
                      const attn::options& opt, workspace ws) {
  namespace A = strata::attn;
  const std::string op = "strata::attention_decode";
  const bool paged = dec.paged.block_table != nullptr;
  A::detail::validate_not_fp8(op, q);
  A::detail::validate(op, q, k_cache, v_cache, o, opt, paged);
  if (q.seqlen < 1 || q.seqlen > 16) throw invalid_argument(op, "q", "must have 1 to 16 query tokens, has " + A::detail::num(q.seqlen));
  if (!dec.cache_seqlens) throw invalid_argument(op, "decode.cache_seqlens", "is null");
  if (opt.dropout_p > 0.f) throw invalid_argument(op, "options.dropout_p", "dropout is not supported by decode (inference only)");
  if (opt.cu_seqlens_q || opt.seqused_k) throw invalid_argument(op, "options.cu_seqlens_q", "is not used by decode (lengths come from cache_seqlens)");
  if (paged) {
    if (dec.paged.page_size <= 0 || dec.paged.page_size % 16 != 0)
      throw invalid_argument(op, "decode.paged.page_size", "must be a positive multiple of 16, is " + A::detail::num(dec.paged.page_size));
    if (k_cache.seqlen != dec.paged.page_size || v_cache.seqlen != dec.paged.page_size)
      throw invalid_argument(op, "k_cache", "seqlen must equal the page size when the cache is paged");
    if (dec.paged.block_table_stride <= 0) throw invalid_argument(op, "decode.paged.block_table_stride", "must be positive");
    if (k_cache.batch < 1 || v_cache.batch < 1) throw invalid_argument(op, "k_cache", "is a page pool with no pages (batch = pages)");
  }
  const int max_keys = paged ? dec.paged.block_table_stride * dec.paged.page_size : k_cache.seqlen;
  const int num_pages = paged ? (k_cache.batch < v_cache.batch ? k_cache.batch : v_cache.batch) : 0;
  const bool append = dec.k_new.data != nullptr;
  int s_new = 0;
  if (append) {
    A::detail::check_tensor(op, "decode.k_new", dec.k_new);
    A::detail::check_tensor(op, "decode.v_new", dec.v_new);
    if (dec.k_new.type != q.type || dec.v_new.type != q.type) throw invalid_argument(op, "decode.k_new", "must have q's dtype");
    if (dec.k_new.heads != k_cache.heads || dec.k_new.dim != k_cache.dim || dec.v_new.dim != v_cache.dim ||
        dec.v_new.heads != v_cache.heads || dec.k_new.batch != q.batch || dec.v_new.seqlen != dec.k_new.seqlen)
      throw invalid_argument(op, "decode.k_new", "must be (batch, s_new, heads_k, dim) matching the cache");
    s_new = dec.k_new.seqlen;
    if (s_new > max_keys)
      throw invalid_argument(op, "decode.k_new", "appends " + A::detail::num(s_new) + " rows to a cache of " +
                                                     A::detail::num(max_keys) + " rows per sequence");
  }
  // Blocks per split: one per (batch, query head), or per (batch, K/V head) where the group's heads
  // share a block (pack_gqa, launch_forward): at most what attention_decode_workspace_size assumed.
  const bool packs = A::detail::packs_gqa(q.seqlen, false, q.heads, k_cache.heads);
  int splits = dec.num_splits > 0 ? dec.num_splits
                                  : A::detail::choose_splits(static_cast<long long>(q.batch) * (packs ? k_cache.heads : q.heads), max_keys);
  if (splits > 256) throw invalid_argument(op, "decode.num_splits", "must be at most 256");
  // The pointer table: q, the cache, the appended rows, the lengths and the page table are inputs (the
  // append writes new rows into the cache, rows no other input names); o may be q exactly; o,
  // options.lse and the split-KV workspace (16-byte aligned fp32 partials) share no memory with them or
  // each other.
  {
    using A::detail::tensor_row;
    pointer_table t(op);
    tensor_row(t.input("q", q.data), q, false);
    tensor_row(t.input("k_cache", k_cache.data), k_cache, false);
    tensor_row(t.input("v_cache", v_cache.data), v_cache, false);
    tensor_row(t.input("decode.k_new", dec.k_new.data), dec.k_new, false);
    tensor_row(t.input("decode.v_new", dec.v_new.data), dec.v_new, false);
    t.input("decode.cache_seqlens", dec.cache_seqlens).aligned(alignof(int), "an int").spans(std::uint64_t(q.batch > 0 ? q.batch : 0) * sizeof(int));
    t.input("decode.paged.block_table", dec.paged.block_table).aligned(alignof(int), "an int")
        .spans(paged ? std::uint64_t(q.batch > 0 ? q.batch : 0) * std::uint64_t(dec.paged.block_table_stride) * sizeof(int) : 0);
    A::detail::option_rows(t, q, opt);
    tensor_row(t.output("o", o.data), o, false).may_be("q", A::detail::tensor_key(o));
    t.output("options.lse", opt.lse).aligned(alignof(float), "a float").spans(A::detail::lse_bytes(q, opt));
    t.workspace("workspace", ws.data, ws.bytes).aligned(16)
        .spans(splits > 1 ? attention_decode_workspace_size(q, v_cache.dim, splits) : 0).needs("attention_decode_workspace_size");
    t.check();
  }

  A::detail::forward_params fp = A::detail::base_params(q, k_cache, v_cache, o, opt);
  fp.used_k = dec.cache_seqlens;
  fp.k_extra = s_new;
  fp.seqlen_k = max_keys;
  if (paged)
    fp.block_table = dec.paged.block_table, fp.bt_stride = dec.paged.block_table_stride,
    fp.page_size = dec.paged.page_size, fp.num_pages = num_pages;
  fp.num_splits = splits;
  const long long rows = static_cast<long long>(splits) * q.batch * q.heads * q.seqlen;
  if (splits > 1) {
    fp.part_lse = static_cast<float*>(ws.data);
    fp.part_o = fp.part_lse + (rows + 63) / 64 * 64;
  }
  A::detail::with_dtype(q.type, [&](auto e) {
    using Elem = std::remove_cvref_t<decltype(e)>;
    if (append) {
      A::detail::append_params ap{};
      ap.k_new = dec.k_new.data, ap.v_new = dec.v_new.data, ap.k_cache = k_cache.data, ap.v_cache = v_cache.data;
      ap.kn_bs = dec.k_new.batch_stride, ap.kn_rs = dec.k_new.row_stride, ap.kn_hs = dec.k_new.head_stride;
      ap.vn_bs = dec.v_new.batch_stride, ap.vn_rs = dec.v_new.row_stride, ap.vn_hs = dec.v_new.head_stride;
      ap.k_bs = k_cache.batch_stride, ap.k_rs = k_cache.row_stride, ap.k_hs = k_cache.head_stride;
      ap.v_bs = v_cache.batch_stride, ap.v_rs = v_cache.row_stride, ap.v_hs = v_cache.head_stride;
      ap.cache_seqlens = dec.cache_seqlens, ap.block_table = fp.block_table, ap.bt_stride = fp.bt_stride, ap.page_size = fp.page_size;
      ap.capacity = max_keys, ap.num_pages = num_pages;
      ap.batch = q.batch, ap.s_new = s_new, ap.heads_k = k_cache.heads, ap.d = k_cache.dim, ap.dv = v_cache.dim;
      const long long n = static_cast<long long>(q.batch) * s_new * k_cache.heads;
      if (n > 0) launch(s, {.grid = static_cast<int>(n), .block = Target::warp_size}, A::append_kernel<Elem, Target>{}, ap);
    }
    A::detail::with_dims(q.dim, v_cache.dim, [&](auto d, auto dv) {
      constexpr int D = decltype(d)::value, Dv = decltype(dv)::value;
      // The key split (config.hpp, forward_tile::split_keys): a decode block holds 1-16 tokens or
      // one GQA group's heads, one atom's rows, and its warps share them, each with its own keys.
      constexpr auto tile = A::forward_tile::split_keys;
      if (paged)
        A::detail::launch_forward<Elem, D, Dv, Target, A::no_score_mod, A::no_mask_mod, A::detail::no_check, A::kv_storage::paged,
                                  tile>(s, op, fp, A::no_score_mod{}, A::no_mask_mod{});
      else
        A::detail::launch_forward<Elem, D, Dv, Target, A::no_score_mod, A::no_mask_mod, A::detail::no_check,
                                  A::kv_storage::contiguous, tile>(s, op, fp, A::no_score_mod{}, A::no_mask_mod{});
    });
    if (splits > 1) {
      A::detail::combine_params cp{};
      cp.part_o = fp.part_o, cp.part_lse = fp.part_lse, cp.o = o.data, cp.lse = opt.lse;
      cp.o_bs = o.batch_stride, cp.o_rs = o.row_stride, cp.o_hs = o.head_stride, cp.lse_bs = fp.lse_bs, cp.lse_hs = fp.lse_hs;
      cp.batch = q.batch, cp.heads = q.heads, cp.seqlen_q = q.seqlen, cp.dv = v_cache.dim, cp.num_splits = splits;
      cp.used_q = opt.seqused_q;
      const long long n = static_cast<long long>(q.batch) * q.heads * q.seqlen;
      if (n > 0) launch(s, {.grid = static_cast<int>(n), .block = Target::warp_size}, A::combine_kernel<Elem, Target>{}, cp);
    }
  });
}

}  // namespace strata

// ---- backward -------------------------------------------------------------------------------------

namespace strata::attn::detail {

/// Key tile of the backward of (target, head dims), resolved at run time from the dispatch table.
template <class Target>
int backward_tile(strata::dtype t, int d, int dv) {
  int bn = 0;
  with_dtype(t, [&](auto e) {
    with_dims(d, dv, [&](auto dd, auto vv) {
      bn = backward_key_tile<Target, std::remove_cvref_t<decltype(e)>, decltype(dd)::value, decltype(vv)::value>();
    });
  });
  return bn;
}

/// Whether the tensor-core dK/dV kernel serves (target, dtype, head dims), resolved at run time.
template <class Target>
bool backward_tensor_cores(strata::dtype t, int d, int dv) {
  bool tc = false;
  with_dtype(t, [&](auto e) {
    with_dims(d, dv, [&](auto dd, auto vv) {
      tc = backward_on_tensor_cores<Target, std::remove_cvref_t<decltype(e)>, decltype(dd)::value, decltype(vv)::value>();
    });
  });
  return tc;
}

/// The backward's workspace: the fp32 dQ accumulator, plus in the deterministic mode a counter per
/// query step of the dK/dV kernel (64 rows on tensor cores, 16 in the scalar kernel); each row's LSE2
/// and Di; the sink terms.
struct backward_layout {
  int k_tiles = 0;
  int q_tile_rows = 0, q_tiles = 0;                       // counters per (batch, head), deterministic
  long long stat_ld = 0;                                  // rows of lse2 / di per (batch, head)
  std::size_t dq_bytes = 0, turn_bytes = 0, stat_bytes = 0, sink_bytes = 0;  // stat_bytes: lse2 and di, each
  std::size_t total() const {
    const std::size_t all = dq_bytes + turn_bytes + 2 * stat_bytes + sink_bytes;
    return all ? all + 512 : 0;
  }
};

template <class Target>
backward_layout backward_workspace(const tensor& q, const tensor& k, const tensor& v, const options& opt) {
  backward_layout l;
  const int bn = supported_dims(q.dim, v.dim) ? backward_tile<Target>(q.type, q.dim, v.dim) : 0;
  if (bn <= 0) return l;
  l.k_tiles = (k.seqlen + bn - 1) / bn;
  const long long rows = static_cast<long long>(q.batch) * q.heads * q.seqlen;
  l.dq_bytes = (static_cast<std::size_t>(rows) * q.dim * 4 + 255) / 256 * 256;
  l.q_tile_rows = backward_tensor_cores<Target>(q.type, q.dim, v.dim) ? backward_query_tile : backward_scalar_query_tile;
  if (opt.deterministic) {
    l.q_tiles = (q.seqlen + l.q_tile_rows - 1) / l.q_tile_rows;
    l.turn_bytes = (static_cast<std::size_t>(q.batch) * q.heads * l.q_tiles * 4 + 255) / 256 * 256;
  }
  l.stat_ld = (static_cast<long long>(q.seqlen) + 3) / 4 * 4;
  l.stat_bytes = (static_cast<std::size_t>(q.batch) * q.heads * l.stat_ld * 4 + 255) / 256 * 256;
  if (opt.dsinks) l.sink_bytes = static_cast<std::size_t>(rows) * 4;
  return l;
}

}  // namespace strata::attn::detail

namespace strata {

/// Scratch bytes of attention_backward: the fp32 dQ accumulator (B x H x SQ x D x 4; with
/// options.deterministic plus B x H x ceil(SQ / 64) x 4 on tensor cores, ceil(SQ / 16) in the scalar
/// kernel), each query row's LSE in log2 units and Di = rowsum(dO o O), the sink terms.
template <class Target = attn::default_target>
std::size_t attention_backward_workspace_size(const attn::tensor& q, const attn::tensor& k, const attn::tensor& v,
                                              const attn::options& opt = {}) {
  return attn::detail::backward_workspace<Target>(q, k, v, opt).total();
}

namespace attn::detail {

/// Validation and parameters of the backward (both entries).
template <class Target>
backward_params prepare_backward(const std::string& op, const tensor& q, const tensor& k, const tensor& v, const tensor& o,
                                 const tensor& dout, const tensor& dq, const tensor& dk, const tensor& dv,
                                 const options& opt, workspace ws) {
  validate_not_fp8(op, q);
  validate(op, q, k, v, o, opt, false);
  check_tensor(op, "dout", dout);
  check_tensor(op, "dq", dq);
  check_tensor(op, "dk", dk);
  check_tensor(op, "dv", dv);
  auto same = [&](const char* name, const tensor& g, const tensor& x, const char* xname) {
    if (g.type != x.type || g.batch != x.batch || g.seqlen != x.seqlen || g.heads != x.heads || g.dim != x.dim)
      throw invalid_argument(op, name, std::string("must have the dtype and extents of ") + xname);
  };
  same("dout", dout, o, "o");
  same("dq", dq, q, "q");
  same("dk", dk, k, "k");
  same("dv", dv, v, "v");
  if (!opt.lse) throw invalid_argument(op, "options.lse", "must hold the forward's log-sum-exp (it is an input here)");
  if (opt.dsinks && !opt.sinks) throw invalid_argument(op, "options.dsinks", "needs options.sinks");
  const backward_layout lay = backward_workspace<Target>(q, k, v, opt);
  if (lay.k_tiles == 0 && k.seqlen > 0)
    throw unsupported(op + ": head dim " + num(q.dim) + " (V " + num(v.dim) + ") has no backward tile on target " +
                      std::string(Target::name));
  // The pointers (workspace of lay.total() bytes included) are checked by backward_pointers, once the
  // kernels are known to exist (launch_backward's `before`).
  backward_params bp{};
  bp.f = base_params(q, k, v, o, opt);
  bp.dout = dout.data, bp.dq = dq.data, bp.dk = dk.data, bp.dv = dv.data;
  const bool vl = opt.cu_seqlens_q != nullptr;
  bp.do_bs = vl ? 0 : dout.batch_stride, bp.do_rs = dout.row_stride, bp.do_hs = dout.head_stride;
  bp.dq_bs = vl ? 0 : dq.batch_stride, bp.dq_rs = dq.row_stride, bp.dq_hs = dq.head_stride;
  bp.dk_bs = vl ? 0 : dk.batch_stride, bp.dk_rs = dk.row_stride, bp.dk_hs = dk.head_stride;
  bp.dv_bs = vl ? 0 : dv.batch_stride, bp.dv_rs = dv.row_stride, bp.dv_hs = dv.head_stride;
  unsigned char* base = static_cast<unsigned char*>(ws.data);
  bp.dq_accum = reinterpret_cast<float*>(base);
  bp.dq_turn = lay.turn_bytes ? reinterpret_cast<unsigned*>(base + lay.dq_bytes) : nullptr;
  bp.q_tile_rows = lay.q_tile_rows;
  bp.q_tiles = lay.q_tiles;
  bp.dq_dim = q.dim;
  unsigned char* stats = base + lay.dq_bytes + lay.turn_bytes;
  bp.lse2 = reinterpret_cast<float*>(stats);
  bp.di = reinterpret_cast<float*>(stats + lay.stat_bytes);
  bp.stat_ld = lay.stat_ld;
  bp.sink_part = opt.dsinks ? reinterpret_cast<float*>(stats + 2 * lay.stat_bytes) : nullptr;
  bp.dsinks = opt.dsinks;
  bp.k_tiles = lay.k_tiles;
  return bp;
}

/// The backward's kernels around a dK/dV kernel: the preprocess kernel (Di, LSE2, the zeroed dQ
/// accumulator), `run_dkdv()` (launches the dK/dV kernel, which adds its dQ parts), the dQ conversion
/// and the sink gradient. For every dK/dV kernel of the workspace's layout (backward_workspace).
template <class Elem, int D, int Dv, class Target, class RunDkdv>
void launch_backward_around(stream& s, const backward_params& bp, const RunDkdv& run_dkdv) {
  const forward_params& p = bp.f;
  const long long rows = static_cast<long long>(p.batch) * p.heads * p.seqlen_q;
  using Pre = backward_preprocess_kernel<Elem, Dv, Target>;
  if (rows > 0) launch(s, {.grid = static_cast<int>((rows + Pre::warps - 1) / Pre::warps), .block = Pre::threads}, Pre{}, bp);
  run_dkdv();
  if (rows > 0) launch(s, {.grid = static_cast<int>(rows), .block = Target::warp_size}, backward_dq_kernel<Elem, D, Dv, Target>{}, bp);
  if (bp.dsinks) launch(s, {.grid = p.heads, .block = Target::warp_size}, backward_dsink_kernel<Target>{}, bp);
}

template <class Elem, int D, int Dv, class Target, class SM = no_score_mod, class MM = no_mask_mod, class Before = no_check>
void launch_backward(stream& s, const std::string& op, const backward_params& bp, const SM& sm = {}, const MM& mm = {},
                     const Before& before = {}) {
  if constexpr (backward_key_tile<Target, Elem, D, Dv>() == 0) {
    (void)s, (void)bp, (void)sm, (void)mm, (void)before;
    throw unsupported(op + ": head dim " + num(D) + " has no backward tile on target " + std::string(Target::name));
  } else {
    const forward_params& p = bp.f;
    const long long kv_blocks = static_cast<long long>(p.batch) * p.heads_k * bp.k_tiles;
    const long long rows = static_cast<long long>(p.batch) * p.heads * p.seqlen_q;
    if (kv_blocks > 0x7fffffffLL || rows > 0x7fffffffLL) throw invalid_argument(op, "q", "is too large for one grid");
    before();
    // The tensor-core dK/dV kernel adds dS / scale into the dQ accumulator (backward_mma.hpp).
    backward_params bq = bp;
    if constexpr (backward_on_tensor_cores<Target, Elem, D, Dv>()) bq.dq_scale = p.scale;
    const auto run_dkdv = [&](auto kernel) {
      kernel.score_mod = sm;
      kernel.mask_mod = mm;
      launch(s, {.grid = static_cast<int>(kv_blocks), .block = decltype(kernel)::threads}, kernel, bq);
    };
    launch_backward_around<Elem, D, Dv, Target>(s, bq, [&] {
      if (kv_blocks == 0) {
      } else if constexpr (backward_on_tensor_cores<Target, Elem, D, Dv>()) {
        // Tensor cores; without the optional score features, the shorter element loop (as the forward);
        // options.deterministic: dQ added in key-tile order, with the features compiled in.
        if (bp.dq_turn)
          run_dkdv(backward_dkdv_mma_kernel<Elem, D, Dv, Target, SM, MM, score_features::any, true>{});
        else if (p.softcap > 0.f || p.alibi || p.dropout_p > 0.f)
          run_dkdv(backward_dkdv_mma_kernel<Elem, D, Dv, Target, SM, MM, score_features::any>{});
        else
          run_dkdv(backward_dkdv_mma_kernel<Elem, D, Dv, Target, SM, MM, score_features::none>{});
      } else {
        run_dkdv(backward_dkdv_kernel<Elem, D, Dv, Target, SM, MM>{});
      }
    });
  }
}

}  // namespace attn::detail

/// Attention backward (FlashAttention-2 algorithm): given the forward's inputs, its
/// output o and log-sum-exp (options.lse, as the forward wrote it), and dout = dL/do, writes
/// dq, dk, dv (same layouts and dtype as q, k, v; dk / dv summed over each GQA group) and, with
/// options.dsinks, dL/dsinks. Same options as the forward (masks, ALiBi, soft-cap, sinks, varlen,
/// padding, dropout with the forward's seed and offset). Scratch from `ws`, sized by
/// attention_backward_workspace_size (which depends on options.deterministic). The forward's
/// score_mod / mask_mod, if it had any: a score_mod must also state its derivative (mods.hpp, `grad`).
/// dk, dv and dsinks are bitwise reproducible; dq is too with options.deterministic, and otherwise
/// (the default) adds each key tile's part with fp32 atomics, in an order that varies from run to run.
template <class Target = attn::default_target, class ScoreMod = attn::no_score_mod, class MaskMod = attn::no_mask_mod>
void attention_backward(stream& s, const attn::tensor& q, const attn::tensor& k, const attn::tensor& v,
                        const attn::tensor& o, const attn::tensor& dout, const attn::tensor& dq, const attn::tensor& dk,
                        const attn::tensor& dv, const attn::options& opt, workspace ws, const ScoreMod& score_mod = {},
                        const MaskMod& mask_mod = {}) {
  namespace A = strata::attn;
  const std::string op = "strata::attention_backward";
  const A::detail::backward_params bp = A::detail::prepare_backward<Target>(op, q, k, v, o, dout, dq, dk, dv, opt, ws);
  const auto aliasing = [&] {
    A::detail::backward_pointers(op, q, k, v, o, dout, dq, dk, dv, opt, ws, attention_backward_workspace_size<Target>(q, k, v, opt)).check();
  };
  A::detail::with_dtype(q.type, [&](auto e) {
    using Elem = std::remove_cvref_t<decltype(e)>;
    A::detail::with_dims(q.dim, v.dim, [&](auto d, auto dvv) {
      A::detail::launch_backward<Elem, decltype(d)::value, decltype(dvv)::value, Target>(s, op, bp, score_mod, mask_mod,
                                                                                         aliasing);
    });
  });
}

namespace attn {
/// The backward for one compile-time (element type, head dims): instantiates one set of kernels.
template <class Elem, int D, int Dv, class Target = default_target, class ScoreMod = no_score_mod, class MaskMod = no_mask_mod>
void run_backward(stream& s, const tensor& q, const tensor& k, const tensor& v, const tensor& o, const tensor& dout,
                  const tensor& dq, const tensor& dk, const tensor& dv, const options& opt, workspace ws,
                  const ScoreMod& score_mod = {}, const MaskMod& mask_mod = {}) {
  const std::string op = "strata::attention_backward";
  const detail::backward_params bp = detail::prepare_backward<Target>(op, q, k, v, o, dout, dq, dk, dv, opt, ws);
  const strata::dtype want = detail::dtype_of<Elem>();
  if (q.type != want) throw invalid_argument(op, "q", std::string("has dtype ") + to_string(q.type) + " but this entry is " + to_string(want));
  if (q.dim != D || v.dim != Dv) throw invalid_argument(op, "q", "head dims do not match this entry's " + detail::num(D) + "/" + detail::num(Dv));
  detail::launch_backward<Elem, D, Dv, Target>(s, op, bp, score_mod, mask_mod,
                                               [&] {
                                                 detail::backward_pointers(op, q, k, v, o, dout, dq, dk, dv, opt, ws,
                                                                           attention_backward_workspace_size<Target>(q, k, v, opt)).check();
                                               });
}
}  // namespace attn

}  // namespace strata

// The instances a precompiled kernel library provides (extern under STRATA_PRECOMPILED_ENTRIES).
#include "strata/ops/attention/precompiled.hpp"
