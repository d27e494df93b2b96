// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/sass/gemm.cu -- the GEMM tiles the CUDA host entry launches for bf16 (A row-major, B column-major,
// 16-byte rows: the benchmarked layout), one kernel each, named so that tools/sass/check_budgets.py
// finds them in the SASS: large (M > 128), medium (16 < M <= 128, and stream-K) and skinny (decode,
// M <= 16), in the form compiled for any A and B layouts; and the same tiles compiled for this layout
// (operand_orders::a_row_b_col, `_tn`), which the entry runs for it. Their main loops are
// held to test/sass/budgets.txt (`ctest -L sass`). f16 compiles to the same loops; the fp8 tile is in
// gemm_fp8.cu (sm_90a only).
#include "strata/runtime/runtime.hpp"
#include "strata/ops/gemm/configs.hpp"
#include "strata/ops/gemm/entry_epilogue.hpp"
#include "strata/ops/gemm/gemv.hpp"
#include "strata/ops/gemm/kernel.hpp"

namespace sg = strata::ops::gemm;
using epilogue = sg::detail::entry_epilogue<strata::bf16>;
// The probe test (CMakeLists.txt) plants a regression: the tiles at 2-byte row alignment, the form the
// entry takes for rows that are not 16-byte multiples. Its budgets must fail.
#ifdef STRATA_SASS_PROBE
inline constexpr std::size_t row_alignment = 2;
#else
inline constexpr std::size_t row_alignment = 16;
#endif
template <sg::shape S, sg::operand_orders Orders = sg::operand_orders::any>
using entry_tile = sg::configs::sm80<strata::arch::sm80, strata::bf16, epilogue, S, row_alignment, Orders>;

struct sass_gemm_bf16_large : entry_tile<sg::configs::sm80_large> {};
struct sass_gemm_bf16_medium : entry_tile<sg::configs::sm80_medium> {};
struct sass_gemm_bf16_skinny : entry_tile<sg::configs::sm80_skinny> {};
struct sass_gemm_bf16_large_tn : entry_tile<sg::configs::sm80_large, sg::operand_orders::a_row_b_col> {};
struct sass_gemm_bf16_medium_tn : entry_tile<sg::configs::sm80_medium, sg::operand_orders::a_row_b_col> {};
struct sass_gemm_bf16_skinny_tn : entry_tile<sg::configs::sm80_skinny, sg::operand_orders::a_row_b_col> {};
// The same tiles compiled for A row-major and B row-major (operand_orders::a_row_b_row, `_nn`: y = x W
// with W stored (in, out)), what the entry runs for that layout with 16-byte rows: B's stages are
// read by ldmatrix.trans and copied as streams down its rows (copy::stream_edge::columns); the large
// tile in the entry's form for these orders, without split-K (configs::sm80_large_no_split).
struct sass_gemm_bf16_large_nn : entry_tile<sg::configs::sm80_large_no_split, sg::operand_orders::a_row_b_row> {};
struct sass_gemm_bf16_medium_nn : entry_tile<sg::configs::sm80_medium, sg::operand_orders::a_row_b_row> {};
struct sass_gemm_bf16_skinny_nn : entry_tile<sg::configs::sm80_skinny, sg::operand_orders::a_row_b_row> {};
// The 128 x 256 tile (64 x 64 warp tiles), which the entry runs for large outputs in this layout.
struct sass_gemm_bf16_wide_tn : entry_tile<sg::configs::sm80_wide, sg::operand_orders::a_row_b_col> {};
// The GEMV kernel the entry runs for M <= 4 and M <= 8 in this layout with 16-byte rows (ops/gemm/gemv.hpp).
struct sass_gemv_bf16_rows4 : sg::gemv_kernel<strata::arch::sm80, strata::bf16, epilogue, 4> {};
struct sass_gemv_bf16_rows8 : sg::gemv_kernel<strata::arch::sm80, strata::bf16, epilogue, 8> {};

template <class K>
void launch_tile(strata::stream& s, const strata::bf16* a, const strata::bf16* b, strata::bf16* d, int m, int n, int k) {
  const bool b_row = K::orders == sg::operand_orders::a_row_b_row;
  const auto p = K::make_params({m, n, k, 1}, {a, k, sg::layout::row_major},
                                {b, b_row ? n : k, b_row ? sg::layout::row_major : sg::layout::col_major},
                                {d, n, sg::layout::row_major}, epilogue::make_params({.alpha = 1.f}, {}, {}));
  strata::launch(s, K::launch_shape_of(p), K{}, p);
}

template <class K>
void launch_gemv(strata::stream& s, const strata::bf16* a, const strata::bf16* b, strata::bf16* d, int m, int n, int k) {
  const auto p = K::make_params({m, n, k, 1}, {a, k, sg::layout::row_major}, {b, k, sg::layout::col_major},
                                {d, n, sg::layout::row_major}, epilogue::make_params({.alpha = 1.f}, {}, {}), 1);
  strata::launch(s, K::launch_shape_of(p), K{}, p);
}

// Never called: instantiates the launches, so that nvcc compiles the twelve kernels.
void sass_gemm(strata::stream& s, const strata::bf16* a, const strata::bf16* b, strata::bf16* d, int m, int n, int k) {
  launch_tile<sass_gemm_bf16_large>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_medium>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_skinny>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_large_tn>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_medium_tn>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_skinny_tn>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_large_nn>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_medium_nn>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_skinny_nn>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_wide_tn>(s, a, b, d, m, n, k);
  launch_gemv<sass_gemv_bf16_rows4>(s, a, b, d, m, n, k);
  launch_gemv<sass_gemv_bf16_rows8>(s, a, b, d, m, n, k);
}
