// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// benchmark/gemm_bench.cpp -- strata::gemm against cuBLASLt in TFLOP/s, same shapes, same run, on a
// CUDA GPU (CUDA builds only: timed with CUDA events).
//
//   strata_bench_gemm [--dtype bf16|f16] [--set square|llm|moe|all] [--m M --n N --k K] [--reps N]
//                     [--kernel entry|sm90|sm90c2]
//
// --kernel sm90: time the Hopper kernel (ops/gemm/sm90_kernel.hpp: TMA, wgmma, warp-specialized,
// 128 x 256 tiles, a persistent grid of one block per SM) directly instead of strata::gemm, which does
// not pick it yet; an sm_90 GPU and a build for sm_90a only. --kernel sm90c2: the same on 2 x 1
// clusters, B multicast into both blocks. The grouped MoE case stays on strata::gemm's grouped entry.
//
// Layout: the one LLM layers use, D[M, N] = A[M, K] * W[N, K]^T (A row-major, B column-major, D
// row-major; "TN" in cuBLAS's column-major terms), fp32 accumulation, output in the input type.
// Shapes (issue 4): squares 1024..16384; LLM shapes M in {1, 16, 128, 1024, 4096, 16384} against
// (N, K) from {4096, 11008, 14336, 28672}; grouped MoE (8 experts of uneven M, one strata launch
// against one cuBLASLt call per expert).
//
// Every shape is also checked: 2048 sampled elements of each library's D against a double-precision
// dot product of the same inputs (max relative error, |ref| floored at sqrt(K) / 4 so near-zero sums
// do not dominate). Timing: median of --reps calls, each between two events, after two warm-ups;
// inputs are random (never zeros) and the same for both libraries.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <strata/gemm.hpp>
#include <strata/ops/gemm/entry_epilogue.hpp>
#include <strata/ops/gemm/sm90_kernel.hpp>

#if !STRATA_BACKEND_CUDA
int main() {
  std::puts("strata_bench_gemm: build with the CUDA backend (nvcc) to measure; nothing to do here");
  return 0;
}
#else
#include <cublasLt.h>
#include <cuda_runtime.h>

#include "cuda_timing.hpp"

namespace sg = strata::ops::gemm;

namespace {

using strata_bench::cuda_ok;
using strata_bench::die;
using strata_bench::median_seconds;

void lt_ok(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS) die(what, ("cuBLAS status " + std::to_string(int(st))).c_str());
}

struct shape {
  int m, n, k;
  const char* set;
};

// One pool of random 16-bit values per operand; every A (and every B) is a prefix of its pool, so a
// shape needs no new host data and the host can recompute any element for the reference.
struct pool {
  std::vector<std::uint16_t> host;
  strata::device_buffer<std::uint16_t> dev;
};

std::uint16_t to_bits(float f, bool bf) { return bf ? strata::bf16(f).bits() : strata::f16(f).bits(); }
double from_bits(std::uint16_t b, bool bf) {
  return bf ? double(float(strata::bf16::from_bits(b))) : double(float(strata::f16::from_bits(b)));
}

pool make_pool(strata::stream& s, std::size_t n, std::uint64_t seed, bool bf) {
  pool p{std::vector<std::uint16_t>(n), strata::device_buffer<std::uint16_t>(std::max<std::size_t>(n, 1))};
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& v : p.host) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v = to_bits(float(double(x >> 11) * 0x1.0p-53 * 2.0 - 1.0), bf);  // uniform in [-1, 1)
  }
  strata::copy_to_device(s, p.dev.data(), p.host.data(), n);
  s.synchronize();
  return p;
}

