// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/gemm_sm90_kernels.cu -- the Hopper GEMM (ops/gemm/sm90_kernel.hpp) compiled for sm_90a
// with the entry's epilogue (alpha, beta, bias, activation, conversion): the 128 x 256 and 128 x 128
// tiles in bf16 and f16. The PTX must hold the warp-specialized kernel's instructions (TMA loads onto
// mbarriers, wgmma, the register hand-over between warpgroups) and nothing may spill: the consumers
// hold 128 accumulators each under setmaxnreg's 232 registers. The emulator runs the same kernel in
// test/gemm/sm90_test.cpp.
//
// compile-targets sm_90a
// compile-expect-kernels sm_90a: sm90_gemm_bf16_n256_kernel sm90_gemm_bf16_n128_kernel sm90_gemm_f16_n256_kernel
// compile-expect-kernels sm_90a: sm90_gemm_bf16_n256_nn_kernel sm90_gemm_bf16_n128_tt_kernel
// compile-expect-kernels sm_90a: sm90_gemm_e4m3_n256_kernel sm90_gemm_e5m2_n128_kernel sm90_gemm_bf16_n256_cluster2_kernel
// compile-expect-code sm_90a: TMA 3-D load onto an mbarrier = cp\.async\.bulk\.tensor\.3d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes
// compile-expect-code sm_90a: wgmma m64n256k16 bf16 = wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.bf16\.bf16
// compile-expect-code sm_90a: wgmma m64n128k16 bf16 = wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16
// compile-expect-code sm_90a: wgmma m64n256k16 f16 = wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.f16\.f16
// compile-expect-code sm_90a: wgmma m64n256k32 e4m3 = wgmma\.mma_async\.sync\.aligned\.m64n256k32\.f32\.e4m3\.e4m3
// compile-expect-code sm_90a: wgmma m64n128k32 e5m2 = wgmma\.mma_async\.sync\.aligned\.m64n128k32\.f32\.e5m2\.e5m2
// compile-expect-code sm_90a: B multicast into the 2 x 1 cluster = cp\.async\.bulk\.tensor\.3d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes\.multicast::cluster
// compile-expect-code sm_90a: stages released in both blocks of the cluster = mbarrier\.arrive\.release\.cluster\.shared::cluster\.b64
// compile-expect-code sm_90a: producer gives registers back = setmaxnreg\.dec\.sync\.aligned\.u32 40
// compile-expect-code sm_90a: consumers take them = setmaxnreg\.inc\.sync\.aligned\.u32 232
// compile-expect-code sm_90a: one wgmma group kept in flight = wgmma\.wait_group\.sync\.aligned 1
// compile-expect-code sm_90a: stage release and refill = mbarrier\.try_wait\.parity\.shared::cta\.b64
#include "strata/ops/gemm/entry_epilogue.hpp"
#include "strata/ops/gemm/sm90_kernel.hpp"
#include "strata/runtime/runtime.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=sm90a"
#endif

namespace strata_test {
namespace sg = strata::ops::gemm;
template <class T, int N, sg::operand_orders O = sg::operand_orders::a_row_b_col>
using sm90_tile = sg::sm90_kernel<T, N, sg::detail::entry_epilogue<T>, 4, O>;
struct sm90_gemm_bf16_n256_kernel : sm90_tile<strata::bf16, 256> {};
struct sm90_gemm_bf16_n128_kernel : sm90_tile<strata::bf16, 128> {};
struct sm90_gemm_f16_n256_kernel : sm90_tile<strata::f16, 256> {};
struct sm90_gemm_bf16_n256_nn_kernel : sm90_tile<strata::bf16, 256, sg::operand_orders::a_row_b_row> {};
struct sm90_gemm_bf16_n128_tt_kernel : sm90_tile<strata::bf16, 128, sg::operand_orders::a_col_b_col> {};
// fp8 with the entry's fp8 epilogue (dequantization scales per row of A and column of B, bf16 out).
struct sm90_gemm_e4m3_n256_kernel : sg::sm90_kernel<strata::f8_e4m3, 256, sg::detail::entry_epilogue_fp8<strata::bf16>> {};
struct sm90_gemm_e5m2_n128_kernel : sg::sm90_kernel<strata::f8_e5m2, 128, sg::detail::entry_epilogue_fp8<strata::bf16>> {};
// 2 x 1 clusters: B's tile multicast into both blocks.
struct sm90_gemm_bf16_n256_cluster2_kernel
    : sg::sm90_kernel<strata::bf16, 256, sg::detail::entry_epilogue<strata::bf16>, 4, sg::operand_orders::a_row_b_col, 2> {};

template <class K>
void launch_sm90(strata::stream& s) {
  const typename K::params p{};
  strata::launch(s, K::launch_shape_of(p), K{}, p);
}
}  // namespace strata_test

// Never called: only instantiated, so that every kernel is compiled for the device.
void strata_compile_gemm_sm90_kernels(strata::stream& s) {
  using namespace strata_test;
  launch_sm90<sm90_gemm_bf16_n256_kernel>(s);
  launch_sm90<sm90_gemm_bf16_n128_kernel>(s);
  launch_sm90<sm90_gemm_f16_n256_kernel>(s);
  launch_sm90<sm90_gemm_bf16_n256_nn_kernel>(s);
  launch_sm90<sm90_gemm_bf16_n128_tt_kernel>(s);
  launch_sm90<sm90_gemm_e4m3_n256_kernel>(s);
  launch_sm90<sm90_gemm_e5m2_n128_kernel>(s);
  launch_sm90<sm90_gemm_bf16_n256_cluster2_kernel>(s);
}
