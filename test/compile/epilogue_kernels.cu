// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/epilogue_kernels.cu -- the epilogue chains of test/epilogue/kernel_test.cpp, in the same
// tile kernel (test/epilogue/tile_kernel.hpp), built for one GPU target per compile by the compile
// check (compile_check.cmake): every op of strata/epilogue must compile for the CUDA and HIP device
// passes, the math functions must resolve to the device libraries, and nothing may spill.
//
//   epilogue_gelu_bf16_kernel   float acc: alpha/beta with bf16 C, bf16 column bias, tanh GELU -> bf16
//   epilogue_dequant_i8_kernel  int32 acc: row and column scales, row bias, ReLU -> int8 (saturating)
//   epilogue_activations_kernel float acc: erf GELU, SiLU, sigmoid, residual, clamp -> f8_e4m3
//
// compile-expect-kernels sm_.*|gfx.*: epilogue_gelu_bf16_kernel epilogue_dequant_i8_kernel epilogue_activations_kernel
// compile-expect-code sm_.*: f32 -> bf16 rounding (numeric/bf16.hpp) = cvt\.rn\.bf16\.f32
// compile-expect-code sm_.*: exp through ex2 (expf) = ex2\.approx
// compile-expect-code gfx.*: exp through v_exp_f32 (expf) = v_exp_f32
#include <cstdint>

#include "strata/epilogue/epilogue.hpp"
#include "strata/strata.hpp"

#include "epilogue/tile_kernel.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor>, e.g. sm80 or gfx90a"
#endif

namespace strata_test {
namespace ep = strata::epilogue;
using target = strata::arch::STRATA_COMPILE_TARGET;

using gelu_bf16 = ep::chain<ep::alpha_beta<strata::bf16>, ep::bias_col<strata::bf16>, ep::gelu_tanh,
                            ep::convert_to<strata::bf16>>;
using dequant_i8 = ep::chain<ep::scale_row<>, ep::scale_col<>, ep::bias_row<>, ep::relu, ep::convert_to<std::int8_t>>;
using activations = ep::chain<ep::gelu_erf, ep::silu, ep::sigmoid, ep::residual<strata::f16>, ep::clamp<>,
                              ep::convert_to<strata::f8_e4m3>>;

// Named kernels, so that the resource report shows one row per chain.
struct epilogue_gelu_bf16_kernel : epilogue_tile_kernel<target, gelu_bf16, float> {
  static constexpr const char* name = "epilogue_gelu_bf16_kernel";
};
struct epilogue_dequant_i8_kernel : epilogue_tile_kernel<target, dequant_i8, std::int32_t> {
  static constexpr const char* name = "epilogue_dequant_i8_kernel";
};
struct epilogue_activations_kernel : epilogue_tile_kernel<target, activations, float> {
  static constexpr const char* name = "epilogue_activations_kernel";
};
}  // namespace strata_test

#define STRATA_REPORT_SHARED(tag, ...) \
  extern "C" STRATA_DEVICE unsigned long long strata_report_shared_##tag = strata::dynamic_shared_offset<__VA_ARGS__>;

STRATA_REPORT_SHARED(epilogue_gelu_bf16, strata_test::epilogue_gelu_bf16_kernel)
STRATA_REPORT_SHARED(epilogue_dequant_i8, strata_test::epilogue_dequant_i8_kernel)
STRATA_REPORT_SHARED(epilogue_activations, strata_test::epilogue_activations_kernel)

// Never called: only instantiated, so that every kernel is compiled for the device.
void strata_compile_instantiate_epilogue(strata::stream& s) {
  using namespace strata_test;
  const strata::launch_shape shape{.grid = {8}, .block = {128}};
  strata::launch(s, shape, epilogue_gelu_bf16_kernel{}, epilogue_gelu_bf16_kernel::params{});
  strata::launch(s, shape, epilogue_dequant_i8_kernel{}, epilogue_dequant_i8_kernel::params{});
  strata::launch(s, shape, epilogue_activations_kernel{}, epilogue_activations_kernel::params{});
}
