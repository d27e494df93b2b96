// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// bf16: every encoding, every rounding boundary, millions of random floats and doubles, checked
// against the independent model in reference.hpp, plus an exhaustive sweep of all float inputs
// against a second, arithmetic model of bf16 rounding.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <type_traits>

#include "checks.hpp"
#include "strata/numeric/bf16.hpp"

using strata::bf16;

static_assert(sizeof(bf16) == 2 && alignof(bf16) == 2);
static_assert(std::is_trivially_copyable_v<bf16> && std::is_standard_layout_v<bf16> &&
              std::is_trivial_v<bf16>);
static_assert(bf16(1.0f).bits() == 0x3F80 && bf16(-2.0).bits() == 0xC000);
static_assert(bf16(0x1.01p0f).bits() == 0x3F80);    // tie to even (down)
static_assert(bf16(0x1.03p0f).bits() == 0x3F82);    // tie to even (up)
static_assert(bf16(0x1.FFp127f).bits() == 0x7F80);  // tie past max -> Inf
static_assert(bf16(0x1p-133f).bits() == 0x0001);    // smallest subnormal
static_assert(bf16(-std::numeric_limits<float>::quiet_NaN()).bits() == 0xFFFF);
static_assert(float(bf16::from_bits(0x0001)) == 0x1p-133f);

namespace {
const ref::table& table() {
  static const ref::table t(ref::bf16);
  return t;
}
}  // namespace

TEST_CASE("bf16: every encoding decodes to the formula value and round-trips", "[numeric][bf16]") {
  check::decode_and_round_trip<bf16>(ref::bf16);
}

TEST_CASE("bf16: float -> bf16 matches the nearest-even reference", "[numeric][bf16]") {
  check::float_conversion(
      table(), false, "bf16(float)", [](float x) { return unsigned(bf16(x).bits()); }, 4'000'000,
      ref::test_seed());
}

TEST_CASE("bf16: double -> bf16 rounds once, directly from double", "[numeric][bf16]") {
  check::double_conversion(
      table(), false, "bf16(double)", [](double x) { return unsigned(bf16(x).bits()); }, 2'000'000,
      ref::test_seed() + 1);
  check::no_double_rounding<bf16>(table(), false);
  const double d = 1.0 + 0x1p-8 + 0x1p-40;  // just above the midpoint of 1 and 1 + 2^-7
  CHECK(bf16(d).bits() == 0x3F81);
  CHECK(bf16(static_cast<float>(d)).bits() == 0x3F80);
}

TEST_CASE("bf16: all 2^32 float inputs (strided) against arithmetic rounding", "[numeric][bf16]") {
  // Second model: bf16 keeps float's exponent range, so rounding a finite float x to bf16 is
  // rounding to a multiple of q = ulp_bf16(x) = 2^(max(exponent(x), -126) - 7), done here with
  // std::nearbyint in double (default rounding mode: ties to even). Overflow past max is Inf.
  long failed = 0, checked = 0;
  for (std::uint64_t b = 0; b < (std::uint64_t(1) << 32); b += 127) {
    const std::uint32_t u = std::uint32_t(b);
    float x;
    std::memcpy(&x, &u, 4);
    ++checked;
    const float got = static_cast<float>(bf16(x));
    float want;
    if (std::isnan(x)) {
      if (std::isnan(got) && std::signbit(got) == std::signbit(x)) continue;
      want = x;
    } else if (std::isinf(x) || x == 0) {
      want = x;
    } else {
      const int e = std::max(std::ilogb(x), -126);
      const double q = std::ldexp(1.0, e - 7);
      const double r = std::nearbyint(double(x) / q) * q;
      want = std::fabs(r) > 0x1.FEp127 ? std::copysign(std::numeric_limits<float>::infinity(), x)
                                       : static_cast<float>(r);
      if (r == 0) want = std::copysign(0.0f, x);
    }
    if (check::fbits(got) != check::fbits(want) && ++failed <= 10)
      std::printf("  bf16 mismatch at %a: got %a, expected %a\n", x, got, want);
  }
  std::printf("  bf16 strided sweep: %ld checked, %ld mismatches\n", checked, failed);
  REQUIRE(failed == 0);
}

TEST_CASE("bf16: numeric_limits", "[numeric][bf16]") {
  using L = std::numeric_limits<bf16>;
  STATIC_REQUIRE(L::is_specialized && !L::is_iec559 && L::has_infinity && L::has_quiet_NaN);
  STATIC_REQUIRE(L::digits == 8 && L::digits10 == 2 && L::max_digits10 == 4);
  STATIC_REQUIRE(L::min_exponent == -125 && L::max_exponent == 128);
  CHECK(float(L::max()) == 0x1.FEp127f);
  CHECK(float(L::lowest()) == -0x1.FEp127f);
  CHECK(float(L::min()) == 0x1p-126f);
  CHECK(float(L::denorm_min()) == 0x1p-133f);
  CHECK(float(L::epsilon()) == 0x1p-7f);
  CHECK(float(L::round_error()) == 0.5f);
  CHECK(std::isinf(float(L::infinity())));
  CHECK(std::isnan(float(L::quiet_NaN())));
  CHECK(std::isnan(float(L::signaling_NaN())));
  CHECK(L::max_exponent10 == int(std::floor(std::log10(0x1.FEp127))));
  CHECK(L::min_exponent10 == int(std::ceil(std::log10(0x1p-126))));
}

// The branch-free rounding (detail/format.hpp, bf16_round_branch_free: what bf16(float) runs on HIP
// and the host) against the general one (round_bits, the definition) on every high half with the low
// halves that decide a rounding: zero, one, just below, at and just above the midpoint, and all ones.
// That is every exponent, every mantissa, every tie with an even and an odd kept bit, Inf and NaN.
TEST_CASE("bf16: the branch-free rounding gives round_bits' bits at every rounding boundary", "[numeric][bf16]") {
  namespace fp = strata::detail::fp;
  long failed = 0;
  for (std::uint32_t hi = 0; hi < 0x10000u; ++hi)
    for (std::uint32_t lo : {0x0000u, 0x0001u, 0x7FFEu, 0x7FFFu, 0x8000u, 0x8001u, 0xC000u, 0xFFFFu}) {
      const std::uint32_t u = hi << 16 | lo;
      float x;
      std::memcpy(&x, &u, 4);
      const std::uint32_t got = fp::bf16_round_branch_free(x), want = fp::round_bits<fp::bf16_format>(u, strata::overflow::propagate);
      if (got != want && ++failed <= 10) std::printf("  bf16 branch-free mismatch at 0x%08x: got 0x%04x, expected 0x%04x\n", u, got, want);
    }
  REQUIRE(failed == 0);
}
