// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Attention backward on the emulator: dQ, dK, dV (and dsinks) against the double-precision reference
// gradient (reference::backward), against central finite differences of the forward on tiny sizes,
// bitwise identical across the emulator's worker counts and schedules (the scalar kernel always, the
// tensor-core kernel with options.deterministic),
// and the entry's validation. Tolerances: grad_support.hpp.
#include "../unit/support.hpp"
#include "grad_support.hpp"
#include "mods_support.hpp"

using namespace attn_test;
using host = strata::arch::host;
using sm80 = strata::arch::sm80;

namespace {
A::options causal(A::alignment a) {
  A::options o;
  o.causal = true;
  o.align = a;
  return o;
}
}  // namespace

TEST_CASE("attention backward: fp32, MHA / GQA / MQA, odd lengths, BHSD", "[attention][backward]") {
  check_grad<float, 32, 32, host>({.batch = 2, .heads = 4, .heads_k = 2, .sq = 19, .sk = 37});
  check_grad<float, 64, 64, host>({.batch = 1, .heads = 3, .heads_k = 1, .sq = 1, .sk = 40, .bhsd = true});
  check_grad<float, 64, 64, host>({.batch = 1, .heads = 2, .heads_k = 2, .sq = 33, .sk = 1});
  check_grad<float, 192, 128, host>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 9, .sk = 21});
}

TEST_CASE("attention backward: masks, ALiBi, soft-cap, sinks", "[attention][backward]") {
  check_grad<float, 32, 32, host>({.heads = 2, .heads_k = 1, .sq = 30, .sk = 21, .opt = causal(A::alignment::top_left)});
  check_grad<float, 32, 32, host>({.heads = 2, .heads_k = 1, .sq = 30, .sk = 21, .opt = causal(A::alignment::bottom_right)});
  check_grad<float, 32, 32, host>({.heads = 2, .heads_k = 1, .sq = 17, .sk = 45, .opt = causal(A::alignment::bottom_right)});
  A::options w;
  w.window_left = 5, w.window_right = 2;
  check_grad<float, 64, 64, host>({.batch = 2, .heads = 2, .heads_k = 1, .sq = 26, .sk = 31, .opt = w});
  A::options sc;
  sc.softcap = 1.5f, sc.scale = 1.3f;
  check_grad<float, 32, 32, host>({.heads = 2, .heads_k = 2, .sq = 20, .sk = 24, .opt = sc});
  check_grad<float, 32, 32, host>({.heads = 3, .heads_k = 1, .sq = 21, .sk = 18, .opt = causal(A::alignment::bottom_right),
                                   .alibi = {0.5f, 0.25f, 0.125f}});
  check_grad<float, 32, 32, host>({.heads = 2, .heads_k = 1, .sq = 15, .sk = 22, .sinks = {0.5f, -1.0f}});
  A::options all = causal(A::alignment::bottom_right);
  all.window_left = 7, all.softcap = 4.0f;
  check_grad<float, 64, 64, host>({.batch = 2, .heads = 4, .heads_k = 2, .sq = 23, .sk = 29, .bhsd = true, .opt = all,
                                   .alibi = {0.3f, 0.2f, 0.1f, 0.05f}, .sinks = {1.f, 0.f, -1.f, 2.f}});
}

TEST_CASE("attention backward: variable lengths, padded batches, fully masked rows", "[attention][backward]") {
  check_grad<float, 32, 32, host>({.batch = 3, .heads = 2, .heads_k = 1, .sq = 22, .sk = 27, .varlen = true,
                                   .opt = causal(A::alignment::bottom_right)});
  check_grad<float, 32, 32, host>({.batch = 3, .heads = 2, .heads_k = 1, .sq = 20, .sk = 26, .padded = true});
  // Bottom-right causal with sq > sk: the first rows see no key; their gradients are 0.
  check_grad<float, 32, 32, host>({.heads = 2, .heads_k = 2, .sq = 12, .sk = 4, .opt = causal(A::alignment::bottom_right)});
}

