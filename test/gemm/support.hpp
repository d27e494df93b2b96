// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/gemm/support.hpp -- one checker for every GEMM test: random inputs (never zero), poisoned
// outputs, any layouts and padding, batched, alpha/beta (C aliasing D), optional bias + ReLU, split-K;
// the kernel's result against ops/gemm/reference.hpp in double, within reference::tolerance.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "../unit/support.hpp"
#include "strata/gemm.hpp"

namespace strata_test::gemm {

namespace sg = strata::ops::gemm;
namespace ep = strata::epilogue;

/// Random values in [0.25, 1] with a random sign (never zero), as T; int8 in [-9, 9] \ {0}.
template <class T>
std::vector<T> random_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> mag(0.25f, 1.0f);
  std::vector<T> v(n);
  for (auto& x : v) {
    const bool neg = g() & 1;
    if constexpr (std::is_integral_v<T>) {
      const int i = 1 + int(g() % 9);
      x = T(neg ? -i : i);
    } else {
      const float f = neg ? -mag(g) : mag(g);
      x = T(f);
    }
  }
  return v;
}

template <class T>
double as_double(T x) {
  return strata::ops::gemm::reference::to_double(x);
}

using strata::ops::gemm::reference::mantissa_bits;

struct case_t {
  int m = 1, n = 1, k = 1;
  sg::layout a = sg::layout::row_major, b = sg::layout::row_major, d = sg::layout::row_major;
  int batch = 1;
  float alpha = 1.f, beta = 0.f;
  int pad = 0;         // extra elements per leading dimension
  int splits = 1;      // K splits
  bool serial = false; // serial split-K (per-tile counters) instead of the parallel reduction
  int stream_k = 0;    // > 0: gemm::stream_k_kernel with this many work units per chiplet
  std::uint64_t seed = 1;
  std::uint64_t placement = 0;  // > 0: the emulator places blocks on chiplets at random (this seed),
                                // two workers, random fiber order
};

inline std::string describe(const case_t& c) {
  auto l = [](sg::layout x) { return x == sg::layout::row_major ? "r" : "c"; };
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " A" + l(c.a) + " B" + l(c.b) +
         " D" + l(c.d) + " batch " + std::to_string(c.batch) + " alpha " + std::to_string(c.alpha) + " beta " +
         std::to_string(c.beta) + " pad " + std::to_string(c.pad) + " splits " + std::to_string(c.splits) +
         (c.serial ? " serial" : "") + (c.stream_k ? " stream-K units/chiplet " + std::to_string(c.stream_k) : "") +
         (c.placement ? " placement " + std::to_string(c.placement) : "");
}

inline long long ld_of(sg::layout l, int rows, int cols, int pad) {
  return (l == sg::layout::row_major ? cols : rows) + pad;
}
inline std::size_t size_of(sg::layout l, int rows, int cols, int pad) {
  const long long ld = ld_of(l, rows, cols, pad);
  return std::size_t(l == sg::layout::row_major ? rows : cols) * std::size_t(ld);
}

template <class T>
std::vector<T> to_host_n(strata::stream& s, const T* p, std::size_t n) {
  std::vector<T> v(n);
  strata::copy_to_host(s, v.data(), p, n);
  s.synchronize();
  return v;
}

