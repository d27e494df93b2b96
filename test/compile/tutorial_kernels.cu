// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/tutorial_kernels.cu -- the tutorial's kernel (examples/warp_matmul.cpp, quoted by
// docs/tutorial-warp-matmul.md) compiled, unchanged, for every GPU target: the atom it picks from its
// target must become the tensor-core instruction (mma.sync on NVIDIA, MFMA on CDNA), and nothing may
// spill. Together with the example's emulator tests this is what backs the tutorial's claim that the
// same source runs on the emulator, on sm80 and on gfx90a. Compiled by nvcc as CUDA and by hipcc
// with `-x hip`, with -DSTRATA_COMPILE_TARGET=<descriptor> (compile_check.cmake).
//
// compile-expect-kernels sm_.*|gfx.*: tutorial_matmul_kernel
// compile-expect-code sm_.*: mma = mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32
// compile-expect-code gfx.*: mfma = v_mfma_f32_32x32x8_?f16
#include "strata/strata.hpp"

// The example without its main(): only the kernel and its parameters are compiled here.
#define STRATA_TUTORIAL_NO_MAIN 1
#include "../../examples/warp_matmul.cpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor>, e.g. sm80 or gfx90a"
#endif

namespace strata_test {
// Named in strata_test so that the compile report lists it by this name.
struct tutorial_matmul_kernel : tutorial::warp_matmul_kernel<strata::arch::STRATA_COMPILE_TARGET> {};
}  // namespace strata_test

// Never called: only instantiated, so that the kernel is compiled for the device.
template <class Target>
void strata_compile_tutorial_kernels(strata::stream& s) {
  using kernel = strata_test::tutorial_matmul_kernel;
  static_assert(std::is_same_v<typename kernel::target, Target>);
  const strata::launch_shape shape{.grid = {4, 4}, .block = {kernel::threads}};
  strata::launch(s, shape, kernel{}, tutorial::params{});
}

template void strata_compile_tutorial_kernels<strata::arch::STRATA_COMPILE_TARGET>(strata::stream&);
