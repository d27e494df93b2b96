// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/sass/conv_cdna.cu -- the implicit-GEMM fprop tile the HIP conv entry launches for bf16 with
// 16-byte gathers (channels-last, channels per group a multiple of 8: include/strata/ops/conv/host.hpp,
// dispatch), for gfx940 standing for gfx942 as in gemm_cdna.cu: the A row-major x B column-major
// 128 x 128 tile with its K loop staged through registers (conv::kernel::register_staged_fprop: x
// through conv::fprop_a_stream, the filter through copy::tile_stream). Its K loop is held to
// test/sass/budgets.txt (`ctest -L sass`) next to the GEMM's `_tn` tile, whose loop it shares.
#include "strata/ops/conv/epilogue.hpp"
#include "strata/ops/conv/kernel.hpp"
#include "strata/ops/gemm/configs.hpp"
#include "strata/runtime/runtime.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor> (gfx942 for gfx940)"
#endif

namespace sc = strata::ops::conv;
namespace cfg = strata::ops::gemm::configs;
using target = strata::arch::STRATA_COMPILE_TARGET;
using epilogue = sc::detail::entry_epilogue<strata::bf16>;
struct sass_conv_fprop_bf16_cdna
    : sc::kernel<sc::kind::fprop, target, cfg::cdna_atom<target, strata::bf16, true>::type, cfg::cdna_large, epilogue,
                 strata::order::default_for<target>, 16, strata::ops::gemm::operand_orders::a_row_b_col> {};

// Never called: instantiates the launch, so that hipcc compiles the kernel.
void sass_conv_cdna(strata::stream& s, const sc::geometry& g, const strata::bf16* x, const strata::bf16* w, strata::bf16* y) {
  using K = sass_conv_fprop_bf16_cdna;
  const auto p = K::make_params(g, x, w, y, epilogue::make_params({}, {}));
  strata::launch(s, K::launch_shape_of(p), K{}, p);
}
