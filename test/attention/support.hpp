// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/attention/support.hpp -- one attention case end to end on the emulator: random inputs
// (quantized to the element type; the reference sees the quantized values), poisoned outputs, the
// kernel, and a comparison with the double-precision reference, row by row.
//
// Tolerances (absolute, on O whose entries are averages of values in [-1, 1]): fp32 2e-5; fp16 4e-3;
// bf16 2.5e-2 -- P is rounded to the element type before P V (as on the GPU), so the error follows
// that type's epsilon (2^-11, 2^-8) times a few. fp8 e4m3: P is rounded to e4m3 (relative error
// <= 2^-4 for P >= 2^-6, which these inputs' scores keep), so |O error| <= 2^-4 * max|V| plus bf16's
// rounding of O: 0.07 times v_descale. The fp8 tensors hold the real values divided by per-tensor
// descale factors (not 1 in the fp8 cases); the reference sees the real ones. LSE: 1e-3 (S is
// accumulated in fp32 from exact products). Fully masked rows must be exactly 0 with LSE -inf; rows a sequence does not have must
// stay poisoned.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "strata/attention.hpp"

namespace attn_test {

namespace A = strata::attn;
using strata::bf16;
using strata::f16;
using strata::f8_e4m3;

template <class E>
constexpr strata::dtype dtype_of() {
  return A::detail::dtype_of<E>();
}

template <class E>
double tolerance() {
  if constexpr (std::is_same_v<E, float>) return 2e-5;
  else if constexpr (std::is_same_v<E, bf16>) return 2.5e-2;
  else if constexpr (std::is_same_v<E, f8_e4m3>) return 7e-2;
  else return 4e-3;
}

struct spec {
  int batch = 1, heads = 2, heads_k = 1, sq = 17, sk = 23;
  bool bhsd = false;
  bool varlen = false;  // packed, lengths vary per sequence
  bool padded = false;  // seqused_q / seqused_k shorter than the padded extents
  bool nan_padding = false;  // padded: K and V rows past each sequence's keys hold NaN (never to be used)
  A::options opt{};
  std::vector<float> alibi{}, sinks{};
  std::uint64_t seed = 1;
};

inline int len_of(int full, int b, bool vary) { return vary ? std::max(1, full - 5 * b) : full; }

template <class E>
struct host_tensor {
  std::vector<E> data;
  std::vector<double> exact;
};

template <class E>
host_tensor<E> random_tensor(std::size_t n, std::mt19937_64& g) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  host_tensor<E> t;
  t.data.resize(n);
  t.exact.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    t.data[i] = static_cast<E>(static_cast<float>(u(g)));
    t.exact[i] = static_cast<double>(static_cast<float>(t.data[i]));
  }
  return t;
}

template <class E>
strata::device_buffer<E> upload(strata::stream& s, const std::vector<E>& h) {
  strata::device_buffer<E> b(h.size());
  if (!h.empty()) strata::copy_to_device(s, b.data(), h.data(), h.size());
  return b;
}

inline bool is_poison_bits(const void* p, std::size_t bytes) {
  const unsigned char* c = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < bytes; ++i)
    if (c[i] != 0xFF) return false;
  return true;
}

/// How check() runs the forward: the typed entry for Target (the default), or a kernel of its own
/// (test/attention/sm90_forward_test.cpp).
template <class E, int D, int Dv, class Target>
struct entry_runner {
  template <class SM, class MM>
  void operator()(strata::stream& s, const A::tensor& q, const A::tensor& k, const A::tensor& v, const A::tensor& o,
                  const A::options& opt, const SM& sm, const MM& mm) const {
    A::run<E, D, Dv, Target>(s, q, k, v, o, opt, sm, mm);
  }
};

/// Runs one case with the typed entry (or `runner`) and checks it. Returns the number of fully masked
/// rows seen.
template <class E, int D, int Dv, class Target, class SM = A::no_score_mod, class MM = A::no_mask_mod,
          class Runner = entry_runner<E, D, Dv, Target>>
