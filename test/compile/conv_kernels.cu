// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/conv_kernels.cu -- the convolution kernels the host entry (strata/ops/conv/host.hpp)
// launches on a CUDA build, compiled for sm_80, sm_90a and sm_100a: the implicit-GEMM fprop, dgrad
// and wgrad kernels (mma.sync atoms, cp.async stages, 16-byte row gathers) in the large and medium
// tiles, tf32 and int8 (the depthwise kernel: conv_depthwise_kernels.cu). Checks that none spills,
// that the gathers reach the hardware as 16-byte cp.async with the zero-fill or ignore-src form
// (padding taps cost no branch; fprop's A stream, conv::fprop_a_stream, uses ignore-src), and that the
// mainloop issues mma.sync. Like the host entry they use the sm80 descriptor on every
// NVIDIA target (the Hopper issue brings wgmma).
//
// Not built for gfx yet: the GEMM mainloop these kernels reuse spills SGPRs on gfx940 under Debian's
// hipcc (clang 15), see docs/gemm.md "Performance status"; compile_check rejects any spill. The
// depthwise kernel has its own gfx compile test (conv_depthwise_kernels.cu).
//
// compile-targets sm_.*
// compile-expect-kernels sm_.*: conv_fprop_bf16_large_kernel conv_dgrad_bf16_large_kernel conv_wgrad_bf16_large_kernel
// compile-expect-kernels sm_.*: conv_fprop_f16_medium_kernel conv_fprop_tf32_medium_kernel conv_fprop_i8_large_kernel
// compile-expect-kernels sm_.*: conv_fprop_f16_medium_narrow_kernel
// The 1x1 fast path's GEMM tiles (ops/conv/host.hpp, run_one_by_one) with the convolution's epilogue,
// in the forms compiled for the pass's operand orders: fprop A row-major x B column-major on the
// 128 x 256 and 128 x 128 tiles, dgrad A row-major x B row-major on the 128 x 128 tile; no split-K
// forms (the split form of the fprop 128 x 128 tile spilled 12 bytes on sm_80 with this epilogue).
// compile-expect-kernels sm_.*: conv_1x1_fprop_bf16_wide_kernel conv_1x1_fprop_bf16_large_kernel conv_1x1_dgrad_bf16_large_kernel
// compile-expect-code sm_.*: tensor-core MMA = mma\.sync\.aligned\.m16n8k16
// compile-expect-code sm_.*: int8 tensor-core MMA = mma\.sync\.aligned\.m16n8k32
// compile-expect-code sm_.*: tf32 tensor-core MMA = mma\.sync\.aligned\.m16n8k8
// compile-expect-code sm_.*: 16-byte gathers with zero fill = cp\.async\.cg\.shared\.global[^;]*16, *(%r|ignore)
// compile-expect-code sm_.*: fragments loaded with ldmatrix = ldmatrix\.sync\.aligned\.m8n8\.x4
#if !defined(__HIP__) && !defined(__HIPCC__)
// Only the kernel templates: the host entry (ops/conv/host.hpp) would compile every configuration it
// dispatches to.
#include "strata/ops/conv/epilogue.hpp"
#include "strata/ops/conv/kernel.hpp"
#include "strata/ops/gemm/configs.hpp"
#include "strata/strata.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor>, e.g. sm80 or gfx90a"
#endif

namespace strata_test {
namespace sc = strata::ops::conv;
namespace cf = strata::ops::gemm::configs;
using strata::arch::sm80;

template <class TD>
using E = sc::detail::entry_epilogue<TD>;
template <class TD>
using EW = sc::detail::wgrad_epilogue<TD>;
template <class T>
using atom = typename cf::sm80_atom<T>::type;

// Named wrappers, so that the report (which shows strata_test:: kernels) lists each configuration.
// Templates on a dummy parameter: nvcc's host stub generator mishandles a class-type template argument
// (gemm::shape) named through an alias at namespace scope.
template <int>
struct conv_fprop_bf16_large_kernel
    : sc::kernel<sc::kind::fprop, sm80, atom<strata::bf16>, cf::sm80_large, E<strata::bf16>, strata::order::default_for<sm80>, 16> {};
template <int>
struct conv_dgrad_bf16_large_kernel
    : sc::kernel<sc::kind::dgrad, sm80, atom<strata::bf16>, cf::sm80_large, E<strata::bf16>, strata::order::default_for<sm80>, 16> {};
template <int>
struct conv_wgrad_bf16_large_kernel
    : sc::kernel<sc::kind::wgrad, sm80, atom<strata::bf16>, cf::sm80_large, EW<strata::bf16>, strata::order::default_for<sm80>, 16> {};
template <int>
struct conv_fprop_f16_medium_kernel
    : sc::kernel<sc::kind::fprop, sm80, atom<strata::f16>, cf::sm80_medium, E<strata::f16>, strata::order::default_for<sm80>, 16> {};
// Channels per group not a multiple of 8: element-wise gathers (no cp.async below 4 bytes).
template <int>
struct conv_fprop_f16_medium_narrow_kernel
    : sc::kernel<sc::kind::fprop, sm80, atom<strata::f16>, cf::sm80_medium, E<strata::f16>> {};
template <int>
struct conv_fprop_tf32_medium_kernel
    : sc::kernel<sc::kind::fprop, sm80, atom<float>, cf::sm80_medium, E<float>, strata::order::default_for<sm80>, 16> {};
template <int>
struct conv_fprop_i8_large_kernel
    : sc::kernel<sc::kind::fprop, sm80, atom<std::int8_t>, cf::sm80_large, E<std::int32_t>, strata::order::default_for<sm80>, 16> {};
template <int>
struct conv_1x1_fprop_bf16_wide_kernel
    : cf::sm80<sm80, strata::bf16, E<strata::bf16>, cf::sm80_wide, 16, strata::ops::gemm::operand_orders::a_row_b_col> {};
template <int>
struct conv_1x1_fprop_bf16_large_kernel
    : cf::sm80<sm80, strata::bf16, E<strata::bf16>, cf::sm80_large_no_split, 16, strata::ops::gemm::operand_orders::a_row_b_col> {};
template <int>
struct conv_1x1_dgrad_bf16_large_kernel
    : cf::sm80<sm80, strata::bf16, E<strata::bf16>, cf::sm80_large_no_split, 16, strata::ops::gemm::operand_orders::a_row_b_row> {};

template <class K>
void launch_one(strata::stream& s) {
  const typename K::params p{};
  strata::launch(s, K::launch_shape_of(p), K{}, p);
}
}  // namespace strata_test

// Never called: only instantiated, so that every kernel is compiled for the device.
void strata_compile_instantiate_conv(strata::stream& s) {
  using namespace strata_test;
  launch_one<conv_fprop_bf16_large_kernel<0>>(s);
  launch_one<conv_dgrad_bf16_large_kernel<0>>(s);
  launch_one<conv_wgrad_bf16_large_kernel<0>>(s);
  launch_one<conv_fprop_f16_medium_kernel<0>>(s);
  launch_one<conv_fprop_f16_medium_narrow_kernel<0>>(s);
  launch_one<conv_fprop_tf32_medium_kernel<0>>(s);
  launch_one<conv_fprop_i8_large_kernel<0>>(s);
  launch_one<conv_1x1_fprop_bf16_wide_kernel<0>>(s);
  launch_one<conv_1x1_fprop_bf16_large_kernel<0>>(s);
  launch_one<conv_1x1_dgrad_bf16_large_kernel<0>>(s);
}
#endif