TEST_CASE("attention backward: fp16 and bf16, and the sm80 forward", "[attention][backward]") {
  check_grad<f16, 64, 64, host>({.batch = 2, .heads = 4, .heads_k = 2, .sq = 21, .sk = 30, .opt = causal(A::alignment::top_left)});
  check_grad<bf16, 128, 128, host>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 17, .sk = 25});
  check_grad<f16, 64, 64, sm80>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 40, .sk = 35, .opt = causal(A::alignment::bottom_right)});
}

// The tensor-core dK/dV kernel (backward_mma.hpp: f16 / bf16 on the mma.sync atoms; up to head dim
// 128): 64-key blocks, 64-row query steps, so lengths that are not multiples of 64 and more than one
// tile of each; every mask and modifier; GQA summed over the group.
static_assert(A::detail::backward_on_tensor_cores<sm80, f16, 64, 64>() && A::detail::backward_on_tensor_cores<sm80, bf16, 128, 128>());
static_assert(!A::detail::backward_on_tensor_cores<sm80, float, 64, 64>() && !A::detail::backward_on_tensor_cores<host, f16, 64, 64>());

TEST_CASE("attention backward on tensor cores: head dims, GQA, partial tiles", "[attention][backward][mma]") {
  check_grad<f16, 32, 32, sm80>({.batch = 2, .heads = 4, .heads_k = 2, .sq = 70, .sk = 131});
  check_grad<bf16, 64, 64, sm80>({.batch = 1, .heads = 3, .heads_k = 1, .sq = 129, .sk = 65, .bhsd = true});
  check_grad<f16, 96, 96, sm80>({.batch = 1, .heads = 2, .heads_k = 2, .sq = 1, .sk = 100});
  check_grad<bf16, 128, 128, sm80>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 77, .sk = 1});
  check_grad<f16, 128, 128, sm80>({.batch = 1, .heads = 2, .heads_k = 2, .sq = 64, .sk = 128});
}

// Above head dim 128 the kernel takes 32-key blocks of two key groups, each warp a quarter of the
// head dims (and of S^T's queries), and dQ_t in two passes per half; head dim 256 only where its 179
// KiB of shared memory fit (sm90a, sm100a: not an A100).
static_assert(A::detail::backward_on_tensor_cores<sm80, f16, 192, 192>() && A::detail::backward_on_tensor_cores<sm80, bf16, 192, 128>());
static_assert(A::detail::backward_on_tensor_cores<strata::arch::sm90a, bf16, 256, 256>() &&
              !A::detail::backward_on_tensor_cores<sm80, bf16, 256, 256>());
static_assert(A::detail::backward_key_tile<sm80, f16, 192, 192>() == 32 && A::detail::backward_key_tile<sm80, f16, 128, 128>() == 64);

TEST_CASE("attention backward on tensor cores: head dims 192 and 256", "[attention][backward][mma]") {
  using sm90a = strata::arch::sm90a;
  check_grad<bf16, 256, 256, sm90a>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 70, .sk = 75});
  check_grad<f16, 256, 256, sm90a>({.batch = 2, .heads = 2, .heads_k = 2, .sq = 33, .sk = 97, .bhsd = true,
                                    .opt = causal(A::alignment::bottom_right)});
  check_grad<f16, 192, 192, sm80>({.batch = 1, .heads = 3, .heads_k = 1, .sq = 130, .sk = 40, .opt = causal(A::alignment::top_left)});
  check_grad<bf16, 192, 128, sm80>({.batch = 2, .heads = 2, .heads_k = 1, .sq = 65, .sk = 66, .varlen = true});
  A::options all = causal(A::alignment::bottom_right);
  all.window_left = 40, all.softcap = 4.0f, all.deterministic = true;
  check_grad<bf16, 256, 256, sm90a>({.batch = 1, .heads = 4, .heads_k = 2, .sq = 90, .sk = 100, .opt = all,
                                     .alibi = {0.3f, 0.2f, 0.1f, 0.05f}, .sinks = {1.f, 0.f, -1.f, 2.f}});
}