/// Runs Kernel (epilogue chain<alpha_beta<TD>, [bias_col<float>, relu,] convert_to<TD>>) on case c;
/// returns D (with its padding) for bitwise comparisons between runs.
template <class Kernel, bool BiasRelu = false>
std::vector<typename Kernel::td> check(const case_t& c, double extra_tolerance = 0.0) {
  using TA = typename Kernel::ta;
  using TB = typename Kernel::tb;
  using TD = typename Kernel::td;
  using Epi = typename Kernel::epilogue_type;
  INFO(describe(c));
  using strata::emulator::placement;
  using strata::emulator::schedule;
  strata::stream s = c.placement ? strata::stream(strata::emulator::options{.workers = 2, .order = schedule::random,
                                                                            .seed = c.placement, .chiplets = placement::shuffled})
                                 : strata::stream();
  const long long lda = ld_of(c.a, c.m, c.k, c.pad), ldb = ld_of(c.b, c.k, c.n, c.pad),
                  ldd = ld_of(c.d, c.m, c.n, c.pad);
  const std::size_t sa = size_of(c.a, c.m, c.k, c.pad), sb = size_of(c.b, c.k, c.n, c.pad),
                    sd = size_of(c.d, c.m, c.n, c.pad);
  const auto ha = random_values<TA>(sa * c.batch, c.seed);
  const auto hb = random_values<TB>(sb * c.batch, c.seed + 1);
  // C aliases D: D starts as C (random values where an element exists; the padding is poisoned by the
  // random values too, and must come back unchanged).
  const auto hc = random_values<TD>(sd * c.batch, c.seed + 2);
  const auto hbias = random_values<float>(std::size_t(c.n), c.seed + 3);
  auto da = to_device(s, ha);
  auto db = to_device(s, hb);
  auto dd = to_device(s, hc);
  auto dbias = to_device(s, hbias);

  typename Epi::params ep;
  const ep::matrix_ref<TD> cref = c.d == sg::layout::row_major ? ep::row_major<TD>(dd.data(), ldd) : ep::col_major<TD>(dd.data(), ldd);
  if constexpr (BiasRelu)
    ep = Epi::make_params({.alpha = c.alpha, .beta = c.beta, .c = cref}, {.data = dbias.data()}, {}, {});
  else
    ep = Epi::make_params({.alpha = c.alpha, .beta = c.beta, .c = cref}, {});

  const sg::problem pr{c.m, c.n, c.k, c.batch};
  strata::device_buffer<typename Kernel::acc_type> work(std::max<std::size_t>(1, Kernel::partial_elements(pr, c.splits)));
  strata::device_buffer<std::uint8_t> serial_work(std::max<std::size_t>(1, Kernel::serial_workspace_bytes(pr, c.splits)));
  strata::zero_on_device(s, serial_work.data(), serial_work.size());
  const sg::operand<const TA> oa{da.data(), lda, c.a, (long long)sa};
  const sg::operand<const TB> ob{db.data(), ldb, c.b, (long long)sb};
  const sg::operand<TD> od{dd.data(), ldd, c.d, (long long)sd};
  auto p = c.serial ? Kernel::make_serial_params(pr, oa, ob, od, ep, c.splits, serial_work.data())
                    : Kernel::make_params(pr, oa, ob, od, ep, c.splits, work.data());
  if (c.stream_k > 0) {
    using SK = sg::stream_k_kernel<Kernel>;
    strata::device_buffer<std::uint8_t> sk_work(SK::workspace_bytes(c.stream_k));
    strata::zero_on_device(s, sk_work.data(), SK::zeroed_bytes(c.stream_k));
    // Poison the partial slots: a fix-up that read a slot nobody wrote would show.
    strata::copy_to_device(s, sk_work.data() + SK::zeroed_bytes(c.stream_k),
                           std::vector<std::uint8_t>(sk_work.size() - SK::zeroed_bytes(c.stream_k), 0xff).data(),
                           sk_work.size() - SK::zeroed_bytes(c.stream_k));
    const auto sp = SK::make_params(p, c.stream_k, sk_work.data());
    strata::launch(s, SK::launch_shape_of(sp), SK{}, sp);
  } else {
    strata::launch(s, Kernel::launch_shape_of(p), Kernel{}, p);
  }
  if (c.serial && c.splits > 1) {
    // The counters are back at zero after the launch, ready for the next one.
    const auto counters = to_host_n(s, reinterpret_cast<const unsigned*>(serial_work.data() + Kernel::counters_offset(pr)),
                                    Kernel::counter_elements(pr));
    for (unsigned v : counters) REQUIRE(v == 0u);
  }
  if (c.splits > 1 && !c.serial) {
    using R = sg::reduce_kernel<typename Kernel::target, typename Kernel::acc_type, Epi>;
    typename R::params rp{pr, c.splits, work.data(), p.d, ep};
    strata::launch(s, R::launch_shape_of(rp), R{}, rp);
  }
  const auto out = to_host(s, dd);

  const bool integer = std::is_integral_v<TD>;
  const double tol = strata::ops::gemm::reference::tolerance(c.k, mantissa_bits<TD>(), std::is_same_v<typename Kernel::atom, strata::mma::sm80_16x8x8_f32tf32>, integer) + extra_tolerance;
  double worst = 0;
  for (int bt = 0; bt < c.batch; ++bt) {
    const auto ref = sg::reference::product(c.m, c.n, c.k, ha.data() + bt * sa, lda, c.a, hb.data() + bt * sb, ldb, c.b);
    const TD* cb = hc.data() + bt * sd;
    const TD* ob = out.data() + bt * sd;
    for (int r = 0; r < c.m; ++r)
      for (int col = 0; col < c.n; ++col) {
        double want = c.alpha * ref[std::size_t(r) * c.n + col];
        const double cv = as_double(sg::reference::element(cb, ldd, c.d, r, col));
        if (c.beta != 0.f) want += c.beta * cv;
        if constexpr (BiasRelu) {
          want += hbias[col];
          want = want < 0 ? 0 : want;
        }
        const double got = as_double(sg::reference::element(ob, ldd, c.d, r, col));
        // Scale: the sum of |terms| bounds the rounding of every term (K * 1 for our inputs).
        const double scale = std::max({std::abs(want), std::abs(c.alpha) * std::max(1, c.k) * 0.25, 1.0});
        const double err = std::abs(got - want) / scale;
        if (!(err <= tol)) {
          INFO("D(" << r << ", " << col << ") batch " << bt << " = " << got << ", want " << want);
          REQUIRE(err <= tol);
        }
        worst = std::max(worst, err);
      }
    // Padding of D is never written.
    if (c.pad > 0) {
      const int outer = c.d == sg::layout::row_major ? c.m : c.n, inner = c.d == sg::layout::row_major ? c.n : c.m;
      for (int o = 0; o < outer; ++o)
        for (long long i = inner; i < ldd; ++i) REQUIRE(as_double(ob[o * ldd + i]) == as_double(cb[o * ldd + i]));
    }
  }
  REQUIRE(worst <= tol);
  return out;
}

/// The odd shapes every configuration runs: 1x1x1, primes, K = 0, M or N under one tile, a larger K.
inline std::vector<case_t> shapes(int big_k = 67) {
  using L = sg::layout;
  return {
      {.m = 1, .n = 1, .k = 1},
      {.m = 7, .n = 13, .k = 5, .a = L::col_major, .seed = 2},
      {.m = 17, .n = 11, .k = 0, .beta = 0.5f, .seed = 3},  // K = 0: D = beta * C
      {.m = 3, .n = 37, .k = 19, .b = L::col_major, .alpha = -1.5f, .beta = 0.25f, .seed = 4},
      {.m = 37, .n = 5, .k = 23, .a = L::col_major, .b = L::col_major, .d = L::col_major, .pad = 3, .seed = 5},
      {.m = 19, .n = 29, .k = big_k, .beta = 1.f, .pad = 1, .seed = 6},
      {.m = 5, .n = 9, .k = 31, .a = L::col_major, .batch = 3, .beta = 2.f, .seed = 7},
  };
}

}  // namespace strata_test::gemm
