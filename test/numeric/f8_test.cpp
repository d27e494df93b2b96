// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// f8_e4m3 (OCP E4M3FN) and f8_e5m2: every encoding, every rounding boundary and millions of random
// floats and doubles against the independent model in reference.hpp, under both overflow rules.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <type_traits>

#include "checks.hpp"
#include "strata/numeric/f8.hpp"

using strata::f8_e4m3;
using strata::f8_e5m2;
using strata::overflow;

static_assert(sizeof(f8_e4m3) == 1 && sizeof(f8_e5m2) == 1);
static_assert(std::is_trivially_copyable_v<f8_e4m3> && std::is_standard_layout_v<f8_e4m3> &&
              std::is_trivial_v<f8_e4m3>);
static_assert(std::is_trivially_copyable_v<f8_e5m2> && std::is_standard_layout_v<f8_e5m2>);
static_assert(std::is_same_v<f8_e4m3::storage_type, std::uint8_t>);
static_assert(f8_e4m3::default_overflow == overflow::saturate);
// e4m3: max 448 = S.1111.110; 464 ties to 448 (even), anything above overflows.
static_assert(f8_e4m3(448.0f).bits() == 0x7E && f8_e4m3(464.0f).bits() == 0x7E &&
              f8_e4m3(465.0f).bits() == 0x7E);
static_assert(f8_e4m3::from_float(464.0f, overflow::propagate).bits() == 0x7E);
static_assert(f8_e4m3::from_float(465.0f, overflow::propagate).bits() == 0x7F);
static_assert(f8_e4m3::from_float(-1e9f, overflow::propagate).bits() == 0xFF);
static_assert(f8_e4m3(std::numeric_limits<float>::infinity()).bits() == 0x7E);  // satfinite: Inf -> max
static_assert(f8_e4m3(-std::numeric_limits<float>::infinity()).bits() == 0xFE);
static_assert(f8_e4m3::from_float(std::numeric_limits<float>::infinity(), overflow::propagate).bits() ==
              0x7F);
static_assert(f8_e4m3(0x1p-9f).bits() == 0x01 && f8_e4m3(0x1p-10f).bits() == 0x00 &&
              f8_e4m3(-0x1p-10f).bits() == 0x80);
// e5m2: max 57344 = S.11110.11; 61440 ties to the Inf encoding (even).
static_assert(f8_e5m2(61439.0f).bits() == 0x7B && f8_e5m2(61440.0f).bits() == 0x7B &&
              f8_e5m2(1e9f).bits() == 0x7B);
static_assert(f8_e5m2::from_float(61439.0f, overflow::propagate).bits() == 0x7B);
static_assert(f8_e5m2::from_float(61440.0f, overflow::propagate).bits() == 0x7C);
static_assert(f8_e5m2(std::numeric_limits<float>::infinity()).bits() == 0x7B);
static_assert(f8_e5m2::from_float(-std::numeric_limits<float>::infinity(), overflow::propagate).bits() ==
              0xFC);
static_assert(f8_e5m2(std::numeric_limits<float>::quiet_NaN()).bits() == 0x7F);
static_assert(f8_e4m3(-std::numeric_limits<double>::quiet_NaN()).bits() == 0xFF);
static_assert(float(f8_e4m3::from_bits(0x01)) == 0x1p-9f && float(f8_e5m2::from_bits(0x01)) == 0x1p-16f);

namespace {
const ref::table& e4m3_table() {
  static const ref::table t(ref::e4m3);
  return t;
}
const ref::table& e5m2_table() {
  static const ref::table t(ref::e5m2);
  return t;
}

template <class T>
void conversions(const ref::table& t, std::uint64_t seed) {
  constexpr long n = 2'000'000;
  SECTION("float, saturating constructor") {
    check::float_conversion(
        t, true, "T(float)", [](float x) { return unsigned(T(x).bits()); }, n, seed);
  }
  SECTION("float, from_float(saturate)") {
    check::float_conversion(
        t, true, "from_float(saturate)",
        [](float x) { return unsigned(T::from_float(x, overflow::saturate).bits()); }, n, seed + 1);
  }
  SECTION("float, from_float(propagate)") {
    check::float_conversion(
        t, false, "from_float(propagate)",
        [](float x) { return unsigned(T::from_float(x, overflow::propagate).bits()); }, n, seed + 2);
  }
  SECTION("double, saturating constructor") {
    check::double_conversion(
        t, true, "T(double)", [](double x) { return unsigned(T(x).bits()); }, n / 2, seed + 3);
    check::no_double_rounding<T>(t, true);
  }
  SECTION("double, from_double(propagate)") {
    check::double_conversion(
        t, false, "from_double(propagate)",
        [](double x) { return unsigned(T::from_double(x, overflow::propagate).bits()); }, n / 2, seed + 4);
  }
}
}  // namespace