TEST_CASE("attention backward on tensor cores: masks, ALiBi, soft-cap, sinks, varlen", "[attention][backward][mma]") {
  check_grad<f16, 64, 64, sm80>({.heads = 2, .heads_k = 1, .sq = 150, .sk = 90, .opt = causal(A::alignment::top_left)});
  check_grad<bf16, 64, 64, sm80>({.heads = 2, .heads_k = 1, .sq = 90, .sk = 150, .opt = causal(A::alignment::bottom_right)});
  check_grad<f16, 32, 32, sm80>({.heads = 2, .heads_k = 2, .sq = 140, .sk = 70, .opt = causal(A::alignment::bottom_right)});
  A::options w;
  w.window_left = 20, w.window_right = 3;
  check_grad<f16, 64, 64, sm80>({.batch = 2, .heads = 2, .heads_k = 1, .sq = 200, .sk = 190, .opt = w});
  A::options all = causal(A::alignment::bottom_right);
  all.window_left = 70, all.softcap = 4.0f, all.scale = 0.2f;
  check_grad<bf16, 128, 128, sm80>({.batch = 2, .heads = 4, .heads_k = 2, .sq = 80, .sk = 100, .opt = all,
                                    .alibi = {0.3f, 0.2f, 0.1f, 0.05f}, .sinks = {1.f, 0.f, -1.f, 2.f}});
  check_grad<f16, 64, 64, sm80>({.batch = 3, .heads = 2, .heads_k = 1, .sq = 100, .sk = 90, .varlen = true,
                                 .opt = causal(A::alignment::bottom_right)});
  check_grad<bf16, 32, 32, sm80>({.batch = 3, .heads = 2, .heads_k = 1, .sq = 70, .sk = 80, .padded = true});
}

TEST_CASE("attention backward on tensor cores: deterministic dQ, and its workspace", "[attention][backward][mma]") {
  // The ordered additions give the reference's gradient too, with windows that start key tiles late.
  A::options w;
  w.deterministic = true;
  w.window_left = 70, w.window_right = 10;
  check_grad<f16, 64, 64, sm80>({.batch = 2, .heads = 4, .heads_k = 2, .sq = 200, .sk = 260, .opt = w});
  A::options cd = causal(A::alignment::top_left);
  cd.deterministic = true;
  check_grad<bf16, 128, 128, sm80>({.heads = 2, .heads_k = 1, .sq = 130, .sk = 190, .varlen = true, .opt = cd});
  // Issue 34's bound: B 4, H 16, S 4096, D 128 in at most 0.5 GB with options.deterministic (the
  // accumulator is 134 MB); the scalar kernel's slots per 32-key tile would be 17.2 GB.
  const A::tensor q = A::bshd(nullptr, strata::dtype::bf16, 4, 4096, 16, 128);
  A::options det;
  det.deterministic = true;
  const std::size_t bytes = strata::attention_backward_workspace_size<strata::arch::sm90a>(q, q, q, det);
  CHECK(bytes <= std::size_t(512) << 20);
  CHECK(bytes >= std::size_t(4) * 16 * 4096 * 128 * 4);
  CHECK(strata::attention_backward_workspace_size<strata::arch::sm90a>(q, q, q, A::options{}) < bytes);
}

