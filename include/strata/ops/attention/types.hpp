// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/attention/types.hpp -- what a caller describes: element types, tensors, options.
//
// Tensors are runtime-typed descriptors (pointer + element type + extents + strides in elements),
// because one host entry serves fp16, bf16 and fp32 and both BSHD and BHSD layouts:
//
//   auto q = attn::bshd(q_ptr, strata::dtype::bf16, batch, seqlen_q, heads, dim);    // (B, S, H, D)
//   auto k = attn::bhsd(k_ptr, strata::dtype::bf16, batch, seqlen_k, heads_k, dim);  // (B, H, S, D)
//
// Variable-length (packed) batches: with options.cu_seqlens_q / cu_seqlens_k set, sequence b's rows
// are cu_seqlens[b] .. cu_seqlens[b+1]-1 of a packed (total, H, D) tensor; the descriptor's `batch` is
// the number of sequences and `seqlen` the longest one (it sizes the grid); batch_stride is ignored.
// Padded batches: options.seqused_q / seqused_k give each sequence's real length inside a tensor
// padded to `seqlen`; rows past it are neither read nor written.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "strata/config/config.hpp"
#include "strata/numeric/dtype.hpp"

namespace strata::attn {

/// Element types are strata::dtype (strata/numeric/dtype.hpp), the one enum every entry takes.
/// Attention takes fp16, bf16 and fp32, and e4m3 (OCP fp8, strata::f8_e4m3) Q, K and V with
/// per-tensor descale factors (options), forward only, O in bf16. This namespace's own enum had the
/// same spellings; `dtype` stays one release as a deprecated alias (docs/api.md).
using dtype [[deprecated("use strata::dtype; see docs/api.md")]] = strata::dtype;
using strata::to_string;  // was this namespace's to_string(dtype); same names

/// Whether attention takes element type t at all (the entries say which entry takes which).
inline bool takes(strata::dtype t) {
  return t == strata::dtype::fp16 || t == strata::dtype::bf16 || t == strata::dtype::fp32 || t == strata::dtype::e4m3;
}
/// Bytes per element of the dtypes attention takes (strata::size_of; 0 for the others, which
/// check_tensor refuses).
inline int element_bytes(strata::dtype t) { return takes(t) ? static_cast<int>(strata::size_of(t)) : 0; }

/// A (batch, seqlen, heads, dim) tensor; strides in elements (the dim stride is 1).
struct tensor {
  void* data = nullptr;
  strata::dtype type = strata::dtype::fp16;
  int batch = 0, seqlen = 0, heads = 0, dim = 0;
  long long batch_stride = 0, row_stride = 0, head_stride = 0;
};

/// Dense (B, S, H, D): the layout FlashAttention takes.
inline tensor bshd(const void* p, strata::dtype t, int b, int s, int h, int d) {
  return {const_cast<void*>(p), t, b, s, h, d, static_cast<long long>(s) * h * d, static_cast<long long>(h) * d, d};
}
/// Dense (B, H, S, D): the layout of PyTorch's scaled_dot_product_attention.
inline tensor bhsd(const void* p, strata::dtype t, int b, int s, int h, int d) {
  return {const_cast<void*>(p), t, b, s, h, d, static_cast<long long>(s) * h * d, d, static_cast<long long>(s) * d};
}

/// Where the causal diagonal (and a sliding window) sits when seqlen_q != seqlen_k:
/// top_left: query i sees keys j <= i; bottom_right: j <= i + seqlen_k - seqlen_q (FlashAttention 2.1+).
enum class alignment { top_left, bottom_right };

/// Everything besides the tensors. Defaults: plain softmax(Q K^T / sqrt(D)) V.
struct options {
  float scale = std::numeric_limits<float>::quiet_NaN();  // NaN: 1 / sqrt(head dim)
  bool causal = false;
  alignment align = alignment::bottom_right;
  int window_left = -1, window_right = -1;  // sliding window; -1: unbounded on that side
  float softcap = 0.f;                      // > 0: s = softcap * tanh(s / softcap) after scaling
  const float* alibi_slopes = nullptr;      // (heads) on the device: s -= slope[h] * |i + off - j|
  const float* sinks = nullptr;             // (heads) on the device: one extra logit per head in the
                                            // softmax denominator that attends to nothing
  float* lse = nullptr;                     // optional log-sum-exp output, fp32, (B, H, SQ) or,
                                            // with cu_seqlens_q, (H, total_q)
  long long total_q = 0;                    // rows of the packed Q (needed for the varlen LSE layout,
                                            // and by the Hopper forward, which reads Q by TMA)
  long long total_k = 0;                    // rows of the packed K and V: the Hopper forward's TMA reads
                                            // need them with cu_seqlens (attn::sm90_forward_kernel)
  const int* cu_seqlens_q = nullptr;        // (batch + 1) on the device: packed variable lengths
  const int* cu_seqlens_k = nullptr;
  const int* seqused_q = nullptr;           // (batch) on the device: padded batches
  const int* seqused_k = nullptr;
  bool deterministic = false;               // backward: true makes dq bitwise reproducible (ordered
                                            // accumulation; the default adds with fp32 atomics).
                                            // dk, dv, dsinks always are.
  float dropout_p = 0.f;                    // probability of dropping a probability (0: off), in [0, 1);
                                            // applied at 8 bits: t / 256, t = round(256 p) (philox.hpp)
  unsigned long long seed = 0, offset = 0;  // dropout: Philox key and counter offset (philox.hpp); the
                                            // backward must get the forward's values
  float* dsinks = nullptr;                  // backward only: gradient of the sinks, fp32 (heads), overwritten
  // fp8 (strata::dtype::e4m3) only: the stored tensors are the real ones divided by these (per-tensor scaling,
  // as FlashAttention-3 takes them): S = (q_descale * k_descale) * Qs Ks^T, O = v_descale * P Vs.
  float q_descale = 1.f, k_descale = 1.f, v_descale = 1.f;
};

/// Paged KV cache for decode: K and V are (num_pages, page_size, heads_k, dim) pools; sequence b's
/// key j lives on page block_table[b * block_table_stride + j / page_size].
struct paged_kv {
  const int* block_table = nullptr;  // (batch, max_pages_per_seq) on the device
  int block_table_stride = 0;        // entries per row of the table
  int page_size = 0;                 // a multiple of 16
  int num_pages = 0;
};

}  // namespace strata::attn
