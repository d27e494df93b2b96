// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Hopper attention backward (ops/attention/sm90_backward.hpp) on the emulator, run as sm90a (wgmma,
// TMA, mbarriers, setmaxnreg, named barriers all emulated), against the double-precision reference
// gradient through the same check as every other backward (grad_support.hpp: poisoned outputs, rows
// past the sequence untouched): head dims 64 and 128, f16 and bf16, partial key blocks and query
// tiles, several of each, GQA / MQA, BHSD, causal masks of both alignments, windows, sinks and their
// gradient, soft-cap, ALiBi and dropout (the form with extras), score and mask modifiers, packed and
// padded batches (NaN in the padding), the deterministic dQ (bitwise the same under other schedules),
// then what it refuses, by name.
#include "grad_support.hpp"
#include "mods_support.hpp"

#include <cstring>

#include "strata/ops/attention/sm90_backward.hpp"

namespace {

using namespace attn_test;
using Catch::Matchers::Contains;
using strata::arch::sm90a;

template <class E, int D>
struct sm90_backward {
  strata::emulator::options schedule = strata::emulator::options::from_environment();
  template <class SM, class MM>
  void operator()(strata::stream& s, const A::tensor& q, const A::tensor& k, const A::tensor& v, const A::tensor& o,
                  const A::tensor& dout, const A::tensor& dq, const A::tensor& dk, const A::tensor& dv, const A::options& opt,
                  const SM& sm, const MM& mm) const {
    const std::size_t bytes = strata::attention_backward_workspace_size<sm90a>(q, k, v, opt);
    strata::device_buffer<unsigned char> ws(bytes > 0 ? bytes : 1);
    s.set_emulator_options(schedule);
    A::run_sm90_backward<E, D>(s, q, k, v, o, dout, dq, dk, dv, opt, {ws.data(), bytes}, sm, mm);
    s.synchronize();
  }
};

template <class E, int D, class SM = A::no_score_mod, class MM = A::no_mask_mod>
grad_run<E> check_sm90(const spec& c, const SM& sm = {}, const MM& mm = {}) {
  return check_grad<E, D, D, sm90a>(c, sm, mm, sm90_backward<E, D>{});
}


}  // namespace

TEST_CASE("Hopper attention backward: one partial block, head dims 64 and 128", "[attention][backward][sm90]") {
  check_sm90<bf16, 64>({.batch = 2, .heads = 2, .heads_k = 2, .sq = 17, .sk = 23, .seed = 1});
  check_sm90<f16, 128>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 9, .sk = 40, .seed = 2});
}

TEST_CASE("Hopper attention backward: several key blocks and query tiles, partial at both ends", "[attention][backward][sm90]") {
  check_sm90<bf16, 128>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 150, .sk = 300, .seed = 11});
  check_sm90<f16, 64>({.batch = 2, .heads = 1, .heads_k = 1, .sq = 129, .sk = 257, .bhsd = true, .seed = 12});
}

TEST_CASE("Hopper attention backward: causal masks of both alignments and sliding windows", "[attention][backward][sm90]") {
  spec c{.batch = 1, .heads = 2, .heads_k = 1, .sq = 140, .sk = 270, .seed = 21};
  c.opt.causal = true;
  check_sm90<bf16, 128>(c);  // bottom-right
  c.opt.align = A::alignment::top_left;
  c.seed = 22;
  check_sm90<bf16, 64>(c);
  spec top{.batch = 1, .heads = 1, .heads_k = 1, .sq = 300, .sk = 100, .seed = 23};
  top.opt.causal = true;  // bottom-right with sq > sk: the first 200 rows see no key (LSE -inf, dQ 0)
  check_sm90<f16, 128>(top);
  spec win{.batch = 2, .heads = 2, .heads_k = 2, .sq = 200, .sk = 333, .seed = 24};
  win.opt.window_left = 70;
  win.opt.window_right = 5;
  check_sm90<bf16, 128>(win);
  // Windows one short of covering the sequence: query 4 sees keys 0 and 1 only through the last step
  // of the left window, query 0 sees key 1 only through the last step of the right one; and windows
  // far wider than the sequence (clamped to it, never overflowing).
  spec edge{.batch = 1, .heads = 1, .heads_k = 1, .sq = 5, .sk = 2, .seed = 25};
  edge.opt.align = A::alignment::top_left;
  edge.opt.window_left = 4;
  edge.opt.window_right = 1;
  check_sm90<f16, 64>(edge);
  spec wide{.batch = 1, .heads = 1, .heads_k = 1, .sq = 150, .sk = 200, .seed = 26};
  wide.opt.window_left = wide.opt.window_right = 1 << 30;
  check_sm90<f16, 64>(wide);
}

