// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Comparison and arithmetic operators of the narrow types, and the traits: every pair of fp8
// values, random pairs of f16/bf16, checked against IEEE comparison of the reference values and
// against the reference rounding of the float result.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "checks.hpp"
#include "strata/numeric/numeric.hpp"

using namespace strata;

static_assert(narrow_float<f16> && narrow_float<bf16> && narrow_float<f8_e4m3> && narrow_float<f8_e5m2>);
static_assert(!narrow_float<float> && !narrow_float<std::uint16_t>);
static_assert(numeric_traits<f16>::mantissa_bits == 10 && numeric_traits<bf16>::exponent_bits == 8);
static_assert(numeric_traits<f8_e4m3>::exponent_bias == 7 && !numeric_traits<f8_e4m3>::has_infinity);
static_assert(std::is_same_v<numeric_traits<f8_e5m2>::storage_type, std::uint8_t>);
// operators are constexpr
static_assert(f16(1.5f) + f16(2.25f) == f16(3.75f) && f16(3.0f) * f16(0.5f) == f16(1.5f));
static_assert(-f8_e4m3(2.0f) == f8_e4m3(-2.0f) && f8_e4m3(2.0f) > f8_e4m3(1.0f));
static_assert(f16(0.0f) == f16(-0.0f));

namespace {

/// Every pair (a, b) of T's encodings (all of them for fp8, `samples` random pairs otherwise):
/// comparisons agree with IEEE comparison of the reference values; a op b equals the reference
/// rounding of float(a) op float(b) under T's default overflow rule.
template <class T>
void operators(const ref::spec& s, bool saturate, long samples) {
  const ref::table t(s);
  check::tally cmp{"comparisons"}, arith{"arithmetic"};
  std::mt19937_64 rng(ref::test_seed());
  const unsigned n = ref::code_count(s);
  const long pairs = samples > 0 ? samples : long(n) * n;
  for (long i = 0; i < pairs; ++i) {
    const unsigned ca = samples > 0 ? unsigned(rng() % n) : unsigned(i / n);
    const unsigned cb = samples > 0 ? unsigned(rng() % n) : unsigned(i % n);
    const T a = T::from_bits(typename T::storage_type(ca));
    const T b = T::from_bits(typename T::storage_type(cb));
    const double x = ref::decode(s, ca), y = ref::decode(s, cb);
    const unsigned got = unsigned(a == b) | unsigned(a != b) << 1 | unsigned(a < b) << 2 |
                         unsigned(a <= b) << 3 | unsigned(a > b) << 4 | unsigned(a >= b) << 5;
    const unsigned want = unsigned(x == y) | unsigned(x != y) << 1 | unsigned(x < y) << 2 |
                          unsigned(x <= y) << 3 | unsigned(x > y) << 4 | unsigned(x >= y) << 5;
    cmp.expect(got, want, x);
    // the float operation, then the reference rounding of its (float) result
    // (Which NaN a float operation returns, and so its sign, is up to the compiler and the CPU:
    // for NaN results only NaN-ness is checked.)
    const float fx = float(x), fy = float(y);
    const auto expect_op = [&](T r, float want) {
      if (std::isnan(want)) {
        arith.expect(unsigned(std::isnan(float(r))), 1u, x);
      } else {
        arith.expect(r.bits(), t.round(double(want), saturate), x);
      }
    };
    expect_op(a + b, fx + fy);
    expect_op(a - b, fx - fy);
    expect_op(a * b, fx * fy);
    expect_op(a / b, fx / fy);
    // The compound forms give the binary forms' bits (NaN results: NaN, as above; GCC may commute
    // one form's operands and not the other's, and x86 returns the first operand's NaN).
    const auto expect_same = [&](T got, T want) {
      if (std::isnan(float(want))) arith.expect(unsigned(std::isnan(float(got))), 1u, x);
      else arith.expect(got.bits(), want.bits(), x);
    };
    T c = a;
    c += b;
    expect_same(c, a + b);
    c = a;
    c *= b;
    expect_same(c, a * b);
    arith.expect((-a).bits(), ca ^ ref::sign_bit(s), x);
    arith.expect((+a).bits(), ca, x);
  }
  REQUIRE(cmp.failed == 0);
  REQUIRE(arith.failed == 0);
}

}  // namespace

TEST_CASE("operators: f8_e4m3, every pair", "[numeric][ops]") { operators<f8_e4m3>(ref::e4m3, true, 0); }
TEST_CASE("operators: f8_e5m2, every pair", "[numeric][ops]") { operators<f8_e5m2>(ref::e5m2, true, 0); }
TEST_CASE("operators: f16, random pairs", "[numeric][ops]") { operators<f16>(ref::f16, false, 300'000); }
TEST_CASE("operators: bf16, random pairs", "[numeric][ops]") { operators<bf16>(ref::bf16, false, 300'000); }

TEST_CASE("operators: NaN is unordered, signed zeros are equal", "[numeric][ops]") {
  const f16 nan = std::numeric_limits<f16>::quiet_NaN();
  CHECK_FALSE(nan == nan);
  CHECK(nan != nan);
  CHECK_FALSE(nan < f16(1.0f));
  CHECK_FALSE(nan >= f16(1.0f));
  CHECK(f16(0.0f) == f16(-0.0f));
  CHECK(f8_e4m3(0.0f) == f8_e4m3(-0.0f));
  CHECK(std::isnan(float(-std::numeric_limits<f8_e4m3>::quiet_NaN())));
  // fp8 arithmetic saturates by default, like the constructor
  CHECK((f8_e4m3(448.0f) + f8_e4m3(448.0f)).bits() == 0x7E);
  CHECK((f8_e5m2(57344.0f) * f8_e5m2(2.0f)).bits() == 0x7B);
  CHECK((f16(65504.0f) + f16(65504.0f)).bits() == 0x7C00);  // f16 overflows to Inf
}

TEST_CASE("integer construction", "[numeric][ops]") {
  CHECK(f16(3).bits() == 0x4200);
  CHECK(bf16(-1).bits() == 0xBF80);
  CHECK(f8_e4m3(1000).bits() == 0x7E);  // saturates
  CHECK(f16(65520).bits() == 0x7C00);
  CHECK(f16(2049).bits() == f16(2048.0f).bits());  // tie to even
}
