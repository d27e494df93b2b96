// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/mma/mfma_ocp_fp8.hpp -- OCP fp8 (Strata's f8_e4m3 / f8_e5m2, what frameworks store) on
// CDNA3's FNUZ fp8 MFMA (gfx942).
//
//   atom                       instruction                    operands (in memory)   targets
//   cdna3_32x32x16_f32e4m3_ocp v_mfma_f32_32x32x16_fp8_fp8    f8_e4m3 (OCP)          gfx942 only
//   cdna3_16x16x32_f32e4m3_ocp v_mfma_f32_16x16x32_fp8_fp8    f8_e4m3 (OCP)          gfx942 only
//   cdna3_32x32x16_f32e5m2_ocp v_mfma_f32_32x32x16_bf8_bf8    f8_e5m2 (OCP)          gfx942 only
//   cdna3_16x16x32_f32e5m2_ocp v_mfma_f32_16x16x32_bf8_bf8    f8_e5m2 (OCP)          gfx942 only
//
// Why this works: the FNUZ formats have the OCP layouts with the exponent bias one higher (8 / 16
// instead of 7 / 15), so every finite OCP encoding, read as FNUZ, is exactly half its OCP value
// (subnormals included). What differs are the special encodings:
//   OCP 0x80 (-0)                   is FNUZ's only NaN          -> remapped to 0x00 (+0)
//   OCP NaN (e4m3 S.1111.111;       are finite in FNUZ          -> remapped to 0x80 (NaN)
//   e5m2 S.11111.01-11) and e5m2 Inf (S.11111.00)                  (FNUZ has no Inf: Inf reads as NaN)
// So prepare() rewrites each operand fragment's bytes once after it is loaded (a few 32-bit integer
// operations per four values, no table), the MFMA then computes C + (A B) / 4 exactly (products of
// halved values are exact in fp32 and a power-of-two scale changes no rounding), and whoever owns the
// accumulator multiplies it by product_scale = 4 once, after the K loop (gemm::kernel::mainloop does).
//
// The contract, for users of the template path: an atom with product_scale needs prepare() on its
// operand fragments before mma and the scale after the last mma; gemm::kernel does both. The
// emulator reads the prepared bytes as FNUZ (widen_a / widen_b), so it runs the same remap and the
// same arithmetic as the hardware. Versus FNUZ inputs (mfma.hpp's cdna3_* fp8 atoms) the cost is
// the remap; it is not measured on hardware (no MI300 was available, see docs/gemm.md).
#pragma once

#include <cstdint>
#include <type_traits>

#include "strata/arch/arch.hpp"
#include "strata/config/config.hpp"
#include "strata/mma/mfma.hpp"
#include "strata/numeric/f8_fnuz.hpp"
#include "strata/numeric/numeric.hpp"

