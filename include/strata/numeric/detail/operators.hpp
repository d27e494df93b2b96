// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/numeric/detail/operators.hpp -- comparison and arithmetic for every narrow type.
//
// Comparisons follow IEEE semantics by widening to float (exact): NaN is unordered and unequal to
// itself, -0 == +0. Arithmetic computes in float and rounds the float result back with the type's
// default conversion (f8: saturating). One rounding from float is what the hardware does when it
// computes in f32 registers; it is not a correctly rounded narrow operation in every case.
// Found by ADL: the operators live in namespace strata, next to the types.
#pragma once

#include "strata/config/config.hpp"
#include "strata/numeric/traits.hpp"

namespace strata {

template <narrow_float T>
STRATA_HOST_DEVICE constexpr bool operator==(T a, T b) noexcept {
  return float(a) == float(b);
}
template <narrow_float T>
STRATA_HOST_DEVICE constexpr bool operator!=(T a, T b) noexcept {
  return float(a) != float(b);
}
template <narrow_float T>
STRATA_HOST_DEVICE constexpr bool operator<(T a, T b) noexcept {
  return float(a) < float(b);
}
template <narrow_float T>
STRATA_HOST_DEVICE constexpr bool operator<=(T a, T b) noexcept {
  return float(a) <= float(b);
}
template <narrow_float T>
STRATA_HOST_DEVICE constexpr bool operator>(T a, T b) noexcept {
  return float(a) > float(b);
}
template <narrow_float T>
STRATA_HOST_DEVICE constexpr bool operator>=(T a, T b) noexcept {
  return float(a) >= float(b);
}

template <narrow_float T>
STRATA_HOST_DEVICE constexpr T operator+(T a) noexcept {
  return a;
}
/// Negation flips the sign bit, exactly as IEEE negate does (NaN stays NaN in every format).
template <narrow_float T>
STRATA_HOST_DEVICE constexpr T operator-(T a) noexcept {
  using S = typename T::storage_type;
  return T::from_bits(S(a.bits() ^ S(S(1) << (sizeof(S) * 8 - 1))));
}

template <narrow_float T>
STRATA_HOST_DEVICE constexpr T operator+(T a, T b) noexcept {
  return T(float(a) + float(b));
}
template <narrow_float T>
STRATA_HOST_DEVICE constexpr T operator-(T a, T b) noexcept {
  return T(float(a) - float(b));
}
template <narrow_float T>
STRATA_HOST_DEVICE constexpr T operator*(T a, T b) noexcept {
  return T(float(a) * float(b));
}
template <narrow_float T>
STRATA_HOST_DEVICE constexpr T operator/(T a, T b) noexcept {
  return T(float(a) / float(b));
}

template <narrow_float T>
STRATA_HOST_DEVICE constexpr T& operator+=(T& a, T b) noexcept {
  return a = a + b;
}
template <narrow_float T>
STRATA_HOST_DEVICE constexpr T& operator-=(T& a, T b) noexcept {
  return a = a - b;
}
template <narrow_float T>
STRATA_HOST_DEVICE constexpr T& operator*=(T& a, T b) noexcept {
  return a = a * b;
}
template <narrow_float T>
STRATA_HOST_DEVICE constexpr T& operator/=(T& a, T b) noexcept {
  return a = a / b;
}

}  // namespace strata
