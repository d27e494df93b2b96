// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Attention masks and modifiers on the emulator (host target): causal top-left / bottom-right with
// seqlen_q != seqlen_k, sliding windows (also wider than the sequence), ALiBi, soft-capping, sinks,
// user score_mod / mask_mod, their combination, fully masked rows (O = 0, LSE = -inf, no NaN),
// variable lengths (packed) and padded batches.
#include "mods_support.hpp"
#include "support.hpp"

using namespace attn_test;
using host = strata::arch::host;

namespace {
A::options causal(A::alignment a) {
  A::options o;
  o.causal = true;
  o.align = a;
  return o;
}
}  // namespace

TEST_CASE("attention masks: causal alignments with seqlen_q != seqlen_k", "[attention]") {
  // top-left with sq > sk leaves no fully masked row; bottom-right with sq > sk masks the first rows.
  CHECK(check<float, 64, 64, host>({.heads = 2, .heads_k = 1, .sq = 45, .sk = 30, .opt = causal(A::alignment::top_left)}) == 0);
  CHECK(check<float, 64, 64, host>({.heads = 2, .heads_k = 1, .sq = 45, .sk = 30, .opt = causal(A::alignment::bottom_right)}) ==
        2 * 15);
  check<f16, 64, 64, host>({.batch = 2, .heads = 2, .heads_k = 2, .sq = 20, .sk = 77, .opt = causal(A::alignment::bottom_right)});
  check<bf16, 32, 32, host>({.heads = 4, .heads_k = 1, .sq = 70, .sk = 70, .bhsd = true, .opt = causal(A::alignment::top_left)});
  check<float, 32, 32, host>({.heads = 1, .heads_k = 1, .sq = 1, .sk = 1, .opt = causal(A::alignment::top_left)});
}

TEST_CASE("attention masks: sliding windows, ALiBi, soft-cap, sinks", "[attention]") {
  A::options w;
  w.window_left = 5, w.window_right = 3;
  check<float, 64, 64, host>({.batch = 2, .heads = 2, .heads_k = 1, .sq = 40, .sk = 50, .opt = w});
  w.window_left = 1000, w.window_right = 1000;  // wider than the sequence: no mask
  check<float, 64, 64, host>({.heads = 2, .heads_k = 2, .sq = 13, .sk = 21, .opt = w});
  A::options sc;
  sc.softcap = 2.0f;
  sc.scale = 0.9f;
  check<f16, 64, 64, host>({.heads = 2, .heads_k = 1, .sq = 18, .sk = 35, .opt = sc});
  check<float, 32, 32, host>({.heads = 3, .heads_k = 1, .sq = 21, .sk = 40, .opt = causal(A::alignment::bottom_right),
                              .alibi = {0.5f, 0.25f, 0.125f}});
  check<float, 32, 32, host>({.heads = 2, .heads_k = 1, .sq = 33, .sk = 17, .alibi = {}, .sinks = {0.5f, -1.0f}});
  // All together: causal + window + ALiBi + soft-cap + sinks + GQA + BHSD, then the mods.
  A::options all = causal(A::alignment::bottom_right);
  all.window_left = 9, all.softcap = 5.0f;
  check<bf16, 64, 64, host>({.batch = 2, .heads = 4, .heads_k = 2, .sq = 26, .sk = 41, .bhsd = true, .opt = all,
                             .alibi = {0.3f, 0.2f, 0.1f, 0.05f}, .sinks = {1.f, 0.f, -1.f, 2.f}});
  check<float, 64, 64, host>({.heads = 2, .heads_k = 1, .sq = 30, .sk = 30, .opt = all}, bias_mod{}, doc_mask{});
}