TEST_CASE("f8_e4m3: every encoding decodes to the formula value and round-trips", "[numeric][f8]") {
  check::decode_and_round_trip<f8_e4m3>(ref::e4m3);
  // E4M3FN: exactly two NaN encodings, no Inf
  int nans = 0;
  for (unsigned c = 0; c < 256; ++c) nans += std::isnan(float(f8_e4m3::from_bits(std::uint8_t(c))));
  CHECK(nans == 2);
  CHECK(std::isnan(float(f8_e4m3::from_bits(0x7F))));
  CHECK(std::isnan(float(f8_e4m3::from_bits(0xFF))));
  CHECK(float(f8_e4m3::from_bits(0x7C)) == 384.0f);  // S.1111.100 is a number here, not Inf
}

TEST_CASE("f8_e5m2: every encoding decodes to the formula value and round-trips", "[numeric][f8]") {
  check::decode_and_round_trip<f8_e5m2>(ref::e5m2);
  CHECK(std::isinf(float(f8_e5m2::from_bits(0x7C))));
  int nans = 0;
  for (unsigned c = 0; c < 256; ++c) nans += std::isnan(float(f8_e5m2::from_bits(std::uint8_t(c))));
  CHECK(nans == 6);
}

TEST_CASE("f8_e4m3: conversions match the nearest-even reference", "[numeric][f8]") {
  conversions<f8_e4m3>(e4m3_table(), ref::test_seed());
}

TEST_CASE("f8_e5m2: conversions match the nearest-even reference", "[numeric][f8]") {
  conversions<f8_e5m2>(e5m2_table(), ref::test_seed() + 100);
}

TEST_CASE("f8: the double-rounding case by hand", "[numeric][f8]") {
  // 1 + 2^-4 is the midpoint of 1 and 1 + 2^-3 in e4m3; 2^-40 above it float cannot see.
  const double d = 1.0 + 0x1p-4 + 0x1p-40;
  CHECK(f8_e4m3(d).bits() == 0x39);
  CHECK(f8_e4m3(static_cast<float>(d)).bits() == 0x38);
  const double d5 = 1.0 + 0x1p-3 + 0x1p-40;  // e5m2: midpoint of 1 and 1.25
  CHECK(f8_e5m2(d5).bits() == 0x3D);
  CHECK(f8_e5m2(static_cast<float>(d5)).bits() == 0x3C);
}

TEST_CASE("f8: numeric_limits", "[numeric][f8]") {
  using L4 = std::numeric_limits<f8_e4m3>;
  using L5 = std::numeric_limits<f8_e5m2>;
  STATIC_REQUIRE(L4::is_specialized && !L4::has_infinity && L4::has_quiet_NaN && !L4::has_signaling_NaN);
  STATIC_REQUIRE(L5::is_specialized && L5::has_infinity && L5::has_quiet_NaN && L5::has_signaling_NaN);
  STATIC_REQUIRE(L4::digits == 4 && L5::digits == 3);
  STATIC_REQUIRE(L4::min_exponent == -5 && L4::max_exponent == 9);
  STATIC_REQUIRE(L5::min_exponent == -13 && L5::max_exponent == 16);
  CHECK(float(L4::max()) == 448.0f);
  CHECK(float(L4::lowest()) == -448.0f);
  CHECK(float(L4::min()) == 0x1p-6f);
  CHECK(float(L4::denorm_min()) == 0x1p-9f);
  CHECK(float(L4::epsilon()) == 0.125f);
  CHECK(float(L4::round_error()) == 0.5f);
  CHECK(std::isnan(float(L4::quiet_NaN())));
  CHECK(float(L5::max()) == 57344.0f);
  CHECK(float(L5::lowest()) == -57344.0f);
  CHECK(float(L5::min()) == 0x1p-14f);
  CHECK(float(L5::denorm_min()) == 0x1p-16f);
  CHECK(float(L5::epsilon()) == 0.25f);
  CHECK(std::isinf(float(L5::infinity())));
  CHECK(std::isnan(float(L5::quiet_NaN())));
  CHECK(std::isnan(float(L5::signaling_NaN())));
  CHECK(L4::max_exponent10 == int(std::floor(std::log10(448.0))));
  CHECK(L4::min_exponent10 == int(std::ceil(std::log10(0x1p-6))));
  CHECK(L5::max_exponent10 == int(std::floor(std::log10(57344.0))));
  CHECK(L5::min_exponent10 == int(std::ceil(std::log10(0x1p-14))));
  // digits10 / max_digits10 from their definitions
  CHECK(L4::digits10 == int(std::floor((L4::digits - 1) * std::log10(2.0))));
  CHECK(L4::max_digits10 == int(std::ceil(1 + L4::digits * std::log10(2.0))));
  CHECK(L5::digits10 == int(std::floor((L5::digits - 1) * std::log10(2.0))));
  CHECK(L5::max_digits10 == int(std::ceil(1 + L5::digits * std::log10(2.0))));
}
