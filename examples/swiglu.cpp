// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// examples/swiglu.cpp -- a NEW fused operator from Strata's parts, built step by step in
// docs/tutorial-fused-operator.md: the SwiGLU MLP block of LLaMA-style transformers,
//
//   h = silu(x W1) * (x W3)        x (tokens x d_model), W1 and W3 (d_model x d_ff)
//   y = h W2                       W2 (d_ff x d_model), y (tokens x d_model)
//
// in bf16 with fp32 accumulation, as three launches of the gemm::kernel template: u = x W3 (stored
// fp32), then x W1 whose EPILOGUE applies silu and multiplies by u (a custom epilogue op, no separate
// element-wise kernel, h written once in bf16), then y = h W2. The regions between `// [name]` and
// `// [/name]` markers are quoted verbatim by the tutorial: edit them here and re-paste them there.
//
//   strata_example_swiglu [--tokens T] [--d-model D] [--d-ff F] [--check]
//                         [--emulate host|sm80|gfx90a|gfx942]     (host backend only)
//
// --check compares y with a double-precision reference and prints PASS or FAIL as the last line.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include <strata/gemm.hpp>

#include "command_line.hpp"

namespace swiglu {

using strata::bf16;
namespace epilogue = strata::epilogue;
namespace sg = strata::ops::gemm;

// [gate-op]
// Step 1: the custom epilogue op. An op is a stateless class with a trivially copyable `params` and a
// call operator taking the value so far and the element's (row, col) in the output (epilogue/op.hpp).
// This one multiplies by the element of another matrix at the same coordinates: the "up" projection
// u = x W3, which the first GEMM wrote.
struct gate_by {
  struct params {
    epilogue::matrix_ref<float> up;  // u(row, col) = up.data[row * up.row_stride + col * up.col_stride]
  };
  template <epilogue::value V>
  STRATA_HOST_DEVICE float operator()(V v, int row, int col, const params& p) const {
    return static_cast<float>(v) * p.up(row, col);
  }
};
// [/gate-op]

// [chains]
// Step 2: the three epilogues, each one type. The op runs left to right on every accumulator element;
// the last op of a chain is the conversion to the stored type.
using up_epilogue = epilogue::chain<epilogue::convert_to<float>>;                          // u = x W3
using gate_epilogue = epilogue::chain<epilogue::silu, gate_by, epilogue::convert_to<bf16>>;  // h = silu(x W1) * u
using down_epilogue = epilogue::chain<epilogue::convert_to<float>>;                        // y = h W2
// [/chains]

// [configs]
// Step 3: one gemm::kernel per epilogue, from the shipped configuration family of the target: the
// template takes the target, the input type, the epilogue and a tile shape (ops/gemm/configs.hpp).
template <class Target, class Epilogue>
struct kernel_for;
template <class Epilogue>
struct kernel_for<strata::arch::host, Epilogue> {  // scalar FMA: any target, the emulator's own
  using type = sg::configs::fma<strata::arch::host, bf16, Epilogue>;
};
template <class Epilogue>
struct kernel_for<strata::arch::sm80, Epilogue> {  // mma.sync m16n8k16, cp.async pipeline
  using type = sg::configs::sm80<strata::arch::sm80, bf16, Epilogue, sg::configs::sm80_medium>;
};
template <class Epilogue>
struct kernel_for<strata::arch::gfx90a, Epilogue> {  // MFMA 32x32x8 on 64 lanes
  using type = sg::configs::cdna<strata::arch::gfx90a, bf16, Epilogue, true>;
};
template <class Epilogue>
struct kernel_for<strata::arch::gfx942, Epilogue> {
  using type = sg::configs::cdna<strata::arch::gfx942, bf16, Epilogue, true>;
};
template <class Target, class Epilogue>
using kernel_t = typename kernel_for<Target, Epilogue>::type;
// [/configs]

// [launch-helper]
// Step 4: one launch of a configured kernel: D (m x n) = Epilogue(A (m x k) * B (k x n)), all
// row-major with their own widths as leading dimensions. make_params checks nothing the caller has not
// already checked; launch_shape_of sizes the grid from the tiles.
template <class Kernel>
void gemm(strata::stream& s, int m, int n, int k, const bf16* a, const bf16* b, typename Kernel::td* d,
          const typename Kernel::epilogue_type::params& ep) {
  const sg::problem pr{m, n, k, 1};
  const auto p = Kernel::make_params(pr, {a, k, sg::layout::row_major}, {b, n, sg::layout::row_major},
                                     {d, n, sg::layout::row_major}, ep);
  strata::launch(s, Kernel::launch_shape_of(p), Kernel{}, p);
}
// [/launch-helper]

struct problem {
  int tokens = 37, d_model = 48, d_ff = 72;
  bool check = false;
};

std::vector<bf16> random_matrix(std::size_t count, float scale, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<bf16> v(count);
  for (auto& x : v) x = bf16(scale * d(g));
  return v;
}

double to_double(bf16 x) { return static_cast<double>(static_cast<float>(x)); }

// The reference in double, with the bound each element of y must meet. Inputs are the same bf16
// values; what differs is (a) the fp32 accumulation of the three products, at most (K + 2) * 2^-24
// times the sum of |terms| each; (b) silu in float (a few ulps); (c) h stored as bf16: half an ulp,
// 2^-8 relative. The bound carries (a)-(c) through h = silu(a1) * a3 (|silu'| <= 1.1) into y.
bool check(const problem& pr, const std::vector<bf16>& x, const std::vector<bf16>& w1, const std::vector<bf16>& w3,
           const std::vector<bf16>& w2, const std::vector<float>& y) {
  const int t = pr.tokens, d = pr.d_model, f = pr.d_ff;
  const double eps = std::ldexp(1.0, -24);
  std::vector<double> h(std::size_t(t) * f), dh(h.size());
  for (int r = 0; r < t; ++r)
    for (int j = 0; j < f; ++j) {
      double a1 = 0, m1 = 0, a3 = 0, m3 = 0;
      for (int i = 0; i < d; ++i) {
        const double xi = to_double(x[std::size_t(r) * d + i]);
        const double p1 = xi * to_double(w1[std::size_t(i) * f + j]), p3 = xi * to_double(w3[std::size_t(i) * f + j]);
        a1 += p1, m1 += std::fabs(p1), a3 += p3, m3 += std::fabs(p3);
      }
      const double s1 = a1 / (1.0 + std::exp(-a1));
      const double hv = s1 * a3;
      h[std::size_t(r) * f + j] = hv;
      dh[std::size_t(r) * f + j] = std::ldexp(std::fabs(hv), -8) + 16 * eps * std::fabs(hv) +
                                   (d + 2) * eps * (1.1 * m1 * std::fabs(a3) + std::fabs(s1) * m3) * 1.01;
    }
  long long wrong = 0;
  double worst = 0;
  for (int r = 0; r < t; ++r)
    for (int c = 0; c < d; ++c) {
      double ref = 0, mag = 0, prop = 0;
      for (int j = 0; j < f; ++j) {
        const double w = to_double(w2[std::size_t(j) * d + c]);
        ref += h[std::size_t(r) * f + j] * w;
        mag += std::fabs(h[std::size_t(r) * f + j] * w);
        prop += dh[std::size_t(r) * f + j] * std::fabs(w);
      }
      const double tol = prop + (f + 2) * eps * (mag + prop) + 1e-30;
      const double got = y[std::size_t(r) * d + c], err = std::fabs(got - ref);
      worst = std::max(worst, err / tol);
      if (!(err <= tol)) {  // NaN counts as wrong
        if (wrong < 5) std::printf("  y(%d, %d) = %.9g, reference %.9g, bound %.3g\n", r, c, got, ref, tol);
        ++wrong;
      }
    }
  std::printf("check: %lld of %lld elements outside the bound (worst %.3f of the bound)\n", wrong,
              static_cast<long long>(t) * d, worst);
  return wrong == 0;
}

template <class Target>
bool run(const problem& pr) {
  const int t = pr.tokens, d = pr.d_model, f = pr.d_ff;
  // Inputs scaled by 1/sqrt(fan-in) so that activations stay near 1 at any size.
  const auto x = random_matrix(std::size_t(t) * d, 1.f, 1);
  const auto w1 = random_matrix(std::size_t(d) * f, 2.f / std::sqrt(float(d)), 2);
  const auto w3 = random_matrix(std::size_t(d) * f, 2.f / std::sqrt(float(d)), 3);
  const auto w2 = random_matrix(std::size_t(f) * d, 2.f / std::sqrt(float(f)), 4);

  // [run]
  // Step 5: device buffers, the three launches in one stream, and the result back.
  strata::stream s;
  strata::device_buffer<bf16> dx(x.size()), dw1(w1.size()), dw3(w3.size()), dw2(w2.size()), dh(std::size_t(t) * f);
  strata::device_buffer<float> du(std::size_t(t) * f), dy(std::size_t(t) * d);
  strata::copy_to_device(s, dx.data(), x.data(), x.size());
  strata::copy_to_device(s, dw1.data(), w1.data(), w1.size());
  strata::copy_to_device(s, dw3.data(), w3.data(), w3.size());
  strata::copy_to_device(s, dw2.data(), w2.data(), w2.size());

  using up = kernel_t<Target, up_epilogue>;
  using gate = kernel_t<Target, gate_epilogue>;
  using down = kernel_t<Target, down_epilogue>;
  const auto t0 = std::chrono::steady_clock::now();
  gemm<up>(s, t, f, d, dx.data(), dw3.data(), du.data(), up_epilogue::make_params({}));
  gemm<gate>(s, t, f, d, dx.data(), dw1.data(), dh.data(),
             gate_epilogue::make_params({}, {.up = epilogue::row_major<float>(du.data(), f)}, {}));
  gemm<down>(s, t, d, f, dh.data(), dw2.data(), dy.data(), down_epilogue::make_params({}));
  std::vector<float> y(std::size_t(t) * d);
  strata::copy_to_host(s, y.data(), dy.data(), y.size());
  s.synchronize();
  // [/run]
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("SwiGLU MLP, tokens %d, d_model %d, d_ff %d, target %s, atom %s: %.2f ms\n", t, d, f,
              std::string(Target::name).c_str(), up::atom::name, ms);
  return !pr.check || check(pr, x, w1, w3, w2, y);
}

// The largest extent the example accepts, and the work the CPU emulator is allowed (a few minutes).
constexpr long max_extent = 1 << 16;

}  // namespace swiglu