TEST_CASE("attention masks: fully masked rows are zeros with LSE -inf", "[attention]") {
  CHECK(check<float, 32, 32, host>({.heads = 1, .heads_k = 1, .sq = 20, .sk = 20}, A::no_score_mod{}, none_mask{}) == 4);
  // A window entirely left of the keys: every row masked.
  A::options w;
  w.window_left = 0, w.window_right = -5;  // not allowed (< -1): validation
  spec bad;
  bad.sq = 4, bad.sk = 4, bad.opt = w;
  auto run_bad = [&] { check<float, 32, 32, host>(bad); };
  CHECK_THROWS_WITH(run_bad(), Catch::Contains("options.window"));
  A::options far = causal(A::alignment::bottom_right);
  CHECK(check<f16, 32, 32, host>({.heads = 2, .heads_k = 2, .sq = 9, .sk = 3, .opt = far}) == 2 * 6);
}

TEST_CASE("attention: variable lengths (packed) and padded batches", "[attention]") {
  check<float, 64, 64, host>({.batch = 4, .heads = 2, .heads_k = 1, .sq = 40, .sk = 33, .varlen = true});
  check<f16, 64, 64, host>({.batch = 3, .heads = 2, .heads_k = 2, .sq = 30, .sk = 45, .varlen = true,
                            .opt = causal(A::alignment::bottom_right)});
  check<float, 32, 32, host>({.batch = 3, .heads = 2, .heads_k = 1, .sq = 24, .sk = 31, .padded = true});
  A::options w;
  w.window_left = 4, w.window_right = 0;
  check<bf16, 32, 32, host>({.batch = 3, .heads = 2, .heads_k = 1, .sq = 24, .sk = 19, .bhsd = true, .padded = true, .opt = w});
  // Rows past seqused_k are never read: NaN there changes nothing (the tensor-core kernels too).
  check<bf16, 64, 64, strata::arch::sm80>({.batch = 3, .heads = 2, .heads_k = 1, .sq = 40, .sk = 150, .padded = true,
                                           .nan_padding = true});
  check<f16, 64, 64, strata::arch::gfx942>({.batch = 2, .heads = 2, .heads_k = 2, .sq = 20, .sk = 70, .bhsd = true,
                                            .padded = true, .nan_padding = true, .opt = causal(A::alignment::bottom_right)});
}

// One query row per sequence with GQA: the group's query heads share one block's rows (pack_gqa,
// forward.hpp). ALiBi slopes, sinks and the score mod differ per head, so a row that took the wrong
// head, position or output row fails; a group of 72 heads spans several row tiles.
TEST_CASE("attention: one query row with GQA packs the group's heads into one block", "[attention]") {
  A::options c = causal(A::alignment::bottom_right);
  check<float, 64, 64, host>({.batch = 2, .heads = 6, .heads_k = 2, .sq = 1, .sk = 45, .opt = c,
                              .alibi = {0.5f, 0.25f, 0.125f, 0.3f, 0.2f, 0.1f}, .sinks = {0.5f, -1.f, 2.f, 0.f, 1.f, -0.5f}});
  A::options w;
  w.window_left = 30, w.window_right = 0, w.align = A::alignment::bottom_right;
  check<bf16, 64, 64, host>({.batch = 2, .heads = 4, .heads_k = 1, .sq = 1, .sk = 90, .bhsd = true, .opt = w}, bias_mod{});
  check<float, 32, 32, host>({.batch = 1, .heads = 72, .heads_k = 1, .sq = 1, .sk = 20});
  check<f16, 32, 32, host>({.batch = 3, .heads = 4, .heads_k = 2, .sq = 1, .sk = 31, .padded = true, .opt = c});
  check<f16, 128, 128, strata::arch::sm80>({.batch = 2, .heads = 8, .heads_k = 1, .sq = 1, .sk = 200, .sinks = {1, 2, 3, 4, -1, -2, -3, 0}});
  check<bf16, 64, 64, strata::arch::gfx942>({.batch = 1, .heads = 6, .heads_k = 2, .sq = 1, .sk = 70, .opt = c});
}
