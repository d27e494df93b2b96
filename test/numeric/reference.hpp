// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/numeric/reference.hpp -- an independent model of the narrow formats for the numeric tests.
//
// Shares nothing with include/strata/numeric: values come from the textbook formula
// (-1)^s * 2^(e-bias) * (1 + m/2^M) evaluated with std::ldexp in double, and rounding is a
// brute-force nearest-value search over the sorted table of every finite value, ties to the even
// encoding. Overflow is modelled by one virtual value past the max (max + ulp(max)): a value that
// rounds to it has overflowed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace ref {

struct spec {
  const char* name;
  int exp_bits;
  int man_bits;
  int bias;
  bool ieee;  // true: all-ones exponent is Inf (m == 0) or NaN; false (E4M3FN): only S.1111.111 is NaN
  unsigned canonical_nan;  // the magnitude encoding Strata documents for NaN results
};

inline constexpr spec f16{"f16", 5, 10, 15, true, 0x7FFF};
inline constexpr spec bf16{"bf16", 8, 7, 127, true, 0x7FFF};
inline constexpr spec e4m3{"f8_e4m3", 4, 3, 7, false, 0x7F};
inline constexpr spec e5m2{"f8_e5m2", 5, 2, 15, true, 0x7F};

inline unsigned sign_bit(const spec& s) { return 1u << (s.exp_bits + s.man_bits); }
inline unsigned code_count(const spec& s) { return 1u << (1 + s.exp_bits + s.man_bits); }

/// The value of an encoding, from the formula; NaN for NaN encodings.
inline double decode(const spec& s, unsigned code) {
  const unsigned m = code & ((1u << s.man_bits) - 1);
  const unsigned e = (code >> s.man_bits) & ((1u << s.exp_bits) - 1);
  const bool neg = (code & sign_bit(s)) != 0;
  const unsigned e_all = (1u << s.exp_bits) - 1;
  double mag;
  if (s.ieee && e == e_all) {
    mag = m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (!s.ieee && e == e_all && m == (1u << s.man_bits) - 1) {
    mag = std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    mag = std::ldexp(double(m), 1 - s.bias - s.man_bits);
  } else {
    mag = std::ldexp(1.0 + std::ldexp(double(m), -s.man_bits), int(e) - s.bias);
  }
  return neg ? -mag : mag;
}

struct entry {
  double value;
  unsigned code;
};

/// Every finite non-negative value, ascending, then the virtual overflow value.
struct table {
  spec s;
  std::vector<entry> finite;  // includes the virtual entry last
  unsigned max_code = 0;
  unsigned inf_code = 0;  // ieee formats only

  explicit table(const spec& sp) : s(sp) {
    for (unsigned c = 0; c < sign_bit(s); ++c) {
      const double v = decode(s, c);
      if (std::isfinite(v)) finite.push_back({v, c});
      if (std::isinf(v)) inf_code = c;
    }
    std::sort(finite.begin(), finite.end(), [](entry a, entry b) { return a.value < b.value; });
    const entry mx = finite.back();
    const entry before = finite[finite.size() - 2];
    max_code = mx.code;
    finite.push_back({mx.value + (mx.value - before.value), mx.code + 1});
  }

  double max_value() const { return finite[finite.size() - 2].value; }

  /// Nearest encoding of v (ties to even), with the overflow rule. saturate: +-max; otherwise Inf
  /// (ieee) or NaN. NaN inputs give the canonical NaN with v's sign.
  unsigned round(double v, bool saturate) const {
    const unsigned sign = std::signbit(v) ? sign_bit(s) : 0u;
    if (std::isnan(v)) return sign | s.canonical_nan;
    const double a = std::fabs(v);
    const unsigned overflowed = saturate ? max_code : (s.ieee ? inf_code : s.canonical_nan);
    if (a >= finite.back().value) return sign | overflowed;  // also Inf
    // first entry > a; a is in [lo, hi)
    const auto it = std::upper_bound(finite.begin(), finite.end(), a,
                                     [](double x, const entry& e) { return x < e.value; });
    const entry hi = *it;
    const entry lo = *(it - 1);
    const double mid = (lo.value + hi.value) / 2;  // exact: neighbours differ in few bits
    entry pick = a < mid ? lo : (a > mid ? hi : ((lo.code & 1u) == 0 ? lo : hi));
    if (pick.code > max_code) return sign | overflowed;
    return sign | pick.code;
  }

  /// Midpoints between consecutive values, the one between max and the overflow value included.
  std::vector<double> midpoints() const {
    std::vector<double> r;
    for (std::size_t i = 0; i + 1 < finite.size(); ++i)
      r.push_back((finite[i].value + finite[i + 1].value) / 2);
    return r;
  }
};

/// Floats spread over the interesting range of a format: random sign, exponent uniform over the
/// format's range +-3 binades (clamped to float), random 23-bit mantissa; a quarter are raw random
/// bit patterns (any exponent, NaN and Inf included).
inline float random_float(const spec& s, std::mt19937_64& rng) {
  const std::uint64_t r = rng();
  if ((r & 3u) == 0) {
    const std::uint32_t b = std::uint32_t(r >> 32);
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  }
  const int emin = 1 - s.bias - s.man_bits - 3;
  const int emax = (1 << s.exp_bits) - 1 - s.bias + 3;
  int e = emin + int((r >> 2) % std::uint64_t(emax - emin + 1));
  e = std::clamp(e, -149, 127);
  const double mant = 1.0 + std::ldexp(double((r >> 16) & 0x7FFFFF), -23);
  float f = float(std::ldexp(mant, e));  // exact above 2^-126; below, rounds to a float subnormal
  return (r >> 63) ? -f : f;
}

/// The same for doubles, with a 52-bit random mantissa.
inline double random_double(const spec& s, std::mt19937_64& rng) {
  const std::uint64_t r = rng();
  const std::uint64_t m = rng() & ((std::uint64_t(1) << 52) - 1);
  const int emin = 1 - s.bias - s.man_bits - 3;
  const int emax = (1 << s.exp_bits) - 1 - s.bias + 3;
  const int e = emin + int(r % std::uint64_t(emax - emin + 1));
  const double d = std::ldexp(1.0 + std::ldexp(double(m), -52), e);
  return (r >> 63) ? -d : d;
}

inline std::uint64_t test_seed() {
  constexpr std::uint64_t seed = 0x5742A7A5EEDULL;
  std::printf("numeric tests: random seed 0x%llx\n", static_cast<unsigned long long>(seed));
  return seed;
}

}  // namespace ref
