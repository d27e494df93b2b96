// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/numeric/detail/storage_float.hpp -- what every narrow floating-point storage type of Strata
// is, written once: its bits, construction by rounding from float, double and integers, the
// from_float / from_double / from_bits factories, and exact widening to float and double.
//
// f16, bf16, the OCP fp8 types and the FNUZ fp8 types used to spell all of this out one by one; they
// now derive from storage_float and state only what differs, each in its own header:
//   - the format (bit layout, bias, special values) and the default overflow policy;
//   - a device instruction that may replace the software float -> bits rounding (f16, bf16);
//   - special values the shared software conversion does not model (FNUZ: one NaN, no -0).
// The device instruction is chosen here by format (cuda_rounds_float_to). A derived type hides
// `encode_float`, `encode_double` or `decode` to change special values (and makes the base its
// friend if it keeps them private); the base calls them as Derived::..., so one the derived type
// does not hide is this header's conversion.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>

#include "strata/config/config.hpp"
#include "strata/numeric/detail/bits.hpp"
#include "strata/numeric/detail/format.hpp"
#include "strata/numeric/overflow.hpp"

namespace strata::detail::fp {

STRATA_HOST_DEVICE constexpr bool same_format(const format& a, const format& b) noexcept {
  return a.exp_bits == b.exp_bits && a.man_bits == b.man_bits && a.bias == b.bias && a.has_inf == b.has_inf;
}

/// Formats whose float -> bits rounding has a CUDA instruction with exactly the software bits once
/// its NaN is made canonical: cvt.rn.f16.f32 (every sm) and cvt.rn.bf16.f32 (sm_80+, Strata's oldest
/// CUDA target), both round-to-nearest-even with subnormals kept and overflow to Inf. The fp8
/// converts (cvt.rn.satfinite.e4m3x2.f32) need sm_89 and saturate, so fp8 stays in software.
/// HIP: gfx90a/gfx942 have no f32 -> bf16 instruction; software there (in its branch-free form,
/// bf16_round_branch_free, as on the host). f16: v_cvt_f16_f32 with the NaN made canonical
/// (encode_float below).
template <format Fmt>
inline constexpr bool cuda_rounds_float_to = same_format(Fmt, f16_format) || same_format(Fmt, bf16_format);

#if STRATA_CUDA_DEVICE_PASS
/// The one spelling of cvt.rn.{f16,bf16}x2.f32: `first` rounded into the low half, `second` into the
/// high half, NaN as the instruction gives it (any NaN). Two callers: cuda_round_pair below (stored
/// values: NaN made canonical) and arch::narrow_pair (attention's P, multiplied next: the NaN's bits
/// do not matter there).
template <format Fmt>
__device__ inline std::uint32_t cuda_cvt_pair(float first, float second) noexcept {
  static_assert(Fmt.sign_shift() == 15, "cuda_cvt_pair: f16 and bf16 only");
  std::uint32_t d;
  if constexpr (same_format(Fmt, f16_format)) asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(second), "f"(first));
  else asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(second), "f"(first));
  return d;
}
#endif

#if STRATA_CUDA_DEVICE_PASS && !defined(STRATA_NUMERIC_SOFTWARE_ONLY)
template <format Fmt>
__device__ inline std::uint32_t cuda_round(float x) noexcept {
  unsigned short h;
  if constexpr (same_format(Fmt, f16_format)) asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
  else asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
  return with_canonical_nan<Fmt>(x, h);
}

/// Two floats rounded by one cvt.rn.{f16,bf16}x2.f32 into one 32-bit word: `first` in the low half
/// (the lower address once stored), `second` in the high half; the same bits as cuda_round on each.
/// The x2 form rounds each half as the scalar form does (nearest even, subnormals kept, overflow to
/// Inf); its NaN is replaced by the canonical NaN with the input's sign, as with_canonical_nan does.
template <format Fmt>
__device__ inline std::uint32_t cuda_round_pair(float first, float second) noexcept {
  static_assert(Fmt.sign_shift() == 15 && Fmt.nan == 0x7FFFu, "cuda_round_pair: f16 and bf16 only");
  std::uint32_t d = cuda_cvt_pair<Fmt>(first, second);
  // sign | 0x7FFF: the float's top 16 bits hold the sign at bit 15; the OR sets the rest.
  if (first != first) d = (d & 0xFFFF0000u) | (bits_of(first) >> 16) | Fmt.nan;
  if (second != second) d = (d & 0x0000FFFFu) | (bits_of(second) & 0xFFFF0000u) | (Fmt.nan << 16);
  return d;
}
#endif

