// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// examples/attention.cpp -- fused attention forward through the one-call host entry.
//
//   attention --batch B --heads H --heads-k HK --seqlen-q SQ --seqlen-k SK --dim D [--causal]
//             [--window L,R] [--dtype fp16|bf16|fp32|e4m3] [--backward [--deterministic]] [--check] [--bench]
//             [--kernel entry|sm90]
//
// --kernel sm90 runs the forward through the Hopper kernel (strata/ops/attention/sm90_forward.hpp:
// TMA, wgmma, warp-specialized) instead of strata::attention: fp16 or bf16, --dim 64, 128 or 256; with
// --backward also the Hopper backward (sm90_backward.hpp; --dim 64 or 128) instead of
// strata::attention_backward. On the host emulator it runs anywhere; a CUDA build needs an H100 / H200
// (sm_90) and sm_90a among its architectures; HIP builds refuse it.
//
// --check compares with the double-precision reference (strata/ops/attention/reference.hpp) and
// prints PASS or FAIL as the last line. --backward also runs strata::attention_backward on a random
// dL/dO (fp16, bf16 or fp32; --deterministic for the bitwise reproducible dQ mode), and --check then
// compares dQ, dK and dV with the reference gradients too: per tensor, max |error| <= tol x max(1,
// max |reference|), tol 2e-4 (fp32), 1.5e-2 (fp16), 6e-2 (bf16), the backward tests' bounds (the
// kernel reads O and dO in the element type and rounds the gradients to it). e4m3 (fp8) quantizes random data as an fp8 inference step
// does: each of Q, K and V is divided by amax / 448 and stored as e4m3, and those factors go to
// strata::attention as its descale factors; O is bf16. fp8 needs fp8 tensor cores in the build's
// attention target (sm_90a / sm_100a / gfx942) or the host emulator; elsewhere strata::attention
// says so (strata::unsupported). The target is the backend's default (sm80 for CUDA, gfx90a for
// HIP) unless STRATA_EXAMPLE_ATTENTION_TARGET names one: examples/CMakeLists.txt sets sm90a for a
// CUDA build whose architectures are all sm_90a (sm100a for all sm_100a), so that an H100 / H200
// build runs fp8. On the host emulator, shapes above a work limit are refused
// with a message instead of running for hours.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "strata/attention.hpp"
#if !STRATA_BACKEND_HIP
#include "strata/ops/attention/sm90_backward.hpp"
#include "strata/ops/attention/sm90_forward.hpp"
#endif

#include "command_line.hpp"

namespace A = strata::attn;

