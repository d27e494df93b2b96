// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/mma/mfma.hpp -- AMD CDNA matrix-core atoms (wave64 MFMA), one block (no broadcast modifiers).
//
//   atom                     instruction (builtin)                              targets
//   cdna_32x32x8_f32f16      v_mfma_f32_32x32x8f16                              gfx90a, gfx942, gfx950
//   cdna_16x16x16_f32f16     v_mfma_f32_16x16x16f16                             gfx90a, gfx942, gfx950
//   cdna_32x32x8_f32bf16     v_mfma_f32_32x32x8bf16_1k (CDNA3: ..._32x32x8_bf16)  gfx90a, gfx942, gfx950
//   cdna_16x16x16_f32bf16    v_mfma_f32_16x16x16bf16_1k                         gfx90a, gfx942, gfx950
//   cdna_32x32x2_f32f32      v_mfma_f32_32x32x2f32                              gfx90a, gfx942, gfx950
//   cdna_16x16x4_f32f32      v_mfma_f32_16x16x4f32                              gfx90a, gfx942, gfx950
//   cdna2_32x32x8_i32i8      v_mfma_i32_32x32x8i8                               gfx90a (CDNA3 dropped it)
//   cdna2_16x16x16_i32i8     v_mfma_i32_16x16x16i8                              gfx90a
//   cdna3_32x32x16_i32i8     v_mfma_i32_32x32x16_i8                             gfx942, gfx950
//   cdna3_16x16x32_i32i8     v_mfma_i32_16x16x32_i8                             gfx942, gfx950
//   cdna3_32x32x16_f32e4m3   v_mfma_f32_32x32x16_fp8_fp8   (f8_e4m3_fnuz)       gfx942 only
//   cdna3_16x16x32_f32e4m3   v_mfma_f32_16x16x32_fp8_fp8   (f8_e4m3_fnuz)       gfx942 only
//   cdna3_32x32x16_f32e5m2   v_mfma_f32_32x32x16_bf8_bf8   (f8_e5m2_fnuz)       gfx942 only
//   cdna3_16x16x32_f32e5m2   v_mfma_f32_16x16x32_bf8_bf8   (f8_e5m2_fnuz)       gfx942 only
//
// fp8: CDNA3 reads its fp8/bf8 operands as the FNUZ encodings (numeric/f8_fnuz.hpp), so these atoms
// take f8_e4m3_fnuz / f8_e5m2_fnuz and never Strata's OCP f8_e4m3 / f8_e5m2. gfx950 (CDNA4) reads
// the same opcodes as OCP fp8; it gets no fp8 atom here until that is checked on hardware.
//
// Layouts: AMD Matrix Instruction Calculator (ROCm/amd_matrix_instruction_calculator,
// matrix_calculator.py, run as `-a cdna2|cdna3 -i <instruction> -d`), which prints for example
//   v_mfma_f32_32x32x8f16   A[i][k] GPR: (floor(k / 2) % 2).[16*(k % 2)+15 : 16*(k % 2)]  Lane: 32 * floor(k / 4) + i
//                           C or D[i][j] GPR: 4 * floor(i / 8) + (i % 4)   Lane: (32 * floor(i / 4)) % 64 + j
//   v_mfma_f32_16x16x16f16  A[i][k] Lane: 16 * floor(k / 4) + i      C or D[i][j] GPR: (i % 4)  Lane: 16 * floor(i / 4) + j
//   v_mfma_f32_32x32x2f32   A[i][k] GPR: 0   Lane: 32 * k + i          (C or D: as v_mfma_f32_32x32x8f16)
//   v_mfma_f32_16x16x4f32   A[i][k] GPR: 0   Lane: 16 * k + i          (C or D: as v_mfma_f32_16x16x16f16)
//   v_mfma_i32_32x32x8i8    A[i][k] GPR: 0.[8*(k % 4)+7 : 8*(k % 4)]  Lane: 32 * floor(k / 4) + i
//   v_mfma_i32_32x32x16_i8  A[i][k] GPR: (floor(k / 4) % 2).[8*(k % 4)+7 : 8*(k % 4)]  Lane: 32 * floor(k / 8) + i
//   v_mfma_i32_16x16x32_i8  A[i][k] Lane: 16 * floor(k / 8) + i   (fp8_fp8 / bf8_bf8: the same as the i8 forms)
// and B[k][j] as A with i -> j. The bf16_1k forms print exactly the f16 layouts. Inverted, with
// value v = position in the lane's (64- or 32-bit) operand, low bits first, and KL = k values per lane:
//   A: (i, k) = (lane % MN, KL * floor(lane / MN) + v)       B: (k, j) = (KL * floor(lane / MN) + v, lane % MN)
//   C/D: (i, j) = (4 * (64/MN) * floor(v / 4) + 4 * floor(lane / MN) + v % 4,  lane % MN)
// Integer accumulation wraps modulo 2^32.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "strata/arch/arch.hpp"
#include "strata/config/config.hpp"
#include "strata/mma/detail/execute.hpp"
#include "strata/mma/detail/registers.hpp"
#include "strata/mma/layout.hpp"
#include "strata/numeric/f8_fnuz.hpp"
#include "strata/numeric/numeric.hpp"