TEST_CASE("Hopper attention backward: GQA and MQA groups, sinks and their gradient, a scale", "[attention][backward][sm90]") {
  check_sm90<bf16, 128>({.batch = 2, .heads = 6, .heads_k = 2, .sq = 65, .sk = 130, .seed = 31});
  check_sm90<f16, 64>({.batch = 1, .heads = 4, .heads_k = 1, .sq = 31, .sk = 64, .bhsd = true, .seed = 32});
  spec c{.batch = 1, .heads = 2, .heads_k = 1, .sq = 40, .sk = 150, .seed = 33};
  c.sinks = {0.5f, -1.25f};
  c.opt.scale = 0.3f;
  c.opt.causal = true;
  check_sm90<bf16, 128>(c);
}

TEST_CASE("Hopper attention backward: soft-cap, ALiBi, dropout (the form with extras)", "[attention][backward][sm90]") {
  spec cap{.batch = 1, .heads = 2, .heads_k = 1, .sq = 100, .sk = 190, .seed = 61};
  cap.opt.softcap = 0.5f;  // logits of a few units against a cap of 0.5: tanh saturates, its derivative matters
  cap.opt.scale = 1.f;
  cap.opt.causal = true;
  check_sm90<bf16, 128>(cap);
  spec alibi{.batch = 2, .heads = 2, .heads_k = 2, .sq = 70, .sk = 140, .seed = 62};
  alibi.alibi = {0.25f, 0.0625f};
  alibi.opt.window_left = 50;
  check_sm90<f16, 64>(alibi);
  spec drop{.batch = 1, .heads = 2, .heads_k = 1, .sq = 90, .sk = 200, .seed = 63};
  drop.opt.dropout_p = 0.2f;
  drop.opt.seed = 1234;
  drop.opt.offset = 77;
  check_sm90<bf16, 128>(drop);
  spec all{.batch = 2, .heads = 4, .heads_k = 2, .sq = 65, .sk = 129, .varlen = true, .seed = 64};
  all.opt.softcap = 8.f;
  all.alibi = {0.5f, 0.25f, 0.125f, 0.0625f};
  all.opt.dropout_p = 0.1f;
  all.opt.seed = 99;
  all.opt.deterministic = true;
  check_sm90<f16, 64>(all);
}

TEST_CASE("Hopper attention backward: score and mask modifiers", "[attention][backward][sm90]") {
  spec c{.batch = 1, .heads = 2, .heads_k = 1, .sq = 90, .sk = 150, .seed = 71};
  c.opt.causal = true;
  check_sm90<bf16, 128>(c, squash_bias{}, same_document{});
  spec packed{.batch = 2, .heads = 2, .heads_k = 2, .sq = 70, .sk = 140, .varlen = true, .seed = 72};
  check_sm90<f16, 64>(packed, squash_bias{});
  // A document mask with sq != sk: some rows see no key at all (LSE -inf, zero gradients).
  check_sm90<f16, 64>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 12, .sk = 33, .seed = 73}, A::no_score_mod{}, same_document{5});
  // Full 64 x 64 steps that the windows leave whole: under a mask modifier they still take the mask.
  check_sm90<bf16, 64>({.batch = 1, .heads = 1, .heads_k = 1, .sq = 130, .sk = 128, .seed = 74}, A::no_score_mod{}, same_document{});
}

