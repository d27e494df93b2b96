// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// benchmark/attention_bench.cpp -- attention forward, backward and decode in TFLOP/s on a CUDA GPU
// (CUDA builds only: timed with CUDA events). FlashAttention's FLOP convention:
//   forward  4 * B * H * SQ * SK * D   (halved with --causal when SQ == SK)
//   backward 2.5 x the forward (FlashAttention-2 benchmark_flash_attention.py)
//   decode   4 * B * H * SQ * SK * D   with SQ the new tokens (1..16) against SK cached keys
// torch_attention.py beside this file runs PyTorch's scaled_dot_product_attention (flash and cuDNN
// backends) on the same shapes and prints the same columns.
//
//   strata_bench_attention [--batch B] [--heads H] [--heads-k HK] [--seqlen S] [--dim D]
//                          [--dtype fp16|bf16|e4m3] [--causal] [--decode-seqlen-k SK] [--reps N]
//                          [--kernel entry|sm90]
//
// --kernel sm90: also the Hopper kernels (ops/attention/sm90_forward.hpp, sm90_backward.hpp: TMA,
// wgmma, warp-specialized; fp16 / bf16; a build for sm_90a on an H100 / H200): the forward at --dim
// 64, 128 or 256 ("fwd-sm90"), the backward at 64 or 128 ("bwd-sm90"). Each is first compared with
// the mma.sync entry on the same inputs ("check ... PASS" or "FAIL"); the "forward", "backward" and
// decode lines are the entry's.
//
// e4m3: the fp8 forward on the sm90a target (mma.sync m16n8k32; a build for sm_90a), O in bf16; the
// backward and decode have no fp8 path and report "skipped". --dim takes 64 and 128 for every pass,
// and 512 (fp16 / bf16) for the forward only.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <strata/attention.hpp>
#include <strata/ops/attention/sm90_backward.hpp>
#include <strata/ops/attention/sm90_forward.hpp>

#if !STRATA_BACKEND_CUDA
int main() {
  std::puts("strata_bench_attention: build with the CUDA backend (nvcc) to measure; nothing to do here");
  return 0;
}
#else
#include <cuda_runtime.h>

namespace A = strata::attn;

namespace {

struct args {
  int batch = 4, heads = 16, heads_k = 16, seqlen = 4096, dim = 128, decode_sk = 8192, reps = 10;
  bool causal = false;
  bool sm90 = false;  // --kernel sm90
  strata::dtype type = strata::dtype::bf16;
};

args parse(int argc, char** argv) {
  args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", k.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (k == "--batch") a.batch = std::atoi(next());
    else if (k == "--heads") a.heads = std::atoi(next());
    else if (k == "--heads-k") a.heads_k = std::atoi(next());
    else if (k == "--seqlen") a.seqlen = std::atoi(next());
    else if (k == "--dim") a.dim = std::atoi(next());
    else if (k == "--decode-seqlen-k") a.decode_sk = std::atoi(next());
    else if (k == "--reps") a.reps = std::atoi(next());
    else if (k == "--causal") a.causal = true;
    else if (k == "--kernel") {
      const std::string v = next();
      if (v != "entry" && v != "sm90") {
        std::fprintf(stderr, "--kernel takes entry or sm90, not %s\n", v.c_str());
        std::exit(2);
      }
      a.sm90 = v == "sm90";
    }
    else if (k == "--dtype") {
      std::string why;
      const auto t = strata::try_parse_dtype(next(), {strata::dtype::fp16, strata::dtype::bf16, strata::dtype::e4m3}, &why);
      if (!t) {
        std::fprintf(stderr, "--dtype %s\n", why.c_str());
        std::exit(2);
      }
      a.type = *t;  // attention takes strata::dtype itself
    }
    else {
      std::fprintf(stderr, "unknown argument %s\n", k.c_str());
      std::exit(2);
    }
  }
  return a;
}

/// Seconds per call of fn(), averaged over `reps` calls after one warm-up, from device events.
template <class F>
double time_it(strata::stream& s, int reps, F&& fn) {
  fn();
  s.synchronize();
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a, s.native_handle());
  for (int r = 0; r < reps; ++r) fn();
  cudaEventRecord(b, s.native_handle());
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms / 1e3 / reps;
}

