// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/gemm_cdna_kernels.cu -- the GEMM kernels the host entry (strata/ops/gemm/gemm.hpp)
// launches on a HIP build, compiled for gfx90a and gfx940 (the gfx942 descriptor: Debian's clang 15
// predates gfx942): the MFMA 32x32 128 x 128 tile and the 16x16 skinny tile for bf16, f16, fp32 (f32
// MFMA) and int8 (int32 output), all with the entry's epilogue (alpha/beta, bias, activation,
// conversion), the grouped form of the bf16 large tile, stream-K on the 64 x 64 tile (the one the
// entry runs under stream-K on HIP), the split-K reduction, and the GEMV kernel (ops/gemm/gemv.hpp,
// M <= 8 with A row-major and B column-major, 16-byte rows; 64-lane warps) for 4 and 8 rows. Checks that nothing spills and nothing
// lives in scratch memory, and that the mainloop issues MFMA.
//
// Every MFMA configuration spilled 18-33 SGPRs on gfx940 (and the wave64 FMA fp32 kernel over 1000)
// until the HIP trampoline read its parameters in place (strata/runtime/hip/trampoline.hpp), the GEMM
// mainloop loaded fragments without per-element bounds tests (mma::edges::inside) and fp32 moved to
// the f32 MFMA.
//
// Since the 16-byte instantiations (2026-12-06) the gfx940 pass compiles about 40 kernels: 250-300 s
// on the 2-core CI machine with the other compile test beside it, at the default 300 s limit.
// compile-timeout 600
// compile-targets gfx.*
// compile-expect-kernels gfx.*: gemm_bf16_large_kernel gemm_bf16_skinny_kernel gemm_f16_large_kernel
// compile-expect-kernels gfx.*: gemm_i8_large_kernel gemm_i8_skinny_kernel gemm_f32_large_kernel gemm_f32_skinny_kernel
// compile-expect-kernels gfx.*: gemm_bf16_stream_k_kernel gemm_bf16_grouped_kernel gemm_reduce_kernel
// compile-expect-kernels gfx.*: gemm_bf16_gemv4_kernel gemm_bf16_gemv8_kernel gemm_f16_gemv8_kernel gemm_f32_gemv4_kernel
// The tiles compiled for A row-major, B column-major with 16-byte rows (operand_orders::a_row_b_col),
// which the entry runs for that layout: copies staged through registers, 16-byte fragment reads.
// compile-expect-kernels gfx.*: gemm_bf16_large_tn_kernel gemm_bf16_skinny_tn_kernel gemm_f16_large_tn_kernel
// compile-expect-kernels gfx.*: gemm_i8_large_tn_kernel gemm_f32_large_tn_kernel gemm_f32_skinny_tn_kernel
// The tiles for the other pairs of orders with 16-byte rows (`_rr` A row-major x B row-major, `_cc`,
// `_cr`), which the entry runs for them: the operand along M or N written into its stage transposed.
// compile-expect-kernels gfx.*: gemm_bf16_large_rr_kernel gemm_bf16_large_cc_kernel gemm_bf16_large_cr_kernel
// compile-expect-kernels gfx.*: gemm_bf16_skinny_cr_kernel gemm_f16_large_cr_kernel gemm_i8_large_rr_kernel
// compile-expect-kernels gfx.*: gemm_i8_skinny_cr_kernel gemm_f32_large_rr_kernel gemm_f32_skinny_cc_kernel
// compile-expect-code gfx.*: bf16 MFMA 32x32 = v_mfma_f32_32x32x8_?bf16
// compile-expect-code gfx.*: bf16 MFMA 16x16 = v_mfma_f32_16x16x16_?bf16
// compile-expect-code gfx.*: f16 MFMA 32x32 = v_mfma_f32_32x32x8_?f16
// compile-expect-code gfx.*: int8 MFMA = v_mfma_i32_32x32x(8|16)_?i8
// compile-expect-code gfx.*: f32 MFMA 32x32 = v_mfma_f32_32x32x2_?f32
// compile-expect-code gfx.*: f32 MFMA 16x16 = v_mfma_f32_16x16x4_?f32
// gfx942 (built as gfx940) also runs OCP fp8 -> bf16 on the fp8 MFMA, operands remapped to FNUZ
// (mma/mfma_ocp_fp8.hpp) with the dequantization scales in the epilogue; gfx90a has no fp8 units.
// Under stream-K fp8 takes the 16 x 64 tile: on the 64 x 64 one the scale pointers spilled 2 SGPRs.
// compile-expect-kernels gfx940: gemm_e4m3_large_kernel gemm_e4m3_skinny_kernel gemm_e5m2_large_kernel
// compile-expect-kernels gfx940: gemm_e5m2_skinny_kernel gemm_e4m3_stream_k_kernel gemm_fp8_reduce_kernel
// compile-expect-kernels gfx940: gemm_e4m3_large_tn_kernel gemm_e4m3_skinny_tn_kernel
// compile-expect-kernels gfx940: gemm_e4m3_large_cr_kernel gemm_e4m3_skinny_rr_kernel
// compile-expect-code gfx940: fp8 MFMA 32x32 = v_mfma_f32_32x32x16_fp8_fp8
// compile-expect-code gfx940: fp8 MFMA 16x16 = v_mfma_f32_16x16x32_fp8_fp8
// compile-expect-code gfx940: bf8 MFMA 32x32 = v_mfma_f32_32x32x16_bf8_bf8
#if defined(__HIP__) || defined(__HIPCC__)
// Only the kernel templates: the host entry would compile every configuration it dispatches to.
#include "strata/ops/gemm/configs.hpp"
#include "strata/ops/gemm/entry_epilogue.hpp"
#include "strata/ops/gemm/gemv.hpp"
#include "strata/ops/gemm/grouped.hpp"
#include "strata/ops/gemm/stream_k.hpp"
#include "strata/strata.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor>, e.g. gfx90a or gfx942"
#endif