struct cublas_lt {
  cublasLtHandle_t h{};
  void* work = nullptr;
  std::size_t work_bytes = 64u << 20;
  cublas_lt() {
    lt_ok(cublasLtCreate(&h), "cublasLtCreate");
    cuda_ok(cudaMalloc(&work, work_bytes), "cudaMalloc(cuBLASLt workspace)");
  }
  ~cublas_lt() {
    cudaFree(work);
    cublasLtDestroy(h);
  }
  // D (M x N row-major) = A (M x K row-major) * B (K x N column-major), i.e. in column-major terms
  // D^T (N x M) = B^T * A with B stored K x N (ld K) transposed and A stored K x M (ld K).
  struct plan {
    cublasLtMatmulDesc_t op{};
    cublasLtMatrixLayout_t la{}, lb{}, ld{};
    cublasLtMatmulAlgo_t algo{};
    bool ok = false;
  };
  plan make(int m, int n, int k, cudaDataType_t t) {
    plan p;
    lt_ok(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t tr = CUBLAS_OP_T, nt = CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &tr, sizeof tr);
    cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &nt, sizeof nt);
    lt_ok(cublasLtMatrixLayoutCreate(&p.la, t, k, n, k), "layout W");
    lt_ok(cublasLtMatrixLayoutCreate(&p.lb, t, k, m, k), "layout A");
    lt_ok(cublasLtMatrixLayoutCreate(&p.ld, t, n, m, n), "layout D");
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &work_bytes, sizeof work_bytes);
    cublasLtMatmulHeuristicResult_t r{};
    int found = 0;
    if (cublasLtMatmulAlgoGetHeuristic(h, p.op, p.la, p.lb, p.ld, p.ld, pref, 1, &r, &found) == CUBLAS_STATUS_SUCCESS && found > 0) {
      p.algo = r.algo;
      p.ok = true;
    }
    cublasLtMatmulPreferenceDestroy(pref);
    return p;
  }
  void run(const plan& p, cudaStream_t st, const void* w, const void* a, void* d) {
    const float one = 1.f, zero = 0.f;
    lt_ok(cublasLtMatmul(h, p.op, &one, w, p.la, a, p.lb, &zero, d, p.ld, d, p.ld, &p.algo, work, work_bytes, st), "cublasLtMatmul");
  }
  static void destroy(plan& p) {
    cublasLtMatrixLayoutDestroy(p.la);
    cublasLtMatrixLayoutDestroy(p.lb);
    cublasLtMatrixLayoutDestroy(p.ld);
    cublasLtMatmulDescDestroy(p.op);
  }
};

/// Max relative error of `got` (M x N row-major, ldd) on sampled elements against a double dot product.
double sampled_error(const pool& a, const pool& b, const std::vector<std::uint16_t>& got, int m, int n, int k, long long ldd,
                     std::size_t a_off, std::size_t b_off, bool bf) {
  std::uint64_t x = 0x2545F4914F6CDD1Dull ^ (std::uint64_t(m) << 32 | unsigned(n));
  double worst = 0;
  const double floor = std::sqrt(double(k)) / 4 + 1e-30;
  for (int t = 0; t < 2048; ++t) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const int i = int(x % std::uint64_t(m)), j = int((x >> 32) % std::uint64_t(n));
    double ref = 0;
    for (int p = 0; p < k; ++p)
      ref += from_bits(a.host[a_off + std::size_t(i) * k + p], bf) * from_bits(b.host[b_off + std::size_t(j) * k + p], bf);
    const double v = from_bits(got[std::size_t(i) * ldd + j], bf);
    const double err = std::abs(v - ref) / std::max(std::abs(ref), floor);
    worst = std::isfinite(err) ? std::max(worst, err) : INFINITY;
  }
  return worst;
}

struct args {
  std::string set = "all";
  bool bf = true;
  int sm90 = 0;  // --kernel sm90 (1) or sm90c2 (2: 2 x 1 clusters)
  int reps = 20, m = 0, n = 0, k = 0;
};

args parse(int argc, char** argv) {
  args a;
  for (int i = 1; i < argc; ++i) {
    const std::string f = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die("usage", (f + " needs a value").c_str());
      return argv[++i];
    };
    auto num = [&]() {
      const std::string v = next();
      char* end = nullptr;
      const long x = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || x < 1 || x > (1L << 20)) die("usage", (f + " must be an integer in 1..1048576, got '" + v + "'").c_str());
      return int(x);
    };
    if (f == "--set") a.set = next();
    else if (f == "--dtype") {
      std::string why;
      const auto t = strata::try_parse_dtype(next(), {strata::dtype::bf16, strata::dtype::fp16}, &why);
      if (!t) die("usage", ("--dtype " + why).c_str());
      a.bf = *t == strata::dtype::bf16;
    } else if (f == "--reps") a.reps = num();
    else if (f == "--m") a.m = num();
    else if (f == "--n") a.n = num();
    else if (f == "--k") a.k = num();
    else if (f == "--kernel") {
      const std::string v = next();
      if (v != "entry" && v != "sm90" && v != "sm90c2")
        die("usage", ("--kernel must be entry, sm90 or sm90c2, got '" + v + "'").c_str());
      a.sm90 = v == "sm90" ? 1 : v == "sm90c2" ? 2 : 0;
    } else die("usage", ("unknown argument " + f).c_str());
  }
  if (a.set != "all" && a.set != "square" && a.set != "llm" && a.set != "moe")
    die("usage", ("--set must be square, llm, moe or all, got '" + a.set + "'").c_str());
  if ((a.m || a.n || a.k) && !(a.m && a.n && a.k)) die("usage", "--m, --n and --k go together");
  return a;
}