TEST_CASE("Hopper attention backward: packed and padded batches, NaN in the padding", "[attention][backward][sm90]") {
  spec packed{.batch = 3, .heads = 2, .heads_k = 1, .sq = 90, .sk = 150, .varlen = true, .seed = 41};
  check_sm90<bf16, 128>(packed);
  packed.opt.causal = true;
  packed.seed = 42;
  check_sm90<f16, 64>(packed);
  spec padded{.batch = 3, .heads = 2, .heads_k = 2, .sq = 100, .sk = 170, .padded = true, .nan_padding = true, .seed = 43};
  check_sm90<bf16, 128>(padded);
  padded.opt.causal = true;
  padded.bhsd = true;
  padded.seed = 44;
  check_sm90<bf16, 64>(padded);
}

TEST_CASE("Hopper attention backward: deterministic dQ, bitwise the same under other schedules", "[attention][backward][sm90]") {
  spec c{.batch = 1, .heads = 2, .heads_k = 1, .sq = 150, .sk = 400, .seed = 51};
  c.opt.deterministic = true;
  c.opt.window_left = 100;  // query tiles walked by key blocks other than block 0
  c.opt.window_right = 30;
  const auto first = check_sm90<bf16, 128>(c);
  const auto in = make_inputs<bf16, 128, 128>(c);
  for (auto order : {strata::emulator::schedule::reverse, strata::emulator::schedule::random}) {
    strata::emulator::options eo;
    eo.order = order;
    eo.seed = 7;
    sm90_backward<bf16, 128> other;
    other.schedule = eo;
    const auto again = run_grad<bf16, 128, 128, sm90a>(c, in, eo, true, A::no_score_mod{}, A::no_mask_mod{}, other);
    CHECK(std::memcmp(first.dq.data(), again.dq.data(), first.dq.size() * sizeof(bf16)) == 0);
    CHECK(std::memcmp(first.dk.data(), again.dk.data(), first.dk.size() * sizeof(bf16)) == 0);
  }
}

TEST_CASE("Hopper attention backward: what it refuses, by name", "[attention][backward][sm90]") {
  strata::stream s;
  const int B = 1, S = 64, H = 1;
  strata::device_buffer<bf16> x(static_cast<std::size_t>(B) * S * H * 128 * 8);
  bf16* p = x.data();
  const std::size_t n = static_cast<std::size_t>(B) * S * H * 128;
  const auto t = [&](int i) { return A::bshd(p + i * n, strata::dtype::bf16, B, S, H, 128); };
  std::vector<float> lse(S, 0.f);
  auto dlse = upload(s, lse);
  A::options opt;
  opt.lse = dlse.data();
  const std::size_t bytes = strata::attention_backward_workspace_size<sm90a>(t(0), t(1), t(2), opt);
  strata::device_buffer<unsigned char> ws(bytes);
  const auto run = [&](const A::options& o, const A::tensor& q) {
    A::run_sm90_backward<bf16, 128>(s, q, t(1), t(2), t(3), t(4), t(5), t(6), t(7), o, {ws.data(), bytes});
  };
  // The short form refuses the extras, naming the form that takes them.
  const auto short_form = [&](const A::options& o) {
    (void)A::sm90_backward_kernel<bf16, 128>::make_params(t(0), t(1), t(2), t(3), t(4), t(5), t(6), t(7), o, {ws.data(), bytes});
  };
  A::options cap = opt;
  cap.softcap = 30.f;
  CHECK_THROWS_WITH(short_form(cap), Contains("options.softcap") && Contains("sm90_backward_kernel<Elem, D, true>"));
  A::options drop = opt;
  drop.dropout_p = 0.1f;
  CHECK_THROWS_WITH(short_form(drop), Contains("options.dropout_p"));
  A::tensor odd = t(0);
  odd.data = p + 1;  // not 16-byte aligned
  CHECK_THROWS_WITH(run(opt, odd), Contains("q"));
  const auto run64 = [&] { A::run_sm90_backward<bf16, 64>(s, t(0), t(1), t(2), t(3), t(4), t(5), t(6), t(7), opt, {ws.data(), bytes}); };
  CHECK_THROWS_WITH(run64(), Contains("head dims"));
}
