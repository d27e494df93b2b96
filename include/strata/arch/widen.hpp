// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/widen.hpp -- narrow stored values to float at the cost of an instruction or two, for
// memory-bound loops that decode every element they read (embedding rows).
//
// Why not f16::operator float and friends: those are the one exact, portable definition
// (numeric/detail/format.hpp, a branchy decode of any format), and on the H200 (2026-12-04) the
// embedding forward spent its time in them: fp16 rows ran at 30 % of copy bandwidth against fp32's
// 79 % with the same loads. Every widening here is exact, so it returns the same float as the
// portable decode for every non-NaN input (NaN inputs give a NaN; its payload may differ):
//   f16   CUDA cvt.f32.f16; HIP the _Float16 conversion (v_cvt_f32_f16); host the portable decode
//   bf16  the 16 bits are the top half of the float (exact by construction, every backend)
//   e4m3  the 7 magnitude bits shifted into an f16's exponent and mantissa give the value times
//         2^-8 (subnormals included, as f16 subnormals), widened as above and scaled by 2^8 (exact:
//         a normal float times a power of two); 0x7F / 0xFF are NaN
//   u8    0x4B000000 | b is the float 2^23 + b; subtracting 2^23 is exact (no int-to-float unit,
//         which runs at a quarter of the FMA rate on NVIDIA)
#pragma once

#include <cstdint>

#include "strata/config/config.hpp"
#include "strata/numeric/f16.hpp"

namespace strata::arch {

STRATA_HOST_DEVICE STRATA_FORCEINLINE float widen_f16(std::uint16_t bits) {
#if STRATA_CUDA_DEVICE_PASS
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
  return f;
#elif STRATA_HIP_DEVICE_PASS
  return static_cast<float>(__builtin_bit_cast(_Float16, bits));
#else
  return float(f16::from_bits(bits));
#endif
}

/// numeric's bf16 -> float (detail/format.hpp, to_float) is this shift plus quieting a NaN; here a
/// NaN keeps its bits, which costs nothing where the value is multiplied next.
STRATA_HOST_DEVICE STRATA_FORCEINLINE float widen_bf16(std::uint16_t bits) {
  return __builtin_bit_cast(float, static_cast<std::uint32_t>(bits) << 16);
}

STRATA_HOST_DEVICE STRATA_FORCEINLINE float widen_e4m3(std::uint8_t bits) {
  const std::uint32_t mag = bits & 0x7Fu, sign = static_cast<std::uint32_t>(bits & 0x80u) << 24;
  const float m = widen_f16(static_cast<std::uint16_t>(mag << 7)) * 256.f;
  const std::uint32_t v = mag == 0x7Fu ? 0x7FF00000u : __builtin_bit_cast(std::uint32_t, m);
  return __builtin_bit_cast(float, v | sign);
}

STRATA_HOST_DEVICE STRATA_FORCEINLINE float widen_u8(std::uint32_t b) {
  return __builtin_bit_cast(float, 0x4B000000u | b) - 8388608.f;
}

}  // namespace strata::arch