namespace strata::mma {

namespace detail {

/// Four OCP fp8 encodings (one per byte) -> the FNUZ encodings of half their values: -0 -> +0,
/// NaN (and e5m2 Inf) -> 0x80, every other byte unchanged. Branch-free, per byte in one word.
template <bool E4M3>
STRATA_HOST_DEVICE STRATA_FORCEINLINE constexpr std::uint32_t ocp_to_fnuz_halved(std::uint32_t w) {
  constexpr std::uint32_t sign = 0x80808080u;
  // A magnitude (7 bits) at or above the first special encoding (e4m3 0x7F, e5m2 0x7C) carries
  // into its byte's top bit when the distance to 0x80 is added; no byte carries into the next.
  constexpr std::uint32_t to_special = E4M3 ? 0x01010101u : 0x04040404u;
  const std::uint32_t mag = w & ~sign;
  const std::uint32_t special = (mag + to_special) & sign;  // 0x80 in NaN / Inf bytes
  const std::uint32_t nonzero = (mag + 0x7F7F7F7Fu) & sign;  // 0x80 where the magnitude is not 0
  const std::uint32_t keep = nonzero & ~special;             // bytes that pass unchanged
  const std::uint32_t mask = keep | (keep - (keep >> 7));    // 0x80 -> 0xFF in each such byte
  return (w & mask) | special;
}

}  // namespace detail

/// OCP fp8 operands on the FNUZ fp8 MFMA of CDNA3: D = C + (A B) / product_scale after prepare().
template <int MN, class OCP>
struct cdna3_ocp_fp8 : detail::mfma_layout<MN, 8> {
  static constexpr bool is_e4m3 = std::is_same_v<OCP, f8_e4m3>;
  static_assert(is_e4m3 || std::is_same_v<OCP, f8_e5m2>, "cdna3_ocp_fp8 takes Strata's OCP f8_e4m3 or f8_e5m2");
  using fnuz = std::conditional_t<is_e4m3, f8_e4m3_fnuz, f8_e5m2_fnuz>;
  using hardware = cdna3_8bit<MN, fnuz>;  // the instruction, layouts and availability
  static constexpr const char* name = hardware::name;
  using base = detail::mfma_layout<MN, 8>;
  using a_type = OCP;
  using b_type = OCP;
  using c_type = float;
  using a_fragment = fragment<a_type, base::a_values>;
  using b_fragment = fragment<b_type, base::b_values>;
  using c_fragment = fragment<c_type, base::c_values>;
  static constexpr arch::atom_family family = hardware::family;
  template <class Target>
  static constexpr bool available_on = hardware::template available_on<Target>;
  template <class Target>
  STRATA_HOST_DEVICE static constexpr void require_target() {
    hardware::template require_target<Target>();
  }

  /// The MFMA sees halved operands: the accumulator holds (A B) / 4 until scaled by this.
  static constexpr float product_scale = 4.f;

  /// Rewrites a loaded fragment's OCP bytes as FNUZ encodings (see the header comment).
  template <class Fragment>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void prepare(Fragment& f) {
    static_assert(std::is_same_v<typename Fragment::value_type, OCP> && Fragment::size % 4 == 0);
    STRATA_UNROLL
    for (int r = 0; r < Fragment::size / 4; ++r) {
      const std::uint32_t w = detail::ocp_to_fnuz_halved<is_e4m3>(detail::reg32(f, r));
      STRATA_UNROLL
      for (int i = 0; i < 4; ++i) f.v[4 * r + i] = OCP::from_bits(static_cast<std::uint8_t>(w >> (8 * i)));
    }
  }

  /// The emulator reads prepared bytes as the hardware does: as FNUZ encodings.
  STRATA_HOST_DEVICE static constexpr float widen_a(const OCP& x) { return static_cast<float>(fnuz::from_bits(x.bits())); }
  STRATA_HOST_DEVICE static constexpr float widen_b(const OCP& x) { return static_cast<float>(fnuz::from_bits(x.bits())); }

  /// The FNUZ instruction itself, on the prepared bytes (the same registers, retyped).
  STRATA_DEVICE static void device_mma(const a_fragment& a, const b_fragment& b, const c_fragment& c, c_fragment& d) {
    typename hardware::a_fragment fa;
    typename hardware::b_fragment fb;
    STRATA_UNROLL
    for (int i = 0; i < base::a_values; ++i) fa.v[i] = fnuz::from_bits(a.v[i].bits());
    STRATA_UNROLL
    for (int i = 0; i < base::b_values; ++i) fb.v[i] = fnuz::from_bits(b.v[i].bits());
    hardware::device_mma(fa, fb, c, d);
  }
};

using cdna3_32x32x16_f32e4m3_ocp = cdna3_ocp_fp8<32, f8_e4m3>;
using cdna3_16x16x32_f32e4m3_ocp = cdna3_ocp_fp8<16, f8_e4m3>;
using cdna3_32x32x16_f32e5m2_ocp = cdna3_ocp_fp8<32, f8_e5m2>;
using cdna3_16x16x32_f32e5m2_ocp = cdna3_ocp_fp8<16, f8_e5m2>;

/// True for atoms whose fragments need prepare() and whose products need product_scale.
template <class Atom>
inline constexpr bool has_operand_prepare = requires(typename Atom::a_fragment& f) { Atom::prepare(f); };

}  // namespace strata::mma
