// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/sass/gemm_fp8.cu -- the fp8 (e4m3) GEMM tile the CUDA host entry launches on sm_90a, for every M
// (include/strata/ops/gemm/gemm.hpp, dispatch): mma.sync m16n8k32 e4m3, an sm_89 instruction that
// sm_90a runs as F2FP unpacks + HMMA.16816 (../shared/research/gemm-forensic.md, 3.4). Held to
// test/sass/budgets.txt (`ctest -L sass`) until the Hopper path replaces it.
// sass-targets sm_90a
#include "strata/runtime/runtime.hpp"
#include "strata/ops/gemm/configs.hpp"
#include "strata/ops/gemm/entry_epilogue.hpp"
#include "strata/ops/gemm/kernel.hpp"

namespace sg = strata::ops::gemm;
using epilogue = sg::detail::entry_epilogue_fp8<strata::bf16>;
template <sg::operand_orders Orders = sg::operand_orders::any>
using fp8_tile = sg::configs::sm80<strata::arch::sm90a, strata::f8_e4m3, epilogue, sg::configs::sm80_skinny, 16, Orders>;
struct sass_gemm_e4m3_skinny : fp8_tile<> {};
// Compiled for A row-major x B column-major: what the entry runs for that layout with 16-byte rows.
struct sass_gemm_e4m3_skinny_tn : fp8_tile<sg::operand_orders::a_row_b_col> {};

template <class K>
void launch_tile(strata::stream& s, const strata::f8_e4m3* a, const strata::f8_e4m3* b, strata::bf16* d, int m, int n, int k) {
  const auto p = K::make_params({m, n, k, 1}, {a, k, sg::layout::row_major}, {b, k, sg::layout::col_major},
                                {d, n, sg::layout::row_major}, epilogue::make_params({}, {.alpha = 1.f}, {}, {}));
  strata::launch(s, K::launch_shape_of(p), K{}, p);
}

// Never called: instantiates the launches, so that nvcc compiles the kernels.
void sass_gemm_fp8(strata::stream& s, const strata::f8_e4m3* a, const strata::f8_e4m3* b, strata::bf16* d, int m, int n, int k) {
  launch_tile<sass_gemm_e4m3_skinny>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_e4m3_skinny_tn>(s, a, b, d, m, n, k);
}
