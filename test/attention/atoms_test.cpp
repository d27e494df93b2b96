// Attention forward with the tensor-core atoms, run on the emulator from their fragment layouts:
// mma.sync m16n8k16 (sm80 target, cp.async pipeline) and MFMA 16x16x16 (gfx942, wave64).
#include "support.hpp"

using namespace attn_test;
using sm80 = strata::arch::sm80;
using gfx942 = strata::arch::gfx942;

TEST_CASE("attention forward on sm80 (mma.sync, cp.async)", "[attention]") {
  A::options c;
  c.causal = true;
  check<f16, 64, 64, sm80>({.batch = 1, .heads = 4, .heads_k = 2, .sq = 70, .sk = 81, .opt = c});
  check<bf16, 128, 128, sm80>({.batch = 2, .heads = 2, .heads_k = 1, .sq = 1, .sk = 130});
  check<f16, 192, 128, sm80>({.batch = 1, .heads = 2, .heads_k = 2, .sq = 17, .sk = 40, .bhsd = true});
  check<float, 32, 32, sm80>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 33, .sk = 20});  // fp32: FMA atom
}

TEST_CASE("attention forward on gfx942 (MFMA, wave64, 8 chiplets)", "[attention]") {
  A::options w;
  w.window_left = 7, w.window_right = 2;
  check<bf16, 64, 64, gfx942>({.batch = 2, .heads = 4, .heads_k = 1, .sq = 35, .sk = 50, .opt = w});
  check<f16, 96, 96, gfx942>({.batch = 1, .heads = 3, .heads_k = 3, .sq = 21, .sk = 19, .varlen = false});
}
