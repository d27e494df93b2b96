// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Hopper attention forward (ops/attention/sm90_forward.hpp) on the emulator, run as sm90a (wgmma,
// TMA, mbarriers, setmaxnreg all emulated), against the double-precision reference through the same
// check as every other forward (support.hpp: poisoned outputs, rows past the sequence untouched, fully
// masked rows exactly 0 with LSE -inf): head dims 64, 128 and 256, f16 and bf16, partial query and
// key tiles, several tiles and query blocks, causal masks of both alignments, windows, GQA / MQA,
// BHSD, sinks, packed and padded batches (NaN in the padding). Then what it refuses, by name.
#include "mods_support.hpp"
#include "support.hpp"

#include <random>

#include "strata/ops/attention/sm90_forward.hpp"

namespace {

using namespace attn_test;
using Catch::Matchers::Contains;

template <class E, int D>
struct sm90_runner {
  strata::emulator::options schedule{};
  template <class SM, class MM>
  void operator()(strata::stream& s, const A::tensor& q, const A::tensor& k, const A::tensor& v, const A::tensor& o,
                  const A::options& opt, const SM& sm, const MM& mm) const {
    s.set_emulator_options(schedule);
    A::run_sm90_forward<E, D>(s, q, k, v, o, opt, sm, mm);
  }
};

template <class E, int D, class SM = A::no_score_mod, class MM = A::no_mask_mod>
int check_sm90(spec c, strata::emulator::options schedule = {}, const SM& sm = {}, const MM& mm = {}) {
  return check<E, D, D, strata::arch::sm90a>(c, sm, mm, sm90_runner<E, D>{schedule});
}


}  // namespace

TEST_CASE("Hopper attention forward: one partial tile, head dims 64, 128, 256", "[attention][sm90]") {
  check_sm90<bf16, 64>({.batch = 2, .heads = 2, .heads_k = 2, .sq = 17, .sk = 23, .seed = 1});
  check_sm90<f16, 128>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 9, .sk = 40, .seed = 2});
  check_sm90<bf16, 256>({.batch = 1, .heads = 1, .heads_k = 1, .sq = 33, .sk = 21, .seed = 3});
}

TEST_CASE("Hopper attention forward: several key tiles and query blocks, partial at both ends", "[attention][sm90]") {
  check_sm90<bf16, 128>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 150, .sk = 300, .seed = 11});
  check_sm90<f16, 64>({.batch = 2, .heads = 1, .heads_k = 1, .sq = 129, .sk = 257, .bhsd = true, .seed = 12});
  check_sm90<bf16, 256>({.batch = 1, .heads = 2, .heads_k = 2, .sq = 70, .sk = 200, .seed = 13});
}

TEST_CASE("Hopper attention forward: causal masks of both alignments and sliding windows", "[attention][sm90]") {
  spec c{.batch = 1, .heads = 2, .heads_k = 1, .sq = 140, .sk = 270, .seed = 21};
  c.opt.causal = true;
  check_sm90<bf16, 128>(c);  // bottom-right: the last query row sees every key
  c.opt.align = A::alignment::top_left;
  c.seed = 22;
  check_sm90<bf16, 64>(c);
  spec top{.batch = 1, .heads = 1, .heads_k = 1, .sq = 300, .sk = 100, .seed = 23};
  top.opt.causal = true;  // bottom-right with sq > sk: the first 200 rows see no key (O 0, LSE -inf)
  CHECK(check_sm90<f16, 128>(top) == 200);
  spec win{.batch = 2, .heads = 2, .heads_k = 2, .sq = 200, .sk = 333, .seed = 24};
  win.opt.window_left = 70;
  win.opt.window_right = 5;
  check_sm90<bf16, 128>(win);
  win.opt.window_right = -1;
  win.opt.window_left = 0;  // each row sees the keys from its diagonal on
  win.seed = 25;
  check_sm90<bf16, 256>(win);
}

TEST_CASE("Hopper attention forward: GQA and MQA groups, sinks, a scale", "[attention][sm90]") {
  check_sm90<bf16, 128>({.batch = 2, .heads = 6, .heads_k = 2, .sq = 65, .sk = 130, .seed = 31});
  check_sm90<f16, 64>({.batch = 1, .heads = 4, .heads_k = 1, .sq = 31, .sk = 64, .bhsd = true, .seed = 32});
  spec c{.batch = 1, .heads = 2, .heads_k = 1, .sq = 40, .sk = 150, .seed = 33};
  c.sinks = {0.5f, -1.25f};
  c.opt.scale = 0.3f;
  c.opt.causal = true;
  check_sm90<bf16, 128>(c);
}