/// CRTP base: Derived is the type itself (so that from_bits returns a Derived), Fmt its format,
/// DefaultOverflow what the constructors do with values beyond the largest finite one.
template <class Derived, format Fmt, overflow DefaultOverflow>
class storage_float {
 public:
  /// The raw bits: std::uint8_t for the 8-bit formats, std::uint16_t for the 16-bit ones.
  using storage_type = std::conditional_t<(Fmt.sign_shift() < 8), std::uint8_t, std::uint16_t>;
  static constexpr int exponent_bits = Fmt.exp_bits;
  static constexpr int mantissa_bits = Fmt.man_bits;  // explicit bits, without the implicit one
  static constexpr int exponent_bias = Fmt.bias;
  static constexpr bool has_infinity = Fmt.has_inf;
  /// What the constructors do with out-of-range values; from_float(x, policy) chooses per call.
  static constexpr overflow default_overflow = DefaultOverflow;
  /// The bit layout (for code that converts many values at once, as the epilogue's pairs do).
  static constexpr format bit_format = Fmt;

  /// Trivial, like float: leaves the bits indeterminate, so arrays of them in shared memory cost nothing.
  storage_float() = default;
  STRATA_HOST_DEVICE constexpr explicit storage_float(float x) noexcept
      : bits_(Derived::encode_float(x, DefaultOverflow)) {}
  /// Rounds directly from double: T(double) may differ from T(float(double)) (no double rounding).
  STRATA_HOST_DEVICE constexpr explicit storage_float(double x) noexcept
      : bits_(Derived::encode_double(x, DefaultOverflow)) {}
  /// Through double: correctly rounded for |i| <= 2^53, which covers every integer these formats
  /// can tell apart.
  template <std::integral I>
  STRATA_HOST_DEVICE constexpr explicit storage_float(I i) noexcept : storage_float(double(i)) {}

  STRATA_HOST_DEVICE static constexpr Derived from_float(float x, overflow ov = DefaultOverflow) noexcept {
    return from_bits(Derived::encode_float(x, ov));
  }
  STRATA_HOST_DEVICE static constexpr Derived from_double(double x, overflow ov = DefaultOverflow) noexcept {
    return from_bits(Derived::encode_double(x, ov));
  }
  STRATA_HOST_DEVICE static constexpr Derived from_bits(storage_type bits) noexcept {
    Derived r{};
    r.bits_ = bits;
    return r;
  }
  STRATA_HOST_DEVICE constexpr storage_type bits() const noexcept { return bits_; }

  STRATA_HOST_DEVICE constexpr explicit operator float() const noexcept { return Derived::decode(bits_); }
  STRATA_HOST_DEVICE constexpr explicit operator double() const noexcept { return double(float(*this)); }

 protected:
  /// The software conversions of format.hpp (the definition of each type's bits), or on the CUDA
  /// device the one instruction that gives the same bits. (Qualified: the member factories of the
  /// same names would hide them.)
  STRATA_HOST_DEVICE static constexpr storage_type encode_float(float x, overflow ov) noexcept {
#if STRATA_CUDA_DEVICE_PASS && !defined(STRATA_NUMERIC_SOFTWARE_ONLY)
    if constexpr (cuda_rounds_float_to<Fmt>) {
      if (ov == overflow::propagate && !constant_evaluated()) return storage_type(cuda_round<Fmt>(x));
    }
#elif !defined(STRATA_NUMERIC_SOFTWARE_ONLY)
    // HIP and the host (so the emulator and the tests run it): bf16 without branches, same bits.
    if constexpr (same_format(Fmt, bf16_format)) {
      if (ov == overflow::propagate) return storage_type(bf16_round_branch_free(x));
    }
#if STRATA_HIP_DEVICE_PASS
    // f16 on AMD: v_cvt_f16_f32 (IEEE round-to-nearest-even, f16 subnormals kept: HIP's default mode),
    // its NaN made canonical, as on CUDA. The software rounding branched per case.
    if constexpr (same_format(Fmt, f16_format)) {
      if (ov == overflow::propagate && !constant_evaluated())
        return storage_type(with_canonical_nan<Fmt>(x, bit_cast<std::uint16_t>(static_cast<_Float16>(x))));
    }
#endif
#endif
    return storage_type(strata::detail::fp::from_float<Fmt>(x, ov));
  }
  STRATA_HOST_DEVICE static constexpr storage_type encode_double(double x, overflow ov) noexcept {
    return storage_type(strata::detail::fp::from_double<Fmt>(x, ov));
  }
  STRATA_HOST_DEVICE static constexpr float decode(storage_type bits) noexcept {
    return strata::detail::fp::to_float<Fmt>(bits);
  }

 private:
  storage_type bits_;
};

}  // namespace strata::detail::fp
