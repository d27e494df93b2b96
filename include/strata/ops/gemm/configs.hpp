// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/gemm/configs.hpp -- the shipped GEMM configurations, one family per target class, as
// values (gemm::shape) kept apart from the kernel. Each names its atom from the input type.
//
//   sm80 family (sm80, and sm90a / sm100a until the Hopper issue): mma.sync m16n8k16 (f16, bf16),
//     m16n8k8 tf32 (fp32 inputs), m16n8k32 s8 and e4m3 / e5m2 (sm90a, sm100a); cp.async multistage.
//   cdna family (gfx90a, gfx942, wave64): MFMA 32x32x8 (large tiles) or 16x16x16 (skinny) for f16 and
//     bf16; 32x32x2 / 16x16x4 f32 (full fp32); 32x32x8 i8 (gfx90a) / 32x32x16 i8 and fp8 (gfx942: FNUZ, and OCP through a byte remap).
//   fma family (any target, the host emulator included): scalar FMA, one output row per lane.
//
// Shapes are not tuned on hardware yet (no GPU measured, see docs/gemm.md); they were chosen to fit
// the register file without spills (test/compile/gemm_entry_kernels.cu for CUDA, gemm_cdna_kernels.cu for
// HIP) and to keep warp tiles square.
#pragma once

#include <cstdint>
#include <type_traits>

#include "strata/arch/arch.hpp"
#include "strata/mma/mma.hpp"
#include "strata/numeric/numeric.hpp"
#include "strata/ops/gemm/kernel.hpp"

