// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/mma/atom_check.hpp -- host side of the MMA tests: random operands (never zeros), the plain
// reference product in double (int64 for integer atoms), and the comparison.
//
// Tolerance for floating-point atoms: operand products are exact in float, so the only error is
// the accumulation of K + 1 terms in fp32. With u = 2^-24, a sum of n terms rounded at every step is
// within (n - 1) * u * sum|terms| (first order); we allow (K + 1) * 2^-23 * (|C| + sum_k |A*B|),
// twice that, which also covers hardware that truncates instead of rounding to nearest.
// Integer atoms must match exactly, modulo 2^32 (the accumulators wrap).
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "../unit/support.hpp"
#include "mma_kernels.hpp"

namespace strata_test {

/// A random non-zero element of T: small integers for int8, narrow floats from a range whose
/// values are exactly representable after conversion.
template <class T>
T random_element(std::mt19937_64& g) {
  if constexpr (std::is_same_v<T, std::int8_t>) {
    std::uniform_int_distribution<int> d(-128, 127);
    int x = 0;
    while (x == 0) x = d(g);
    return static_cast<T>(x);
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    // Accumulators near the int32 limits, so that sums overflow and the wraparound is exercised.
    std::uniform_int_distribution<std::int64_t> d(INT32_MIN, INT32_MAX);
    std::int32_t x = 0;
    while (x == 0) x = static_cast<std::int32_t>(d(g));
    return x;
  } else if constexpr (std::is_same_v<T, float>) {
    std::uniform_real_distribution<float> d(-2.f, 2.f);
    float x = 0;
    while (x == 0) x = strata::mma::to_tf32(d(g));  // tf32-exact, so it also serves the tf32 atom
    return x;
  } else {
    std::uniform_real_distribution<float> d(-3.f, 3.f);
    T x = T(0.f);
    while (static_cast<float>(x) == 0.f) x = T(d(g));
    return x;
  }
}

template <class T>
std::vector<T> random_elements(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<T> v(n);
  for (auto& x : v) x = random_element<T>(g);
  return v;
}

template <class T>
double as_double(const T& x) {
  if constexpr (std::is_integral_v<T>) return static_cast<double>(x);
  else return static_cast<double>(static_cast<float>(x));
}

/// Checks d = a * b + c for `count` instances of an (M, N, K) product, all row-major.
template <class A, class B, class C>
void check_product(const std::vector<A>& a, const std::vector<B>& b, const std::vector<C>& c, const std::vector<C>& d,
                   int M, int N, int K, int count) {
  for (int inst = 0; inst < count; ++inst)
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        const std::size_t ci = (static_cast<std::size_t>(inst) * M + m) * N + n;
        if constexpr (std::is_integral_v<C>) {
          std::int64_t ref = c[ci];
          for (int k = 0; k < K; ++k)
            ref += std::int64_t(a[(std::size_t(inst) * M + m) * K + k]) * std::int64_t(b[(std::size_t(inst) * K + k) * N + n]);
          const auto wrapped = static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(ref)));
          INFO("instance " << inst << " at (" << m << ", " << n << ")");
          REQUIRE(d[ci] == wrapped);
        } else {
          double ref = c[ci], mag = std::fabs(c[ci]);
          for (int k = 0; k < K; ++k) {
            const double t = as_double(a[(std::size_t(inst) * M + m) * K + k]) * as_double(b[(std::size_t(inst) * K + k) * N + n]);
            ref += t;
            mag += std::fabs(t);
          }
          INFO("instance " << inst << " at (" << m << ", " << n << "): got " << d[ci] << ", reference " << ref);
          REQUIRE(std::fabs(double(d[ci]) - ref) <= (K + 1) * std::ldexp(mag, -23));
        }
      }
}

/// Largest error relative to the tolerance above (for the "wrong layout must fail" checks).
template <class A, class B, class C>
bool product_matches(const std::vector<A>& a, const std::vector<B>& b, const std::vector<C>& c,
                     const std::vector<C>& d, int M, int N, int K) {
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double ref = as_double(c[m * N + n]), mag = std::fabs(ref);
      for (int k = 0; k < K; ++k) {
        const double t = as_double(a[m * K + k]) * as_double(b[k * N + n]);
        ref += t;
        mag += std::fabs(t);
      }
      if constexpr (std::is_integral_v<C>) {
        if (d[m * N + n] != static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::int64_t>(ref))))
          return false;
      } else if (std::fabs(double(d[m * N + n]) - ref) > (K + 1) * std::ldexp(mag, -23)) {
        return false;
      }
    }
  return true;
}

struct atom_result {
  bool matches;
};

/// Runs atom_kernel<Target, Atom, Lanes> on `blocks` blocks of two warps and returns whether every
/// instance equals the reference (checking with REQUIRE when Lanes is the identity).
template <class Target, class Atom, lane_map Lanes = lane_map::identity>
bool run_atom(std::uint64_t seed, int blocks = 2, bool all_schedules = false) {
  constexpr int M = Atom::M, N = Atom::N, K = Atom::K;
  const int warps = 2, count = blocks * warps;
  const auto a = random_elements<typename Atom::a_type>(std::size_t(count) * M * K, seed);
  const auto b = random_elements<typename Atom::b_type>(std::size_t(count) * K * N, seed + 1);
  const auto c = random_elements<typename Atom::c_type>(std::size_t(count) * M * N, seed + 2);
  strata::stream s;
  auto da = to_device(s, a);
  auto db = to_device(s, b);
  auto dc = to_device(s, c);
  std::vector<strata::emulator::options> runs = schedules();
  if (!all_schedules) runs.resize(1);
  bool all_match = true;
  for (const auto& opt : runs) {
    s.set_emulator_options(opt);
    using CT = typename Atom::c_type;
    auto dd = poisoned<CT>(s, c.size(), std::is_integral_v<CT> ? CT(0x5EADBEEF) : CT(NAN));
    strata::launch(s, {.grid = blocks, .block = warps * Target::warp_size}, atom_kernel<Target, Atom, Lanes>{},
                   atom_params<Atom>{da.data(), db.data(), dc.data(), dd.data()});
    const auto d = to_host(s, dd);
    INFO("atom " << Atom::name << " as " << Target::name << ", workers " << opt.workers);
    if constexpr (Lanes == lane_map::identity) {
      check_product(a, b, c, d, M, N, K, count);
    } else {
      all_match = all_match && product_matches(a, b, c, d, M, N, K);
    }
  }
  return all_match;
}

}  // namespace strata_test
