// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/mma_kernels.cu -- builds, for one GPU target per compile, a kernel for every MMA atom
// that target has (test/mma/mma_kernels.hpp: one atom per warp, and a warp tile), so that the
// compile check can show the tensor-core instructions in the PTX / GCN assembly and that nothing
// spills. Compiled by nvcc as CUDA and by hipcc with `-x hip`, with -DSTRATA_COMPILE_TARGET=<descriptor>.
//
// compile-expect-kernels sm_.*: mma_f16_kernel mma_bf16_kernel mma_tf32_kernel mma_s8_kernel mma_fma_kernel
// compile-expect-kernels sm_.*: tile_f16_kernel tile_s8_kernel
// compile-expect-kernels sm_90a|sm_100a: mma_e4m3_kernel mma_e5m2_kernel
// compile-expect-kernels gfx.*: mfma_f16_32_kernel mfma_f16_16_kernel mfma_bf16_32_kernel mfma_bf16_16_kernel
// compile-expect-kernels gfx.*: mma_fma_kernel tile_f16_kernel tile_i8_kernel mfma_i8_32_kernel mfma_i8_16_kernel
// compile-expect-kernels gfx940: mfma_e4m3_32_kernel mfma_e4m3_16_kernel mfma_e5m2_32_kernel mfma_e5m2_16_kernel
// compile-expect-code sm_.*: mma.sync m16n8k16 f16 = mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32
// compile-expect-code sm_.*: mma.sync m16n8k16 bf16 = mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32
// compile-expect-code sm_.*: mma.sync m16n8k8 tf32 = mma\.sync\.aligned\.m16n8k8\.row\.col\.f32\.tf32\.tf32\.f32
// compile-expect-code sm_.*: mma.sync m16n8k32 s8 = mma\.sync\.aligned\.m16n8k32\.row\.col\.s32\.s8\.s8\.s32
// compile-expect-code sm_90a|sm_100a: mma.sync m16n8k32 e4m3 = mma\.sync\.aligned\.m16n8k32\.row\.col\.f32\.e4m3\.e4m3\.f32
// compile-expect-code sm_90a|sm_100a: mma.sync m16n8k32 e5m2 = mma\.sync\.aligned\.m16n8k32\.row\.col\.f32\.e5m2\.e5m2\.f32
// compile-expect-code gfx.*: MFMA 32x32x8 f16 = v_mfma_f32_32x32x8_?f16
// compile-expect-code gfx.*: MFMA 16x16x16 f16 = v_mfma_f32_16x16x16_?f16
// compile-expect-code gfx.*: MFMA 32x32x8 bf16 = v_mfma_f32_32x32x8_?bf16
// compile-expect-code gfx.*: MFMA 16x16x16 bf16 = v_mfma_f32_16x16x16_?bf16
// compile-expect-code gfx90a: MFMA 32x32x8 i8 = v_mfma_i32_32x32x8_?i8
// compile-expect-code gfx90a: MFMA 16x16x16 i8 = v_mfma_i32_16x16x16_?i8
// compile-expect-code gfx940: MFMA 32x32x16 i8 = v_mfma_i32_32x32x16_i8
// compile-expect-code gfx940: MFMA 16x16x32 i8 = v_mfma_i32_16x16x32_i8
// compile-expect-code gfx940: MFMA 32x32x16 fp8 (FNUZ e4m3) = v_mfma_f32_32x32x16_fp8_fp8
// compile-expect-code gfx940: MFMA 16x16x32 fp8 (FNUZ e4m3) = v_mfma_f32_16x16x32_fp8_fp8
// compile-expect-code gfx940: MFMA 32x32x16 bf8 (FNUZ e5m2) = v_mfma_f32_32x32x16_bf8_bf8
// compile-expect-code gfx940: MFMA 16x16x32 bf8 (FNUZ e5m2) = v_mfma_f32_16x16x32_bf8_bf8
#include <cstdint>

#include "strata/strata.hpp"

#include "mma/mma_kernels.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor>, e.g. sm80 or gfx90a"
#endif

