// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/numeric/f8.hpp -- the two OCP 8-bit floating-point storage types, with the same bits on
// every backend:
//
//   f8_e4m3  OCP "E4M3FN": 1 sign, 4 exponent, 3 mantissa bits, bias 7. No Inf; the only NaNs are
//            S.1111.111 (0x7F, 0xFF). Max 448, min normal 2^-6, min subnormal 2^-9.
//   f8_e5m2  IEEE-like: 1 sign, 5 exponent, 2 mantissa bits, bias 15, with Inf and NaN.
//            Max 57344, min normal 2^-14, min subnormal 2^-16.
//
// Conversions from float and from double round once, to nearest, ties to even, with subnormals.
// DEFAULT OVERFLOW RULE: saturate. The constructors and from_float/from_double without an argument
// follow NVIDIA's cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 (sm_89+; .satfinite: results beyond the
// largest finite value become +-max, NaN stays NaN), the instruction fp8 kernels use, so saturation
// is what users of fp8 GEMM outputs get. +-Inf inputs saturate to +-max too: that is what CUDA 13's
// cuda_fp8.hpp does in __nv_cvt_float_to_fp8(x, __NV_SATFINITE, ...), its stand-in for the
// instruction off-device (not yet confirmed on an sm_89+ GPU).
// `from_float(x, overflow::propagate)` gives IEEE overflow instead: e4m3 -> NaN (as PyTorch's
// float8_e4m3fn and ml_dtypes do, since there is no Inf), e5m2 -> +-Inf. Either way a value that
// rounds to the max is not an overflow: e4m3 |x| <= 464 -> 448 (464 is a tie, 448 is even),
// e5m2 |x| < 61440 -> 57344 (61440 ties to the Inf encoding, which is even).
// NaN gives the canonical NaN with the input's sign: 0x7F / 0xFF in both formats. To float is exact.
//
// Backends: software everywhere for now (detail/format.hpp). cvt.rn.satfinite.*.f32 needs sm_89,
// and config.hpp does not yet say which sm a device pass compiles for (sm_80 has no fp8 convert).
// AMD: gfx942 (MI300) fp8 units use the FNUZ encodings (bias 8/16, 0x80 is the only NaN, no -0),
// which differ from these OCP types, so they are converted in software there; gfx950 (MI355) uses
// the OCP encodings, and its converts can be adopted once their saturation is shown to match.
#pragma once

#include <cstdint>
#include <limits>

#include "strata/config/config.hpp"
#include "strata/numeric/detail/format.hpp"
#include "strata/numeric/detail/limits.hpp"
#include "strata/numeric/detail/operators.hpp"
#include "strata/numeric/detail/storage_float.hpp"
#include "strata/numeric/overflow.hpp"
#include "strata/numeric/traits.hpp"

namespace strata {

/// Which OCP 8-bit encoding a basic_f8 holds.
enum class f8_kind { e4m3, e5m2 };

namespace detail {
template <f8_kind Kind>
inline constexpr fp::format ocp_f8_format = Kind == f8_kind::e4m3 ? fp::e4m3_format : fp::e5m2_format;
}  // namespace detail

/// Both fp8 types: f8_e4m3 and f8_e5m2 below. Everything but the format is shared with the other
/// narrow types (detail/storage_float.hpp). The constructors saturate (see the header comment);
/// from_float(x, overflow::propagate) gives IEEE overflow.
template <f8_kind Kind>
struct basic_f8 : detail::fp::storage_float<basic_f8<Kind>, detail::ocp_f8_format<Kind>, overflow::saturate> {
  using basic_f8::storage_float::storage_float;
};

using f8_e4m3 = basic_f8<f8_kind::e4m3>;
using f8_e5m2 = basic_f8<f8_kind::e5m2>;

template <f8_kind Kind>
struct is_narrow_float<basic_f8<Kind>> : std::true_type {};

}  // namespace strata

template <>
struct std::numeric_limits<strata::f8_e4m3>
    : strata::detail::fp::limits_base<strata::f8_e4m3, strata::detail::fp::e4m3_format, false, -1, 2> {};
template <>
struct std::numeric_limits<strata::f8_e5m2>
    : strata::detail::fp::limits_base<strata::f8_e5m2, strata::detail::fp::e5m2_format, false, -4, 4> {};
