// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/narrow.hpp -- two floats rounded to f16 or bf16 by one instruction where the target has
// one, for inner loops whose converted values feed the next matrix product rather than memory
// (attention's P = exp(S - m), the A operand of P V).
//
//   const std::uint32_t pair = strata::arch::narrow_pair<bf16>(x0, x1);  // x0 in the low half
//   strata::arch::store_narrow_pair(p, x0, x1);                           // p[0], p[1]: one 32-bit store
//
// The bits are T(x) of numeric/ (round to nearest, ties to even, subnormals kept, overflow to Inf)
// for every input but NaN. A NaN gives a NaN whose sign and payload may differ from numeric's
// canonical one: the instruction's own. That is harmless where the value is multiplied next (a NaN
// operand makes a NaN product whatever its bits, and no GPU keeps a NaN's payload through an MMA),
// and it is why values that are stored go through numeric/ or epilogue::convert_to instead, which
// make NaN canonical. The companion of arch/widen.hpp.
//   CUDA  cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32 (sm_80+): one instruction for both values, where the
//         canonical-NaN conversion costs four per value and a pack
//   HIP, host  numeric's conversion per value (gfx90a/gfx942 have no f32 -> bf16 instruction)
#pragma once

#include <concepts>
#include <cstdint>
#include <cstring>

#include "strata/config/config.hpp"
#include "strata/numeric/bf16.hpp"
#include "strata/numeric/f16.hpp"

namespace strata::arch {

template <class T>
concept half_float = std::same_as<T, f16> || std::same_as<T, bf16>;

/// T(first) in the low 16 bits, T(second) in the high 16 bits (NaN: any NaN, see above).
template <half_float T>
STRATA_HOST_DEVICE STRATA_FORCEINLINE std::uint32_t narrow_pair(float first, float second) {
#if STRATA_CUDA_DEVICE_PASS
  return ::strata::detail::fp::cuda_cvt_pair<T::bit_format>(first, second);  // numeric's one spelling of the instruction
#else
  return static_cast<std::uint32_t>(T(first).bits()) | static_cast<std::uint32_t>(T(second).bits()) << 16;
#endif
}

/// narrow_pair(first, second) written to at[0] and at[1] by one 32-bit store (`at` 4-byte aligned).
/// Storing the halves one by one made nvcc split the pair and join it again (a shift and a byte
/// permute per pair) before one 32-bit store anyway.
template <half_float T>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void store_narrow_pair(T* at, float first, float second) {
  const std::uint32_t two = narrow_pair<T>(first, second);
#if STRATA_DEVICE_PASS
  *reinterpret_cast<std::uint32_t*>(at) = two;
#else
  std::memcpy(at, &two, sizeof two);  // no aliasing question on the host
#endif
}

}  // namespace strata::arch
