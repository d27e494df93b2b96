// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/numeric/detail/limits.hpp -- the std::numeric_limits members shared by the narrow types,
// derived from the format description so each type states only what differs.
#pragma once

#include <limits>

#include "strata/config/config.hpp"
#include "strata/numeric/detail/format.hpp"

namespace strata::detail::fp {

/// T must provide static from_bits. min/max_exponent10 are not derivable without logarithms; the
/// type passes them in.
template <class T, format F, bool IEC559, int MinExponent10, int MaxExponent10>
struct limits_base {
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = F.has_inf;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = F.has_inf;  // E4M3FN has one NaN encoding only
  static constexpr std::float_denorm_style has_denorm = std::denorm_present;
  static constexpr bool has_denorm_loss = false;
  static constexpr std::float_round_style round_style = std::round_to_nearest;
  static constexpr bool is_iec559 = IEC559;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = F.man_bits + 1;
  static constexpr int digits10 = (digits - 1) * 30103 / 100000;    // floor((digits-1) log10 2)
  static constexpr int max_digits10 = 2 + digits * 30103 / 100000;  // ceil(1 + digits log10 2)
  static constexpr int radix = 2;
  static constexpr int min_exponent = 2 - F.bias;
  static constexpr int max_exponent = int(F.max_finite >> F.man_bits) - F.bias + 1;
  static constexpr int min_exponent10 = MinExponent10;
  static constexpr int max_exponent10 = MaxExponent10;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;

  STRATA_HOST_DEVICE static constexpr T min() noexcept { return T::from_bits(1u << F.man_bits); }
  STRATA_HOST_DEVICE static constexpr T max() noexcept { return T::from_bits(F.max_finite); }
  STRATA_HOST_DEVICE static constexpr T lowest() noexcept {
    return T::from_bits((1u << F.sign_shift()) | F.max_finite);
  }
  STRATA_HOST_DEVICE static constexpr T epsilon() noexcept {
    return T::from_bits(std::uint32_t(F.bias - F.man_bits) << F.man_bits);
  }
  STRATA_HOST_DEVICE static constexpr T round_error() noexcept {
    return T::from_bits(std::uint32_t(F.bias - 1) << F.man_bits);
  }
  /// Formats without Inf return +0, as the standard asks of types where has_infinity is false.
  STRATA_HOST_DEVICE static constexpr T infinity() noexcept { return T::from_bits(F.has_inf ? F.inf : 0u); }
  STRATA_HOST_DEVICE static constexpr T quiet_NaN() noexcept { return T::from_bits(F.nan); }
  /// Exponent all ones, quiet bit clear, payload nonzero; +0 where the format has no such encoding.
  STRATA_HOST_DEVICE static constexpr T signaling_NaN() noexcept {
    return T::from_bits(F.has_inf ? (F.inf | (1u << (F.man_bits - 2))) : 0u);
  }
  STRATA_HOST_DEVICE static constexpr T denorm_min() noexcept { return T::from_bits(1u); }
};

}  // namespace strata::detail::fp
