// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/mma/mma_sync.hpp -- NVIDIA warp-level `mma.sync.aligned` atoms (sm80+; fp8 sm89+).
//
//   sm80_16x8x16_f32f16    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32     atom_family::mma_sync_f16
//   sm80_16x8x16_f32bf16   mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32   atom_family::mma_sync_f16
//   sm80_16x8x8_f32tf32    mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32    atom_family::mma_sync_tf32
//   sm80_16x8x32_s32s8     mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32       atom_family::mma_sync_i8
//   sm89_16x8x32_f32e4m3   mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32   atom_family::mma_sync_f8
//   sm89_16x8x32_f32e5m2   mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32   atom_family::mma_sync_f8
//
// Layouts: PTX ISA, section 9.7.14.5 "Matrix Fragments for mma.m16n8k*" (read through the PTX ISA 9.x
// mirror at ptx.poole.ai/docs/09-instruction-set/14-warp-level-mma/mma/mma-fragments/...): with
// groupID = %laneid >> 2 and threadID_in_group = %laneid % 4, each table below is the ISA's
// "row = ..., col = ..." formula for element a_i / b_i / c_i. The m16n8k32 8-bit formulas were
// cross-checked against the (thread, value) layouts of CuTe's MMA_Traits<SM80_16x8x32_S32S8S8S32_TN>.
//
// Integer overflow: without .satfinite (not used here) the s32 accumulation wraps modulo 2^32.
// tf32: the operands are floats of which the tensor core reads the tf32 bits (1 + 8 + 10); the
// emulator drops the low 13 mantissa bits. Round first with to_tf32() (cvt.rna.tf32.f32's rounding).
#pragma once

#include <cstdint>

#include "strata/arch/arch.hpp"
#include "strata/config/config.hpp"
#include "strata/mma/detail/execute.hpp"
#include "strata/mma/detail/registers.hpp"
#include "strata/mma/layout.hpp"
#include "strata/numeric/numeric.hpp"

namespace strata::mma {

/// Round a float to the nearest tf32 value, ties away from zero (what cvt.rna.tf32.f32 does); NaN
/// and Inf pass through. The result is a float whose low 13 mantissa bits are zero.
STRATA_HOST_DEVICE constexpr float to_tf32(float x) {
  const std::uint32_t b = strata::detail::fp::bits_of(x);
  if ((b & 0x7F800000u) == 0x7F800000u) return x;
  return strata::detail::fp::bit_cast<float>((b + 0x1000u) & 0xFFFFE000u);
}

namespace detail {

// PTX ISA 9.7.14.5: groupID and threadID_in_group of a lane.
STRATA_HOST_DEVICE constexpr int group_id(int lane) { return lane >> 2; }
STRATA_HOST_DEVICE constexpr int thread_in_group(int lane) { return lane & 3; }

/// What every m16n8 mma.sync atom shares: a 32-lane warp, 4 accumulators per lane, and the
/// accumulator layout of the m16n8k8/k16/k32 tables ("Accumulators (C or D)"):
///   row = groupID for c0, c1; groupID + 8 for c2, c3;  col = threadID_in_group * 2 + (i & 1)
struct sm80_m16n8 {
  static constexpr int M = 16, N = 8;
  static constexpr int warp_size = 32;
  static constexpr int c_values = 4;
  static constexpr bool b_broadcast = false;
  STRATA_HOST_DEVICE static constexpr coord c_coord(int lane, int i) {
    return {group_id(lane) + 8 * (i >> 1), thread_in_group(lane) * 2 + (i & 1)};
  }
};

template <class Target>
inline constexpr bool has_family(arch::atom_family f) {
  return Target::atoms.has(f);
}

}  // namespace detail

/// m16n8k16 with f16 or bf16 operands and f32 accumulators (PTX ISA 9.7.14.5.8, "Matrix Fragments
/// for mma.m16n8k16 with floating point type"). A: four .f16x2/.bf16x2 registers a0..a7;
/// B: two registers b0..b3; C/D: four .f32 c0..c3.
template <class AB>
struct sm80_16x8x16 : detail::sm80_m16n8 {
  static_assert(std::is_same_v<AB, f16> || std::is_same_v<AB, bf16>, "m16n8k16 float atoms take f16 or bf16");
  static constexpr const char* name = std::is_same_v<AB, f16> ? "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
                                                               : "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32";
  static constexpr int K = 16;
  using a_type = AB;
  using b_type = AB;
  using c_type = float;
  static constexpr int a_values = 8, b_values = 4;
  using a_fragment = fragment<a_type, a_values>;
  using b_fragment = fragment<b_type, b_values>;
  using c_fragment = fragment<c_type, c_values>;
  static constexpr arch::atom_family family = arch::atom_family::mma_sync_f16;
  template <class Target>
  static constexpr bool available_on = detail::has_family<Target>(family);
  template <class Target>
  STRATA_HOST_DEVICE static constexpr void require_target() {
    static_assert(available_on<Target>, "mma.sync m16n8k16 f16/bf16 needs sm80+ (atom_family::mma_sync_f16), "
                                        "which the kernel's target does not list");
  }