TEST_CASE("attention backward: bitwise identical across emulator schedules", "[attention][backward]") {
  A::options all = causal(A::alignment::bottom_right);
  all.window_left = 9, all.softcap = 3.0f;
  all.deterministic = true;  // the tensor-core kernel's dQ: ordered, not atomic
  const spec c{.batch = 2, .heads = 4, .heads_k = 1, .sq = 37, .sk = 50, .opt = all, .sinks = {0.1f, 0.2f, 0.3f, 0.4f}};
  const auto in = make_inputs<f16, 64, 64>(c);
  std::vector<grad_run<f16>> runs;
  for (const auto& eo : strata_test::schedules()) runs.push_back(run_grad<f16, 64, 64, host>(c, in, eo));
  for (std::size_t i = 1; i < runs.size(); ++i) {
    CHECK(std::memcmp(runs[i].dq.data(), runs[0].dq.data(), runs[0].dq.size() * sizeof(f16)) == 0);
    CHECK(std::memcmp(runs[i].dk.data(), runs[0].dk.data(), runs[0].dk.size() * sizeof(f16)) == 0);
    CHECK(std::memcmp(runs[i].dv.data(), runs[0].dv.data(), runs[0].dv.size() * sizeof(f16)) == 0);
    CHECK(std::memcmp(runs[i].dsinks.data(), runs[0].dsinks.data(), runs[0].dsinks.size() * 4) == 0);
  }
  // The tensor-core kernel's ordered dQ: several key tiles per query tile, the window's first one
  // not key tile 0 (first_tile), GQA.
  const spec m{.batch = 2, .heads = 4, .heads_k = 2, .sq = 150, .sk = 230, .opt = all};
  const auto mi = make_inputs<bf16, 64, 64>(m);
  std::vector<grad_run<bf16>> mruns;
  for (const auto& eo : strata_test::schedules()) mruns.push_back(run_grad<bf16, 64, 64, sm80>(m, mi, eo));
  for (std::size_t i = 1; i < mruns.size(); ++i) {
    CHECK(std::memcmp(mruns[i].dq.data(), mruns[0].dq.data(), mruns[0].dq.size() * sizeof(bf16)) == 0);
    CHECK(std::memcmp(mruns[i].dk.data(), mruns[0].dk.data(), mruns[0].dk.size() * sizeof(bf16)) == 0);
    CHECK(std::memcmp(mruns[i].dv.data(), mruns[0].dv.data(), mruns[0].dv.size() * sizeof(bf16)) == 0);
  }
}

namespace {
// L = sum(dout o O) of the kernel's fp32 forward (with a score modifier).
template <class SM = A::no_score_mod>
double loss(const spec& c, const grad_inputs<float>& in, const SM& sm = {}) {
  const auto r = run_grad<float, 32, 32, host>(c, in, strata::emulator::options::from_environment(), false, sm);
  double l = 0;
  for (std::size_t i = 0; i < r.o.size(); ++i) l += static_cast<double>(r.o[i]) * in.dout.exact[i];
  return l;
}

// Checks `count` random elements of `grad` (dL/dt) against central differences of `loss_of()`, eps 1e-2
// on inputs in [-1, 1]: truncation ~eps^2, fp32 rounding ~1e-7 / eps.
template <class Loss>
int probe(host_tensor<float>& t, const std::vector<float>& grad, const char* name, int count, std::mt19937_64& pick,
          const Loss& loss_of) {
  const double eps = 1e-2;
  for (int n = 0; n < count; ++n) {
    const std::size_t at = pick() % t.data.size();
    const float keep = t.data[at];
    t.data[at] = keep + static_cast<float>(eps), t.exact[at] = t.data[at];
    const double lp = loss_of();
    t.data[at] = keep - static_cast<float>(eps), t.exact[at] = t.data[at];
    const double lm = loss_of();
    t.data[at] = keep, t.exact[at] = keep;
    const double fd = (lp - lm) / (2 * eps);
    INFO(name << "[" << at << "]: backward " << grad[at] << ", finite difference " << fd);
    CHECK(std::fabs(grad[at] - fd) <= 2e-3 + 2e-3 * std::fabs(fd));
  }
  return count;
}
}  // namespace

TEST_CASE("attention backward: central finite differences of the forward", "[attention][backward]") {
  // Tiny fp32 problem with every differentiable feature: causal bottom-right, ALiBi, soft-cap, sinks,
  // GQA. eps = 1e-2 on inputs in [-1, 1]: truncation ~eps^2, fp32 rounding ~1e-7 / eps.
  A::options o = causal(A::alignment::bottom_right);
  o.softcap = 2.0f;
  spec c{.batch = 1, .heads = 2, .heads_k = 1, .sq = 5, .sk = 7, .opt = o, .alibi = {0.3f, 0.1f}, .sinks = {0.2f, -0.4f}};
  auto in = make_inputs<float, 32, 32>(c);
  const auto g = run_grad<float, 32, 32, host>(c, in, strata::emulator::options::from_environment());
  const double eps = 1e-2;
  std::mt19937_64 pick(7);
  int checked = 0;
  const auto l = [&] { return loss(c, in); };
  checked += probe(in.q, g.dq, "dq", 6, pick, l);
  checked += probe(in.k, g.dk, "dk", 6, pick, l);
  checked += probe(in.v, g.dv, "dv", 6, pick, l);
  for (int h = 0; h < 2; ++h) {
    const float keep = c.sinks[h];
    c.sinks[h] = keep + static_cast<float>(eps);
    const double lp = loss(c, in);
    c.sinks[h] = keep - static_cast<float>(eps);
    const double lm = loss(c, in);
    c.sinks[h] = keep;
    const double fd = (lp - lm) / (2 * eps);
    INFO("dsinks[" << h << "]: backward " << g.dsinks[h] << ", finite difference " << fd);
    CHECK(std::fabs(g.dsinks[h] - fd) <= 2e-3 + 2e-3 * std::fabs(fd));
  }
  CHECK(checked == 18);
}