namespace strata_test {
namespace {
using target = strata::arch::STRATA_COMPILE_TARGET;
namespace mma = strata::mma;
}  // namespace

// One named kernel per atom, so that the resource report lists each on its own line.
#define STRATA_MMA_KERNEL(name, ...) \
  struct name : atom_kernel<target, __VA_ARGS__> {};
#define STRATA_TILE_KERNEL(name, ...) \
  struct name : tile_kernel<target, __VA_ARGS__> {};

STRATA_MMA_KERNEL(mma_fma_kernel, mma::fma_atom<float, float, target::warp_size>)
#if STRATA_BACKEND_CUDA
STRATA_MMA_KERNEL(mma_f16_kernel, mma::sm80_16x8x16_f32f16)
STRATA_MMA_KERNEL(mma_bf16_kernel, mma::sm80_16x8x16_f32bf16)
STRATA_MMA_KERNEL(mma_tf32_kernel, mma::sm80_16x8x8_f32tf32)
STRATA_MMA_KERNEL(mma_s8_kernel, mma::sm80_16x8x32_s32s8)
STRATA_MMA_KERNEL(mma_e4m3_kernel, mma::sm89_16x8x32_f32e4m3)
STRATA_MMA_KERNEL(mma_e5m2_kernel, mma::sm89_16x8x32_f32e5m2)
STRATA_TILE_KERNEL(tile_f16_kernel, mma::warp_tile<mma::sm80_16x8x16_f32f16, 32, 16, 32>)
STRATA_TILE_KERNEL(tile_s8_kernel, mma::warp_tile<mma::sm80_16x8x32_s32s8, 32, 16, 32>)
#else
STRATA_MMA_KERNEL(mfma_f16_32_kernel, mma::cdna_32x32x8_f32f16)
STRATA_MMA_KERNEL(mfma_f16_16_kernel, mma::cdna_16x16x16_f32f16)
STRATA_MMA_KERNEL(mfma_bf16_32_kernel, mma::cdna_32x32x8_f32bf16)
STRATA_MMA_KERNEL(mfma_bf16_16_kernel, mma::cdna_16x16x16_f32bf16)
STRATA_TILE_KERNEL(tile_f16_kernel, mma::warp_tile<mma::cdna_32x32x8_f32f16, 32, 32, 16>)
// The int8 forms differ between CDNA2 (4 k values per lane) and CDNA3 (8).
using i8_32 = std::conditional_t<std::is_same_v<target, strata::arch::gfx90a>, mma::cdna2_32x32x8_i32i8,
                                 mma::cdna3_32x32x16_i32i8>;
using i8_16 = std::conditional_t<std::is_same_v<target, strata::arch::gfx90a>, mma::cdna2_16x16x16_i32i8,
                                 mma::cdna3_16x16x32_i32i8>;
STRATA_MMA_KERNEL(mfma_i8_32_kernel, i8_32)
STRATA_MMA_KERNEL(mfma_i8_16_kernel, i8_16)
// One k-step per tile: with two, the per-byte predicated loads of gfx940 spill 5 SGPRs.
STRATA_TILE_KERNEL(tile_i8_kernel, mma::warp_tile<i8_16, 32, 32, i8_16::K>)
STRATA_MMA_KERNEL(mfma_e4m3_32_kernel, mma::cdna3_32x32x16_f32e4m3)
STRATA_MMA_KERNEL(mfma_e4m3_16_kernel, mma::cdna3_16x16x32_f32e4m3)
STRATA_MMA_KERNEL(mfma_e5m2_32_kernel, mma::cdna3_32x32x16_f32e5m2)
STRATA_MMA_KERNEL(mfma_e5m2_16_kernel, mma::cdna3_16x16x32_f32e5m2)
#endif
#undef STRATA_MMA_KERNEL
#undef STRATA_TILE_KERNEL

}  // namespace strata_test

// Never called: only instantiated, so that every kernel is compiled for the device. A template, so
// that the branches for atoms the target lacks are discarded, not instantiated.
template <class Target>
void strata_compile_mma_kernels(strata::stream& s) {
  using namespace strata_test;
  using target = Target;
  const strata::launch_shape one{.grid = {4}, .block = {2 * target::warp_size}};
  const strata::launch_shape tiles{.grid = {4, 4}, .block = {2 * target::warp_size}};
  strata::launch(s, one, mma_fma_kernel{}, atom_params<mma::fma_atom<float, float, target::warp_size>>{});
#if STRATA_BACKEND_CUDA
  strata::launch(s, one, mma_f16_kernel{}, atom_params<mma::sm80_16x8x16_f32f16>{});
  strata::launch(s, one, mma_bf16_kernel{}, atom_params<mma::sm80_16x8x16_f32bf16>{});
  strata::launch(s, one, mma_tf32_kernel{}, atom_params<mma::sm80_16x8x8_f32tf32>{});
  strata::launch(s, one, mma_s8_kernel{}, atom_params<mma::sm80_16x8x32_s32s8>{});
  if constexpr (mma::sm89_16x8x32_f32e4m3::template available_on<target>) {
    strata::launch(s, one, mma_e4m3_kernel{}, atom_params<mma::sm89_16x8x32_f32e4m3>{});
    strata::launch(s, one, mma_e5m2_kernel{}, atom_params<mma::sm89_16x8x32_f32e5m2>{});
  }
  strata::launch(s, tiles, tile_f16_kernel{}, tile_params<mma::sm80_16x8x16_f32f16>{});
  strata::launch(s, tiles, tile_s8_kernel{}, tile_params<mma::sm80_16x8x32_s32s8>{});
#else
  strata::launch(s, one, mfma_f16_32_kernel{}, atom_params<mma::cdna_32x32x8_f32f16>{});
  strata::launch(s, one, mfma_f16_16_kernel{}, atom_params<mma::cdna_16x16x16_f32f16>{});
  strata::launch(s, one, mfma_bf16_32_kernel{}, atom_params<mma::cdna_32x32x8_f32bf16>{});
  strata::launch(s, one, mfma_bf16_16_kernel{}, atom_params<mma::cdna_16x16x16_f32bf16>{});
  strata::launch(s, one, mfma_i8_32_kernel{}, atom_params<i8_32>{});
  strata::launch(s, one, mfma_i8_16_kernel{}, atom_params<i8_16>{});
  strata::launch(s, tiles, tile_f16_kernel{}, tile_params<mma::cdna_32x32x8_f32f16>{});
  strata::launch(s, tiles, tile_i8_kernel{}, tile_params<i8_16>{});
  if constexpr (mma::cdna3_32x32x16_f32e4m3::template available_on<target>) {
    strata::launch(s, one, mfma_e4m3_32_kernel{}, atom_params<mma::cdna3_32x32x16_f32e4m3>{});
    strata::launch(s, one, mfma_e4m3_16_kernel{}, atom_params<mma::cdna3_16x16x32_f32e4m3>{});
    strata::launch(s, one, mfma_e5m2_32_kernel{}, atom_params<mma::cdna3_32x32x16_f32e5m2>{});
    strata::launch(s, one, mfma_e5m2_16_kernel{}, atom_params<mma::cdna3_16x16x32_f32e5m2>{});
  }
#endif
}

template void strata_compile_mma_kernels<strata::arch::STRATA_COMPILE_TARGET>(strata::stream&);