namespace {

struct args {
  int batch = 1, heads = 4, heads_k = 4, sq = 128, sk = 128, dim = 64, wl = -1, wr = -1;
  bool causal = false, check = false, bench = false, backward = false, deterministic = false;
  bool sm90 = false;  // --kernel sm90
  strata::dtype type = strata::dtype::fp16;
};

args parse(int argc, char** argv) {
  args a;
  bool hk_given = false;
  strata_examples::command_line cl(
      "attention",
      "usage: attention --batch B --heads H --heads-k HK --seqlen-q SQ --seqlen-k SK "
      "--dim D [--causal] [--window L,R] [--dtype fp16|bf16|fp32|e4m3] [--backward [--deterministic]] [--check] [--bench] "
      "[--kernel entry|sm90]",
      argc, argv, strata_examples::usage_shown::after_errors);
  constexpr long long max_extent = 1LL << 30;
  while (cl.next()) {
    if (cl.is("--batch")) a.batch = cl.integer<int>(1, max_extent);
    else if (cl.is("--heads")) a.heads = cl.integer<int>(1, max_extent);
    else if (cl.is("--heads-k")) a.heads_k = cl.integer<int>(1, max_extent), hk_given = true;
    else if (cl.is("--seqlen-q")) a.sq = cl.integer<int>(1, max_extent);
    else if (cl.is("--seqlen-k")) a.sk = cl.integer<int>(1, max_extent);
    else if (cl.is("--dim")) a.dim = cl.integer<int>(1, max_extent);
    else if (cl.is("--causal")) a.causal = true;
    else if (cl.is("--check")) a.check = true;
    else if (cl.is("--bench")) a.bench = true;
    else if (cl.is("--backward")) a.backward = true;
    else if (cl.is("--deterministic")) a.deterministic = true;
    else if (cl.is("--kernel")) {
      const std::string k = cl.value();
      if (k != "entry" && k != "sm90") cl.fail("--kernel takes entry or sm90, got '" + k + "'");
      a.sm90 = k == "sm90";
    }
    else if (cl.is("--window")) {
      const std::string w = cl.value();
      const auto comma = w.find(',');
      if (comma == std::string::npos) cl.fail("--window needs L,R (e.g. 128,0; -1 for unbounded)");
      const auto l = strata_examples::parse_integer(w.substr(0, comma), -1, max_extent);
      const auto r = strata_examples::parse_integer(w.substr(comma + 1), -1, max_extent);
      if (!l || !r) cl.fail("--window sides must be integers >= -1, got '" + w + "'");
      a.wl = static_cast<int>(*l), a.wr = static_cast<int>(*r);
    } else if (cl.is("--dtype")) {
      using D = strata::dtype;
      std::string why;
      const auto t = strata::try_parse_dtype(cl.value(), {D::fp16, D::bf16, D::fp32, D::e4m3}, &why);
      if (!t) cl.fail("--dtype " + why);
      a.type = *t;  // attention takes strata::dtype itself
    } else cl.unknown();
  }
  if (!hk_given) a.heads_k = a.heads;
  if (a.heads % a.heads_k != 0)
    cl.fail("--heads-k (" + std::to_string(a.heads_k) + ") must divide --heads (" + std::to_string(a.heads) + ")");
  if (!A::supported_dims(a.dim, a.dim))
    cl.fail("--dim must be 32, 64, 96, 128, 192, 256 or 512, got " + std::to_string(a.dim));
  if (a.backward && a.type == strata::dtype::e4m3) cl.fail("--backward takes --dtype fp16, bf16 or fp32 (fp8 attention is inference only)");
  if (a.deterministic && !a.backward) cl.fail("--deterministic is a mode of --backward");
  if (a.sm90) {
    if (a.type != strata::dtype::fp16 && a.type != strata::dtype::bf16) cl.fail("--kernel sm90 takes --dtype fp16 or bf16");
    if (a.dim != 64 && a.dim != 128 && a.dim != 256) cl.fail("--kernel sm90 takes --dim 64, 128 or 256");
    if (a.backward && a.dim == 256) cl.fail("--kernel sm90 --backward takes --dim 64 or 128");
  }
  return a;
}

float to_float(const void* p, strata::dtype t, std::size_t i) {
  if (t == strata::dtype::fp32) return static_cast<const float*>(p)[i];
  if (t == strata::dtype::e4m3) return static_cast<float>(static_cast<const strata::f8_e4m3*>(p)[i]);
  if (t == strata::dtype::bf16) return static_cast<float>(static_cast<const strata::bf16*>(p)[i]);
  return static_cast<float>(static_cast<const strata::f16*>(p)[i]);
}
void from_float(void* p, strata::dtype t, std::size_t i, float x) {
  if (t == strata::dtype::fp32) static_cast<float*>(p)[i] = x;
  else if (t == strata::dtype::e4m3) static_cast<strata::f8_e4m3*>(p)[i] = strata::f8_e4m3(x);
  else if (t == strata::dtype::bf16) static_cast<strata::bf16*>(p)[i] = strata::bf16(x);
  else static_cast<strata::f16*>(p)[i] = strata::f16(x);
}

/// A device copy of host bytes (at least one byte, so that an empty tensor still has an address).
strata::device_buffer<unsigned char> on_device(strata::stream& s, const std::vector<unsigned char>& h) {
  strata::device_buffer<unsigned char> d(std::max<std::size_t>(h.size(), 1));
  strata::copy_to_device(s, d.data(), h.data(), h.size());
  return d;
}

/// max |got - ref| over a tensor laid out as the reference's (rows, heads, dim) for one batch entry,
/// and max |ref|; NaN counts as an infinite error.
struct error_of {
  double err = 0, mag = 0;
  void add(double got, double ref) {
    const double e = std::fabs(got - ref);
    err = std::isnan(e) ? INFINITY : std::max(err, e);
    mag = std::max(mag, std::fabs(ref));
  }
};

}  // namespace