namespace strata::mma {

namespace detail {

template <class Target>
inline constexpr bool target_named(std::string_view n) {
  return Target::name == n;
}

/// The MFMA layout of a square MN x MN block with KL consecutive k values per lane (see above).
template <int MN, int KL>
struct mfma_layout {
  static_assert(MN == 32 || MN == 16, "single-block MFMA shapes are 32x32 or 16x16");
  static constexpr int M = MN, N = MN, K = KL * (64 / MN);
  static constexpr int warp_size = 64;
  static constexpr int a_values = KL, b_values = KL, c_values = MN * MN / 64;
  static constexpr int k_per_lane = KL;  // consecutive k values of one row per lane (vector_fragments.hpp)
  static constexpr bool b_broadcast = false;
  STRATA_HOST_DEVICE static constexpr coord a_coord(int lane, int v) { return {lane % MN, KL * (lane / MN) + v}; }
  STRATA_HOST_DEVICE static constexpr coord b_coord(int lane, int v) { return {KL * (lane / MN) + v, lane % MN}; }
  STRATA_HOST_DEVICE static constexpr coord c_coord(int lane, int v) {
    return {4 * (64 / MN) * (v / 4) + 4 * (lane / MN) + v % 4, lane % MN};
  }
};

#if STRATA_HIP_DEVICE_PASS
typedef _Float16 mfma_half4 __attribute__((ext_vector_type(4)));
typedef short mfma_short4 __attribute__((ext_vector_type(4)));
typedef float mfma_float4 __attribute__((ext_vector_type(4)));
typedef float mfma_float16 __attribute__((ext_vector_type(16)));
typedef int mfma_int4 __attribute__((ext_vector_type(4)));
typedef int mfma_int16 __attribute__((ext_vector_type(16)));

template <class V, class T, int N>
__device__ STRATA_FORCEINLINE V to_vector(const fragment<T, N>& f) {
  V r;
  STRATA_UNROLL
  for (int i = 0; i < N; ++i) r[i] = f.v[i];
  return r;
}
template <class V, class T, int N>
__device__ STRATA_FORCEINLINE void from_vector(const V& r, fragment<T, N>& f) {
  STRATA_UNROLL
  for (int i = 0; i < N; ++i) f.v[i] = r[i];
}
#endif

}  // namespace detail

/// f16 / bf16 operands, f32 accumulators, 4 k values per lane: 32x32x8 and 16x16x16.
template <int MN, class AB>
struct cdna_f32_16bit : detail::mfma_layout<MN, 4> {
  static_assert(std::is_same_v<AB, f16> || std::is_same_v<AB, bf16>, "16-bit MFMA atoms take f16 or bf16");
  static constexpr bool is_f16 = std::is_same_v<AB, f16>;
  static constexpr const char* name = MN == 32 ? (is_f16 ? "v_mfma_f32_32x32x8f16" : "v_mfma_f32_32x32x8bf16_1k")
                                               : (is_f16 ? "v_mfma_f32_16x16x16f16" : "v_mfma_f32_16x16x16bf16_1k");
  using base = detail::mfma_layout<MN, 4>;
  using a_type = AB;
  using b_type = AB;
  using c_type = float;
  using a_fragment = fragment<a_type, base::a_values>;
  using b_fragment = fragment<b_type, base::b_values>;
  using c_fragment = fragment<c_type, base::c_values>;
  static constexpr arch::atom_family family = arch::atom_family::mfma_f16;
  template <class Target>
  static constexpr bool available_on = Target::atoms.has(family);
  template <class Target>
  STRATA_HOST_DEVICE static constexpr void require_target() {
    static_assert(available_on<Target>, "MFMA f16/bf16 atoms need a CDNA2+ target (atom_family::mfma_f16: gfx90a, "
                                        "gfx942, gfx950), which the kernel's target is not");
  }

