// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/conv_depthwise_kernels.cu -- the direct depthwise convolution (strata/ops/conv/
// depthwise.hpp) for every target, NVIDIA and AMD: one kernel per input type the host entry takes
// (f16, bf16, f32, int8 with an int32 output). A memory-bound kernel: the check is that it compiles
// small (no spills) and that its body survives (the element loads and the output store are in the
// code; an earlier version called a host-only helper from the kernel, which nvcc compiled to an empty
// body with only a warning).
//
// compile-expect-kernels sm_.*|gfx.*: conv_depthwise_f16_kernel conv_depthwise_bf16_kernel
// compile-expect-kernels sm_.*|gfx.*: conv_depthwise_f32_kernel conv_depthwise_i8_kernel
// compile-expect-code sm_.*: 16-bit element loads = ld\.global(\.nc)?\.(u16|b16)
// compile-expect-code sm_.*: fp32 stores = st\.global\.f32
// compile-expect-code gfx.*: 16-bit element loads = global_load_(ushort|short_d16)
// compile-expect-code gfx.*: 32-bit stores = global_store_dword
#include "strata/ops/conv/depthwise.hpp"
#include "strata/ops/conv/epilogue.hpp"
#include "strata/strata.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor>, e.g. sm80 or gfx90a"
#endif

namespace strata_test {
namespace sc = strata::ops::conv;
using target = strata::arch::STRATA_COMPILE_TARGET;
template <class TD>
using E = sc::detail::entry_epilogue<TD>;

// Named wrappers, so that the report (which shows strata_test:: kernels) lists each configuration.
struct conv_depthwise_f16_kernel : sc::depthwise_kernel<target, strata::f16, E<strata::f16>> {};
struct conv_depthwise_bf16_kernel : sc::depthwise_kernel<target, strata::bf16, E<strata::bf16>> {};
struct conv_depthwise_f32_kernel : sc::depthwise_kernel<target, float, E<float>> {};
struct conv_depthwise_i8_kernel : sc::depthwise_kernel<target, std::int8_t, E<std::int32_t>> {};

template <class K>
void launch_one(strata::stream& s) {
  const typename K::params p{};
  strata::launch(s, K::launch_shape_of(p), K{}, p);
}
}  // namespace strata_test

// Never called: only instantiated, so that every kernel is compiled for the device.
void strata_compile_instantiate_conv_depthwise(strata::stream& s) {
  using namespace strata_test;
  launch_one<conv_depthwise_f16_kernel>(s);
  launch_one<conv_depthwise_bf16_kernel>(s);
  launch_one<conv_depthwise_f32_kernel>(s);
  launch_one<conv_depthwise_i8_kernel>(s);
}