  // row = groupID for a_i, 0 <= i < 2 || 4 <= i < 6; groupID + 8 otherwise
  // col = threadID_in_group * 2 + (i & 1) for i < 4; + 8 for i >= 4
  STRATA_HOST_DEVICE static constexpr coord a_coord(int lane, int i) {
    return {detail::group_id(lane) + 8 * ((i >> 1) & 1), detail::thread_in_group(lane) * 2 + (i & 1) + 8 * (i >> 2)};
  }
  // row = threadID_in_group * 2 + (i & 1) for b_i, i < 2; + 8 for i >= 2;  col = groupID
  STRATA_HOST_DEVICE static constexpr coord b_coord(int lane, int i) {
    return {detail::thread_in_group(lane) * 2 + (i & 1) + 8 * (i >> 1), detail::group_id(lane)};
  }

  STRATA_DEVICE static void device_mma(const a_fragment& a, const b_fragment& b, const c_fragment& c, c_fragment& d) {
#if STRATA_CUDA_DEVICE_PASS
    const std::uint32_t a0 = detail::reg32(a, 0), a1 = detail::reg32(a, 1), a2 = detail::reg32(a, 2),
                        a3 = detail::reg32(a, 3), b0 = detail::reg32(b, 0), b1 = detail::reg32(b, 1);
    if constexpr (std::is_same_v<AB, f16>) {
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%10,%11,%12,%13};\n"
          : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
          : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c.v[0]), "f"(c.v[1]), "f"(c.v[2]),
            "f"(c.v[3]));
    } else {
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%10,%11,%12,%13};\n"
          : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
          : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c.v[0]), "f"(c.v[1]), "f"(c.v[2]),
            "f"(c.v[3]));
    }
#else
    (void)a, (void)b, (void)c, (void)d;
#endif
  }
};

using sm80_16x8x16_f32f16 = sm80_16x8x16<f16>;
using sm80_16x8x16_f32bf16 = sm80_16x8x16<bf16>;

/// m16n8k8 with tf32 operands (held in floats) and f32 accumulators (PTX ISA 9.7.14.5.7, "Matrix
/// Fragments for mma.m16n8k8", .tf32). A: four .b32 a0..a3; B: two .b32 b0, b1; C/D: four .f32.
struct sm80_16x8x8_f32tf32 : detail::sm80_m16n8 {
  static constexpr const char* name = "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32";
  static constexpr int K = 8;
  using a_type = float;
  using b_type = float;
  using c_type = float;
  static constexpr int a_values = 4, b_values = 2;
  using a_fragment = fragment<a_type, a_values>;
  using b_fragment = fragment<b_type, b_values>;
  using c_fragment = fragment<c_type, c_values>;
  static constexpr arch::atom_family family = arch::atom_family::mma_sync_tf32;
  template <class Target>
  static constexpr bool available_on = detail::has_family<Target>(family);
  template <class Target>
  STRATA_HOST_DEVICE static constexpr void require_target() {
    static_assert(available_on<Target>, "mma.sync m16n8k8 tf32 needs sm80+ (atom_family::mma_sync_tf32), which "
                                        "the kernel's target does not list");
  }

