// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/sass/gemm_sm90.cu -- the Hopper GEMM (ops/gemm/sm90_kernel.hpp) as the sass budgets see it: the
// bf16 128 x 256 tile with the entry's epilogue, A row-major with B column-major (`_tn` order) and
// with B row-major (`_nn`); e4m3 with the fp8 epilogue. Its consumer loop (the main loop: four HGMMA
// 64x256x16 per 64-deep K step) and its registers are held to test/sass/budgets.txt.
#include "strata/runtime/runtime.hpp"
#include "strata/ops/gemm/entry_epilogue.hpp"
#include "strata/ops/gemm/sm90_kernel.hpp"

namespace sg = strata::ops::gemm;
using epilogue = sg::detail::entry_epilogue<strata::bf16>;
struct sass_gemm_sm90_bf16_n256 : sg::sm90_kernel<strata::bf16, 256, epilogue> {};
// A row-major x B row-major (x W with W stored (in, out)): B's stage read N-major by the wgmmas.
struct sass_gemm_sm90_bf16_n256_nn : sg::sm90_kernel<strata::bf16, 256, epilogue, 4, sg::operand_orders::a_row_b_row> {};
// e4m3 with the entry's fp8 epilogue: QGMMA.64x256x32, 128 K per stage.
using epilogue_fp8 = sg::detail::entry_epilogue_fp8<strata::bf16>;
struct sass_gemm_sm90_e4m3_n256 : sg::sm90_kernel<strata::f8_e4m3, 256, epilogue_fp8> {};

template <class K>
void launch_tile(strata::stream& s, const strata::bf16* a, const strata::bf16* b, strata::bf16* d, int m, int n, int k) {
  const bool b_row = K::orders == sg::operand_orders::a_row_b_row;
  const auto p = K::make_params({m, n, k, 1}, {a, k, sg::layout::row_major},
                                {b, b_row ? n : k, b_row ? sg::layout::row_major : sg::layout::col_major},
                                {d, n, sg::layout::row_major}, epilogue::make_params({.alpha = 1.f}, {}, {}));
  strata::launch(s, K::launch_shape_of(p), K{}, p);
}

void sass_gemm_sm90(strata::stream& s, const strata::bf16* a, const strata::bf16* b, strata::bf16* d, int m, int n, int k) {
  launch_tile<sass_gemm_sm90_bf16_n256>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_sm90_bf16_n256_nn>(s, a, b, d, m, n, k);
}

void sass_gemm_sm90_fp8(strata::stream& s, const strata::f8_e4m3* a, const strata::f8_e4m3* b, strata::bf16* d, int m, int n,
                        int k, const float* a_scale, const float* b_scale) {
  using K = sass_gemm_sm90_e4m3_n256;
  const auto p = K::make_params({m, n, k, 1}, {a, k, sg::layout::row_major}, {b, k, sg::layout::col_major},
                                {d, n, sg::layout::row_major},
                                epilogue_fp8::make_params({.a = a_scale, .b = b_scale, .a_stride = 1, .b_stride = 1}, {.alpha = 1.f}, {}, {}));
  strata::launch(s, K::launch_shape_of(p), K{}, p);
}