int main(int argc, char** argv) {
  swiglu::problem pr;
  std::string emulate;
  strata_examples::command_line cl(
      "strata_example_swiglu",
      "usage: strata_example_swiglu [--tokens T] [--d-model D] [--d-ff F] [--check]\n"
      "                             [--emulate host|sm80|gfx90a|gfx942]",
      argc, argv);
  while (cl.next()) {
    if (cl.is("--tokens")) pr.tokens = cl.integer<int>(1, swiglu::max_extent);
    else if (cl.is("--d-model")) pr.d_model = cl.integer<int>(1, swiglu::max_extent);
    else if (cl.is("--d-ff")) pr.d_ff = cl.integer<int>(1, swiglu::max_extent);
    else if (cl.is("--check")) pr.check = true;
    else if (cl.is("--emulate")) emulate = cl.value();
    else cl.unknown();
  }
  // Three products of tokens x d_model x d_ff multiply-adds, plus the same again for the reference.
  const double work = 3.0 * pr.tokens * pr.d_model * pr.d_ff;
#if STRATA_BACKEND_HOST
  if (work > 1e9) {
    std::fprintf(stderr,
                 "strata_example_swiglu: 3 * tokens * d_model * d_ff = %.3g multiply-adds is too much for the CPU "
                 "emulator (limit 1e9, a few minutes); choose smaller sizes or build for a GPU\n",
                 work);
    return 2;
  }
#endif

  bool ok = false;
  try {
    namespace arch = strata::arch;
    // On a GPU: mma.sync as sm80 (it runs on every sm80+ GPU) and MFMA 32x32x8 bf16 as gfx90a (the same
    // opcode on gfx90a and gfx94x).
    ok = strata_examples::run_on_target<arch::sm80, arch::gfx90a>(
        cl.program(), emulate, strata_examples::targets<arch::host, arch::sm80, arch::gfx90a, arch::gfx942>{},
        [&](auto target) { return swiglu::run<decltype(target)>(pr); });
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    if (pr.check) std::printf("FAIL\n");
    return 1;
  }
  if (pr.check) std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