  // row = groupID for a0, a2; groupID + 8 for a1, a3.  col = threadID_in_group for a0, a1; + 4 for a2, a3
  STRATA_HOST_DEVICE static constexpr coord a_coord(int lane, int i) {
    return {detail::group_id(lane) + 8 * (i & 1), detail::thread_in_group(lane) + 4 * (i >> 1)};
  }
  // row = threadID_in_group for b0; + 4 for b1.  col = groupID
  STRATA_HOST_DEVICE static constexpr coord b_coord(int lane, int i) {
    return {detail::thread_in_group(lane) + 4 * i, detail::group_id(lane)};
  }
  /// The tensor core reads the tf32 bits only: sign, exponent and the top 10 mantissa bits.
  STRATA_HOST_DEVICE static constexpr float widen_a(float x) {
    return strata::detail::fp::bit_cast<float>(strata::detail::fp::bits_of(x) & 0xFFFFE000u);
  }
  STRATA_HOST_DEVICE static constexpr float widen_b(float x) { return widen_a(x); }

  STRATA_DEVICE static void device_mma(const a_fragment& a, const b_fragment& b, const c_fragment& c, c_fragment& d) {
#if STRATA_CUDA_DEVICE_PASS
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%10,%11,%12,%13};\n"
        : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
        : "r"(detail::reg32(a, 0)), "r"(detail::reg32(a, 1)), "r"(detail::reg32(a, 2)), "r"(detail::reg32(a, 3)),
          "r"(detail::reg32(b, 0)), "r"(detail::reg32(b, 1)), "f"(c.v[0]), "f"(c.v[1]), "f"(c.v[2]), "f"(c.v[3]));
#else
    (void)a, (void)b, (void)c, (void)d;
#endif
  }
};

/// m16n8k32 with 8-bit operands (PTX ISA 9.7.14.5.10, "Matrix Fragments for mma.m16n8k32"): A: four
/// .b32 registers of four elements a0..a15; B: two .b32 of four elements b0..b7; C/D: four 32-bit.
///   A: row = groupID for a_i, 0 <= i < 4 || 8 <= i < 12; groupID + 8 otherwise
///      col = threadID_in_group * 4 + (i & 3) for i < 8; + 16 for i >= 8
///   B: row = threadID_in_group * 4 + (i & 3) for b_i, i < 4; + 16 for i >= 4;  col = groupID
struct sm80_m16n8k32_layout : detail::sm80_m16n8 {
  static constexpr int K = 32;
  static constexpr int a_values = 16, b_values = 8;
  STRATA_HOST_DEVICE static constexpr coord a_coord(int lane, int i) {
    return {detail::group_id(lane) + 8 * ((i >> 2) & 1), detail::thread_in_group(lane) * 4 + (i & 3) + 16 * (i >> 3)};
  }
  STRATA_HOST_DEVICE static constexpr coord b_coord(int lane, int i) {
    return {detail::thread_in_group(lane) * 4 + (i & 3) + 16 * (i >> 2), detail::group_id(lane)};
  }
};

/// s8 x s8 + s32 -> s32, wrapping modulo 2^32.
struct sm80_16x8x32_s32s8 : sm80_m16n8k32_layout {
  static constexpr const char* name = "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32";
  using a_type = std::int8_t;
  using b_type = std::int8_t;
  using c_type = std::int32_t;
  using a_fragment = fragment<a_type, a_values>;
  using b_fragment = fragment<b_type, b_values>;
  using c_fragment = fragment<c_type, c_values>;
  static constexpr arch::atom_family family = arch::atom_family::mma_sync_i8;
  template <class Target>
  static constexpr bool available_on = detail::has_family<Target>(family);
  template <class Target>
  STRATA_HOST_DEVICE static constexpr void require_target() {
    static_assert(available_on<Target>, "mma.sync m16n8k32 s8 needs sm80+ (atom_family::mma_sync_i8), which the "
                                        "kernel's target does not list");
  }

