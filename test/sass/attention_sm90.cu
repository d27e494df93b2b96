// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/sass/attention_sm90.cu -- the Hopper attention forward (ops/attention/sm90_forward.hpp) as the sass
// budgets see it: bf16 at head dim 128 (block_n 128). Its main loop is the consumer warpgroups' key
// tile: Q K^T as eight HGMMA.64x128x16 from shared memory, the softmax on the accumulators (the edge
// tile's masked copy and the interior copy side by side), P V as eight HGMMA.64x128x16 with P from
// registers. Held to test/sass/budgets.txt.
#include "strata/runtime/runtime.hpp"
#include "strata/ops/attention/sm90_forward.hpp"

namespace sa = strata::attn;
struct sass_attention_sm90_bf16_d128 : sa::sm90_forward_kernel<strata::bf16, 128> {};

void sass_attention_sm90(strata::stream& s, const sa::tensor& q, const sa::tensor& k, const sa::tensor& v, const sa::tensor& o) {
  using K = sass_attention_sm90_bf16_d128;
  const auto p = K::make_params(q, k, v, o, {});
  strata::launch(s, K::launch_shape_of(p), K{}, p);
}