TEST_CASE("Hopper attention forward: soft-cap and ALiBi (the form with extras)", "[attention][sm90]") {
  spec cap{.batch = 1, .heads = 2, .heads_k = 1, .sq = 100, .sk = 190, .seed = 71};
  cap.opt.softcap = 2.5f;  // small enough to bend the scores
  cap.opt.causal = true;
  check_sm90<bf16, 128>(cap);
  spec alibi{.batch = 2, .heads = 2, .heads_k = 2, .sq = 60, .sk = 150, .alibi = {0.25f, 0.0625f}, .seed = 72};
  alibi.opt.window_left = 40;
  check_sm90<f16, 64>(alibi);
  spec both{.batch = 1, .heads = 4, .heads_k = 2, .sq = 33, .sk = 70, .bhsd = true, .alibi = {0.5f, 0.1f, 0.2f, 0.3f}, .seed = 73};
  both.opt.softcap = 5.f;
  both.sinks = {0.2f, -0.3f, 1.f, 0.f};
  check_sm90<bf16, 256>(both);
}

TEST_CASE("Hopper attention forward: dropout, the mask bit for bit the reference's", "[attention][sm90]") {
  spec c{.batch = 2, .heads = 2, .heads_k = 1, .sq = 70, .sk = 200, .seed = 81};
  c.opt.dropout_p = 0.2f;
  c.opt.seed = 0x1234'5678'9abcULL;
  c.opt.offset = 77;
  check_sm90<bf16, 128>(c);
  c.opt.causal = true;
  c.opt.softcap = 4.f;
  c.seed = 82;
  check_sm90<f16, 256>(c);  // 64-key tiles: one draw per slot
}

TEST_CASE("Hopper attention forward: packed variable-length and padded batches", "[attention][sm90]") {
  // Packed: each sequence's boxes start at its cu_seqlens row; rows past it are the next sequence's.
  check_sm90<bf16, 128>({.batch = 4, .heads = 2, .heads_k = 1, .sq = 150, .sk = 140, .varlen = true, .seed = 61});
  spec causal{.batch = 3, .heads = 4, .heads_k = 2, .sq = 70, .sk = 200, .varlen = true, .seed = 62};
  causal.opt.causal = true;
  check_sm90<f16, 64>(causal);
  // Padded: the rows past seqused are NaN here; the tile that reaches into them has its V rows zeroed.
  spec padded{.batch = 3, .heads = 2, .heads_k = 2, .sq = 90, .sk = 170, .padded = true, .nan_padding = true, .seed = 63};
  check_sm90<bf16, 128>(padded);
  padded.bhsd = true;
  padded.opt.causal = true;
  padded.seed = 64;
  check_sm90<bf16, 256>(padded);
}

TEST_CASE("Hopper attention forward: no keys, and a single key and query", "[attention][sm90]") {
  spec none{.batch = 1, .heads = 1, .heads_k = 1, .sq = 5, .sk = 0, .seed = 41};
  CHECK(check_sm90<bf16, 64>(none) == 5);
  spec sinks{.batch = 1, .heads = 1, .heads_k = 1, .sq = 5, .sk = 0, .seed = 42};
  sinks.sinks = {0.75f};  // a sink alone: O 0, LSE the sink
  CHECK(check_sm90<bf16, 64>(sinks) == 0);
  check_sm90<f16, 128>({.batch = 3, .heads = 1, .heads_k = 1, .sq = 1, .sk = 1, .seed = 43});
}

TEST_CASE("Hopper attention forward under other schedules of the emulator's threads", "[attention][sm90]") {
  // The producer, the consumers' turns (named barriers) and the stage ring in other interleavings.
  using strata::emulator::schedule;
  spec c{.batch = 1, .heads = 2, .heads_k = 1, .sq = 130, .sk = 520, .seed = 51};
  c.opt.causal = true;
  check_sm90<bf16, 128>(c, {.workers = 2, .order = schedule::reverse});
  c.seed = 52;
  check_sm90<f16, 64>(c, {.workers = 2, .order = schedule::random, .seed = 777});
}