  STRATA_DEVICE static void device_mma(const a_fragment& a, const b_fragment& b, const c_fragment& c, c_fragment& d) {
#if STRATA_CUDA_DEVICE_PASS
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%10,%11,%12,%13};\n"
        : "=r"(d.v[0]), "=r"(d.v[1]), "=r"(d.v[2]), "=r"(d.v[3])
        : "r"(detail::reg32(a, 0)), "r"(detail::reg32(a, 1)), "r"(detail::reg32(a, 2)), "r"(detail::reg32(a, 3)),
          "r"(detail::reg32(b, 0)), "r"(detail::reg32(b, 1)), "r"(c.v[0]), "r"(c.v[1]), "r"(c.v[2]), "r"(c.v[3]));
#else
    (void)a, (void)b, (void)c, (void)d;
#endif
  }
};

/// OCP fp8 (f8_e4m3 or f8_e5m2) x same + f32 -> f32: sm89+ (Ada), so sm90a and sm100a here, not sm80.
template <class F8>
struct sm89_16x8x32 : sm80_m16n8k32_layout {
  static_assert(std::is_same_v<F8, f8_e4m3> || std::is_same_v<F8, f8_e5m2>,
                "mma.sync m16n8k32 fp8 takes Strata's OCP f8_e4m3 or f8_e5m2");
  static constexpr const char* name = std::is_same_v<F8, f8_e4m3>
                                          ? "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"
                                          : "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32";
  using a_type = F8;
  using b_type = F8;
  using c_type = float;
  using a_fragment = fragment<a_type, a_values>;
  using b_fragment = fragment<b_type, b_values>;
  using c_fragment = fragment<c_type, c_values>;
  static constexpr arch::atom_family family = arch::atom_family::mma_sync_f8;
  template <class Target>
  static constexpr bool available_on = detail::has_family<Target>(family);
  template <class Target>
  STRATA_HOST_DEVICE static constexpr void require_target() {
    static_assert(available_on<Target>, "mma.sync m16n8k32 e4m3/e5m2 needs sm89+ (atom_family::mma_sync_f8); the "
                                        "kernel targets a GPU without fp8 tensor cores (sm80?): use sm90a or sm100a");
  }

  STRATA_DEVICE static void device_mma(const a_fragment& a, const b_fragment& b, const c_fragment& c, c_fragment& d) {
#if STRATA_CUDA_DEVICE_PASS  // execute() has checked that the pass compiles for sm89+
    if constexpr (std::is_same_v<F8, f8_e4m3>) {
      asm volatile(
          "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%10,%11,%12,%13};\n"
          : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
          : "r"(detail::reg32(a, 0)), "r"(detail::reg32(a, 1)), "r"(detail::reg32(a, 2)), "r"(detail::reg32(a, 3)),
            "r"(detail::reg32(b, 0)), "r"(detail::reg32(b, 1)), "f"(c.v[0]), "f"(c.v[1]), "f"(c.v[2]), "f"(c.v[3]));
    } else {
      asm volatile(
          "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%10,%11,%12,%13};\n"
          : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
          : "r"(detail::reg32(a, 0)), "r"(detail::reg32(a, 1)), "r"(detail::reg32(a, 2)), "r"(detail::reg32(a, 3)),
            "r"(detail::reg32(b, 0)), "r"(detail::reg32(b, 1)), "f"(c.v[0]), "f"(c.v[1]), "f"(c.v[2]), "f"(c.v[3]));
    }
#else
    (void)a, (void)b, (void)c, (void)d;
#endif
  }
};

using sm89_16x8x32_f32e4m3 = sm89_16x8x32<f8_e4m3>;
using sm89_16x8x32_f32e5m2 = sm89_16x8x32<f8_e5m2>;

}  // namespace strata::mma
