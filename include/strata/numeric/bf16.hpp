// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/numeric/bf16.hpp -- bf16, "brain float": the top 16 bits of an IEEE binary32 (1 sign,
// 8 exponent, 7 mantissa bits, bias 127), as a storage type with the same bits on every backend.
//
// Conversions: from float and from double round once, to nearest, ties to even (not truncation);
// overflow gives Inf (|x| >= 0x1.FFp127 -> Inf); subnormals (f32 subnormals with 7 mantissa bits)
// are produced and read exactly; NaN gives the canonical NaN with the input's sign (0x7FFF / 0xFFFF).
// To float (and double) is exact.
//
// Backends: the software conversion in detail/format.hpp is the definition. The CUDA device pass
// uses cvt.rn.bf16.f32 (sm_80+, Strata's oldest CUDA target; round-to-nearest-even, subnormals
// kept) for float -> bf16 and rewrites its NaN to the canonical one. HIP: gfx90a/gfx942 have no
// f32 -> bf16 instruction, so software everywhere there. Define STRATA_NUMERIC_SOFTWARE_ONLY to use
// software on the device too.
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

struct bf16 {
  using storage_type = std::uint16_t;
  static constexpr int exponent_bits = 8;
  static constexpr int mantissa_bits = 7;
  static constexpr int exponent_bias = 127;
  static constexpr bool has_infinity = true;

  /// Trivial, like float: leaves the bits indeterminate.
  bf16() = default;
  STRATA_HOST_DEVICE constexpr explicit bf16(float x) noexcept : bits_(narrow(x)) {}
  /// Rounds directly from double: bf16(double) may differ from bf16(float(double)).
  STRATA_HOST_DEVICE constexpr explicit bf16(double x) noexcept
      : bits_(storage_type(detail::fp::from_double<detail::fp::bf16_format>(x, overflow::propagate))) {}
  /// Through double: correctly rounded for |i| <= 2^53.
  template <std::integral I>
  STRATA_HOST_DEVICE constexpr explicit bf16(I i) noexcept : bf16(double(i)) {}

  STRATA_HOST_DEVICE static constexpr bf16 from_bits(storage_type bits) noexcept {
    bf16 r{};
    r.bits_ = bits;
    return r;
  }
  STRATA_HOST_DEVICE constexpr storage_type bits() const noexcept { return bits_; }

  STRATA_HOST_DEVICE constexpr explicit operator float() const noexcept {
    return detail::fp::to_float<detail::fp::bf16_format>(bits_);
  }
  STRATA_HOST_DEVICE constexpr explicit operator double() const noexcept { return double(float(*this)); }

 private:
  STRATA_HOST_DEVICE static constexpr storage_type narrow(float x) noexcept {
#if STRATA_CUDA_DEVICE_PASS && !defined(STRATA_NUMERIC_SOFTWARE_ONLY)
    if (!detail::fp::constant_evaluated()) {
      unsigned short h;
      asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
      return storage_type(detail::fp::with_canonical_nan<detail::fp::bf16_format>(x, h));
    }
#endif
    return storage_type(detail::fp::from_float<detail::fp::bf16_format>(x, overflow::propagate));
  }

  storage_type bits_;
};

template <>
struct is_narrow_float<bf16> : std::true_type {};

}  // namespace strata

template <>
struct std::numeric_limits<strata::bf16>
    : strata::detail::fp::limits_base<strata::bf16, strata::detail::fp::bf16_format, false, -37, 38> {};
