// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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
  // Wide head dims: Q staged in shared memory, P V in 64-column slices of V.
  check<bf16, 192, 192, sm80>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 19, .sk = 45});
  A::options cw;
  cw.causal = true, cw.window_left = 20;
  check<f16, 256, 256, sm80>({.batch = 2, .heads = 2, .heads_k = 2, .sq = 70, .sk = 66, .opt = cw});
  check<bf16, 256, 256, strata::arch::sm100a>({.batch = 1, .heads = 1, .heads_k = 1, .sq = 3, .sk = 40, .varlen = false});
  // 512: two blocks per query tile, each with half of V's columns (v_slices); only one writes the LSE.
  A::options cs;
  cs.causal = true;
  check<bf16, 512, 512, sm80>({.batch = 2, .heads = 2, .heads_k = 1, .sq = 67, .sk = 40, .opt = cs});
  check<f16, 512, 512, strata::arch::sm100a>({.batch = 1, .heads = 1, .heads_k = 1, .sq = 5, .sk = 33, .bhsd = true, .sinks = {0.5f}});
}

// A block runs its edge tiles (masked: the windows, causality, the key length cut them) first and
// then its interior tiles in a loop compiled without the mask (forward.hpp). Cases with several
// tiles of each kind: edges on both sides of the interior (windows), causal blocks whose interior is
// most of their keys, lengths that are not tile multiples, packed sequences.
TEST_CASE("attention forward on sm80: edge tiles, then interior tiles without the mask", "[attention]") {
  A::options w;
  w.window_left = 100, w.window_right = 70;
  check<bf16, 64, 64, sm80>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 200, .sk = 300, .opt = w});
  A::options br;
  br.causal = true, br.align = A::alignment::bottom_right;
  check<f16, 128, 128, sm80>({.batch = 1, .heads = 2, .heads_k = 2, .sq = 130, .sk = 250, .opt = br});
  check<bf16, 32, 32, sm80>({.batch = 3, .heads = 2, .heads_k = 1, .sq = 150, .sk = 197, .varlen = true, .opt = br});
  A::options tl;
  tl.causal = true, tl.window_left = 64, tl.align = A::alignment::top_left;
  check<f16, 64, 64, sm80>({.batch = 2, .heads = 1, .heads_k = 1, .sq = 256, .sk = 256, .bhsd = true, .opt = tl});
  check<bf16, 96, 96, sm80>({.batch = 1, .heads = 1, .heads_k = 1, .sq = 65, .sk = 192});  // interior only, and one row past
}

// FlashAttention-2's tall query tile (config.hpp, forward_tile::tall): the plain kernel at head dims
// 64 and 128 on sm80 takes 32 rows per warp (two atoms of rows, four softmax slots per lane), 128 per
// block, Q staged in shared memory. Rows that end inside a warp's second atom, several row tiles, every
// mask and layout, packed and padded sequences, GQA and sinks.
TEST_CASE("attention forward on sm80: the tall query tile at head dims 64 and 128", "[attention]") {
  using tall = A::forward_kernel<bf16, 128, 128, sm80>;
  STATIC_REQUIRE(tall::BM == 128);
  STATIC_REQUIRE(tall::row_atoms == 2);
  STATIC_REQUIRE(A::forward_kernel<f16, 64, 64, sm80>::BM == 128);
  STATIC_REQUIRE(A::default_config<sm80, bf16, 128, 128, A::forward_tile::standard>().row_atoms == 1);
  STATIC_REQUIRE(A::default_config<sm80, bf16, 96, 96>().row_atoms == 1);
  check<bf16, 128, 128, sm80>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 300, .sk = 170});  // rows 256..299: warp 1's second atom ends at 300
  A::options c;
  c.causal = true;
  check<f16, 128, 128, sm80>({.batch = 2, .heads = 4, .heads_k = 2, .sq = 147, .sk = 147, .bhsd = true, .opt = c});
  A::options br;
  br.causal = true, br.align = A::alignment::bottom_right;
  check<bf16, 128, 128, sm80>({.batch = 3, .heads = 2, .heads_k = 1, .sq = 140, .sk = 261, .varlen = true, .opt = br});
  A::options w;
  w.window_left = 45, w.window_right = 20;
  check<f16, 128, 128, sm80>({.batch = 2, .heads = 1, .heads_k = 1, .sq = 200, .sk = 230, .padded = true, .nan_padding = true, .opt = w});
  check<bf16, 128, 128, sm80>({.batch = 1, .heads = 3, .heads_k = 1, .sq = 40, .sk = 77, .sinks = {0.5f, -1.f, 2.f}});
  // A whole row tile whose rows see no key (causal bottom-right with more queries than keys: rows
  // 0..129 are fully masked, O = 0 and LSE = -inf) and a narrow window on the rest.
  A::options none;
  none.causal = true, none.window_left = 3;
  CHECK(check<bf16, 128, 128, sm80>({.batch = 1, .heads = 1, .heads_k = 1, .sq = 190, .sk = 60, .opt = none}) == 130);
  // Head dim 64: 64-key tiles.
  check<bf16, 64, 64, sm80>({.batch = 2, .heads = 2, .heads_k = 2, .sq = 161, .sk = 300, .varlen = true, .opt = br});
  check<f16, 64, 64, sm80>({.batch = 1, .heads = 4, .heads_k = 1, .sq = 270, .sk = 199, .bhsd = true, .opt = w});
  check<bf16, 64, 64, sm80>({.batch = 2, .heads = 2, .heads_k = 1, .sq = 129, .sk = 130, .padded = true, .nan_padding = true,
                             .opt = c, .sinks = {1.f, -0.5f}});
  // The narrower key tiles of sm_90a (32 keys at D 64) and sm_100a (16 at D 128).
  STATIC_REQUIRE(A::default_config<strata::arch::sm100a, bf16, 128, 128>().block_n == 16);
  check<f16, 64, 64, strata::arch::sm90a>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 131, .sk = 100, .opt = c});
  check<bf16, 128, 128, strata::arch::sm100a>({.batch = 1, .heads = 2, .heads_k = 2, .sq = 140, .sk = 75, .opt = w});
}

