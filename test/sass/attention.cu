// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/sass/attention.cu -- the attention kernels the CUDA host entry launches for bf16 (target
// arch::sm80 with default_config: the benchmarked ones), named so that tools/sass/check_budgets.py
// finds them in the SASS: the forward at head dims 128 (the tall query tile) and 64 without the
// optional score features (what the entries launch unless soft-cap, ALiBi or dropout is asked for), the
// forward with them at 128, attention_decode's forward at 128 (the key split, config.hpp), and the backward's kernels at head dim 128 (dK/dV on tensor cores without the optional score
// features, dQ, the per-row preprocess). Their loops are held to test/sass/budgets.txt (`ctest -L sass`).
#include "strata/attention.hpp"

namespace A = strata::attn;
using target = strata::arch::sm80;

template <int D, A::score_features F, A::forward_tile T = A::forward_tile::tall>
using forward = A::forward_kernel<strata::bf16, D, D, target, A::default_config<target, strata::bf16, D, D, T>(), A::no_score_mod,
                                  A::no_mask_mod, F>;
struct sass_attn_fwd_bf16_d128 : forward<128, A::score_features::none> {};  // the tall query tile (prefill)
struct sass_attn_fwd_bf16_d64 : forward<64, A::score_features::none> {};
struct sass_attn_fwd_extras_bf16_d128 : forward<128, A::score_features::any, A::forward_tile::standard> {};
struct sass_attn_fwd_decode_bf16_d128 : forward<128, A::score_features::none, A::forward_tile::split_keys> {};  // attention_decode's
struct sass_attn_bwd_dkdv_bf16_d128
    : A::backward_dkdv_mma_kernel<strata::bf16, 128, 128, target, A::no_score_mod, A::no_mask_mod, A::score_features::none> {};
struct sass_attn_bwd_pre_bf16_d128 : A::backward_preprocess_kernel<strata::bf16, 128, target> {};
struct sass_attn_bwd_dq_bf16_d128 : A::backward_dq_kernel<strata::bf16, 128, 128, target> {};

// Never called: instantiates the launches, so that nvcc compiles the seven kernels.
void sass_attention(strata::stream& s, const A::detail::forward_params& fp, const A::detail::backward_params& bp) {
  strata::launch(s, {.grid = {1}, .block = {sass_attn_fwd_bf16_d128::max_threads_per_block}}, sass_attn_fwd_bf16_d128{}, fp);
  strata::launch(s, {.grid = {1}, .block = {sass_attn_fwd_bf16_d64::max_threads_per_block}}, sass_attn_fwd_bf16_d64{}, fp);
  strata::launch(s, {.grid = {1}, .block = {sass_attn_fwd_decode_bf16_d128::max_threads_per_block}}, sass_attn_fwd_decode_bf16_d128{}, fp);
  strata::launch(s, {.grid = {1}, .block = {sass_attn_fwd_extras_bf16_d128::max_threads_per_block}}, sass_attn_fwd_extras_bf16_d128{},
                 fp);
  strata::launch(s, {.grid = {1}, .block = {sass_attn_bwd_dkdv_bf16_d128::threads}}, sass_attn_bwd_dkdv_bf16_d128{}, bp);
  strata::launch(s, {.grid = {1}, .block = {sass_attn_bwd_dq_bf16_d128::threads}}, sass_attn_bwd_dq_bf16_d128{}, bp);
  strata::launch(s, {.grid = {1}, .block = {sass_attn_bwd_pre_bf16_d128::threads}}, sass_attn_bwd_pre_bf16_d128{}, bp);
}
