// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/numeric/detail/format.hpp -- the one software conversion between float/double and the narrow
// formats. Every backend can run it, so it is the definition of each type's bits; a device
// instruction may replace it only where it yields the same bits.
//
// Integer arithmetic only: no float operation whose result could be flushed to zero by
// -ftz / -fgpu-flush-denormals-to-zero or rewritten by -ffast-math.
#pragma once

#include <cstdint>

#include "strata/config/config.hpp"
#include "strata/numeric/detail/bits.hpp"
#include "strata/numeric/overflow.hpp"

namespace strata::detail::fp {

/// A binary floating-point storage format of at most 16 bits: 1 sign bit, `exp_bits`, `man_bits`.
/// Encodings are magnitudes (sign bit cleared).
struct format {
  int exp_bits;
  int man_bits;
  int bias;
  bool has_inf;  // IEEE-like: the all-ones exponent holds Inf (mantissa 0) and NaN
  std::uint32_t max_finite;
  std::uint32_t inf;  // meaningful only if has_inf
  std::uint32_t nan;  // the canonical NaN every conversion produces (all ones: quiet in every format)

  STRATA_HOST_DEVICE constexpr int sign_shift() const { return exp_bits + man_bits; }
  STRATA_HOST_DEVICE constexpr std::uint32_t magnitude_mask() const { return (1u << sign_shift()) - 1u; }
  STRATA_HOST_DEVICE constexpr int min_exponent() const {
    return 1 - bias;
  }  // unbiased exponent of the smallest normal
};

inline constexpr format f16_format{5, 10, 15, true, 0x7BFFu, 0x7C00u, 0x7FFFu};
inline constexpr format bf16_format{8, 7, 127, true, 0x7F7Fu, 0x7F80u, 0x7FFFu};
inline constexpr format e4m3_format{4, 3, 7, false, 0x7Eu, 0u, 0x7Fu};  // OCP E4M3FN: S.1111.111 is NaN
inline constexpr format e5m2_format{5, 2, 15, true, 0x7Bu, 0x7Cu, 0x7Fu};

/// Round the binary floating-point value with raw bits `x` (a float when U is 32 bits, a double when
/// 64) to format F, to nearest, ties to even, in one step.
///
/// NaN becomes the sign-preserving canonical NaN (payloads are not kept: device instructions do not
/// keep them either, and identical bits on every backend matter more). Source subnormals are exact.
template <format F, class U>
STRATA_HOST_DEVICE constexpr std::uint32_t round_bits(U x, overflow ov) noexcept {
  constexpr int src_man = sizeof(U) == 4 ? 23 : 52;
  constexpr int src_exp = sizeof(U) == 4 ? 8 : 11;
  constexpr int src_bias = (1 << (src_exp - 1)) - 1;
  constexpr U src_inf = U((U(1) << src_exp) - 1) << src_man;
  constexpr int emin = F.min_exponent();

  const std::uint32_t sign = std::uint32_t(x >> (src_man + src_exp)) << F.sign_shift();
  const U a = x & ((U(1) << (src_man + src_exp)) - 1);
  if (a > src_inf) return sign | F.nan;
  if (a == src_inf) {
    if (ov == overflow::saturate) return sign | F.max_finite;
    return sign | (F.has_inf ? F.inf : F.nan);
  }

  // value = sig * 2^(e - src_man), with e the unbiased exponent (source subnormals: e = 1 - bias)
  const int biased = int(a >> src_man);
  U sig = a & ((U(1) << src_man) - 1);
  int e = 1 - src_bias;
  if (biased != 0) {
    e = biased - src_bias;
    sig |= U(1) << src_man;
  }
  // Target quantum of that binade: 2^(max(e, emin) - man_bits). Every source has at least as many
  // mantissa bits as every target and no larger emin, so shift >= src_man - man_bits > 0.
  const int eq = e > emin ? e : emin;
  const int shift = (eq - F.man_bits) - (e - src_man);
  if (shift > src_man + 1) return sign;  // below half the smallest subnormal: +-0
  U n = sig >> shift;
  const U rem = sig & ((U(1) << shift) - 1);
  const U half = U(1) << (shift - 1);
  if (rem > half || (rem == half && (n & 1u) != 0)) ++n;
  // n carries the implicit bit for normal results, so adding the binade's exponent field minus one
  // gives the encoding, and a mantissa carry moves into the next binade (or to Inf) by itself.
  // Subnormal results have eq == emin and n < 2^man_bits: the encoding is n.
  const std::uint64_t magnitude = (std::uint64_t(eq - emin) << F.man_bits) + std::uint64_t(n);
  if (magnitude > F.max_finite) {
    if (ov == overflow::saturate) return sign | F.max_finite;
    return sign | (F.has_inf ? F.inf : F.nan);
  }
  return sign | std::uint32_t(magnitude);
}

template <format F>
STRATA_HOST_DEVICE constexpr std::uint32_t from_float(float x, overflow ov) noexcept {
  return round_bits<F>(bits_of(x), ov);
}

template <format F>
STRATA_HOST_DEVICE constexpr std::uint32_t from_double(double x, overflow ov) noexcept {
  return round_bits<F>(bits_of(x), ov);
}

/// float -> bf16 (overflow to Inf) without a branch: bf16 is the top half of a float with the same
/// exponent range, so round-to-nearest-even is adding 0x7FFF plus the lowest kept bit and keeping the
/// top 16 bits -- exact for every non-NaN input (subnormals, and a carry into the next binade or to
/// Inf, fall out of the addition) -- and NaN is the canonical one by a select. The same bits as
/// round_bits<bf16_format>, in 6-8 integer instructions where round_bits' general form branches per
/// case (gfx90a / gfx942 have no f32 -> bf16 instruction: the MFMA attention forward converted P with
/// it, test/numeric/bf16_test.cpp holds it to the references).
STRATA_HOST_DEVICE constexpr std::uint32_t bf16_round_branch_free(float x) noexcept {
  const std::uint32_t u = bits_of(x);
  const std::uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  const std::uint32_t canonical_nan = ((u >> 16) & 0x8000u) | bf16_format.nan;
  return (u & 0x7FFFFFFFu) > 0x7F800000u ? canonical_nan : rounded;
}

/// For device paths: the instruction's result for `x`, with NaN replaced by the canonical NaN that
/// round_bits produces. Device instructions agree with round_bits on every non-NaN input but emit
/// their own NaN (e.g. 0x7FFF whatever the sign). An integer test, so -ffast-math cannot drop it.
template <format F>
STRATA_HOST_DEVICE constexpr std::uint32_t with_canonical_nan(float x,
                                                              std::uint32_t instruction_bits) noexcept {
  const std::uint32_t xb = bits_of(x);
  if ((xb & 0x7FFFFFFFu) > 0x7F800000u) return ((xb >> 31) << F.sign_shift()) | F.nan;
  return instruction_bits;
}

/// True if `b` encodes a NaN in format F.
template <format F>
STRATA_HOST_DEVICE constexpr bool is_nan(std::uint32_t b) noexcept {
  const std::uint32_t m = b & F.magnitude_mask();
  return F.has_inf ? m > F.inf : m == F.nan;
}

/// Exact widening to float. NaNs keep sign and payload and come out quiet (IEEE conversion
/// semantics); f32 has room for every payload of these formats.
template <format F>
STRATA_HOST_DEVICE constexpr float to_float(std::uint32_t b) noexcept {
  if constexpr (F.exp_bits == 8 && F.man_bits == 7) {
    // bf16 is the top half of its float: the same bits as the general path below (a NaN quieted
    // with its payload kept), without its branches, which cost an epilogue reading bf16 C about
    // twenty instructions per element. arch::widen_bf16 is the same shift without the quieting
    // (a signalling NaN stays signalling there: its loops multiply the value next).
    const std::uint32_t w = b << 16;
    return bit_cast<float>((b & 0x7FFFu) > 0x7F80u ? (w | 0x00400000u) : w);
  }
  const std::uint32_t sign = ((b >> F.sign_shift()) & 1u) << 31;
  const std::uint32_t m = b & F.magnitude_mask();
  const std::uint32_t man = m & ((1u << F.man_bits) - 1u);
  const std::uint32_t exp = m >> F.man_bits;
  if (is_nan<F>(b)) return bit_cast<float>(sign | 0x7FC00000u | (man << (23 - F.man_bits)));
  if (F.has_inf && m == F.inf) return bit_cast<float>(sign | 0x7F800000u);
  if (exp != 0) {
    return bit_cast<float>(sign | (std::uint32_t(int(exp) - F.bias + 127) << 23) |
                           (man << (23 - F.man_bits)));
  }
  if constexpr (F.min_exponent() - F.man_bits >= -126) {
    // Subnormal: man * 2^(emin - man_bits). Both factors and the product are normal floats (or
    // zero), so the multiply is exact and immune to flush-to-zero modes.
    constexpr float scale = bit_cast<float>(std::uint32_t(F.min_exponent() - F.man_bits + 127) << 23);
    return bit_cast<float>(sign | bit_cast<std::uint32_t>(float(man) * scale));
  } else {
    // Formats whose subnormals are f32 subnormals (bf16): the f32 encoding is the bits, widened.
    static_assert(F.exp_bits == 8, "only a format with f32's exponent range reaches f32 subnormals");
    return bit_cast<float>(sign | (man << (23 - F.man_bits)));
  }
}

}  // namespace strata::detail::fp
