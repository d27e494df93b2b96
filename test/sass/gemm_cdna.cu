// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/sass/gemm_cdna.cu -- the GEMM tiles the HIP host entry launches for bf16 on CDNA3 (gfx940
// standing for gfx942: Debian's clang 15 predates gfx942), one kernel each, named so that
// tools/sass/check_budgets.py finds them in the GCN assembly (read by tools/sass/gcn_loops.py): the
// 128 x 128 tile of the 32x32x8 MFMA (M > 32) and the 16 x 64 skinny tile of the 16x16x16 MFMA
// (M <= 32), in the form the entry runs for any layout and alignment and in the forms it runs for
// each pair of orders with 16-byte rows (`_tn`, `_rr`, `_cr`). Their main loops are held to
// test/sass/budgets.txt (`ctest -L sass`): issue 35 item 8 wants the CUDA loop's figures here too.
#include "strata/runtime/runtime.hpp"
#include "strata/ops/gemm/configs.hpp"
#include "strata/ops/gemm/entry_epilogue.hpp"
#include "strata/ops/gemm/kernel.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor> (gfx942 for gfx940)"
#endif

namespace sg = strata::ops::gemm;
using epilogue = sg::detail::entry_epilogue<strata::bf16>;
using target = strata::arch::STRATA_COMPILE_TARGET;

struct sass_gemm_bf16_cdna_large : sg::configs::cdna<target, strata::bf16, epilogue, true> {};
struct sass_gemm_bf16_cdna_skinny : sg::configs::cdna<target, strata::bf16, epilogue, false> {};
// The same tiles compiled for A row-major and B column-major with 16-byte rows (`_tn`), which the
// entry runs for that layout: 16-byte copies, fragments read with ds_read_b128 (mma::vector_fragments).
// The tiles for the other pairs of orders with 16-byte rows (`_rr`: A row-major, B row-major, as x W
// with W stored (in, out); `_cr`: A column-major, B row-major, as the weight gradient X^T dY): an
// operand stored along M or N is copied down its rows and written into its stage transposed
// (copy::tile_stream_transposed), so that the stages run along K and the fragments are read as for
// `_tn`. Until 2026-12-07 the entry ran the any-layout tile at 16-byte rows there (46.94 per MFMA).
struct sass_gemm_bf16_cdna_large_rr : sg::configs::cdna<target, strata::bf16, epilogue, true, 16, sg::operand_orders::a_row_b_row> {};
struct sass_gemm_bf16_cdna_skinny_rr : sg::configs::cdna<target, strata::bf16, epilogue, false, 16, sg::operand_orders::a_row_b_row> {};
struct sass_gemm_bf16_cdna_large_cr : sg::configs::cdna<target, strata::bf16, epilogue, true, 16, sg::operand_orders::a_col_b_row> {};
// The probe test (CMakeLists.txt) plants a regression: the `_tn` names on the any-layout, element-aligned
// tiles. Their budgets must fail, so that a green sass.gfx940.gemm_cdna means something.
#ifdef STRATA_SASS_PROBE
inline constexpr std::size_t tn_alignment = 2;
inline constexpr auto tn_orders = sg::operand_orders::any;
#else
inline constexpr std::size_t tn_alignment = 16;
inline constexpr auto tn_orders = sg::operand_orders::a_row_b_col;
#endif
struct sass_gemm_bf16_cdna_large_tn : sg::configs::cdna<target, strata::bf16, epilogue, true, tn_alignment, tn_orders> {};
struct sass_gemm_bf16_cdna_skinny_tn : sg::configs::cdna<target, strata::bf16, epilogue, false, tn_alignment, tn_orders> {};

template <class K>
void launch_tile(strata::stream& s, const strata::bf16* a, const strata::bf16* b, strata::bf16* d, int m, int n, int k) {
  // The operands in the orders the tile is compiled for (any: A row-major, B column-major).
  constexpr bool a_row = K::orders == sg::operand_orders::any || K::a_row_fixed;
  constexpr bool b_row = K::orders != sg::operand_orders::any && K::b_row_fixed;
  const sg::operand<const strata::bf16> ao{a, a_row ? k : m, a_row ? sg::layout::row_major : sg::layout::col_major};
  const sg::operand<const strata::bf16> bo{b, b_row ? n : k, b_row ? sg::layout::row_major : sg::layout::col_major};
  const auto p = K::make_params({m, n, k, 1}, ao, bo, {d, n, sg::layout::row_major}, epilogue::make_params({.alpha = 1.f}, {}, {}));
  strata::launch(s, K::launch_shape_of(p), K{}, p);
}

// Never called: instantiates the launches, so that hipcc compiles the kernels.
void sass_gemm_cdna(strata::stream& s, const strata::bf16* a, const strata::bf16* b, strata::bf16* d, int m, int n, int k) {
  launch_tile<sass_gemm_bf16_cdna_large>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_cdna_skinny>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_cdna_large_rr>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_cdna_skinny_rr>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_cdna_large_cr>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_cdna_large_tn>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_cdna_skinny_tn>(s, a, b, d, m, n, k);
}
