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
// rewrites its NaN to the canonical one; the HIP device pass does the same with v_cvt_f16_f32 (the
// compiler's _Float16 conversion: IEEE round-to-nearest-even, f16 subnormals kept in HIP's default
// mode; its bits equal the software's on the host, test/numeric/f16_test.cpp). Everything else runs
// the software path.
// Define STRATA_NUMERIC_SOFTWARE_ONLY to use software on the device too (e.g. to test one against
// the other). cuda_fp16.h is never included: __half interop belongs to the CUDA-only layers.
#pragma once

#include <cstdint>
#include <limits>

#include "strata/config/config.hpp"
#include "strata/numeric/detail/format.hpp"
#include "strata/numeric/detail/limits.hpp"
#include "strata/numeric/detail/operators.hpp"
#include "strata/numeric/detail/storage_float.hpp"
#include "strata/numeric/traits.hpp"

namespace strata {

/// Everything is shared with the other narrow types (detail/storage_float.hpp, which also holds the
/// device instruction). Overflow propagates to Inf, as IEEE does.
struct f16 : detail::fp::storage_float<f16, detail::fp::f16_format, overflow::propagate> {
  using storage_float::storage_float;
};

template <>
struct is_narrow_float<f16> : std::true_type {};

}  // namespace strata

template <>
struct std::numeric_limits<strata::f16>
    : strata::detail::fp::limits_base<strata::f16, strata::detail::fp::f16_format, true, -4, 4> {};