namespace strata_test {
namespace g = strata::ops::gemm;
namespace cf = strata::ops::gemm::configs;
using target = strata::arch::STRATA_COMPILE_TARGET;
template <class TD>
using E = g::detail::entry_epilogue<TD>;

// Named wrappers, so that the report (which shows strata_test:: kernels) lists each configuration.
// Templates on a dummy parameter, as in conv_kernels.cu.
template <int>
struct gemm_bf16_large_kernel : cf::cdna<target, strata::bf16, E<strata::bf16>, true> {};
template <int>
struct gemm_bf16_skinny_kernel : cf::cdna<target, strata::bf16, E<strata::bf16>, false> {};
template <int>
struct gemm_f16_large_kernel : cf::cdna<target, strata::f16, E<float>, true> {};
template <int>
struct gemm_i8_large_kernel : cf::cdna<target, std::int8_t, E<std::int32_t>, true> {};
template <int>
struct gemm_i8_skinny_kernel : cf::cdna<target, std::int8_t, E<std::int32_t>, false> {};
template <int>
struct gemm_f32_large_kernel : cf::cdna<target, float, E<float>, true> {};
template <int>
struct gemm_f32_skinny_kernel : cf::cdna<target, float, E<float>, false> {};
template <class T, class TD, bool Large>
using tn = cf::cdna<target, T, E<TD>, Large, 16, g::operand_orders::a_row_b_col>;
template <int>
struct gemm_bf16_large_tn_kernel : tn<strata::bf16, strata::bf16, true> {};
template <int>
struct gemm_bf16_skinny_tn_kernel : tn<strata::bf16, strata::bf16, false> {};
template <int>
struct gemm_f16_large_tn_kernel : tn<strata::f16, float, true> {};
template <int>
struct gemm_i8_large_tn_kernel : tn<std::int8_t, std::int32_t, true> {};
template <int>
struct gemm_f32_large_tn_kernel : tn<float, float, true> {};
template <int>
struct gemm_f32_skinny_tn_kernel : tn<float, float, false> {};
template <class T, class TD, bool Large, g::operand_orders O>
using at_orders = cf::cdna<target, T, E<TD>, Large, 16, O>;
constexpr auto rr = g::operand_orders::a_row_b_row, cc = g::operand_orders::a_col_b_col, cr = g::operand_orders::a_col_b_row;
template <int>
struct gemm_bf16_large_rr_kernel : at_orders<strata::bf16, strata::bf16, true, rr> {};
template <int>
struct gemm_bf16_large_cc_kernel : at_orders<strata::bf16, strata::bf16, true, cc> {};
template <int>
struct gemm_bf16_large_cr_kernel : at_orders<strata::bf16, strata::bf16, true, cr> {};
template <int>
struct gemm_bf16_skinny_cr_kernel : at_orders<strata::bf16, strata::bf16, false, cr> {};
template <int>
struct gemm_f16_large_cr_kernel : at_orders<strata::f16, float, true, cr> {};
template <int>
struct gemm_i8_large_rr_kernel : at_orders<std::int8_t, std::int32_t, true, rr> {};
template <int>
struct gemm_i8_skinny_cr_kernel : at_orders<std::int8_t, std::int32_t, false, cr> {};
template <int>
struct gemm_f32_large_rr_kernel : at_orders<float, float, true, rr> {};
template <int>
struct gemm_f32_skinny_cc_kernel : at_orders<float, float, false, cc> {};
template <int>
struct gemm_bf16_stream_k_kernel
    : g::stream_k_kernel<g::kernel<target, cf::cdna_atom<target, strata::bf16, true>::type, cf::cdna_medium, E<strata::bf16>>> {};
template <int>
struct gemm_bf16_grouped_kernel : g::grouped_kernel<cf::cdna<target, strata::bf16, E<strata::bf16>, true>> {};
template <int>
struct gemm_reduce_kernel : g::reduce_kernel<target, float, E<strata::bf16>> {};
template <int>
struct gemm_bf16_gemv4_kernel : g::gemv_kernel<target, strata::bf16, E<strata::bf16>, 4> {};
template <int>
struct gemm_bf16_gemv8_kernel : g::gemv_kernel<target, strata::bf16, E<strata::bf16>, 8> {};
template <int>
struct gemm_f16_gemv8_kernel : g::gemv_kernel<target, strata::f16, E<float>, 8> {};
template <int>
struct gemm_f32_gemv4_kernel : g::gemv_kernel<target, float, E<float>, 4> {};

template <class TD>
using E8 = g::detail::entry_epilogue_fp8<TD>;
inline constexpr bool has_fp8 = strata::mma::cdna3_32x32x16_f32e4m3_ocp::available_on<target>;
// The target as a type that depends on N: a base class that does not is instantiated where the
// wrapper is defined, and these must not be on gfx90a.
template <int N>
using t8 = std::conditional_t<N == 0, target, target>;
template <int N>
struct gemm_e4m3_large_kernel : cf::cdna<t8<N>, strata::f8_e4m3, E8<strata::bf16>, true> {};
template <int N>
struct gemm_e4m3_skinny_kernel : cf::cdna<t8<N>, strata::f8_e4m3, E8<strata::bf16>, false> {};
template <int N>
struct gemm_e5m2_large_kernel : cf::cdna<t8<N>, strata::f8_e5m2, E8<strata::bf16>, true> {};
template <int N>
struct gemm_e5m2_skinny_kernel : cf::cdna<t8<N>, strata::f8_e5m2, E8<strata::bf16>, false> {};
template <int N>
struct gemm_e4m3_large_tn_kernel
    : cf::cdna<t8<N>, strata::f8_e4m3, E8<strata::bf16>, true, 16, g::operand_orders::a_row_b_col> {};
template <int N>
struct gemm_e4m3_skinny_tn_kernel
    : cf::cdna<t8<N>, strata::f8_e4m3, E8<strata::bf16>, false, 16, g::operand_orders::a_row_b_col> {};
template <int N>
struct gemm_e4m3_large_cr_kernel
    : cf::cdna<t8<N>, strata::f8_e4m3, E8<strata::bf16>, true, 16, g::operand_orders::a_col_b_row> {};
template <int N>
struct gemm_e4m3_skinny_rr_kernel
    : cf::cdna<t8<N>, strata::f8_e4m3, E8<strata::bf16>, false, 16, g::operand_orders::a_row_b_row> {};
template <int N>
struct gemm_e4m3_stream_k_kernel
    : g::stream_k_kernel<cf::cdna<t8<N>, strata::f8_e4m3, E8<strata::bf16>, false>> {};  // the 64 x 64 tile spills 2 SGPRs
template <int N>
struct gemm_fp8_reduce_kernel : g::reduce_kernel<t8<N>, float, E8<strata::bf16>> {};

template <class K>
void launch_one(strata::stream& s) {
  const typename K::params p{};
  strata::launch(s, K::launch_shape_of(p), K{}, p);
}
/// The fp8 kernels, on targets that have fp8 MFMA only (a template, so that the discarded branch is
/// not instantiated for gfx90a).
template <int N>
void launch_fp8(strata::stream& s) {
  if constexpr (has_fp8) {
    launch_one<gemm_e4m3_large_kernel<N>>(s);
    launch_one<gemm_e4m3_skinny_kernel<N>>(s);
    launch_one<gemm_e5m2_large_kernel<N>>(s);
    launch_one<gemm_e5m2_skinny_kernel<N>>(s);
    launch_one<gemm_e4m3_stream_k_kernel<N>>(s);
    launch_one<gemm_e4m3_large_tn_kernel<N>>(s);
    launch_one<gemm_e4m3_large_cr_kernel<N>>(s);
    launch_one<gemm_e4m3_skinny_rr_kernel<N>>(s);
    launch_one<gemm_e4m3_skinny_tn_kernel<N>>(s);
    launch_one<gemm_fp8_reduce_kernel<N>>(s);
  }
}
}  // namespace strata_test