namespace strata::ops::gemm::configs {

// ---- shapes ------------------------------------------------------------------------------------
// warp tile 64 x 32 (2 x 2 warps of 64 x 64 spill with 2-byte rows, see docs/gemm.md). Single-buffered
// fragments: double-buffered it takes 141 registers (sm_90a), one block per SM instead of two, and
// capped at 128 it spills.
inline constexpr shape sm80_large{128, 128, 32, 2, 4, 3, false};
// 16-bit inputs on large outputs, A row-major x B column-major with 16-byte rows only: warp tile
// 64 x 64 (the shape CUTLASS's sm80 profiles default to), fragments double-buffered. Two thirds of the
// ldmatrix instructions per HMMA of sm80_large (16 LDSM per 64 HMMA instead of 12 per 32) and 2.05
// static instructions per HMMA in its K loop (sm_90a); 220-224 registers (sm_80, sm_90a), so one
// block of 8 warps per SM, and 90 KiB of shared memory for its three stages. No split-K form (its
// partials' store spilled on sm_100a): the entry runs it only on outputs that fill the machine.
inline constexpr shape sm80_wide{128, 256, 32, 2, 4, 3, true, false};
// The 128 x 128 tile as the entry runs it for the operand orders whose stage rows run along M or N
// (a_row_b_row, a_col_b_col, a_col_b_row), and for int8 in every order: no split-K form. With one,
// ptxas (nvcc 13) spilled 16-36 bytes on sm_80 in the serial running sum's epilogue under the tile's
// 128 registers (the loads of 64 running sums beside 64 accumulators; gemm.hpp, sm80_large_for). The entry splits K only on tiles that leave units idle,
// where it runs the medium tile; an explicit options.split_k above 1 takes the medium tile too.
inline constexpr shape sm80_large_no_split{128, 128, 32, 2, 4, 3, false, false};
inline constexpr shape sm80_medium{64, 64, 32, 2, 2, 3};   // warp tile 32 x 32
inline constexpr shape sm80_skinny{16, 64, 64, 1, 4, 3};   // decode: M <= 16, warp tile 16 x 16
inline constexpr shape cdna_large{128, 128, 32, 2, 2, 2};  // 32x32 atom, warp tile 64 x 64
inline constexpr shape cdna_medium{64, 64, 32, 2, 2, 2};   // 32x32 atom, warp tile 32 x 32 (stream-K on HIP)
inline constexpr shape cdna_skinny{16, 64, 64, 1, 4, 2};   // 16x16 atom, warp tile 16 x 16
inline constexpr shape cdna_large_f32{128, 128, 16, 2, 2, 2};  // fp32 32x32x2 atom: half the K depth keeps two stages in 32 KiB of LDS
inline constexpr shape fma_default{64, 32, 8, 2, 1, 2};    // warp tile 32 x 32 (warp 32)
inline constexpr shape fma_skinny{32, 32, 8, 1, 1, 2};     // M <= 32 (32 x 64 x 8, 1 x 2 warps spilled on sm_80)
inline constexpr shape fma_wave64{64, 32, 8, 1, 1, 2};     // warp tile 64 x 32 (wave64)
// CUDA's fp32 FMA tile: warp tile 32 x 32 over K = 4. Each lane holds a copy of the K x N broadcast
// B fragment; with fma_default's K = 8 (256 values) ptxas spilled it on sm_100a (812 bytes at 255
// registers) and, wrapped in stream_k_kernel / grouped_kernel, everywhere (nvcc 13, 2026-12-02).
inline constexpr shape fma_sm80{64, 64, 4, 2, 2, 2};

// ---- atoms per input type ----------------------------------------------------------------------
template <class T>
struct sm80_atom;
template <>
struct sm80_atom<f16> {
  using type = mma::sm80_16x8x16_f32f16;
};
template <>
struct sm80_atom<bf16> {
  using type = mma::sm80_16x8x16_f32bf16;
};
template <>
struct sm80_atom<float> {
  using type = mma::sm80_16x8x8_f32tf32;
};
template <>
struct sm80_atom<std::int8_t> {
  using type = mma::sm80_16x8x32_s32s8;
};
template <>
struct sm80_atom<f8_e4m3> {
  using type = mma::sm89_16x8x32_f32e4m3;
};
template <>
struct sm80_atom<f8_e5m2> {
  using type = mma::sm89_16x8x32_f32e5m2;
};

/// CDNA atoms: Large = the 32x32 forms, else 16x16.
template <class Target, class T, bool Large>
struct cdna_atom;
template <class Target, bool Large>
struct cdna_atom<Target, f16, Large> {
  using type = std::conditional_t<Large, mma::cdna_32x32x8_f32f16, mma::cdna_16x16x16_f32f16>;
};
template <class Target, bool Large>
struct cdna_atom<Target, bf16, Large> {
  using type = std::conditional_t<Large, mma::cdna_32x32x8_f32bf16, mma::cdna_16x16x16_f32bf16>;
};
template <class Target, bool Large>
struct cdna_atom<Target, float, Large> {
  using type = std::conditional_t<Large, mma::cdna_32x32x2_f32f32, mma::cdna_16x16x4_f32f32>;
};
template <class Target, bool Large>
struct cdna_atom<Target, std::int8_t, Large> {
  static constexpr bool cdna2 = std::is_same_v<Target, arch::gfx90a>;
  using type = std::conditional_t<cdna2, std::conditional_t<Large, mma::cdna2_32x32x8_i32i8, mma::cdna2_16x16x16_i32i8>,
                                  std::conditional_t<Large, mma::cdna3_32x32x16_i32i8, mma::cdna3_16x16x32_i32i8>>;
};
template <class Target, bool Large>
struct cdna_atom<Target, f8_e4m3_fnuz, Large> {
  using type = std::conditional_t<Large, mma::cdna3_32x32x16_f32e4m3, mma::cdna3_16x16x32_f32e4m3>;
};
template <class Target, bool Large>
struct cdna_atom<Target, f8_e5m2_fnuz, Large> {
  using type = std::conditional_t<Large, mma::cdna3_32x32x16_f32e5m2, mma::cdna3_16x16x32_f32e5m2>;
};
// OCP fp8 (what frameworks store) on the same instructions: operand bytes remapped after each
// fragment load, products scaled by 4 after the K loop (mma/mfma_ocp_fp8.hpp).
template <class Target, bool Large>
struct cdna_atom<Target, f8_e4m3, Large> {
  using type = std::conditional_t<Large, mma::cdna3_32x32x16_f32e4m3_ocp, mma::cdna3_16x16x32_f32e4m3_ocp>;
};
template <class Target, bool Large>
struct cdna_atom<Target, f8_e5m2, Large> {
  using type = std::conditional_t<Large, mma::cdna3_32x32x16_f32e5m2_ocp, mma::cdna3_16x16x32_f32e5m2_ocp>;
};

/// Accumulator of the scalar-FMA path: int32 for 8-bit integers, float otherwise.
template <class T>
using fma_acc = std::conditional_t<std::is_integral_v<T>, std::int32_t, float>;

// ---- kernels -----------------------------------------------------------------------------------
template <class Target, class T, class Epilogue, shape S = sm80_large, std::size_t Align = sizeof(T),
          operand_orders Orders = operand_orders::any>
using sm80 = kernel<Target, typename sm80_atom<T>::type, S, Epilogue, order::default_for<Target>, Align, Orders>;

template <class Target, class T, class Epilogue, bool Large = true, std::size_t Align = sizeof(T),
          operand_orders Orders = operand_orders::any>
using cdna = kernel<Target, typename cdna_atom<Target, T, Large>::type,
                    Large ? (sizeof(T) == 4 ? cdna_large_f32 : cdna_large) : cdna_skinny, Epilogue,
                    order::default_for<Target>, Align, Orders>;

template <class Target, class T, class Epilogue, shape S = (Target::warp_size == 64 ? fma_wave64 : fma_default),
          std::size_t Align = sizeof(T)>
using fma = kernel<Target, mma::fma_atom<T, fma_acc<T>, Target::warp_size>, S, Epilogue, order::default_for<Target>,
                   Align>;

}  // namespace strata::ops::gemm::configs