namespace {
// One without its derivative: the backward refuses it at compile time.
struct no_grad_mod {
  STRATA_HOST_DEVICE float operator()(float s, int, int, int, int) const { return 2.f * s; }
};
static_assert(A::differentiable_score_mod<squash_bias> && A::differentiable_score_mod<A::no_score_mod>);
static_assert(!A::differentiable_score_mod<no_grad_mod>);
}  // namespace

TEST_CASE("attention backward: score_mod (with its derivative) and mask_mod", "[attention][backward]") {
  check_grad<float, 32, 32, host>({.heads = 2, .heads_k = 1, .sq = 23, .sk = 23, .opt = causal(A::alignment::top_left)},
                                  squash_bias{}, same_document{});
  check_grad<float, 64, 64, host>({.batch = 2, .heads = 2, .heads_k = 2, .sq = 19, .sk = 30, .varlen = true}, squash_bias{});
  // A document mask with sq != sk: some rows see no key at all (zero gradients, as for any fully masked row).
  check_grad<f16, 64, 64, sm80>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 12, .sk = 33}, A::no_score_mod{},
                                same_document{5});
  check_grad<bf16, 32, 32, host>({.heads = 2, .heads_k = 2, .sq = 17, .sk = 17, .opt = causal(A::alignment::bottom_right)},
                                 squash_bias{}, same_document{4});
}

TEST_CASE("attention backward: a score_mod's chain rule against finite differences", "[attention][backward]") {
  // The reference above uses the same grad(); this checks the chain rule itself on the kernel's forward.
  spec c{.batch = 1, .heads = 2, .heads_k = 1, .sq = 5, .sk = 6, .opt = causal(A::alignment::bottom_right)};
  auto in = make_inputs<float, 32, 32>(c);
  const auto g = run_grad<float, 32, 32, host>(c, in, strata::emulator::options::from_environment(), true, squash_bias{});
  std::mt19937_64 pick(11);
  const auto l = [&] { return loss(c, in, squash_bias{}); };
  probe(in.q, g.dq, "dq", 4, pick, l);
  probe(in.k, g.dk, "dk", 4, pick, l);
  probe(in.v, g.dv, "dv", 4, pick, l);
}

TEST_CASE("attention backward: validation names the argument", "[attention][backward]") {
  strata::stream s;
  strata::device_buffer<float> buf(4096);
  const auto t = strata::dtype::fp32;
  A::tensor q = A::bshd(buf.data(), t, 1, 4, 2, 32), k = A::bshd(buf.data(), t, 1, 4, 1, 32);
  A::options opt;
  auto call = [&](const A::tensor& dq, const A::options& o, strata::workspace ws) {
    A::run_backward<float, 32, 32, host>(s, q, k, k, q, q, dq, k, k, o, ws);
  };
  CHECK_THROWS_WITH(call(q, opt, {}), Catch::Contains("strata::attention_backward") && Catch::Contains("options.lse"));
  opt.lse = buf.data();
  CHECK_THROWS_WITH(call(A::bshd(buf.data(), t, 1, 4, 2, 64), opt, {}), Catch::Contains("dq"));
  CHECK_THROWS_WITH(call(q, opt, {}), Catch::Contains("workspace"));
  opt.dsinks = buf.data();
  CHECK_THROWS_WITH(call(q, opt, {buf.data(), 4096 * 4}), Catch::Contains("options.dsinks"));
}