TEST_CASE("attention forward on gfx942 (MFMA, wave64, 8 chiplets)", "[attention]") {
  A::options w;
  w.window_left = 7, w.window_right = 2;
  check<bf16, 64, 64, gfx942>({.batch = 2, .heads = 4, .heads_k = 1, .sq = 35, .sk = 50, .opt = w});
  check<f16, 96, 96, gfx942>({.batch = 1, .heads = 3, .heads_k = 3, .sq = 21, .sk = 19, .varlen = false});
  A::options br;
  br.causal = true, br.align = A::alignment::top_left;
  check<bf16, 256, 256, gfx942>({.batch = 1, .heads = 2, .heads_k = 2, .sq = 18, .sk = 33, .opt = br});
  check<f16, 192, 128, gfx942>({.batch = 2, .heads = 2, .heads_k = 1, .sq = 5, .sk = 23, .bhsd = true});
}

TEST_CASE("attention forward on gfx90a (MFMA, wave64, one die)", "[attention]") {
  check<f16, 128, 128, strata::arch::gfx90a>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 37, .sk = 29});
  check<bf16, 32, 32, strata::arch::gfx90a>({.batch = 2, .heads = 1, .heads_k = 1, .sq = 1, .sk = 70});
}

// fp8 e4m3 with per-tensor descale factors (not 1, so a missing factor fails): mma.sync m16n8k32 on
// sm90a, MFMA 16x16x32 on gfx942 with OCP bytes remapped to FNUZ (products scaled by 4), and the
// FMA atom on sm80 (no fp8 tensor cores: an emulator-only configuration). O is bf16.
TEST_CASE("attention forward fp8 e4m3: sm90a mma.sync, gfx942 MFMA, sm80 FMA", "[attention]") {
  A::options d;
  d.q_descale = 0.5f, d.k_descale = 2.5f, d.v_descale = 3.f;
  A::options dc = d;
  dc.causal = true;
  check<f8_e4m3, 64, 64, strata::arch::sm90a>({.batch = 2, .heads = 4, .heads_k = 2, .sq = 37, .sk = 70, .opt = dc});
  check<f8_e4m3, 128, 128, strata::arch::sm90a>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 1, .sk = 45, .bhsd = true, .opt = d});
  check<f8_e4m3, 192, 128, strata::arch::sm100a>({.batch = 1, .heads = 2, .heads_k = 2, .sq = 20, .sk = 33, .opt = d});
  check<f8_e4m3, 256, 256, strata::arch::sm90a>({.batch = 1, .heads = 1, .heads_k = 1, .sq = 17, .sk = 40, .varlen = false, .opt = d});
  A::options dw = d;
  dw.window_left = 9, dw.window_right = 3, dw.softcap = 5.f;
  check<f8_e4m3, 96, 96, gfx942>({.batch = 2, .heads = 2, .heads_k = 1, .sq = 21, .sk = 50, .varlen = true, .opt = dw});
  check<f8_e4m3, 256, 256, gfx942>({.batch = 1, .heads = 2, .heads_k = 2, .sq = 18, .sk = 33, .opt = dc});
  check<f8_e4m3, 32, 32, sm80>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 9, .sk = 40, .opt = d});
  check<f8_e4m3, 64, 64, strata::arch::host>({.batch = 1, .heads = 3, .heads_k = 1, .sq = 11, .sk = 19, .opt = dc});
}