TEST_CASE("Hopper attention forward: random shapes and options, tile multiples and their neighbours", "[attention][sm90]") {
  // Lengths at and around the 128-row query block and the 64 / 128-key tiles, and random ones; every
  // mask kind, GQA ratios, layouts, packed and padded batches, the extras. Seeded: the same cases
  // every run.
  std::mt19937_64 g(2026);
  const int lengths[] = {1, 2, 63, 64, 65, 127, 128, 129, 191, 256, 257};
  auto pick = [&](int n) { return static_cast<int>(g() % static_cast<std::uint64_t>(n)); };
  for (int i = 0; i < 12; ++i) {
    spec c;
    c.batch = 1 + pick(2);
    c.heads_k = 1 + pick(2);
    c.heads = c.heads_k * (1 + pick(3));
    c.sq = i < 6 ? lengths[pick(11)] : 1 + pick(300);
    c.sk = i < 6 ? lengths[pick(11)] : 1 + pick(300);
    c.bhsd = pick(2) == 1;
    const int layout = pick(4);  // dense, dense, packed, padded
    c.varlen = layout == 2;
    c.padded = layout == 3;
    c.nan_padding = c.padded;
    const int mask = pick(4);
    if (mask == 1) c.opt.causal = true;
    if (mask == 2) c.opt.causal = true, c.opt.align = A::alignment::top_left;
    if (mask == 3) c.opt.window_left = pick(100), c.opt.window_right = pick(3) == 0 ? -1 : pick(20);
    if (pick(4) == 0) c.opt.softcap = 3.f;
    if (pick(4) == 0) c.opt.dropout_p = 0.15f, c.opt.seed = g(), c.opt.offset = g() % 1000;
    c.seed = 900 + static_cast<std::uint64_t>(i);
    INFO("case " << i << ": B " << c.batch << " H " << c.heads << " HK " << c.heads_k << " sq " << c.sq << " sk " << c.sk
                 << " layout " << layout << " mask " << mask << " softcap " << c.opt.softcap << " dropout " << c.opt.dropout_p);
    switch (pick(4)) {
      case 0: check_sm90<bf16, 64>(c); break;
      case 1: check_sm90<f16, 128>(c); break;
      case 2: check_sm90<bf16, 128>(c); break;
      default: check_sm90<bf16, 256>(c); break;
    }
  }
}

TEST_CASE("Hopper attention forward refuses what it does not take, by name", "[attention][sm90][negative]") {
  using K = A::sm90_forward_kernel<bf16, 128>;
  strata::stream s;
  strata::device_buffer<bf16> q(2 * 16 * 128), k(2 * 16 * 128), v(2 * 16 * 128), o(2 * 16 * 128);
  const auto t = [](bf16* p) { return A::bshd(p, strata::dtype::bf16, 1, 16, 2, 128); };
  const auto refused = [&](A::options opt) -> std::string {
    try {
      (void)K::make_params(t(q.data()), t(k.data()), t(v.data()), t(o.data()), opt);
    } catch (const strata::unsupported& e) {
      return e.what();
    }
    return "accepted";
  };
  A::options cap;
  cap.softcap = 30.f;
  CHECK_THAT(refused(cap), Contains("options.softcap") && Contains("with extras"));
  A::options drop;
  drop.dropout_p = 0.1f;
  CHECK_THAT(refused(drop), Contains("options.dropout_p") && Contains("with extras"));
  float slopes[2] = {};
  A::options alibi;
  alibi.alibi_slopes = slopes;
  CHECK_THAT(refused(alibi), Contains("options.alibi_slopes") && Contains("with extras"));
  CHECK_NOTHROW(A::sm90_forward_kernel<bf16, 128, true>::make_params(t(q.data()), t(k.data()), t(v.data()), t(o.data()), cap));
  // Packed sequences need the packed row counts: TMA boxes never read past them.
  int cu[2] = {0, 16};
  A::options packed;
  packed.cu_seqlens_q = cu;
  packed.cu_seqlens_k = cu;
  packed.total_q = 16;
  CHECK_THROWS_WITH(K::make_params(t(q.data()), t(k.data()), t(v.data()), t(o.data()), packed), Contains("options.total_k"));
  CHECK(refused({}) == "accepted");
  // A head dim other than the kernel's is an argument error naming q.
  const auto t64 = [](bf16* p) { return A::bshd(p, strata::dtype::bf16, 1, 16, 2, 64); };
  CHECK_THROWS_WITH(K::make_params(t64(q.data()), t64(k.data()), t64(v.data()), t64(o.data()), {}), Contains("q") && Contains("head dims"));
  // TMA needs 16-byte aligned rows.
  A::tensor odd = t(q.data() + 1);
  CHECK_THROWS_WITH(K::make_params(odd, t(k.data()), t(v.data()), t(o.data()), {}), Contains("16-byte aligned"));
}

TEST_CASE("Hopper attention forward: score and mask modifiers (the form with extras)", "[attention][sm90]") {
  check_sm90<bf16, 128>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 100, .sk = 190, .seed = 81}, {}, bias_mod{});
  spec doc{.batch = 2, .heads = 2, .heads_k = 2, .sq = 70, .sk = 70, .seed = 82};
  doc.opt.causal = true;
  check_sm90<f16, 64>(doc, {}, A::no_score_mod{}, doc_mask{});
  spec both{.batch = 1, .heads = 2, .heads_k = 1, .sq = 45, .sk = 150, .varlen = true, .seed = 83};
  both.opt.softcap = 20.f;
  CHECK(check_sm90<bf16, 64>(both, {}, bias_mod{}, none_mask{}) > 0);  // rows 2, 7, .. see no key
}
