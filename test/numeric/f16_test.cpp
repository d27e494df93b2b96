// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// f16: every encoding, every rounding boundary, millions of random floats and doubles, checked
// against the independent model in reference.hpp and, where the compiler has it, against _Float16.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <type_traits>

#include "checks.hpp"
#include "strata/numeric/f16.hpp"

using strata::f16;

static_assert(sizeof(f16) == 2 && alignof(f16) == 2);
static_assert(std::is_trivially_copyable_v<f16> && std::is_standard_layout_v<f16> && std::is_trivial_v<f16>);
static_assert(std::is_same_v<f16::storage_type, std::uint16_t>);
// constexpr conversions on the host
static_assert(f16(1.0f).bits() == 0x3C00 && f16(-2.0).bits() == 0xC000 && f16(0.5f).bits() == 0x3800);
static_assert(f16(65504.0f).bits() == 0x7BFF && f16(65519.996f).bits() == 0x7BFF &&
              f16(65520.0f).bits() == 0x7C00);
static_assert(f16(0x1p-24f).bits() == 0x0001 && f16(0x1p-25f).bits() == 0x0000 &&
              f16(0x1.000002p-25f).bits() == 0x0001);
static_assert(f16(-0.0f).bits() == 0x8000);
static_assert(f16(std::numeric_limits<float>::quiet_NaN()).bits() == 0x7FFF);
static_assert(f16(-std::numeric_limits<float>::quiet_NaN()).bits() == 0xFFFF);
static_assert(float(f16::from_bits(0x3555)) == 0x1.554p-2f);
static_assert(!std::is_convertible_v<float, f16> &&
              !std::is_convertible_v<f16, float>);  // explicit both ways
static_assert(strata::is_narrow_float_v<f16> && !strata::is_narrow_float_v<float>);

namespace {
const ref::table& table() {
  static const ref::table t(ref::f16);
  return t;
}
}  // namespace

TEST_CASE("f16: every encoding decodes to the formula value and round-trips", "[numeric][f16]") {
  check::decode_and_round_trip<f16>(ref::f16);
}

TEST_CASE("f16: float -> f16 matches the nearest-even reference", "[numeric][f16]") {
  check::float_conversion(
      table(), false, "f16(float)", [](float x) { return unsigned(f16(x).bits()); }, 4'000'000,
      ref::test_seed());
}

TEST_CASE("f16: double -> f16 rounds once, directly from double", "[numeric][f16]") {
  check::double_conversion(
      table(), false, "f16(double)", [](double x) { return unsigned(f16(x).bits()); }, 2'000'000,
      ref::test_seed() + 1);
  check::no_double_rounding<f16>(table(), false);
  // 1 + 2^-11 is the midpoint of 1 and 1 + 2^-10; 2^-40 above it float cannot see.
  const double d = 1.0 + 0x1p-11 + 0x1p-40;
  CHECK(f16(d).bits() == 0x3C01);
  CHECK(f16(static_cast<float>(d)).bits() == 0x3C00);
}

TEST_CASE("f16: boundaries by hand", "[numeric][f16]") {
  CHECK(f16(65519.99f).bits() == 0x7BFF);
  CHECK(f16(65520.0f).bits() == 0x7C00);  // tie between max (odd) and 2^16 (even) -> Inf
  CHECK(f16(-65520.0f).bits() == 0xFC00);
  CHECK(f16(1e10f).bits() == 0x7C00);
  CHECK(f16(std::numeric_limits<float>::infinity()).bits() == 0x7C00);
  CHECK(f16(0x1p-14f).bits() == 0x0400);      // min normal
  CHECK(f16(0x1.ff8p-15f).bits() == 0x03FF);  // largest subnormal, exact
  CHECK(f16(0x1.ffcp-15f).bits() == 0x0400);  // ... + half ulp ties up to even: min normal
  CHECK(f16(std::nextafter(0x1.ffcp-15f, 0.0f)).bits() == 0x03FF);  // just below that tie
  CHECK(f16(0x1.ff0p-15f).bits() == 0x03FE);                        // exact subnormal
  CHECK(f16(0x1.8p-24f).bits() == 0x0002);                          // 1.5 ulp ties to even (2)
  CHECK(f16(0x1.4p-23f).bits() == 0x0002);                          // 2.5 ulp ties to even (2)
  CHECK(f16(0x1.cp-23f).bits() == 0x0004);                          // 3.5 ulp ties to even (4)
  CHECK(f16(-0x1p-26f).bits() == 0x8000);                           // underflow keeps the sign
  CHECK(f16(std::numeric_limits<float>::denorm_min()).bits() == 0x0000);
}

#if defined(__FLT16_MAX__)
TEST_CASE("f16: agrees with the compiler's _Float16", "[numeric][f16]") {
  // _Float16 is IEEE binary16 with round-to-nearest-even conversions (GCC >= 12 on x86-64, clang).
  // NaN payloads may differ (we canonicalize); compare NaN-ness and sign there.
  auto agree = [](float x) {
    const _Float16 h = static_cast<_Float16>(x);
    std::uint16_t hb;
    std::memcpy(&hb, &h, 2);
    const f16 ours(x);
    if (std::isnan(x)) return std::isnan(static_cast<float>(ours)) && (ours.bits() >> 15) == (hb >> 15u);
    return ours.bits() == hb && check::fbits(static_cast<float>(ours)) == check::fbits(static_cast<float>(h));
  };
  long failed = 0, checked = 0;
  for (float x : check::float_edge_inputs(table())) {
    ++checked;
    if (!agree(x) && ++failed <= 10) std::printf("  _Float16 disagrees at %a\n", x);
  }
  // A strided sweep over all 2^32 float bit patterns: a stride coprime to 2^32 visits every residue
  // class of the low bits, so rounding-bit and sticky-bit patterns are all exercised.
  for (std::uint64_t b = 0; b < (std::uint64_t(1) << 32); b += 251) {
    const std::uint32_t u = std::uint32_t(b);
    float x;
    std::memcpy(&x, &u, 4);
    ++checked;
    if (!agree(x) && ++failed <= 10) std::printf("  _Float16 disagrees at %a (0x%08x)\n", x, u);
  }
  std::printf("  _Float16 comparison: %ld checked, %ld mismatches\n", checked, failed);
  REQUIRE(failed == 0);
}
#endif

TEST_CASE("f16: numeric_limits", "[numeric][f16]") {
  using L = std::numeric_limits<f16>;
  STATIC_REQUIRE(L::is_specialized && L::is_iec559 && L::has_infinity && L::has_quiet_NaN);
  STATIC_REQUIRE(L::digits == 11 && L::digits10 == 3 && L::max_digits10 == 5);
  STATIC_REQUIRE(L::min_exponent == -13 && L::max_exponent == 16);
  CHECK(float(L::max()) == 65504.0f);
  CHECK(float(L::lowest()) == -65504.0f);
  CHECK(float(L::min()) == 0x1p-14f);
  CHECK(float(L::denorm_min()) == 0x1p-24f);
  CHECK(float(L::epsilon()) == 0x1p-10f);
  CHECK(float(L::round_error()) == 0.5f);
  CHECK(std::isinf(float(L::infinity())));
  CHECK(std::isnan(float(L::quiet_NaN())));
  CHECK(std::isnan(float(L::signaling_NaN())));
  CHECK(L::max_exponent10 == int(std::floor(std::log10(65504.0))));
  CHECK(L::min_exponent10 == int(std::ceil(std::log10(0x1p-14))));
  CHECK(float(f16(1.0f + float(L::epsilon()))) == 1.0f + 0x1p-10f);
}