// Never called: only instantiated, so that every kernel is compiled for the device.
void strata_compile_instantiate_gemm_cdna(strata::stream& s) {
  using namespace strata_test;
  launch_one<gemm_bf16_large_kernel<0>>(s);
  launch_one<gemm_bf16_skinny_kernel<0>>(s);
  launch_one<gemm_f16_large_kernel<0>>(s);
  launch_one<gemm_i8_large_kernel<0>>(s);
  launch_one<gemm_i8_skinny_kernel<0>>(s);
  launch_one<gemm_f32_large_kernel<0>>(s);
  launch_one<gemm_f32_skinny_kernel<0>>(s);
  launch_one<gemm_bf16_stream_k_kernel<0>>(s);
  launch_one<gemm_bf16_large_tn_kernel<0>>(s);
  launch_one<gemm_bf16_large_rr_kernel<0>>(s);
  launch_one<gemm_bf16_large_cc_kernel<0>>(s);
  launch_one<gemm_bf16_large_cr_kernel<0>>(s);
  launch_one<gemm_bf16_skinny_cr_kernel<0>>(s);
  launch_one<gemm_f16_large_cr_kernel<0>>(s);
  launch_one<gemm_i8_large_rr_kernel<0>>(s);
  launch_one<gemm_i8_skinny_cr_kernel<0>>(s);
  launch_one<gemm_f32_large_rr_kernel<0>>(s);
  launch_one<gemm_f32_skinny_cc_kernel<0>>(s);
  launch_one<gemm_bf16_skinny_tn_kernel<0>>(s);
  launch_one<gemm_f16_large_tn_kernel<0>>(s);
  launch_one<gemm_i8_large_tn_kernel<0>>(s);
  launch_one<gemm_f32_large_tn_kernel<0>>(s);
  launch_one<gemm_f32_skinny_tn_kernel<0>>(s);
  launch_one<gemm_bf16_grouped_kernel<0>>(s);
  launch_one<gemm_reduce_kernel<0>>(s);
  launch_one<gemm_bf16_gemv4_kernel<0>>(s);
  launch_one<gemm_bf16_gemv8_kernel<0>>(s);
  launch_one<gemm_f16_gemv8_kernel<0>>(s);
  launch_one<gemm_f32_gemv4_kernel<0>>(s);
  launch_fp8<0>(s);
}
#endif
