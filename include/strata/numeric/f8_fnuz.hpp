// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/numeric/f8_fnuz.hpp -- the two "FNUZ" 8-bit floating-point storage types that AMD CDNA3
// (gfx940/941/942, MI300) matrix cores read:
//
//   f8_e4m3_fnuz  1 sign, 4 exponent, 3 mantissa bits, bias 8. No Inf, no -0; the only NaN is 0x80.
//                 Max 240 (0x7F), min normal 2^-7, min subnormal 2^-10.
//   f8_e5m2_fnuz  1 sign, 5 exponent, 2 mantissa bits, bias 16. No Inf, no -0; the only NaN is 0x80.
//                 Max 57344 (0x7F), min normal 2^-15, min subnormal 2^-17.
//
// They differ from the OCP f8_e4m3 / f8_e5m2 of f8.hpp in bias and special values, so the same bits
// mean different numbers: 0x38 is 1.0 in OCP E4M3 but 0.5 in E4M3FNUZ. Keeping them distinct types is
// what stops OCP data from being fed to a CDNA3 fp8 MFMA (mma/mfma.hpp takes only these).
//
// Conversions from float/double round once, to nearest, ties to even, through the shared software
// conversion (detail/format.hpp), with the FNUZ special cases here: NaN -> 0x80, a result that
// rounds to zero is +0 whatever the sign (0x80 is NaN, not -0). Default overflow: saturate to +-max,
// as for the OCP types; from_float(x, overflow::propagate) gives NaN (there is no Inf).
// To float is exact.
#pragma once

#include <cstdint>

#include "strata/config/config.hpp"
#include "strata/numeric/detail/bits.hpp"
#include "strata/numeric/detail/format.hpp"
#include "strata/numeric/detail/storage_float.hpp"
#include "strata/numeric/overflow.hpp"

namespace strata {

enum class f8_fnuz_kind { e4m3, e5m2 };

namespace detail {
// `nan` = 0x80 makes round_bits return sign|0x80 == 0x80 for NaN and for propagated overflow; it
// never equals a magnitude (<= 0x7F), so to_float never mistakes a finite encoding for NaN.
template <f8_fnuz_kind Kind>
inline constexpr fp::format fnuz_f8_format =
    Kind == f8_fnuz_kind::e4m3 ? fp::format{4, 3, 8, false, 0x7Fu, 0u, 0x80u}
                               : fp::format{5, 2, 16, false, 0x7Fu, 0u, 0x80u};
}  // namespace detail

/// The members and factories are those of every narrow type (detail/storage_float.hpp); what FNUZ
/// changes is its special values, so it replaces the encoding and decoding.
template <f8_fnuz_kind Kind>
struct basic_f8_fnuz
    : detail::fp::storage_float<basic_f8_fnuz<Kind>, detail::fnuz_f8_format<Kind>, overflow::saturate> {
 private:
  using base =
      detail::fp::storage_float<basic_f8_fnuz<Kind>, detail::fnuz_f8_format<Kind>, overflow::saturate>;
  friend base;
  static constexpr detail::fp::format fmt = detail::fnuz_f8_format<Kind>;
  static constexpr std::uint8_t nan_bits = 0x80;

  template <class U>
  STRATA_HOST_DEVICE static constexpr std::uint8_t encode(U x, overflow ov) noexcept {
    constexpr int sign_shift = sizeof(U) * 8 - 1;
    constexpr U abs_mask = (U(1) << sign_shift) - 1;
    constexpr U inf = sizeof(U) == 4 ? U(0x7F800000u) : U(0x7FF0000000000000ull);
    constexpr U one = sizeof(U) == 4 ? U(0x3F800000u) : U(0x3FF0000000000000ull);
    const U a = x & abs_mask;
    if (a > inf) return nan_bits;
    const std::uint32_t r = detail::fp::round_bits<fmt>(x, ov);
    if ((r & 0x7Fu) != 0) return std::uint8_t(r);
    // Magnitude 0: either the value rounds to zero (-> +0, FNUZ has no -0) or it overflowed with
    // overflow::propagate (-> NaN). Values below 1 cannot overflow; values of 1 and above cannot round to 0.
    return a < one ? std::uint8_t(0) : nan_bits;
  }
  STRATA_HOST_DEVICE static constexpr std::uint8_t encode_float(float x, overflow ov) noexcept {
    return encode(detail::fp::bits_of(x), ov);
  }
  STRATA_HOST_DEVICE static constexpr std::uint8_t encode_double(double x, overflow ov) noexcept {
    return encode(detail::fp::bits_of(x), ov);
  }
  STRATA_HOST_DEVICE static constexpr float decode(std::uint8_t bits) noexcept {
    if (bits == nan_bits) return detail::fp::bit_cast<float>(0x7FC00000u);
    return detail::fp::to_float<fmt>(bits);
  }

 public:
  using base::base;
  STRATA_HOST_DEVICE constexpr bool is_nan() const noexcept { return this->bits() == nan_bits; }
};

using f8_e4m3_fnuz = basic_f8_fnuz<f8_fnuz_kind::e4m3>;
using f8_e5m2_fnuz = basic_f8_fnuz<f8_fnuz_kind::e5m2>;

}  // namespace strata
