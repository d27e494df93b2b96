// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/numeric/overflow.hpp -- what a narrowing conversion does with values beyond the format's range.
#pragma once

namespace strata {

/// What a conversion to a narrow type does with a value whose rounded magnitude exceeds the largest
/// finite value of the type; +-Inf inputs follow the same rule, NaN always stays NaN.
///   saturate:  clamp to +-max. The fp8 default: NVIDIA's cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32
///              (sm_89+) does this, Inf included, and it keeps one bad value from poisoning a tensor.
///   propagate: IEEE overflow: to +-Inf, or to NaN where the format has no Inf (f8_e4m3), as
///              PyTorch's float8_e4m3fn and ml_dtypes do. The only rule f16 and bf16 offer.
enum class overflow { saturate, propagate };

}  // namespace strata