int main(int argc, char** argv) {
  const args a = parse(argc, argv);
  const double flops = 4.0 * a.batch * a.heads * static_cast<double>(a.sq) * a.sk * a.dim;  // FlashAttention's count
#if STRATA_BACKEND_HOST
  // The emulator runs every GPU thread on the CPU (~1e8 multiply-adds a second here) and the
  // reference is as costly: refuse what would take more than about a minute. The backward does
  // about 2.5 times the forward's work.
  const double work = flops * (a.backward ? 3.5 : 1.0);
  if (work > 4e9) {
    std::fprintf(stderr, "attention: %.3g FLOP%s is too large for the host emulator (limit 4e9); use a smaller shape or a GPU build\n",
                 work, a.backward ? " (forward and backward)" : "");
    return 2;
  }
#endif
  const bool fp8 = a.type == strata::dtype::e4m3;
  const strata::dtype out_type = fp8 ? strata::dtype::bf16 : a.type;  // fp8 attention writes bf16
  const std::size_t eb = A::element_bytes(a.type);
  const std::size_t nq = static_cast<std::size_t>(a.batch) * a.sq * a.heads * a.dim;
  const std::size_t nk = static_cast<std::size_t>(a.batch) * a.sk * a.heads_k * a.dim;
  std::vector<unsigned char> hq(nq * eb), hk(nk * eb), hv(nk * eb), ho(nq * A::element_bytes(out_type), 0xFF);
  std::mt19937_64 g(2024);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> rq(nq), rk(nk), rv(nk);
  for (auto& x : rq) x = u(g);
  for (std::size_t i = 0; i < nk; ++i) rk[i] = u(g), rv[i] = u(g);
  // fp8: per-tensor scaling, stored = real / descale with descale = amax / 448 (e4m3's largest value).
  auto descale_of = [&](const std::vector<float>& x) {
    float amax = 0.f;
    for (float y : x) amax = std::max(amax, std::fabs(y));
    return fp8 && amax > 0.f ? amax / 448.f : 1.f;
  };
  const float q_ds = descale_of(rq), k_ds = descale_of(rk), v_ds = descale_of(rv);
  for (std::size_t i = 0; i < nq; ++i) from_float(hq.data(), a.type, i, rq[i] / q_ds);
  for (std::size_t i = 0; i < nk; ++i) from_float(hk.data(), a.type, i, rk[i] / k_ds), from_float(hv.data(), a.type, i, rv[i] / v_ds);
  // dL/dO for --backward, stored in the element type (the reference reads the stored values).
  std::vector<unsigned char> hdo(a.backward ? nq * eb : 0);
  for (std::size_t i = 0; a.backward && i < nq; ++i) from_float(hdo.data(), a.type, i, u(g));
  try {
    strata::stream s;
    // Q-side tensors (q, o, dO, dQ) are (batch, seqlen_q, heads, dim); K-side ones (k, v, dK, dV)
    // (batch, seqlen_k, heads_k, dim).
    const auto q_side = [&](void* p, strata::dtype t) { return A::bshd(p, t, a.batch, a.sq, a.heads, a.dim); };
    const auto k_side = [&](void* p) { return A::bshd(p, a.type, a.batch, a.sk, a.heads_k, a.dim); };
    auto dq = on_device(s, hq), dk = on_device(s, hk), dv = on_device(s, hv), dout = on_device(s, ho);
    strata::device_buffer<float> dlse(static_cast<std::size_t>(a.batch) * a.heads * a.sq);
    const A::tensor q = q_side(dq.data(), a.type), k = k_side(dk.data()), v = k_side(dv.data()), o = q_side(dout.data(), out_type);
    A::options opt;
    opt.causal = a.causal;
    opt.window_left = a.wl, opt.window_right = a.wr;
    opt.lse = dlse.data();
    opt.deterministic = a.deterministic;
    if (fp8) opt.q_descale = q_ds, opt.k_descale = k_ds, opt.v_descale = v_ds;
    std::printf("attention: batch %d heads %d heads_k %d seqlen_q %d seqlen_k %d dim %d %s%s%s%s\n", a.batch, a.heads, a.heads_k,
                a.sq, a.sk, a.dim, A::to_string(a.type), a.causal ? " causal" : "", a.sm90 ? ", Hopper kernel (sm90)" : "",
                a.backward ? (a.deterministic ? ", forward and backward (deterministic dQ)" : ", forward and backward") : "");
    auto t0 = std::chrono::steady_clock::now();
#ifdef STRATA_EXAMPLE_ATTENTION_TARGET
    using target = strata::arch::STRATA_EXAMPLE_ATTENTION_TARGET;
#else
    using target = A::default_target;
#endif
    if (a.sm90) {
#if STRATA_BACKEND_HIP
      throw strata::unsupported("--kernel sm90: the Hopper kernel needs an NVIDIA sm_90 GPU (or the host emulator)");
#else
#if STRATA_BACKEND_CUDA
      // Other GPUs run a trap in its place (no wgmma there): refuse before launching.
      if (const auto arch = strata::get_device_properties(0).arch; arch != "sm_90")
        throw strata::unsupported("--kernel sm90: the Hopper kernel needs an H100 / H200 (sm_90); this GPU is " + arch);
#endif
      const auto run = [&](auto e) {
        using E = decltype(e);
        if (a.dim == 64) A::run_sm90_forward<E, 64>(s, q, k, v, o, opt);
        else if (a.dim == 128) A::run_sm90_forward<E, 128>(s, q, k, v, o, opt);
        else A::run_sm90_forward<E, 256>(s, q, k, v, o, opt);
      };
      if (a.type == strata::dtype::bf16) run(strata::bf16{});
      else run(strata::f16{});
#endif
    } else {
      strata::attention<target>(s, q, k, v, o, opt);
    }
    s.synchronize();
    double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (a.bench) std::printf("time %.3f ms, %.3f TFLOP/s (not causal-adjusted)\n", sec * 1e3, flops / sec * 1e-12);

    // The backward: dQ, dK, dV (poisoned first: every element must be written) from dO.
    std::vector<unsigned char> hgq(a.backward ? hq.size() : 0, 0xFF), hgk(a.backward ? hk.size() : 0, 0xFF), hgv(hgk.size(), 0xFF);
    if (a.backward) {
      auto ddo = on_device(s, hdo), dgq = on_device(s, hgq), dgk = on_device(s, hgk), dgv = on_device(s, hgv);
      const A::tensor gout = q_side(ddo.data(), a.type), gq = q_side(dgq.data(), a.type), gk = k_side(dgk.data()),
                      gv = k_side(dgv.data());
      // The Hopper backward takes the workspace of the sm90a target's backward.
      const std::size_t ws_bytes = a.sm90 ? strata::attention_backward_workspace_size<strata::arch::sm90a>(q, k, v, opt)
                                          : strata::attention_backward_workspace_size<target>(q, k, v, opt);
      strata::device_buffer<unsigned char> ws(std::max<std::size_t>(ws_bytes, 1));
      t0 = std::chrono::steady_clock::now();
      if (a.sm90) {
#if !STRATA_BACKEND_HIP  // refused above, with the forward
        const auto run = [&](auto e) {
          using E = decltype(e);
          if (a.dim == 64) A::run_sm90_backward<E, 64>(s, q, k, v, o, gout, gq, gk, gv, opt, {ws.data(), ws_bytes});
          else A::run_sm90_backward<E, 128>(s, q, k, v, o, gout, gq, gk, gv, opt, {ws.data(), ws_bytes});
        };
        if (a.type == strata::dtype::bf16) run(strata::bf16{});
        else run(strata::f16{});
#endif
      } else {
        strata::attention_backward<target>(s, q, k, v, o, gout, gq, gk, gv, opt, {ws.data(), ws_bytes});
      }
      s.synchronize();
      sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (a.bench) std::printf("backward time %.3f ms, %.3f TFLOP/s (2.5x the forward's FLOP, not causal-adjusted)\n", sec * 1e3,
                               2.5 * flops / sec * 1e-12);
      strata::copy_to_host(s, hgq.data(), dgq.data(), hgq.size());
      strata::copy_to_host(s, hgk.data(), dgk.data(), hgk.size());
      strata::copy_to_host(s, hgv.data(), dgv.data(), hgv.size());
    }
    if (!a.check) return 0;
    strata::copy_to_host(s, ho.data(), dout.data(), ho.size());
    s.synchronize();
    A::reference::problem rp;
    rp.heads = a.heads, rp.heads_k = a.heads_k, rp.d = rp.dv = a.dim, rp.causal = a.causal;
    rp.scale = static_cast<float>(1.0 / std::sqrt(static_cast<float>(a.dim)));
    rp.window_left = a.wl, rp.window_right = a.wr;
    // fp32 / fp16 / bf16: P is rounded to the input type before P V, so the error follows its epsilon.
    // e4m3: P is rounded to e4m3 (relative error <= 2^-4 while P >= 2^-6, which holds here: the scores
    // of these inputs stay within a few units of each other), so |error| <= 2^-4 * max|V| (= 1), plus
    // bf16's rounding of O (2^-9).
    const double tol = a.type == strata::dtype::fp32 ? 2e-5 : a.type == strata::dtype::bf16 ? 2.5e-2 : fp8 ? 6.5e-2 : 4e-3;
    const double grad_tol = a.type == strata::dtype::fp32 ? 2e-4 : a.type == strata::dtype::bf16 ? 6e-2 : 1.5e-2;
    long long bad = 0;
    double worst = 0;
    error_of grad[3];  // dQ, dK, dV over the whole batch
    for (int b = 0; b < a.batch; ++b) {
      A::reference::sequence rs;
      rs.sq = a.sq, rs.sk = a.sk;
      const std::size_t q0 = static_cast<std::size_t>(b) * a.sq * a.heads * a.dim, k0 = static_cast<std::size_t>(b) * a.sk * a.heads_k * a.dim;
      const std::size_t q_len = static_cast<std::size_t>(a.sq) * a.heads * a.dim, k_len = static_cast<std::size_t>(a.sk) * a.heads_k * a.dim;
      // The reference sees the stored values times their descale factors (1 unless fp8), in double.
      for (std::size_t i = 0; i < q_len; ++i) rs.q.push_back(static_cast<double>(to_float(hq.data(), a.type, q0 + i)) * q_ds);
      for (std::size_t i = 0; i < k_len; ++i) {
        rs.k.push_back(static_cast<double>(to_float(hk.data(), a.type, k0 + i)) * k_ds);
        rs.v.push_back(static_cast<double>(to_float(hv.data(), a.type, k0 + i)) * v_ds);
      }
      const auto ref = A::reference::forward(rp, rs, b);
      for (std::size_t i = 0; i < ref.o.size(); ++i) {
        const double x = to_float(ho.data(), out_type, q0 + i);
        const double err = std::fabs(x - ref.o[i]);
        if (!(err <= tol)) ++bad;  // NaN counts as bad
        else worst = std::max(worst, err);
      }
      if (a.backward) {
        std::vector<double> rdo(q_len);
        for (std::size_t i = 0; i < q_len; ++i) rdo[i] = to_float(hdo.data(), a.type, q0 + i);
        const auto gr = A::reference::backward(rp, rs, b, rdo);
        for (std::size_t i = 0; i < q_len; ++i) grad[0].add(to_float(hgq.data(), a.type, q0 + i), gr.dq[i]);
        for (std::size_t i = 0; i < k_len; ++i) {
          grad[1].add(to_float(hgk.data(), a.type, k0 + i), gr.dk[i]);
          grad[2].add(to_float(hgv.data(), a.type, k0 + i), gr.dv[i]);
        }
      }
    }
    std::printf("max abs error %.3g (tolerance %.3g), %lld elements outside\n", worst, tol, bad);
    bool ok = bad == 0;
    for (int w = 0; a.backward && w < 3; ++w) {
      const double bound = grad_tol * std::max(1.0, grad[w].mag);
      const bool inside = grad[w].err <= bound;
      std::printf("d%c: max abs error %.3g, max |reference| %.3g (tolerance %.3g)%s\n", "QKV"[w], grad[w].err, grad[w].mag, bound,
                  inside ? "" : " OUTSIDE");
      ok = ok && inside;
    }
    std::printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
  } catch (const strata::error& e) {
    std::fprintf(stderr, "attention: %s\n", e.what());
    if (a.check) std::printf("FAIL\n");
    return 1;
  }
}