  STRATA_DEVICE static void device_mma(const a_fragment& a, const b_fragment& b, const c_fragment& c, c_fragment& d) {
#if STRATA_HIP_DEVICE_PASS
    using namespace detail;
    if constexpr (MN == 32) {
      const mfma_float16 acc = to_vector<mfma_float16>(c);
      if constexpr (is_f16)
        from_vector(__builtin_amdgcn_mfma_f32_32x32x8f16(__builtin_bit_cast(mfma_half4, reg64(a, 0)),
                                                         __builtin_bit_cast(mfma_half4, reg64(b, 0)), acc, 0, 0, 0),
                    d);
      else
        from_vector(__builtin_amdgcn_mfma_f32_32x32x8bf16_1k(__builtin_bit_cast(mfma_short4, reg64(a, 0)),
                                                             __builtin_bit_cast(mfma_short4, reg64(b, 0)), acc, 0, 0, 0),
                    d);
    } else {
      const mfma_float4 acc = to_vector<mfma_float4>(c);
      if constexpr (is_f16)
        from_vector(__builtin_amdgcn_mfma_f32_16x16x16f16(__builtin_bit_cast(mfma_half4, reg64(a, 0)),
                                                          __builtin_bit_cast(mfma_half4, reg64(b, 0)), acc, 0, 0, 0),
                    d);
      else
        from_vector(__builtin_amdgcn_mfma_f32_16x16x16bf16_1k(__builtin_bit_cast(mfma_short4, reg64(a, 0)),
                                                              __builtin_bit_cast(mfma_short4, reg64(b, 0)), acc, 0, 0, 0),
                    d);
    }
#else
    (void)a, (void)b, (void)c, (void)d;
#endif
  }
};

using cdna_32x32x8_f32f16 = cdna_f32_16bit<32, f16>;
using cdna_16x16x16_f32f16 = cdna_f32_16bit<16, f16>;
using cdna_32x32x8_f32bf16 = cdna_f32_16bit<32, bf16>;
using cdna_16x16x16_f32bf16 = cdna_f32_16bit<16, bf16>;

/// f32 operands and accumulators, one k value per lane: 32x32x2 and 16x16x4. Full fp32 products (no
/// reduced-precision inputs, unlike NVIDIA's tf32), so the fp32 GEMM runs on the matrix cores.
template <int MN>
struct cdna_f32_f32 : detail::mfma_layout<MN, 1> {
  static constexpr const char* name = MN == 32 ? "v_mfma_f32_32x32x2f32" : "v_mfma_f32_16x16x4f32";
  using base = detail::mfma_layout<MN, 1>;
  using a_type = float;
  using b_type = float;
  using c_type = float;
  using a_fragment = fragment<a_type, base::a_values>;
  using b_fragment = fragment<b_type, base::b_values>;
  using c_fragment = fragment<c_type, base::c_values>;
  static constexpr arch::atom_family family = arch::atom_family::mfma_f32;
  template <class Target>
  static constexpr bool available_on = Target::atoms.has(family);
  template <class Target>
  STRATA_HOST_DEVICE static constexpr void require_target() {
    static_assert(available_on<Target>, "MFMA f32 atoms need a CDNA2+ target (atom_family::mfma_f32: gfx90a, gfx942, "
                                        "gfx950), which the kernel's target is not");
  }

