// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/epilogue/convert.hpp -- convert_to<T>: the output conversion that ends every chain.
//
//   T = float            float(v) (an int32 value rounds to nearest even above 2^24)
//   T = f16, bf16,       round to nearest, ties to even, through numeric/. Overflow (Ov):
//       f8_e4m3,           overflow::saturate (the DEFAULT, for every narrow type): a result beyond
//       f8_e5m2            the largest finite value becomes +-max, +-Inf included; NaN stays NaN.
//                          This is fp8's own default (cvt.rn.satfinite) extended to f16 and bf16,
//                          so that one overflowing element of an output tile does not become an Inf
//                          that poisons whatever consumes the tensor next.
//                        overflow::propagate: IEEE overflow: +-Inf, or NaN for f8_e4m3 (no Inf),
//                          as numeric/'s f16(float) and f8_e4m3::from_float(x, propagate) do.
//                        Saturation here is exact: clamping to +-max before rounding gives the same
//                        bits as a saturating rounding, because every value that rounds to at most
//                        max is unchanged by the clamp, and max rounds to itself.
//   T = an integer type  (std::int8_t, std::uint8_t, std::int16_t, std::int32_t, ...): round to
//   of at most 32 bits     nearest, ties to even, then saturate to T's range; NaN -> 0. That is
//                          CUDA's cvt.rni.sat.s8.f32 / .s32.f32. Integers always saturate: a
//                          convert_to<std::int8_t, overflow::propagate> is rejected.
//                          From an int32 value: saturate only (no rounding needed).
// An int32 value converted to a narrow float goes through double, which holds it exactly: one
// rounding, not two (int32 -> float -> bf16 could round twice).
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "strata/config/config.hpp"
#include "strata/epilogue/detail/math.hpp"
#include "strata/epilogue/op.hpp"
#include "strata/numeric/numeric.hpp"

namespace strata::epilogue {

namespace detail {

template <class T>
concept integer_output = std::is_integral_v<T> && !std::same_as<T, bool> && sizeof(T) <= 4;

template <class T>
concept output_type = std::same_as<T, float> || narrow_float<T> || integer_output<T>;

// T's range, as variables: nvcc does not let device code call the host-only constexpr
// std::numeric_limits<T>::min() / max(), even in a constant expression; reading a constexpr scalar is fine.
template <class T>
inline constexpr std::int64_t integer_min = std::numeric_limits<T>::min();
template <class T>
inline constexpr std::int64_t integer_max = std::numeric_limits<T>::max();

// To integer T from float: round to nearest even, saturate, NaN -> 0.
template <class T>
STRATA_HOST_DEVICE T float_to_integer(float x) {
  // T's range as floats: lo = min (-2^digits or 0) and hi_excl = max + 1 = 2^digits, both exact.
  constexpr float lo = static_cast<float>(integer_min<T>);
  constexpr float hi_excl = static_cast<float>(integer_max<T> + 1);
  if (!(x == x)) return T(0);  // NaN
  const float r = rint(x);     // integral (or +-Inf) from here on
  return r < lo ? T(integer_min<T>) : (r >= hi_excl ? T(integer_max<T>) : static_cast<T>(r));
}

// To integer T from int32: saturate.
template <class T>
STRATA_HOST_DEVICE T int32_to_integer(std::int32_t v) {
  constexpr std::int64_t min = integer_min<T>, max = integer_max<T>;
  return v < min ? T(min) : (v > max ? T(max) : static_cast<T>(v));
}

// To narrow float T, from float or (exactly held) double.
template <class T, overflow Ov, class F>
STRATA_HOST_DEVICE T to_narrow(F x) {
  if constexpr (Ov == overflow::saturate) {
    constexpr F max = static_cast<F>(static_cast<float>(std::numeric_limits<T>::max()));
    x = x > max ? max : (x < -max ? -max : x);  // NaN fails both tests and stays NaN
    return T(x);
  } else if constexpr (requires { T::from_float(0.f, Ov); }) {
    // f8: the overflow rule is an argument.
    if constexpr (std::same_as<F, float>)
      return T::from_float(x, Ov);
    else
      return T::from_double(x, Ov);
  } else {
    return T(x);  // f16, bf16: the constructors overflow to Inf
  }
}

}  // namespace detail

/// The output conversion: ends a chain, and names the type stored to memory.
template <class T, overflow Ov = overflow::saturate>
struct convert_to {
  static_assert(detail::output_type<T>,
                "convert_to<T>: T must be float, f16, bf16, f8_e4m3, f8_e5m2 or an integer type of at most "
                "32 bits (e.g. std::int8_t, std::int32_t).");
  static_assert(!detail::integer_output<T> || Ov == overflow::saturate,
                "convert_to<integer, overflow::propagate>: integer outputs have no Inf or NaN to overflow to; "
                "they always saturate. Drop the overflow argument.");

  using output_type = T;
  using params = no_params;

  template <value V>
  STRATA_HOST_DEVICE T operator()(V v, int, int, const params&) const {
    if constexpr (std::same_as<T, float>) {
      return static_cast<float>(v);
    } else if constexpr (detail::integer_output<T>) {
      if constexpr (std::same_as<V, float>)
        return detail::float_to_integer<T>(v);
      else
        return detail::int32_to_integer<T>(v);
    } else {
      if constexpr (std::same_as<V, float>)
        return detail::to_narrow<T, Ov>(v);
      else
        return detail::to_narrow<T, Ov>(static_cast<double>(v));
    }
  }

  /// Two values converted at once, with the same bits as two calls of operator(). On the CUDA device
  /// f16 and bf16 round both in one cvt.rn.{f16,bf16}x2.f32 (after the same clamp, for saturate):
  /// per pair that replaces two conversions with their NaN checks and the pack into one register.
  template <value V>
  STRATA_HOST_DEVICE output_pair<T> pair(V a, V b, const params& p) const {
#if STRATA_CUDA_DEVICE_PASS && !defined(STRATA_NUMERIC_SOFTWARE_ONLY)
    if constexpr (std::same_as<V, float> && (std::same_as<T, f16> || std::same_as<T, bf16>)) {
      if constexpr (Ov == overflow::saturate) {
        constexpr float max = static_cast<float>(std::numeric_limits<T>::max());
        a = a > max ? max : (a < -max ? -max : a);  // as to_narrow: NaN fails both tests and stays NaN
        b = b > max ? max : (b < -max ? -max : b);
      }
      return strata::detail::fp::bit_cast<output_pair<T>>(
          strata::detail::fp::cuda_round_pair<T::bit_format>(a, b));
    }
#endif
    return {(*this)(a, 0, 0, p), (*this)(b, 0, 0, p)};
  }
};

}  // namespace strata::epilogue