std::vector<shape> shapes_of(const args& a) {
  std::vector<shape> v;
  if (a.m) return {{a.m, a.n, a.k, "custom"}};
  if (a.set == "all" || a.set == "square")
    for (int s : {1024, 2048, 4096, 8192, 16384}) v.push_back({s, s, s, "square"});
  if (a.set == "all" || a.set == "llm")
    for (auto [n, k] : {std::pair{4096, 4096}, {11008, 4096}, {4096, 11008}, {14336, 4096}, {4096, 14336}, {28672, 4096}})
      for (int m : {1, 16, 128, 1024, 4096, 16384}) v.push_back({m, n, k, "llm"});
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  strata_bench::program = "strata_bench_gemm";
  const args a = parse(argc, argv);
  const auto shapes = shapes_of(a);
  std::size_t max_a = 1, max_b = 1, max_d = 1;
  for (const auto& s : shapes) {
    max_a = std::max(max_a, std::size_t(s.m) * s.k);
    max_b = std::max(max_b, std::size_t(s.k) * s.n);
    max_d = std::max(max_d, std::size_t(s.m) * s.n);
  }
  // MoE: 8 experts, hidden 4096 -> 14336, uneven token counts (top-2 routing of 8192 tokens).
  const std::vector<int> moe_m = {3100, 1900, 2600, 1200, 2300, 1700, 2800, 788};
  const int moe_n = 14336, moe_k = 4096;
  const bool moe = a.set == "all" || a.set == "moe";
  if (moe) {
    std::size_t tokens = 0;
    for (int m : moe_m) tokens += m;
    max_a = std::max(max_a, tokens * moe_k);
    max_b = std::max(max_b, moe_m.size() * std::size_t(moe_k) * moe_n);
    max_d = std::max(max_d, tokens * moe_n);
  }
  const bool bf = a.bf;
  const auto dt = bf ? strata::dtype::bf16 : strata::dtype::fp16;
  const auto cdt = bf ? CUDA_R_16BF : CUDA_R_16F;
  strata::stream s;
  const cudaStream_t st = s.native_handle();
  cudaDeviceProp prop{};
  cuda_ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("device: %s, %d SMs; dtype %s; A row-major, B column-major, D row-major; median of %d calls; strata: %s\n",
              prop.name, prop.multiProcessorCount, bf ? "bf16" : "f16", a.reps,
              a.sm90 == 1 ? "gemm::sm90_kernel (TMA + wgmma, 128 x 256)"
              : a.sm90 == 2 ? "gemm::sm90_kernel on 2 x 1 clusters (TMA multicast of B)" : "strata::gemm");
  if (a.sm90 && prop.major != 9) die("usage", "--kernel sm90 needs an sm_90 GPU (H100, H200)");
  const pool pa = make_pool(s, max_a, 1, bf), pb = make_pool(s, max_b, 2, bf);
  std::fprintf(stderr, "inputs ready: %zu + %zu random values\n", max_a, max_b);
  strata::device_buffer<std::uint16_t> d_strata(max_d), d_cublas(max_d);
  cublas_lt lt;
  int failures = 0;
  std::printf("%-7s %6s %6s %6s | %9s %8s %9s | %9s %8s %9s | %6s\n", "set", "M", "N", "K", "strata ms", "TFLOP/s", "max err",
              "cuBLAS ms", "TFLOP/s", "max err", "ratio");
  for (const auto& sh : shapes) {
    const int m = sh.m, n = sh.n, k = sh.k;
    const sg::matrix A{pa.dev.data(), m, k, k, sg::layout::row_major, dt}, B{pb.dev.data(), k, n, k, sg::layout::col_major, dt},
        D{d_strata.data(), m, n, n, sg::layout::row_major, dt};
    sg::options o;
    // Split-K for the skinny shapes needs scratch; lend it when it is modest (it always is for M <= 128).
    const std::size_t wbytes = sg::workspace_size(D, o);
    strata::device_buffer<unsigned char> work(wbytes > 0 && wbytes <= (1u << 30) ? wbytes : 1);
    if (wbytes > 0 && wbytes <= (1u << 30)) o.work = {work.data(), wbytes};
    const double flops = 2.0 * m * n * k;
    const std::size_t nd = std::size_t(m) * n;
    std::vector<std::uint16_t> poison(nd, 0x7fc1);  // NaN in both formats: an unwritten element fails
    cuda_ok(cudaMemcpy(d_strata.data(), poison.data(), nd * 2, cudaMemcpyHostToDevice), "poison");
    cuda_ok(cudaMemcpy(d_cublas.data(), poison.data(), nd * 2, cudaMemcpyHostToDevice), "poison");
    double t_s = 0, e_s = INFINITY;
    try {
      if (a.sm90) {
        const auto run_sm90 = [&](auto tag, auto cluster) {
          using T = decltype(tag);
          using E = sg::detail::entry_epilogue<T>;
          using K = sg::sm90_kernel<T, 256, E, 4, sg::operand_orders::a_row_b_col, decltype(cluster)::value>;
          const auto p = K::make_params({m, n, k, 1}, {static_cast<const T*>(A.data), k, sg::layout::row_major},
                                        {static_cast<const T*>(B.data), k, sg::layout::col_major},
                                        {static_cast<T*>(const_cast<void*>(D.data)), n, sg::layout::row_major}, E::make_params({.alpha = 1.f}, {}, {}),
                                        prop.multiProcessorCount);  // a persistent grid, one block per SM
          return median_seconds(st, a.reps, [&] { strata::launch(s, K::launch_shape_of(p), K{}, p); });
        };
        using one = std::integral_constant<int, 1>;
        using two = std::integral_constant<int, 2>;
        if (a.sm90 == 1) t_s = bf ? run_sm90(strata::bf16{}, one{}) : run_sm90(strata::f16{}, one{});
        else t_s = bf ? run_sm90(strata::bf16{}, two{}) : run_sm90(strata::f16{}, two{});
      } else {
        t_s = median_seconds(st, a.reps, [&] { strata::gemm(s, A, B, D, D, o); });
      }
      std::vector<std::uint16_t> got(nd);
      cuda_ok(cudaMemcpy(got.data(), d_strata.data(), nd * 2, cudaMemcpyDeviceToHost), "copy D");
      e_s = sampled_error(pa, pb, got, m, n, k, n, 0, 0, bf);
    } catch (const std::exception& e) {
      std::printf("strata::gemm %dx%dx%d failed: %s\n", m, n, k, e.what());
    }
    auto plan = lt.make(m, n, k, cdt);
    double t_c = 0, e_c = INFINITY;
    if (plan.ok) {
      t_c = median_seconds(st, a.reps, [&] { lt.run(plan, st, pb.dev.data(), pa.dev.data(), d_cublas.data()); });
      std::vector<std::uint16_t> got(nd);
      cuda_ok(cudaMemcpy(got.data(), d_cublas.data(), nd * 2, cudaMemcpyDeviceToHost), "copy D");
      e_c = sampled_error(pa, pb, got, m, n, k, n, 0, 0, bf);
    }
    cublas_lt::destroy(plan);
    const double tol = (bf ? 0x1.0p-7 : 0x1.0p-10) * 4;  // output rounding plus fp32 accumulation
    const bool ok = e_s <= tol;
    failures += !ok;
    std::printf("%-7s %6d %6d %6d | %9.4f %8.1f %9.2e | %9.4f %8.1f %9.2e | %5.2f%s\n", sh.set, m, n, k, t_s * 1e3,
                t_s > 0 ? flops / t_s / 1e12 : 0.0, e_s, t_c * 1e3, t_c > 0 ? flops / t_c / 1e12 : 0.0, e_c,
                t_s > 0 && t_c > 0 ? t_c / t_s : 0.0, ok ? "" : "  WRONG");
    std::fflush(stdout);
  }
  if (moe) {
    // Grouped: each expert's tokens are consecutive rows of A; each expert has its own W (N x K).
    using E = sg::group_entry<strata::bf16, strata::bf16, strata::bf16>;
    using Ef = sg::group_entry<strata::f16, strata::f16, strata::f16>;
    std::size_t row = 0, tokens = 0;
    double flops = 0;
    for (int m : moe_m) tokens += m, flops += 2.0 * m * moe_n * moe_k;
    std::vector<std::uint16_t> poison(tokens * moe_n, 0x7fc1);
    cuda_ok(cudaMemcpy(d_strata.data(), poison.data(), poison.size() * 2, cudaMemcpyHostToDevice), "poison");
    auto build = [&](auto tag) {
      using G = decltype(tag);
      using T = std::remove_cvref_t<decltype(*G{}.a)>;
      std::vector<G> v;
      std::size_t r = 0;
      for (std::size_t e = 0; e < moe_m.size(); ++e) {
        G g{};
        g.m = moe_m[e], g.n = moe_n, g.k = moe_k;
        g.a = reinterpret_cast<const T*>(pa.dev.data()) + r * moe_k, g.lda = moe_k;
        g.b = reinterpret_cast<const T*>(pb.dev.data()) + e * std::size_t(moe_k) * moe_n, g.ldb = moe_k;
        g.d = reinterpret_cast<T*>(d_strata.data()) + r * moe_n, g.ldd = moe_n;
        v.push_back(g);
        r += moe_m[e];
      }
      return v;
    };
    std::fprintf(stderr, "moe: timing the grouped launch\n");
    double t_s = 0;
    const std::size_t wb = bf ? sg::grouped_workspace_size<strata::bf16, strata::bf16>(moe_m.size())
                              : sg::grouped_workspace_size<strata::f16, strata::f16>(moe_m.size());
    strata::device_buffer<unsigned char> work(wb);
    try {
      t_s = median_seconds(st, a.reps, [&] {
        if (bf) sg::run_grouped<strata::bf16, strata::bf16>(s, build(E{}), sg::layout::row_major, sg::layout::col_major, sg::layout::row_major, 1.f, 0.f, {work.data(), wb});
        else sg::run_grouped<strata::f16, strata::f16>(s, build(Ef{}), sg::layout::row_major, sg::layout::col_major, sg::layout::row_major, 1.f, 0.f, {work.data(), wb});
      });
    } catch (const std::exception& e) {
      std::printf("grouped strata::gemm failed: %s\n", e.what());
    }
    std::fprintf(stderr, "moe: grouped launch timed (%.3f ms); checking\n", t_s * 1e3);
    std::vector<std::uint16_t> got(tokens * moe_n);
    cuda_ok(cudaMemcpy(got.data(), d_strata.data(), got.size() * 2, cudaMemcpyDeviceToHost), "copy D");
    double e_s = 0;
    for (std::size_t e = 0; e < moe_m.size(); ++e) {
      std::vector<std::uint16_t> part(got.begin() + row * moe_n, got.begin() + (row + moe_m[e]) * moe_n);
      e_s = std::max(e_s, sampled_error(pa, pb, part, moe_m[e], moe_n, moe_k, moe_n, row * moe_k, e * std::size_t(moe_k) * moe_n, bf));
      row += moe_m[e];
    }
    std::fprintf(stderr, "moe: timing cuBLASLt, one call per expert\n");
    std::vector<cublas_lt::plan> plans;
    for (int m : moe_m) plans.push_back(lt.make(m, moe_n, moe_k, cdt));
    const double t_c = median_seconds(st, a.reps, [&] {
      std::size_t r = 0;
      for (std::size_t e = 0; e < moe_m.size(); ++e) {
        if (plans[e].ok)
          lt.run(plans[e], st, pb.dev.data() + e * std::size_t(moe_k) * moe_n, pa.dev.data() + r * moe_k, d_cublas.data() + r * moe_n);
        r += moe_m[e];
      }
    });
    for (auto& p : plans) cublas_lt::destroy(p);
    const double tol = (bf ? 0x1.0p-7 : 0x1.0p-10) * 4;
    failures += !(e_s <= tol);
    std::printf("%-7s %6zu %6d %6d | %9.4f %8.1f %9.2e | %9.4f %8.1f %9s | %5.2f%s\n", "moe x8", tokens, moe_n, moe_k, t_s * 1e3,
                t_s > 0 ? flops / t_s / 1e12 : 0.0, e_s, t_c * 1e3, flops / t_c / 1e12, "(loop)", t_s > 0 ? t_c / t_s : 0.0,
                e_s <= tol ? "" : "  WRONG");
  }
  std::printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
#endif
