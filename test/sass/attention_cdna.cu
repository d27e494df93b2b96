// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/sass/attention_cdna.cu -- the attention forward the HIP host entry launches for bf16 on CDNA3
// (gfx940 standing for gfx942, as in gemm_cdna.cu) at head dims 128 and 64 without the optional score
// features, and for f16 at 128 (its P is rounded by v_cvt_f16_f32, bf16's in software: numeric/), named so that tools/sass/check_budgets.py finds them in the GCN assembly. Their K-tile
// loops are held to test/sass/budgets.txt (`ctest -L sass`): issue 33 item 9 wants the structure of the
// mma.sync loop on the MFMA path too.
#include "strata/attention.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor> (gfx942 for gfx940)"
#endif

namespace A = strata::attn;
using target = strata::arch::STRATA_COMPILE_TARGET;

template <int D, class E = strata::bf16>
using forward = A::forward_kernel<E, D, D, target, A::default_config<target, E, D, D>(), A::no_score_mod, A::no_mask_mod,
                                  A::score_features::none>;
struct sass_attn_fwd_bf16_d128_cdna : forward<128> {};
struct sass_attn_fwd_bf16_d64_cdna : forward<64> {};
struct sass_attn_fwd_f16_d128_cdna : forward<128, strata::f16> {};

// Never called: instantiates the launches, so that hipcc compiles the kernels.
void sass_attention_cdna(strata::stream& s, const A::detail::forward_params& fp) {
  strata::launch(s, {.grid = {1}, .block = {sass_attn_fwd_bf16_d128_cdna::max_threads_per_block}}, sass_attn_fwd_bf16_d128_cdna{}, fp);
  strata::launch(s, {.grid = {1}, .block = {sass_attn_fwd_bf16_d64_cdna::max_threads_per_block}}, sass_attn_fwd_bf16_d64_cdna{}, fp);
  strata::launch(s, {.grid = {1}, .block = {sass_attn_fwd_f16_d128_cdna::max_threads_per_block}}, sass_attn_fwd_f16_d128_cdna{}, fp);
}
