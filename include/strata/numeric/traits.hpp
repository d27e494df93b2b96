// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/numeric/traits.hpp -- what generic code asks of Strata's narrow floating-point types.
//
//   is_narrow_float_v<T> / concept narrow_float   T is f16, bf16, f8_e4m3 or f8_e5m2
//   numeric_traits<T>                              storage type and the format's bit layout
#pragma once

#include <type_traits>

namespace strata {

/// Specialized to true by each narrow type's header (f16.hpp, bf16.hpp, f8.hpp).
template <class T>
struct is_narrow_float : std::false_type {};

template <class T>
inline constexpr bool is_narrow_float_v = is_narrow_float<std::remove_cv_t<T>>::value;

template <class T>
concept narrow_float = is_narrow_float_v<T>;

/// Layout facts of a narrow type. Every such type declares them as static members.
template <narrow_float T>
struct numeric_traits {
  using storage_type = typename T::storage_type;  // the raw bits: std::uint16_t or std::uint8_t
  static constexpr int exponent_bits = T::exponent_bits;
  static constexpr int mantissa_bits = T::mantissa_bits;  // explicit bits, without the implicit one
  static constexpr int exponent_bias = T::exponent_bias;
  static constexpr bool has_infinity = T::has_infinity;
};

}  // namespace strata
