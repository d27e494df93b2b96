// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/conv_cdna_kernels.cu -- the implicit-GEMM convolution kernels the host entry
// (strata/ops/conv/host.hpp) launches on a HIP build, compiled for gfx90a and gfx940 (the gfx942
// descriptor): fprop, dgrad and wgrad on the MFMA 32x32 128 x 128 tile for bf16, fprop for f16, int8
// (int32 output) and fp32 (f32 MFMA, the 128 x 128 x 16 tile), all with the entry's epilogues. Checks
// that nothing spills and nothing lives in scratch memory, and that the mainloop issues MFMA.
//
// Before the HIP trampoline read its parameters in place and the GEMM mainloop dropped its
// per-element fragment bounds tests, these kernels spilled 38-71 SGPRs on gfx940; before the
// epilogue's element loop was expanded at compile time and the pixel decode became 32-bit, the fprop
// and dgrad kernels kept their accumulators in 264 B of scratch per lane, reloaded in every K step.
//
// compile-targets gfx.*
// compile-expect-kernels gfx.*: conv_fprop_bf16_kernel conv_dgrad_bf16_kernel conv_wgrad_bf16_kernel
// compile-expect-kernels gfx.*: conv_fprop_f16_kernel conv_fprop_i8_kernel conv_fprop_f32_kernel
// The 1x1 fast path's GEMM tiles (ops/conv/host.hpp, run_one_by_one) with the convolution's epilogue,
// compiled for the pass's operand orders: fprop A row-major x B column-major, dgrad both row-major
// (w written into its stage transposed).
// compile-expect-kernels gfx.*: conv_1x1_fprop_bf16_kernel conv_1x1_dgrad_bf16_kernel
// fprop with 16-byte gathers (channels-last, channels per group a multiple of the vector): the A
// row-major x B column-major tile with its K loop staged through registers (conv::kernel::
// register_staged_fprop), for every input type the entry takes.
// compile-expect-kernels gfx.*: conv_fprop16_bf16_kernel conv_fprop16_f16_kernel conv_fprop16_i8_kernel conv_fprop16_f32_kernel
// compile-expect-code gfx.*: bf16 MFMA 32x32 = v_mfma_f32_32x32x8_?bf16
// compile-expect-code gfx.*: int8 MFMA = v_mfma_i32_32x32x(8|16)_?i8
// compile-expect-code gfx.*: f32 MFMA = v_mfma_f32_32x32x2_?f32
#if defined(__HIP__) || defined(__HIPCC__)
// Only the kernel templates: the host entry would compile every configuration it dispatches to.
#include "strata/ops/conv/epilogue.hpp"
#include "strata/ops/conv/kernel.hpp"
#include "strata/ops/gemm/configs.hpp"
#include "strata/strata.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor>, e.g. gfx90a or gfx942"
#endif

namespace strata_test {
namespace sc = strata::ops::conv;
namespace cf = strata::ops::gemm::configs;
using target = strata::arch::STRATA_COMPILE_TARGET;
template <class TD>
using E = sc::detail::entry_epilogue<TD>;
template <class TD>
using EW = sc::detail::wgrad_epilogue<TD>;
template <class T>
using atom = typename cf::cdna_atom<target, T, true>::type;

// Named wrappers, so that the report (which shows strata_test:: kernels) lists each configuration.
template <int>
struct conv_fprop_bf16_kernel : sc::kernel<sc::kind::fprop, target, atom<strata::bf16>, cf::cdna_large, E<strata::bf16>> {};
template <int>
struct conv_dgrad_bf16_kernel : sc::kernel<sc::kind::dgrad, target, atom<strata::bf16>, cf::cdna_large, E<strata::bf16>> {};
template <int>
struct conv_wgrad_bf16_kernel : sc::kernel<sc::kind::wgrad, target, atom<strata::bf16>, cf::cdna_large, EW<strata::bf16>> {};
template <int>
struct conv_fprop_f16_kernel : sc::kernel<sc::kind::fprop, target, atom<strata::f16>, cf::cdna_large, E<strata::f16>> {};
template <int>
struct conv_fprop_i8_kernel : sc::kernel<sc::kind::fprop, target, atom<std::int8_t>, cf::cdna_large, E<std::int32_t>> {};
template <int>
struct conv_fprop_f32_kernel : sc::kernel<sc::kind::fprop, target, atom<float>, cf::cdna_large_f32, E<float>> {};
template <int>
struct conv_1x1_fprop_bf16_kernel
    : cf::cdna<target, strata::bf16, E<strata::bf16>, true, 16, strata::ops::gemm::operand_orders::a_row_b_col> {};
template <int>
struct conv_1x1_dgrad_bf16_kernel
    : cf::cdna<target, strata::bf16, E<strata::bf16>, true, 16, strata::ops::gemm::operand_orders::a_row_b_row> {};

template <class T, class TD>
using fprop16 = sc::kernel<sc::kind::fprop, target, atom<T>, sizeof(T) == 4 ? cf::cdna_large_f32 : cf::cdna_large, E<TD>,
                           strata::order::default_for<target>, 16, strata::ops::gemm::operand_orders::a_row_b_col>;
template <int>
struct conv_fprop16_bf16_kernel : fprop16<strata::bf16, strata::bf16> {};
template <int>
struct conv_fprop16_f16_kernel : fprop16<strata::f16, strata::f16> {};
template <int>
struct conv_fprop16_i8_kernel : fprop16<std::int8_t, std::int32_t> {};
template <int>
struct conv_fprop16_f32_kernel : fprop16<float, float> {};

template <class K>
void launch_one(strata::stream& s) {
  const typename K::params p{};
  strata::launch(s, K::launch_shape_of(p), K{}, p);
}
}  // namespace strata_test

// Never called: only instantiated, so that every kernel is compiled for the device.
void strata_compile_instantiate_conv_cdna(strata::stream& s) {
  using namespace strata_test;
  launch_one<conv_fprop_bf16_kernel<0>>(s);
  launch_one<conv_dgrad_bf16_kernel<0>>(s);
  launch_one<conv_wgrad_bf16_kernel<0>>(s);
  launch_one<conv_fprop_f16_kernel<0>>(s);
  launch_one<conv_fprop_i8_kernel<0>>(s);
  launch_one<conv_fprop_f32_kernel<0>>(s);
  launch_one<conv_1x1_fprop_bf16_kernel<0>>(s);
  launch_one<conv_1x1_dgrad_bf16_kernel<0>>(s);
  launch_one<conv_fprop16_bf16_kernel<0>>(s);
  launch_one<conv_fprop16_f16_kernel<0>>(s);
  launch_one<conv_fprop16_i8_kernel<0>>(s);
  launch_one<conv_fprop16_f32_kernel<0>>(s);
}
#endif
