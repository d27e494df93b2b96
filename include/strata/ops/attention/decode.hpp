// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/attention/decode.hpp -- the two small kernels of decoding: appending new K/V rows into
// a (contiguous or paged) cache, and combining split-KV partial results (flash-decoding).
//
// combine: split s of row (b, h, i) produced O_s (normalized) and LSE_s; the row's result is
//   LSE = log(sum_s exp(LSE_s)),  O = sum_s exp(LSE_s - LSE) O_s
// computed with the max subtracted; splits that saw no key have LSE_s = -inf and weigh 0; a row where
// every split is empty gives O = 0 and LSE = -inf (the fully-masked-row convention).
#pragma once

#include "strata/config/config.hpp"
#include "strata/ops/attention/forward.hpp"

namespace strata::attn {

namespace detail {

struct combine_params {
  const float* part_o;    // (split, B, H, SQ, Dv)
  const float* part_lse;  // (split, B, H, SQ)
  void* o;
  float* lse;
  long long o_bs, o_rs, o_hs, lse_bs, lse_hs;
  int batch, heads, seqlen_q, dv, num_splits;
  const int* used_q;
};

struct append_params {
  const void* k_new;
  const void* v_new;
  void* k_cache;
  void* v_cache;
  long long kn_bs, kn_rs, kn_hs, vn_bs, vn_rs, vn_hs;
  long long k_bs, k_rs, k_hs, v_bs, v_rs, v_hs;  // paged: *_bs is the page stride
  const int* cache_seqlens;                       // rows already in the cache, per sequence
  const int* block_table;
  int bt_stride, page_size;
  int capacity;   // rows the cache holds per sequence (dense: its seqlen; paged: table stride x page size)
  int num_pages;  // paged: pages in the pool
  int batch, s_new, heads_k, d, dv;
};

}  // namespace detail

/// One block per (b, h, query row); threads over the V head dim.
template <class Elem, class Target>
struct combine_kernel {
  using target = Target;
  using params = detail::combine_params;
  static constexpr const char* name = "attention_combine_kernel";
  static constexpr int threads = Target::warp_size;
  static constexpr int max_threads_per_block = threads;

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    const long long row = ctx.block().rank();  // (b, h, i)
    const int i = static_cast<int>(row % p.seqlen_q);
    const int b = static_cast<int>(row / (static_cast<long long>(p.heads) * p.seqlen_q));
    const int h = static_cast<int>((row / p.seqlen_q) % p.heads);
    if (p.used_q && i >= p.used_q[b]) return;
    const long long split_rows = static_cast<long long>(p.batch) * p.heads * p.seqlen_q;
    float mx = detail::neg_inf();
    for (int s = 0; s < p.num_splits; ++s) {
      const float x = p.part_lse[s * split_rows + row];
      mx = x > mx ? x : mx;
    }
    float total = 0.f;
    if (mx != detail::neg_inf())
      for (int s = 0; s < p.num_splits; ++s) total += ::expf(p.part_lse[s * split_rows + row] - mx);
    const float lse = mx == detail::neg_inf() ? mx : mx + ::logf(total);
    Elem* o = static_cast<Elem*>(p.o) + b * p.o_bs + static_cast<long long>(i) * p.o_rs + h * p.o_hs;
    for (int d = ctx.block().thread_rank(); d < p.dv; d += threads) {
      float acc = 0.f;
      if (mx != detail::neg_inf())
        for (int s = 0; s < p.num_splits; ++s) {
          const float x = p.part_lse[s * split_rows + row];
          if (x != detail::neg_inf()) acc += ::expf(x - lse) * p.part_o[(s * split_rows + row) * p.dv + d];
        }
      o[d] = static_cast<Elem>(acc);
    }
    if (p.lse && ctx.block().thread_rank() == 0) p.lse[b * p.lse_bs + h * p.lse_hs + i] = lse;
  }
};

/// One block per new (b, t, kv head) row; threads over the head dim. Row t of sequence b goes to
/// cache position cache_seqlens[b] + t (through the block table when the cache is paged). A position
/// outside [0, capacity), or a page outside the pool, is not written: the lengths and the table live
/// on the device, where the host entry cannot check them, and a bad one must never write out of bounds.
template <class Elem, class Target>
struct append_kernel {
  using target = Target;
  using params = detail::append_params;
  static constexpr const char* name = "attention_append_kernel";
  static constexpr int threads = Target::warp_size;
  static constexpr int max_threads_per_block = threads;

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    const long long r = ctx.block().rank();
    const int hk = static_cast<int>(r % p.heads_k);
    const int t = static_cast<int>((r / p.heads_k) % p.s_new);
    const int b = static_cast<int>(r / (static_cast<long long>(p.heads_k) * p.s_new));
    const int j = p.cache_seqlens[b] + t;
    if (j < 0 || j >= p.capacity) return;
    long long kd, vd;
    if (p.block_table) {
      const long long page = p.block_table[static_cast<long long>(b) * p.bt_stride + j / p.page_size];
      if (page < 0 || page >= p.num_pages) return;
      kd = page * p.k_bs + static_cast<long long>(j % p.page_size) * p.k_rs + hk * p.k_hs;
      vd = page * p.v_bs + static_cast<long long>(j % p.page_size) * p.v_rs + hk * p.v_hs;
    } else {
      kd = b * p.k_bs + static_cast<long long>(j) * p.k_rs + hk * p.k_hs;
      vd = b * p.v_bs + static_cast<long long>(j) * p.v_rs + hk * p.v_hs;
    }
    const Elem* ks = static_cast<const Elem*>(p.k_new) + b * p.kn_bs + static_cast<long long>(t) * p.kn_rs + hk * p.kn_hs;
    const Elem* vs = static_cast<const Elem*>(p.v_new) + b * p.vn_bs + static_cast<long long>(t) * p.vn_rs + hk * p.vn_hs;
    for (int d = ctx.block().thread_rank(); d < p.d; d += threads) static_cast<Elem*>(p.k_cache)[kd + d] = ks[d];
    for (int d = ctx.block().thread_rank(); d < p.dv; d += threads) static_cast<Elem*>(p.v_cache)[vd + d] = vs[d];
  }
};

}  // namespace strata::attn
