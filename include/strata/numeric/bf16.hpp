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
// f32 -> bf16 instruction, so software everywhere there, in a branch-free form (the host uses it too:
// detail/format.hpp, bf16_round_branch_free; same bits). Define STRATA_NUMERIC_SOFTWARE_ONLY to use
// software on the device too.
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
struct bf16 : detail::fp::storage_float<bf16, detail::fp::bf16_format, overflow::propagate> {
  using storage_float::storage_float;
};

template <>
struct is_narrow_float<bf16> : std::true_type {};

}  // namespace strata

template <>
struct std::numeric_limits<strata::bf16>
    : strata::detail::fp::limits_base<strata::bf16, strata::detail::fp::bf16_format, false, -37, 38> {};
