// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/attention/grad_support.hpp -- one attention backward case end to end on the emulator:
// random q, k, v, dout (quantized to the element type), the forward (typed entry) for O and LSE,
// strata::attention_backward, and the double-precision reference gradient (reference::backward).
//
// Tolerance: max |got - ref| <= tol * max(1, max |ref|) per tensor, tol = 2e-4 (fp32), 1.5e-2 (fp16),
// 6e-2 (bf16): the kernel recomputes P in fp32 but reads O and dO in the element type (Di =
// rowsum(dO o O)) and rounds dq, dk, dv to it. Rows a sequence does not have must stay poisoned.
#pragma once

#include "support.hpp"

namespace attn_test {

template <class E>
double grad_tolerance() {
  if constexpr (std::is_same_v<E, float>) return 2e-4;
  else if constexpr (std::is_same_v<E, bf16>) return 6e-2;
  else return 1.5e-2;
}

/// Everything a gradient case produces on the host.
template <class E>
struct grad_run {
  std::vector<E> o, dq, dk, dv;
  std::vector<float> lse, dsinks;
};

/// Inputs of a case, kept so that the same case can be re-run (schedules, finite differences).
template <class E>
struct grad_inputs {
  host_tensor<E> q, k, v, dout;
  std::vector<int> sqs, sks, cu_q, cu_k;
  int rq = 0, rk = 0;
};

/// Element offset of (b, row, head) in a q-side (qside) or k-side tensor of the case.
template <class E>
std::size_t offset_of(const spec& c, const grad_inputs<E>& in, bool qside, int b, int i, int h, int d) {
  const int H = qside ? c.heads : c.heads_k, S = qside ? c.sq : c.sk;
  const std::vector<int>& cu = qside ? in.cu_q : in.cu_k;
  if (c.varlen) return (static_cast<std::size_t>(cu[b] + i) * H + h) * d;
  if (c.bhsd) return ((static_cast<std::size_t>(b) * H + h) * S + i) * d;
  return ((static_cast<std::size_t>(b) * S + i) * H + h) * d;
}

template <class E, int D, int Dv>
grad_inputs<E> make_inputs(const spec& c) {
  grad_inputs<E> in;
  std::mt19937_64 g(c.seed);
  const int B = c.batch;
  in.sqs.resize(B), in.sks.resize(B), in.cu_q.assign(B + 1, 0), in.cu_k.assign(B + 1, 0);
  for (int b = 0; b < B; ++b) {
    in.sqs[b] = len_of(c.sq, b, c.varlen || c.padded);
    in.sks[b] = len_of(c.sk, b, c.varlen || c.padded);
    if (c.varlen && b % 2 == 1) in.sqs[b] = std::max(1, in.sqs[b] / 2 + 1);
    in.cu_q[b + 1] = in.cu_q[b] + in.sqs[b];
    in.cu_k[b + 1] = in.cu_k[b] + in.sks[b];
  }
  in.rq = c.varlen ? in.cu_q[B] : B * c.sq;
  in.rk = c.varlen ? in.cu_k[B] : B * c.sk;
  in.q = random_tensor<E>(static_cast<std::size_t>(in.rq) * c.heads * D, g);
  in.k = random_tensor<E>(static_cast<std::size_t>(in.rk) * c.heads_k * D, g);
  in.v = random_tensor<E>(static_cast<std::size_t>(in.rk) * c.heads_k * Dv, g);
  in.dout = random_tensor<E>(static_cast<std::size_t>(in.rq) * c.heads * Dv, g);
  if (c.padded && c.nan_padding) {  // rows past each sequence: NaN, never to be used
    const E nan = static_cast<E>(std::numeric_limits<float>::quiet_NaN());
    const auto plant = [&](host_tensor<E>& t, bool qside, int heads, int dim, const std::vector<int>& used) {
      for (int b = 0; b < B; ++b)
        for (int i = used[b]; i < (qside ? c.sq : c.sk); ++i)
          for (int h = 0; h < heads; ++h)
            for (int d = 0; d < dim; ++d) t.data[offset_of(c, in, qside, b, i, h, dim) + d] = nan;
    };
    plant(in.q, true, c.heads, D, in.sqs);
    plant(in.dout, true, c.heads, Dv, in.sqs);
    plant(in.k, false, c.heads_k, D, in.sks);
    plant(in.v, false, c.heads_k, Dv, in.sks);
  }
  return in;
}

/// How run_grad runs the backward: the typed entry for Target with a workspace of its size (the
/// default), or a kernel of its own (test/attention/sm90_backward_test.cpp).
template <class E, int D, int Dv, class Target>
struct entry_backward {
  template <class SM, class MM>
  void operator()(strata::stream& s, const A::tensor& q, const A::tensor& k, const A::tensor& v, const A::tensor& o,
                  const A::tensor& dout, const A::tensor& dq, const A::tensor& dk, const A::tensor& dv, const A::options& opt,
                  const SM& sm, const MM& mm) const {
    const std::size_t bytes = strata::attention_backward_workspace_size<Target>(q, k, v, opt);
    strata::device_buffer<unsigned char> ws(bytes > 0 ? bytes : 1);
    A::run_backward<E, D, Dv, Target>(s, q, k, v, o, dout, dq, dk, dv, opt, {ws.data(), bytes}, sm, mm);
    s.synchronize();  // before the workspace goes
  }
};

/// Runs forward then backward (or forward only) on stream options `eo`.
template <class E, int D, int Dv, class Target, class SM = A::no_score_mod, class MM = A::no_mask_mod,
          class Backward = entry_backward<E, D, Dv, Target>>
grad_run<E> run_grad(const spec& c, const grad_inputs<E>& in, const strata::emulator::options& eo, bool backward = true,
                     const SM& sm = {}, const MM& mm = {}, const Backward& run_backward = {}) {
  strata::stream s(eo);
  const int B = c.batch, H = c.heads, HK = c.heads_k;
  const strata::dtype t = dtype_of<E>();
  auto poison = [&](std::size_t n) {
    std::vector<E> x(n);
    std::memset(static_cast<void*>(x.data()), 0xFF, n * sizeof(E));
    return x;
  };
  auto dq_ = upload(s, in.q.data), dk_ = upload(s, in.k.data), dv_ = upload(s, in.v.data), ddo = upload(s, in.dout.data);
  auto dout_ = upload(s, poison(in.dout.data.size()));
  auto gq = upload(s, poison(in.q.data.size())), gk = upload(s, poison(in.k.data.size())), gv = upload(s, poison(in.v.data.size()));
  std::vector<float> lse0(static_cast<std::size_t>(in.rq) * H, 0.f);
  auto dlse = upload(s, lse0);
  auto make = [&](void* p, bool qside, int h, int d) {
    if (c.varlen)
      return A::bshd(p, t, B, *std::max_element(qside ? in.sqs.begin() : in.sks.begin(), qside ? in.sqs.end() : in.sks.end()), h, d);
    const int sl = qside ? c.sq : c.sk;
    return c.bhsd ? A::bhsd(p, t, B, sl, h, d) : A::bshd(p, t, B, sl, h, d);
  };
  A::tensor tq = make(dq_.data(), true, H, D), tk = make(dk_.data(), false, HK, D), tv = make(dv_.data(), false, HK, Dv),
            to = make(dout_.data(), true, H, Dv), tdo = make(ddo.data(), true, H, Dv);
  A::tensor tgq = make(gq.data(), true, H, D), tgk = make(gk.data(), false, HK, D), tgv = make(gv.data(), false, HK, Dv);
  A::options opt = c.opt;
  opt.lse = dlse.data();
  auto dcuq = upload(s, in.cu_q), dcuk = upload(s, in.cu_k), dsq = upload(s, in.sqs), dsk = upload(s, in.sks);
  auto dalibi = upload(s, c.alibi), dsinks = upload(s, c.sinks);
  std::vector<float> ds0(c.sinks.size(), -7.f);
  auto ddsinks = upload(s, ds0);
  if (c.varlen) opt.cu_seqlens_q = dcuq.data(), opt.cu_seqlens_k = dcuk.data(), opt.total_q = in.rq, opt.total_k = in.rk;
  if (c.padded) opt.seqused_q = dsq.data(), opt.seqused_k = dsk.data();
  if (!c.alibi.empty()) opt.alibi_slopes = dalibi.data();
  if (!c.sinks.empty()) opt.sinks = dsinks.data();
  A::run<E, D, Dv, Target>(s, tq, tk, tv, to, opt, sm, mm);
  grad_run<E> r;
  if (backward) {
    if (!c.sinks.empty()) opt.dsinks = ddsinks.data();
    run_backward(s, tq, tk, tv, to, tdo, tgq, tgk, tgv, opt, sm, mm);
    r.dq.resize(in.q.data.size()), r.dk.resize(in.k.data.size()), r.dv.resize(in.v.data.size());
    r.dsinks.resize(c.sinks.size());
    strata::copy_to_host(s, r.dq.data(), gq.data(), r.dq.size());
    strata::copy_to_host(s, r.dk.data(), gk.data(), r.dk.size());
    strata::copy_to_host(s, r.dv.data(), gv.data(), r.dv.size());
    if (!r.dsinks.empty()) strata::copy_to_host(s, r.dsinks.data(), ddsinks.data(), r.dsinks.size());
  }
  r.o.resize(in.dout.data.size()), r.lse.resize(lse0.size());
  strata::copy_to_host(s, r.o.data(), dout_.data(), r.o.size());
  strata::copy_to_host(s, r.lse.data(), dlse.data(), r.lse.size());
  s.synchronize();
  return r;
}

inline A::reference::problem ref_problem(const spec& c, int D, int Dv) {
  A::reference::problem rp;
  rp.heads = c.heads, rp.heads_k = c.heads_k, rp.d = D, rp.dv = Dv;
  rp.scale = std::isnan(c.opt.scale) ? 1.0 / std::sqrt(static_cast<double>(static_cast<float>(D))) : c.opt.scale;
  rp.scale = static_cast<float>(rp.scale);
  rp.causal = c.opt.causal, rp.align = c.opt.align, rp.window_left = c.opt.window_left, rp.window_right = c.opt.window_right;
  rp.softcap = c.opt.softcap, rp.alibi = c.alibi, rp.sinks = c.sinks;
  rp.dropout_p = c.opt.dropout_p, rp.seed = c.opt.seed, rp.offset = c.opt.offset;
  return rp;
}

/// The case against the reference gradient. Returns the kernel's run (for bitwise comparisons).
template <class E, int D, int Dv, class Target, class SM = A::no_score_mod, class MM = A::no_mask_mod,
          class Backward = entry_backward<E, D, Dv, Target>>
grad_run<E> check_grad(const spec& c, const SM& sm = {}, const MM& mm = {}, const Backward& run_backward = {}) {
  const auto in = make_inputs<E, D, Dv>(c);
  const auto r = run_grad<E, D, Dv, Target>(c, in, strata::emulator::options::from_environment(), true, sm, mm, run_backward);
  const auto rp = ref_problem(c, D, Dv);
  const int H = c.heads, HK = c.heads_k;
  double err[3] = {0, 0, 0}, mag[3] = {0, 0, 0};
  int untouched_bad = 0;
  std::vector<double> dsink_ref(c.sinks.size(), 0.0);
  for (int b = 0; b < c.batch; ++b) {
    A::reference::sequence rs;
    rs.sq = in.sqs[b], rs.sk = in.sks[b];
    std::vector<double> dO;
    for (int i = 0; i < rs.sq; ++i)
      for (int h = 0; h < H; ++h) {
        for (int d = 0; d < D; ++d) rs.q.push_back(in.q.exact[offset_of(c, in, true, b, i, h, D) + d]);
        for (int d = 0; d < Dv; ++d) dO.push_back(in.dout.exact[offset_of(c, in, true, b, i, h, Dv) + d]);
      }
    for (int j = 0; j < rs.sk; ++j)
      for (int h = 0; h < HK; ++h)
        for (int d = 0; d < D; ++d) rs.k.push_back(in.k.exact[offset_of(c, in, false, b, j, h, D) + d]);
    for (int j = 0; j < rs.sk; ++j)
      for (int h = 0; h < HK; ++h)
        for (int d = 0; d < Dv; ++d) rs.v.push_back(in.v.exact[offset_of(c, in, false, b, j, h, Dv) + d]);
    const auto g = A::reference::backward(rp, rs, b, dO, sm, mm);
    for (std::size_t h = 0; h < dsink_ref.size(); ++h) dsink_ref[h] += g.dsinks[h];
    auto cmp = [&](int which, const std::vector<E>& got, const std::vector<double>& ref, bool qside, int heads, int dim,
                   int rows, int padded_rows) {
      for (int i = 0; i < padded_rows; ++i)
        for (int h = 0; h < heads; ++h) {
          const std::size_t at = offset_of(c, in, qside, b, i, h, dim);
          if (i >= rows) {
            if (!is_poison_bits(&got[at], dim * sizeof(E))) ++untouched_bad;
            continue;
          }
          for (int d = 0; d < dim; ++d) {
            const double x = static_cast<double>(static_cast<float>(got[at + d]));
            const double y = ref[(static_cast<std::size_t>(i) * heads + h) * dim + d];
            if (!(std::fabs(x - y) <= err[which])) err[which] = std::isnan(x) ? 1e30 : std::fabs(x - y);
            mag[which] = std::max(mag[which], std::fabs(y));
          }
        }
    };
    cmp(0, r.dq, g.dq, true, H, D, rs.sq, c.varlen ? rs.sq : c.sq);
    cmp(1, r.dk, g.dk, false, HK, D, rs.sk, c.varlen ? rs.sk : c.sk);
    cmp(2, r.dv, g.dv, false, HK, Dv, rs.sk, c.varlen ? rs.sk : c.sk);
  }
  const double tol = grad_tolerance<E>();
  for (int w = 0; w < 3; ++w) {
    INFO("d" << "qkv"[w] << ": max error " << err[w] << ", max |ref| " << mag[w]);
    CHECK(err[w] <= tol * std::max(1.0, mag[w]));
  }
  for (std::size_t h = 0; h < dsink_ref.size(); ++h) {
    INFO("dsink[" << h << "] " << r.dsinks[h] << " vs " << dsink_ref[h]);
    CHECK(std::fabs(r.dsinks[h] - dsink_ref[h]) <= tol * std::max(1.0, std::fabs(dsink_ref[h])));
  }
  CHECK(untouched_bad == 0);
  return r;
}

}  // namespace attn_test