  STRATA_DEVICE static void device_mma(const a_fragment& a, const b_fragment& b, const c_fragment& c, c_fragment& d) {
#if STRATA_HIP_DEVICE_PASS
    using namespace detail;
    if constexpr (MN == 32)
      from_vector(__builtin_amdgcn_mfma_f32_32x32x2f32(a.v[0], b.v[0], to_vector<mfma_float16>(c), 0, 0, 0), d);
    else
      from_vector(__builtin_amdgcn_mfma_f32_16x16x4f32(a.v[0], b.v[0], to_vector<mfma_float4>(c), 0, 0, 0), d);
#else
    (void)a, (void)b, (void)c, (void)d;
#endif
  }
};

using cdna_32x32x2_f32f32 = cdna_f32_f32<32>;
using cdna_16x16x4_f32f32 = cdna_f32_f32<16>;

/// CDNA2 int8: 4 k values per lane in one VGPR (32x32x8, 16x16x16). CDNA3 has no such opcodes.
template <int MN>
struct cdna2_i32i8 : detail::mfma_layout<MN, 4> {
  static constexpr const char* name = MN == 32 ? "v_mfma_i32_32x32x8i8" : "v_mfma_i32_16x16x16i8";
  using base = detail::mfma_layout<MN, 4>;
  using a_type = std::int8_t;
  using b_type = std::int8_t;
  using c_type = std::int32_t;
  using a_fragment = fragment<a_type, base::a_values>;
  using b_fragment = fragment<b_type, base::b_values>;
  using c_fragment = fragment<c_type, base::c_values>;
  static constexpr arch::atom_family family = arch::atom_family::mfma_i8;
  template <class Target>
  static constexpr bool available_on = Target::atoms.has(family) && detail::target_named<Target>("gfx90a");
  template <class Target>
  STRATA_HOST_DEVICE static constexpr void require_target() {
    static_assert(available_on<Target>, "v_mfma_i32_32x32x8i8 / 16x16x16i8 exist on CDNA2 (gfx90a) only; on CDNA3 "
                                        "(gfx942) use cdna3_32x32x16_i32i8 / cdna3_16x16x32_i32i8");
  }