strata::device_buffer<unsigned short> random_buffer(strata::stream& s, std::size_t n, std::mt19937& g) {
  // Small random bf16 / fp16 bit patterns (exponent kept near 1): values in about [-1, 1]. Read as
  // e4m3 bytes they are finite (the low byte's two low bits are 0, so never the NaN 0x7F / 0xFF).
  std::vector<unsigned short> h(n);
  std::uniform_int_distribution<int> u(0, 127);
  for (auto& x : h) x = static_cast<unsigned short>((u(g) & 1 ? 0x8000 : 0) | 0x3800 | (u(g) << 2));
  strata::device_buffer<unsigned short> b(n);
  strata::copy_to_device(s, b.data(), h.data(), n);
  return b;
}

void report(const char* what, const args& a, int sq, int sk, double flops, double sec) {
  std::printf("%-9s B=%d H=%d HK=%d SQ=%d SK=%d D=%d %s%s  %8.3f ms  %7.1f TFLOP/s\n", what, a.batch, a.heads, a.heads_k, sq,
              sk, a.dim, A::to_string(a.type), a.causal ? " causal" : "", sec * 1e3, flops / sec / 1e12);
}

}  // namespace

int main(int argc, char** argv) {
  const args a = parse(argc, argv);
  strata::stream s;
  std::mt19937 g(1);
  const int B = a.batch, H = a.heads, HK = a.heads_k, S = a.seqlen, D = a.dim;
  const std::size_t nq = static_cast<std::size_t>(B) * S * H * D, nk = static_cast<std::size_t>(B) * S * HK * D;
  auto q = random_buffer(s, nq, g), k = random_buffer(s, nk, g), v = random_buffer(s, nk, g), dout = random_buffer(s, nq, g);
  strata::device_buffer<unsigned short> o(nq), dq(nq), dk(nk), dv(nk);
  strata::device_buffer<float> lse(static_cast<std::size_t>(B) * H * S);
  auto T = [&](void* p, int h, int sl) { return A::bshd(p, a.type, B, sl, h, D); };
  const bool fp8 = a.type == strata::dtype::e4m3;
  auto TO = [&](void* p, int h, int sl) { return A::bshd(p, fp8 ? strata::dtype::bf16 : a.type, B, sl, h, D); };  // fp8 writes bf16
  A::options opt;
  opt.causal = a.causal;
  opt.lse = lse.data();
  const double fwd_flops = 4.0 * B * H * static_cast<double>(S) * S * D * (a.causal ? 0.5 : 1.0);

  // Forward and backward through the typed entries (one kernel set per dtype and head dim: fast builds).
  // max |x - y| over n 16-bit elements (NaN counts as the worst), and max |y|.
  struct diff {
    double worst = 0, mag = 0;
  };
  const auto difference = [&](strata::device_buffer<unsigned short>& x_, strata::device_buffer<unsigned short>& y_, std::size_t n) {
    std::vector<unsigned short> x(n), y(n);
    strata::copy_to_host(s, x.data(), x_.data(), n);
    strata::copy_to_host(s, y.data(), y_.data(), n);
    s.synchronize();
    const auto value = [&](unsigned short bits) {
      return a.type == strata::dtype::bf16 ? static_cast<double>(static_cast<float>(strata::bf16::from_bits(bits)))
                                           : static_cast<double>(static_cast<float>(strata::f16::from_bits(bits)));
    };
    diff r;
    for (std::size_t i = 0; i < n; ++i) {
      const double d = std::abs(value(x[i]) - value(y[i]));
      r.worst = d > r.worst || d != d ? d : r.worst;
      r.mag = std::max(r.mag, std::abs(value(y[i])));
    }
    return r;
  };
  auto typed = [&](auto fn) {
    const bool bf = a.type == strata::dtype::bf16;
    if (D == 64) bf ? fn(strata::bf16{}, std::integral_constant<int, 64>{}) : fn(strata::f16{}, std::integral_constant<int, 64>{});
    else if (D == 128) bf ? fn(strata::bf16{}, std::integral_constant<int, 128>{}) : fn(strata::f16{}, std::integral_constant<int, 128>{});
    else throw strata::unsupported("strata_bench_attention: --dim 64 or 128");
  };
  if (a.sm90) {
    try {
      if (fp8) throw strata::unsupported("the Hopper forward takes fp16 and bf16");
      const auto sm90 = [&](strata::device_buffer<unsigned short>& out) {
        const auto run = [&](auto e) {
          using E = decltype(e);
          const auto tq = T(q.data(), H, S), tk = T(k.data(), HK, S), tv = T(v.data(), HK, S), to = T(out.data(), H, S);
          if (D == 64) A::run_sm90_forward<E, 64>(s, tq, tk, tv, to, opt);
          else if (D == 128) A::run_sm90_forward<E, 128>(s, tq, tk, tv, to, opt);
          else if (D == 256) A::run_sm90_forward<E, 256>(s, tq, tk, tv, to, opt);
          else throw strata::unsupported("strata_bench_attention: --kernel sm90 takes --dim 64, 128 or 256");
        };
        if (a.type == strata::dtype::bf16) run(strata::bf16{});
        else run(strata::f16{});
      };
      // Check against the mma.sync entry on the same inputs (D 64 / 128, which the typed entry here takes).
      if (D == 64 || D == 128) {
        strata::device_buffer<unsigned short> o_ref(nq);
        typed([&](auto e, auto d) {
          A::run<decltype(e), decltype(d)::value, decltype(d)::value>(s, T(q.data(), H, S), T(k.data(), HK, S), T(v.data(), HK, S),
                                                                      T(o_ref.data(), H, S), opt);
        });
        sm90(o);
        const double worst = difference(o, o_ref, nq).worst;
        const bool ok = worst <= (a.type == strata::dtype::bf16 ? 2.5e-2 : 4e-3);
        std::printf("check     Hopper forward against the mma.sync entry: max |difference| %.3g  %s\n", worst, ok ? "PASS" : "FAIL");
      }
      const double t = time_it(s, a.reps, [&] { sm90(o); });
      report("fwd-sm90", a, S, S, fwd_flops, t);
    } catch (const std::exception& e) {
      std::printf("fwd-sm90  skipped: %s\n", e.what());
    }
  }
  try {
    const double t = time_it(s, a.reps, [&] {
      if (fp8) {
        if (D == 64) A::run<strata::f8_e4m3, 64, 64, strata::arch::sm90a>(s, T(q.data(), H, S), T(k.data(), HK, S), T(v.data(), HK, S), TO(o.data(), H, S), opt);
        else if (D == 128) A::run<strata::f8_e4m3, 128, 128, strata::arch::sm90a>(s, T(q.data(), H, S), T(k.data(), HK, S), T(v.data(), HK, S), TO(o.data(), H, S), opt);
        else throw strata::unsupported("strata_bench_attention: --dtype e4m3 takes --dim 64 or 128");
        return;
      }
      if (D == 512) {  // forward only (the backward and decode entries here take 64 and 128)
        if (a.type == strata::dtype::bf16) A::run<strata::bf16, 512, 512>(s, T(q.data(), H, S), T(k.data(), HK, S), T(v.data(), HK, S), T(o.data(), H, S), opt);
        else A::run<strata::f16, 512, 512>(s, T(q.data(), H, S), T(k.data(), HK, S), T(v.data(), HK, S), T(o.data(), H, S), opt);
        return;
      }
      typed([&](auto e, auto d) {
        A::run<decltype(e), decltype(d)::value, decltype(d)::value>(s, T(q.data(), H, S), T(k.data(), HK, S), T(v.data(), HK, S),
                                                                    T(o.data(), H, S), opt);
      });
    });
    report("forward", a, S, S, fwd_flops, t);
  } catch (const std::exception& e) {
    std::printf("forward   skipped: %s\n", e.what());
  }
  try {
    if (fp8) throw strata::unsupported("fp8 attention is forward only");
    const std::size_t bytes = strata::attention_backward_workspace_size(T(q.data(), H, S), T(k.data(), HK, S), T(v.data(), HK, S), opt);
    strata::device_buffer<unsigned char> ws(bytes ? bytes : 1);
    const double t = time_it(s, a.reps, [&] {
      typed([&](auto e, auto d) {
        A::run_backward<decltype(e), decltype(d)::value, decltype(d)::value>(
            s, T(q.data(), H, S), T(k.data(), HK, S), T(v.data(), HK, S), T(o.data(), H, S), T(dout.data(), H, S),
            T(dq.data(), H, S), T(dk.data(), HK, S), T(dv.data(), HK, S), opt, {ws.data(), bytes});
      });
    });
    report("backward", a, S, S, 2.5 * fwd_flops, t);
    if (a.sm90) {
      // The Hopper backward on the same O, LSE and dO (its workspace is the sm90a target's), checked
      // against the entry's gradients above: the backward tests' bound, tol x max(1, max |reference|).
      try {
        const std::size_t bytes90 = strata::attention_backward_workspace_size<strata::arch::sm90a>(T(q.data(), H, S), T(k.data(), HK, S),
                                                                                                  T(v.data(), HK, S), opt);
        strata::device_buffer<unsigned char> ws90(bytes90 ? bytes90 : 1);
        strata::device_buffer<unsigned short> dq90(nq), dk90(nk), dv90(nk);
        const auto sm90 = [&] {
          typed([&](auto e, auto d) {
            A::run_sm90_backward<decltype(e), decltype(d)::value>(s, T(q.data(), H, S), T(k.data(), HK, S), T(v.data(), HK, S),
                                                                  T(o.data(), H, S), T(dout.data(), H, S), T(dq90.data(), H, S),
                                                                  T(dk90.data(), HK, S), T(dv90.data(), HK, S), opt, {ws90.data(), bytes90});
          });
        };
        sm90();
        const double tol = a.type == strata::dtype::bf16 ? 6e-2 : 1.5e-2;
        const diff gq = difference(dq90, dq, nq), gk = difference(dk90, dk, nk), gv = difference(dv90, dv, nk);
        const bool ok = gq.worst <= tol * std::max(1.0, gq.mag) && gk.worst <= tol * std::max(1.0, gk.mag) &&
                        gv.worst <= tol * std::max(1.0, gv.mag);
        std::printf("check     Hopper backward against the mma.sync entry: max |difference| dQ %.3g dK %.3g dV %.3g  %s\n", gq.worst,
                    gk.worst, gv.worst, ok ? "PASS" : "FAIL");
        const double t90 = time_it(s, a.reps, sm90);
        report("bwd-sm90", a, S, S, 2.5 * fwd_flops, t90);
      } catch (const std::exception& e) {
        std::printf("bwd-sm90  skipped: %s\n", e.what());
      }
    }
  } catch (const std::exception& e) {
    std::printf("backward  skipped: %s\n", e.what());
  }
  // Decode: 1 new token against decode_sk cached keys (dense cache, split-KV chosen automatically).
  try {
    if (fp8) throw strata::unsupported("fp8 attention is forward only");
    const int SK = a.decode_sk, SQ = 1;
    auto kc = random_buffer(s, static_cast<std::size_t>(B) * SK * HK * D, g);
    auto vc = random_buffer(s, static_cast<std::size_t>(B) * SK * HK * D, g);
    auto qd = random_buffer(s, static_cast<std::size_t>(B) * SQ * H * D, g);
    strata::device_buffer<unsigned short> od(static_cast<std::size_t>(B) * SQ * H * D);
    std::vector<int> lens(B, SK);
    strata::device_buffer<int> dlens(B);
    strata::copy_to_device(s, dlens.data(), lens.data(), lens.size());
    A::decode_args dec;
    dec.cache_seqlens = dlens.data();
    A::options dopt;
    const A::tensor tq = A::bshd(qd.data(), a.type, B, SQ, H, D);
    const std::size_t bytes = strata::attention_decode_workspace_size(tq, D, 0, SK);
    strata::device_buffer<unsigned char> ws(bytes ? bytes : 1);
    const double t = time_it(s, a.reps, [&] {
      strata::attention_decode(s, tq, A::bshd(kc.data(), a.type, B, SK, HK, D), A::bshd(vc.data(), a.type, B, SK, HK, D),
                               A::bshd(od.data(), a.type, B, SQ, H, D), dec, dopt, {ws.data(), bytes});
    });
    report("decode", a, SQ, SK, 4.0 * B * H * static_cast<double>(SQ) * SK * D, t);
  } catch (const std::exception& e) {
    std::printf("decode    skipped: %s\n", e.what());
  }
  return 0;
}
#endif
