// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/sass/attention_sm90_backward.cu -- the Hopper attention backward's dK/dV kernel
// (ops/attention/sm90_backward.hpp) as the sass budgets see it: bf16 at head dim 128. Its main loop is
// a consumer warpgroup's query step: S^T and dP^T as 8 + 8 HGMMA.64x64x16 from shared memory, P^T and
// dS^T on the accumulators (the edge step's masked copy and the interior one side by side), dV and dK
// as 4 + 4 HGMMA.64x128x16 with A from registers, dS^T to shared memory, and dQ's part as 2 x 4
// HGMMA.64x64x16 added into the fp32 accumulator (atomics, and the deterministic mode's ordered adds).
// Held to test/sass/budgets.txt.
#include "strata/runtime/runtime.hpp"
#include "strata/ops/attention/sm90_backward.hpp"

namespace sa = strata::attn;
struct sass_attention_sm90_backward_bf16_d128 : sa::sm90_backward_kernel<strata::bf16, 128> {};

void sass_attention_sm90_backward(strata::stream& s, const sa::tensor& q, const sa::tensor& k, const sa::tensor& v,
                                  const sa::tensor& o, const sa::tensor& dout, const sa::tensor& dq, const sa::tensor& dk,
                                  const sa::tensor& dv, strata::workspace ws) {
  using K = sass_attention_sm90_backward_bf16_d128;
  const auto p = K::make_params(q, k, v, o, dout, dq, dk, dv, {}, ws);
  strata::launch(s, K::launch_shape_of(p), K{}, p);
}