  STRATA_DEVICE static void device_mma(const a_fragment& a, const b_fragment& b, const c_fragment& c, c_fragment& d) {
#if STRATA_HIP_DEVICE_PASS
    using namespace detail;
    const int ra = static_cast<int>(reg32(a, 0)), rb = static_cast<int>(reg32(b, 0));
    if constexpr (MN == 32)
      from_vector(__builtin_amdgcn_mfma_i32_32x32x8i8(ra, rb, to_vector<mfma_int16>(c), 0, 0, 0), d);
    else
      from_vector(__builtin_amdgcn_mfma_i32_16x16x16i8(ra, rb, to_vector<mfma_int4>(c), 0, 0, 0), d);
#else
    (void)a, (void)b, (void)c, (void)d;
#endif
  }
};

using cdna2_32x32x8_i32i8 = cdna2_i32i8<32>;
using cdna2_16x16x16_i32i8 = cdna2_i32i8<16>;

/// CDNA3 8-bit operands, 8 k values per lane in two VGPRs: int8 (32x32x16, 16x16x32) and FNUZ fp8.
template <int MN, class T>
struct cdna3_8bit : detail::mfma_layout<MN, 8> {
  static constexpr bool is_int = std::is_same_v<T, std::int8_t>;
  static constexpr bool is_e4m3 = std::is_same_v<T, f8_e4m3_fnuz>;
  static_assert(is_int || is_e4m3 || std::is_same_v<T, f8_e5m2_fnuz>,
                "CDNA3 8-bit MFMA atoms take int8_t or the FNUZ fp8 types (f8_e4m3_fnuz, f8_e5m2_fnuz); Strata's "
                "OCP f8_e4m3 / f8_e5m2 encode different numbers and must be converted first");
  static constexpr const char* name =
      is_int ? (MN == 32 ? "v_mfma_i32_32x32x16_i8" : "v_mfma_i32_16x16x32_i8")
             : is_e4m3 ? (MN == 32 ? "v_mfma_f32_32x32x16_fp8_fp8" : "v_mfma_f32_16x16x32_fp8_fp8")
                       : (MN == 32 ? "v_mfma_f32_32x32x16_bf8_bf8" : "v_mfma_f32_16x16x32_bf8_bf8");
  using base = detail::mfma_layout<MN, 8>;
  using a_type = T;
  using b_type = T;
  using c_type = std::conditional_t<is_int, std::int32_t, float>;
  using a_fragment = fragment<a_type, base::a_values>;
  using b_fragment = fragment<b_type, base::b_values>;
  using c_fragment = fragment<c_type, base::c_values>;
  static constexpr arch::atom_family family = is_int ? arch::atom_family::mfma_i8 : arch::atom_family::mfma_f8;
  template <class Target>
  static constexpr bool available_on =
      Target::atoms.has(family) &&
      (is_int ? (detail::target_named<Target>("gfx942") || detail::target_named<Target>("gfx950"))
              : detail::target_named<Target>("gfx942"));
  template <class Target>
  STRATA_HOST_DEVICE static constexpr void require_target() {
    if constexpr (is_int)
      static_assert(available_on<Target>, "v_mfma_i32_32x32x16_i8 / 16x16x32_i8 need CDNA3+ (gfx942, gfx950); on "
                                          "gfx90a use cdna2_32x32x8_i32i8 / cdna2_16x16x16_i32i8");
    else
      static_assert(available_on<Target>, "FNUZ fp8 MFMA (v_mfma_f32_*_fp8_fp8 / bf8_bf8) needs CDNA3 (gfx942): "
                                          "gfx90a has no fp8 matrix cores and gfx950 reads OCP fp8");
  }

  STRATA_DEVICE static void device_mma(const a_fragment& a, const b_fragment& b, const c_fragment& c, c_fragment& d) {
#if STRATA_HIP_DEVICE_PASS
    using namespace detail;
    const long ra = static_cast<long>(reg64(a, 0)), rb = static_cast<long>(reg64(b, 0));
    if constexpr (is_int) {
      if constexpr (MN == 32)
        from_vector(__builtin_amdgcn_mfma_i32_32x32x16_i8(ra, rb, to_vector<mfma_int16>(c), 0, 0, 0), d);
      else
        from_vector(__builtin_amdgcn_mfma_i32_16x16x32_i8(ra, rb, to_vector<mfma_int4>(c), 0, 0, 0), d);
    } else if constexpr (is_e4m3) {
      if constexpr (MN == 32)
        from_vector(__builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(ra, rb, to_vector<mfma_float16>(c), 0, 0, 0), d);
      else
        from_vector(__builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(ra, rb, to_vector<mfma_float4>(c), 0, 0, 0), d);
    } else {
      if constexpr (MN == 32)
        from_vector(__builtin_amdgcn_mfma_f32_32x32x16_bf8_bf8(ra, rb, to_vector<mfma_float16>(c), 0, 0, 0), d);
      else
        from_vector(__builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8(ra, rb, to_vector<mfma_float4>(c), 0, 0, 0), d);
    }
#else
    (void)a, (void)b, (void)c, (void)d;
#endif
  }
};

using cdna3_32x32x16_i32i8 = cdna3_8bit<32, std::int8_t>;
using cdna3_16x16x32_i32i8 = cdna3_8bit<16, std::int8_t>;
using cdna3_32x32x16_f32e4m3 = cdna3_8bit<32, f8_e4m3_fnuz>;
using cdna3_16x16x32_f32e4m3 = cdna3_8bit<16, f8_e4m3_fnuz>;
using cdna3_32x32x16_f32e5m2 = cdna3_8bit<32, f8_e5m2_fnuz>;
using cdna3_16x16x32_f32e5m2 = cdna3_8bit<16, f8_e5m2_fnuz>;

}  // namespace strata::mma
