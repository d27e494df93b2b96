// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Attention forward on the emulator, host target (scalar FMA atom): every head dim, fp32 / fp16 /
// bf16, MHA / GQA / MQA, BSHD and BHSD, seqlen_q != seqlen_k, lengths that are not tile multiples,
// seqlen 1, against the double-precision reference (support.hpp states the tolerances).
#include "support.hpp"

using namespace attn_test;
using host = strata::arch::host;

TEST_CASE("attention forward: fp32 head dims 32..256, GQA, odd lengths", "[attention]") {
  check<float, 32, 32, host>({.batch = 2, .heads = 4, .heads_k = 2, .sq = 37, .sk = 53});
  check<float, 64, 64, host>({.batch = 1, .heads = 3, .heads_k = 1, .sq = 1, .sk = 70});  // MQA, seqlen 1
  check<float, 96, 96, host>({.batch = 1, .heads = 2, .heads_k = 2, .sq = 65, .sk = 1, .bhsd = true});
  check<float, 128, 128, host>({.batch = 2, .heads = 2, .heads_k = 1, .sq = 19, .sk = 17});
  check<float, 256, 256, host>({.batch = 1, .heads = 1, .heads_k = 1, .sq = 9, .sk = 33});
}

TEST_CASE("attention forward: fp16 and bf16 on the host target, 192/128 and 512", "[attention]") {
  check<f16, 64, 64, host>({.batch = 2, .heads = 4, .heads_k = 4, .sq = 33, .sk = 29, .bhsd = true});
  check<bf16, 128, 128, host>({.batch = 1, .heads = 4, .heads_k = 2, .sq = 20, .sk = 41});
  check<f16, 192, 128, host>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 11, .sk = 26});
  check<bf16, 512, 512, host>({.batch = 1, .heads = 1, .heads_k = 1, .sq = 5, .sk = 19});
}
