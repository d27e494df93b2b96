// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/numeric/f16.hpp -- f16, IEEE 754 binary16 (1 sign, 5 exponent, 10 mantissa bits, bias 15),
// as a storage type with the same bits on every backend.
//
// Conversions: from float and from double round once, to nearest, ties to even; overflow gives Inf
// (|x| >= 65520 -> Inf); subnormals are produced and read exactly; NaN gives the canonical NaN with
// the input's sign (0x7FFF / 0xFFFF). To float (and double) is exact.
//
// Backends: the software conversion in detail/format.hpp is the definition. The CUDA device pass
// uses cvt.rn.f16.f32 (IEEE round-to-nearest-even with subnormals, every sm) for float -> f16 and
// rewrites its NaN to the canonical one; everything else runs the software path on every backend.
// Define STRATA_NUMERIC_SOFTWARE_ONLY to use software on the device too (e.g. to test one against
// the other). cuda_fp16.h is never included: __half interop belongs to the CUDA-only layers.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>

#include "strata/config/config.hpp"
#include "strata/numeric/detail/format.hpp"
#include "strata/numeric/detail/limits.hpp"
#include "strata/numeric/detail/operators.hpp"
#include "strata/numeric/traits.hpp"

namespace strata {

struct f16 {
  using storage_type = std::uint16_t;
  static constexpr int exponent_bits = 5;
  static constexpr int mantissa_bits = 10;
  static constexpr int exponent_bias = 15;
  static constexpr bool has_infinity = true;

  /// Trivial, like float: leaves the bits indeterminate, so arrays of f16 in shared memory cost nothing.
  f16() = default;
  STRATA_HOST_DEVICE constexpr explicit f16(float x) noexcept : bits_(narrow(x)) {}
  /// Rounds directly from double: f16(double) may differ from f16(float(double)) (no double rounding).
  STRATA_HOST_DEVICE constexpr explicit f16(double x) noexcept
      : bits_(storage_type(detail::fp::from_double<detail::fp::f16_format>(x, overflow::propagate))) {}
  /// Through double: exact for |i| <= 2^53, which covers every integer below f16's overflow.
  template <std::integral I>
  STRATA_HOST_DEVICE constexpr explicit f16(I i) noexcept : f16(double(i)) {}

  STRATA_HOST_DEVICE static constexpr f16 from_bits(storage_type bits) noexcept {
    f16 r{};
    r.bits_ = bits;
    return r;
  }
  STRATA_HOST_DEVICE constexpr storage_type bits() const noexcept { return bits_; }

  STRATA_HOST_DEVICE constexpr explicit operator float() const noexcept {
    return detail::fp::to_float<detail::fp::f16_format>(bits_);
  }
  STRATA_HOST_DEVICE constexpr explicit operator double() const noexcept { return double(float(*this)); }

 private:
  STRATA_HOST_DEVICE static constexpr storage_type narrow(float x) noexcept {
#if STRATA_CUDA_DEVICE_PASS && !defined(STRATA_NUMERIC_SOFTWARE_ONLY)
    if (!detail::fp::constant_evaluated()) {
      unsigned short h;
      asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
      return storage_type(detail::fp::with_canonical_nan<detail::fp::f16_format>(x, h));
    }
#endif
    return storage_type(detail::fp::from_float<detail::fp::f16_format>(x, overflow::propagate));
  }

  storage_type bits_;
};

template <>
struct is_narrow_float<f16> : std::true_type {};

}  // namespace strata

template <>
struct std::numeric_limits<strata::f16>
    : strata::detail::fp::limits_base<strata::f16, strata::detail::fp::f16_format, true, -4, 4> {};
