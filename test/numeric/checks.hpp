// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/numeric/checks.hpp -- the checks every narrow type goes through, against ref:: (reference.hpp).
//
// Large sweeps count mismatches and print the first few instead of asserting per value, so a
// failure names the input, the expected and the actual bits, and the sweep stays fast.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "reference.hpp"
#include "strata/numeric/overflow.hpp"

namespace check {

inline std::uint32_t fbits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
inline std::uint64_t dbits(double d) {
  std::uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}

/// Counts mismatches; prints the first few.
struct tally {
  const char* what;
  const char* part = "";
  long checked = 0;
  long failed = 0;
  void expect(unsigned got, unsigned want, double input) {
    ++checked;
    if (got == want) return;
    if (++failed <= 10)
      std::printf("  MISMATCH %s%s: input %a (%.17g): got 0x%x, expected 0x%x\n", what, part, input, input,
                  got, want);
  }
  ~tally() { std::printf("  %s%s: %ld checked, %ld mismatches\n", what, part, checked, failed); }
};

/// Every encoding decodes to the formula's value (bit for bit as a float, -0 included), NaNs to a
/// NaN of the same sign, and every non-NaN encoding round-trips through float and through double.
template <class T>
void decode_and_round_trip(const ref::spec& s) {
  tally dec{"decode"}, rt{"round trip"};
  for (unsigned code = 0; code < ref::code_count(s); ++code) {
    const T x = T::from_bits(static_cast<typename T::storage_type>(code));
    REQUIRE(x.bits() == code);
    const float f = static_cast<float>(x);
    const double want = ref::decode(s, code);
    const bool neg = (code & ref::sign_bit(s)) != 0;
    if (std::isnan(want)) {
      dec.expect(std::isnan(f) && std::signbit(f) == neg, 1, double(code));
      dec.expect(std::isnan(static_cast<double>(x)), 1, double(code));
      // NaN in, NaN out: the canonical NaN of the same sign
      rt.expect(T(f).bits(), (neg ? ref::sign_bit(s) : 0u) | s.canonical_nan, double(code));
      continue;
    }
    dec.expect(fbits(f), fbits(static_cast<float>(want)), want);
    dec.expect(unsigned(dbits(static_cast<double>(x)) == dbits(want)), 1, want);
    // fp8: the constructors saturate, so Inf comes back as the max (the code just below Inf);
    // f16 and bf16 keep Inf. Every type's factories take the policy per call.
    const bool saturating = T::default_overflow == strata::overflow::saturate;
    const unsigned sat = saturating && std::isinf(want) ? code - 1 : code;
    rt.expect(T(f).bits(), sat, want);
    rt.expect(T(static_cast<double>(f)).bits(), sat, want);
    rt.expect(T::from_float(f, strata::overflow::propagate).bits(), code, want);
    rt.expect(T::from_double(want, strata::overflow::propagate).bits(), code, want);
    const unsigned below_inf = std::isinf(want) ? code - 1 : code;
    rt.expect(T::from_float(f, strata::overflow::saturate).bits(), below_inf, want);
    rt.expect(T::from_double(want, strata::overflow::saturate).bits(), below_inf, want);
  }
  REQUIRE(dec.failed == 0);
  REQUIRE(rt.failed == 0);
}

/// Inputs for float -> T: every value, every midpoint and its float neighbours, specials.
inline std::vector<float> float_edge_inputs(const ref::table& t) {
  std::vector<float> in;
  const float inf = std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i + 1 < t.finite.size(); ++i) in.push_back(static_cast<float>(t.finite[i].value));
  for (double m : t.midpoints()) {
    const float mf = static_cast<float>(m);
    REQUIRE(static_cast<double>(mf) == m);  // every midpoint of these formats is a float
    in.push_back(mf);
    in.push_back(std::nextafter(mf, inf));
    in.push_back(std::nextafter(mf, 0.0f));
  }
  const float specials[] = {0.0f,
                            inf,
                            std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::min(),
                            std::numeric_limits<float>::denorm_min(),
                            1e-30f,
                            1e30f,
                            std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::signaling_NaN()};
  in.insert(in.end(), std::begin(specials), std::end(specials));
  std::uint32_t payload_nan = 0x7F800001u;  // signalling NaN with the smallest payload
  float pn;
  std::memcpy(&pn, &payload_nan, 4);
  in.push_back(pn);
  const std::size_t n = in.size();
  for (std::size_t i = 0; i < n; ++i) in.push_back(-in[i]);
  return in;
}