int check(spec c, const SM& sm = {}, const MM& mm = {}, const Runner& runner = {}) {
  strata::stream s;
  std::mt19937_64 g(c.seed);
  const int B = c.batch, H = c.heads, HK = c.heads_k;
  std::vector<int> sqs(B), sks(B), cu_q(B + 1, 0), cu_k(B + 1, 0);
  for (int b = 0; b < B; ++b) {
    sqs[b] = len_of(c.sq, b, c.varlen || c.padded);
    sks[b] = len_of(c.sk, b, c.varlen || c.padded);
    if (c.varlen && b % 2 == 1) sqs[b] = std::max(1, sqs[b] / 2 + 1);
    cu_q[b + 1] = cu_q[b] + sqs[b];
    cu_k[b + 1] = cu_k[b] + sks[b];
  }
  // Storage: packed (total, H, D) for varlen, else (B, S, H, D) or (B, H, S, D).
  const int rq = c.varlen ? cu_q[B] : B * c.sq, rk = c.varlen ? cu_k[B] : B * c.sk;
  auto q = random_tensor<E>(static_cast<std::size_t>(rq) * H * D, g);
  auto k = random_tensor<E>(static_cast<std::size_t>(rk) * HK * D, g);
  auto v = random_tensor<E>(static_cast<std::size_t>(rk) * HK * Dv, g);
  // fp8: the stored values are the real ones divided by the descale factors.
  const bool fp8 = std::is_same_v<E, f8_e4m3>;
  if (fp8) {
    for (auto& x : q.exact) x *= c.opt.q_descale;
    for (auto& x : k.exact) x *= c.opt.k_descale;
    for (auto& x : v.exact) x *= c.opt.v_descale;
  }
  if (c.padded && c.nan_padding) {
    for (int b = 0; b < B; ++b)
      for (int j = sks[b]; j < c.sk; ++j)
        for (int h = 0; h < HK; ++h) {
          const std::size_t row = c.bhsd ? (static_cast<std::size_t>(b) * HK + h) * c.sk + j : (static_cast<std::size_t>(b) * c.sk + j) * HK + h;
          for (int d = 0; d < D; ++d) k.data[row * D + d] = static_cast<E>(NAN);
          for (int d = 0; d < Dv; ++d) v.data[row * Dv + d] = static_cast<E>(NAN);
        }
  }
  auto dq = upload(s, q.data), dk = upload(s, k.data), dv = upload(s, v.data);
  using O = A::out_elem<E>;
  std::vector<O> o_init(static_cast<std::size_t>(rq) * H * Dv);
  std::memset(static_cast<void*>(o_init.data()), 0xFF, o_init.size() * sizeof(O));
  auto dout = upload(s, o_init);
  std::vector<float> lse_init(static_cast<std::size_t>(rq) * H);
  std::memset(lse_init.data(), 0xFF, lse_init.size() * 4);
  auto dlse = upload(s, lse_init);
  auto make = [&](void* p, int sl, int h, int d, strata::dtype t = dtype_of<E>()) {
    if (c.varlen) return A::bshd(p, t, B, *std::max_element(sl == c.sq ? sqs.begin() : sks.begin(), sl == c.sq ? sqs.end() : sks.end()), h, d);
    return c.bhsd ? A::bhsd(p, t, B, sl, h, d) : A::bshd(p, t, B, sl, h, d);
  };
  A::tensor tq = make(dq.data(), c.sq, H, D), tk = make(dk.data(), c.sk, HK, D), tv = make(dv.data(), c.sk, HK, Dv),
            to = make(dout.data(), c.sq, H, Dv, dtype_of<O>());
  A::options opt = c.opt;
  opt.lse = dlse.data();
  auto dcuq = upload(s, cu_q), dcuk = upload(s, cu_k), dsq = upload(s, sqs), dsk = upload(s, sks);
  auto dalibi = upload(s, c.alibi), dsinks = upload(s, c.sinks);
  if (c.varlen) opt.cu_seqlens_q = dcuq.data(), opt.cu_seqlens_k = dcuk.data(), opt.total_q = rq, opt.total_k = rk;
  if (c.padded) opt.seqused_q = dsq.data(), opt.seqused_k = dsk.data();
  if (!c.alibi.empty()) opt.alibi_slopes = dalibi.data();
  if (!c.sinks.empty()) opt.sinks = dsinks.data();
  runner(s, tq, tk, tv, to, opt, sm, mm);
  std::vector<O> out(o_init.size());
  std::vector<float> lse(lse_init.size());
  strata::copy_to_host(s, out.data(), dout.data(), out.size());
  strata::copy_to_host(s, lse.data(), dlse.data(), lse.size());
  s.synchronize();

  A::reference::problem rp;
  rp.heads = H, rp.heads_k = HK, rp.d = D, rp.dv = Dv;
  rp.scale = std::isnan(c.opt.scale) ? 1.0 / std::sqrt(static_cast<double>(static_cast<float>(D))) : c.opt.scale;
  rp.scale = static_cast<float>(rp.scale);
  rp.causal = c.opt.causal, rp.align = c.opt.align, rp.window_left = c.opt.window_left, rp.window_right = c.opt.window_right;
  rp.softcap = c.opt.softcap, rp.alibi = c.alibi, rp.sinks = c.sinks;
  rp.dropout_p = c.opt.dropout_p, rp.seed = c.opt.seed, rp.offset = c.opt.offset;
  // Element offsets of (b, i, h) rows in each tensor.
  auto q_at = [&](int b, int i, int h, int d) -> std::size_t {
    if (c.varlen) return (static_cast<std::size_t>(cu_q[b] + i) * H + h) * d;
    if (c.bhsd) return ((static_cast<std::size_t>(b) * H + h) * c.sq + i) * d;
    return ((static_cast<std::size_t>(b) * c.sq + i) * H + h) * d;
  };
  auto k_at = [&](int b, int j, int h, int d) -> std::size_t {
    if (c.varlen) return (static_cast<std::size_t>(cu_k[b] + j) * HK + h) * d;
    if (c.bhsd) return ((static_cast<std::size_t>(b) * HK + h) * c.sk + j) * d;
    return ((static_cast<std::size_t>(b) * c.sk + j) * HK + h) * d;
  };
  const double tol = tolerance<E>() * (fp8 ? c.opt.v_descale : 1.0);
  int masked_rows = 0, bad = 0;
  for (int b = 0; b < B; ++b) {
    A::reference::sequence rs;
    rs.sq = sqs[b], rs.sk = sks[b];
    for (int i = 0; i < rs.sq; ++i)
      for (int h = 0; h < H; ++h)
        for (int d = 0; d < D; ++d) rs.q.push_back(q.exact[q_at(b, i, h, D) + d]);
    for (int j = 0; j < rs.sk; ++j)
      for (int h = 0; h < HK; ++h) {
        for (int d = 0; d < D; ++d) rs.k.push_back(k.exact[k_at(b, j, h, D) + d]);
      }
    for (int j = 0; j < rs.sk; ++j)
      for (int h = 0; h < HK; ++h)
        for (int d = 0; d < Dv; ++d) rs.v.push_back(v.exact[k_at(b, j, h, Dv) + d]);
    const auto ref = A::reference::forward(rp, rs, b, sm, mm);
    const int rows_here = c.varlen ? rs.sq : c.sq;
    for (int i = 0; i < rows_here; ++i)
      for (int h = 0; h < H; ++h) {
        const O* got = &out[q_at(b, i, h, Dv)];
        const std::size_t lse_i = c.varlen ? static_cast<std::size_t>(h) * rq + cu_q[b] + i
                                           : (static_cast<std::size_t>(b) * H + h) * c.sq + i;
        if (i >= rs.sq) {  // padding: untouched
          if (!is_poison_bits(got, Dv * sizeof(O)) || !is_poison_bits(&lse[lse_i], 4)) ++bad;
          continue;
        }
        const double rl = ref.lse[static_cast<std::size_t>(h) * rs.sq + i];
        if (std::isinf(rl)) {
          ++masked_rows;
          if (!(std::isinf(lse[lse_i]) && lse[lse_i] < 0)) ++bad;
        } else if (!(std::fabs(lse[lse_i] - rl) <= 1e-3)) {
          if (bad < 4) UNSCOPED_INFO("lse b" << b << " i" << i << " h" << h << ": " << lse[lse_i] << " vs " << rl);
          ++bad;
        }
        for (int d = 0; d < Dv; ++d) {
          const double x = static_cast<double>(static_cast<float>(got[d]));
          const double r = ref.o[(static_cast<std::size_t>(i) * H + h) * Dv + d];
          const bool ok = std::isinf(rl) ? x == 0.0 : std::fabs(x - r) <= tol;
          if (!ok) {
            if (bad < 4) UNSCOPED_INFO("o b" << b << " i" << i << " h" << h << " d" << d << ": " << x << " vs " << r);
            ++bad;
          }
        }
      }
  }
  CHECK(bad == 0);
  return masked_rows;
}

}  // namespace attn_test
