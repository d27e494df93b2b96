// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/sass/gemm_cdna.cu -- the GEMM tiles the HIP host entry launches for bf16 on CDNA3 (gfx940
// standing for gfx942: Debian's clang 15 predates gfx942), one kernel each, named so that
// tools/sass/check_budgets.py finds them in the GCN assembly (read by tools/sass/gcn_loops.py): the
// 128 x 128 tile of the 32x32x8 MFMA (M > 32) and the 16 x 64 skinny tile of the 16x16x16 MFMA
// (M <= 32), in the form the entry runs for any layout and alignment and in the form it runs for A
// row-major, B column-major with 16-byte rows (`_tn`). Their main loops are held to
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
// The any-layout tiles at 16-byte rows, which the entry runs for other layouts with 16-byte rows (B
// row-major, A column-major): 16-byte copies, fragments still read element by element.
struct sass_gemm_bf16_cdna_large16 : sg::configs::cdna<target, strata::bf16, epilogue, true, 16> {};
struct sass_gemm_bf16_cdna_skinny16 : sg::configs::cdna<target, strata::bf16, epilogue, false, 16> {};
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
  const auto p = K::make_params({m, n, k, 1}, {a, k, sg::layout::row_major}, {b, k, sg::layout::col_major},
                                {d, n, sg::layout::row_major}, epilogue::make_params({.alpha = 1.f}, {}, {}));
  strata::launch(s, K::launch_shape_of(p), K{}, p);
}

// Never called: instantiates the launches, so that hipcc compiles the kernels.
void sass_gemm_cdna(strata::stream& s, const strata::bf16* a, const strata::bf16* b, strata::bf16* d, int m, int n, int k) {
  launch_tile<sass_gemm_bf16_cdna_large>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_cdna_skinny>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_cdna_large16>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_cdna_skinny16>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_cdna_large_tn>(s, a, b, d, m, n, k);
  launch_tile<sass_gemm_bf16_cdna_skinny_tn>(s, a, b, d, m, n, k);
}