/// The double-precision counterpart: values, midpoints and their double neighbours, and points a
/// few double ulps from each midpoint, which float would round onto the midpoint (double rounding).
inline std::vector<double> double_edge_inputs(const ref::table& t) {
  std::vector<double> in;
  const double inf = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i + 1 < t.finite.size(); ++i) in.push_back(t.finite[i].value);
  for (double m : t.midpoints()) {
    in.push_back(m);
    in.push_back(std::nextafter(m, inf));
    in.push_back(std::nextafter(m, 0.0));
    in.push_back(m * (1 + 0x1p-40));
    in.push_back(m * (1 - 0x1p-40));
  }
  const double specials[] = {0.0,
                             inf,
                             std::numeric_limits<double>::max(),
                             std::numeric_limits<double>::min(),
                             std::numeric_limits<double>::denorm_min(),
                             1e-300,
                             1e300,
                             std::numeric_limits<double>::quiet_NaN()};
  in.insert(in.end(), std::begin(specials), std::end(specials));
  const std::size_t n = in.size();
  for (std::size_t i = 0; i < n; ++i) in.push_back(-in[i]);
  return in;
}

/// float -> T over the edge inputs and `random_count` random floats, for one overflow rule.
/// `convert` maps a float to the encoding under test.
template <class Convert>
void float_conversion(const ref::table& t, bool saturate, const char* what, Convert convert,
                      long random_count, std::uint64_t seed) {
  tally edge{what, ", edge cases"}, rnd{what, ", random"};
  for (float x : float_edge_inputs(t)) edge.expect(convert(x), t.round(x, saturate), x);
  std::mt19937_64 rng(seed);
  for (long i = 0; i < random_count; ++i) {
    const float x = ref::random_float(t.s, rng);
    rnd.expect(convert(x), t.round(x, saturate), x);
  }
  REQUIRE(edge.failed == 0);
  REQUIRE(rnd.failed == 0);
}

template <class Convert>
void double_conversion(const ref::table& t, bool saturate, const char* what, Convert convert,
                       long random_count, std::uint64_t seed) {
  tally edge{what, ", edge cases"}, rnd{what, ", random"};
  for (double x : double_edge_inputs(t)) edge.expect(convert(x), t.round(x, saturate), x);
  std::mt19937_64 rng(seed);
  for (long i = 0; i < random_count; ++i) {
    const double x = ref::random_double(t.s, rng);
    rnd.expect(convert(x), t.round(x, saturate), x);
  }
  REQUIRE(edge.failed == 0);
  REQUIRE(rnd.failed == 0);
}

/// Double rounding: just above each midpoint whose lower neighbour is even, T(double) must round up
/// while T(float(double)) ties down. Checks that such cases exist and that T(double) gets them right.
template <class T>
void no_double_rounding(const ref::table& t, bool saturate) {
  long cases = 0;
  for (double m : t.midpoints()) {
    const double d = m * (1 + 0x1p-40);  // beyond float precision: float(d) == m
    if (static_cast<double>(static_cast<float>(d)) != m) continue;
    const unsigned direct = T(d).bits();
    const unsigned via_float = T(static_cast<float>(d)).bits();
    CHECK(direct == t.round(d, saturate));
    if (direct != via_float) ++cases;
  }
  std::printf("  double-rounding cases where T(double) != T(float(double)): %ld\n", cases);
  CHECK(cases > long(t.finite.size()) / 4);
}

}  // namespace check
