// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Determinism (issue "Reliability", item 6): every operator, run on the same inputs under several
// emulator option sets (1 or 2 workers; round-robin, reverse and random fiber order; dispatch-model
// and shuffled chiplet placement), must give bitwise identical outputs (memcmp).
//
// Modes: GEMM split-K reduces the partials in split order and stream-K adds partials in unit order,
// so both are deterministic by construction. The attention backward adds each key tile's dQ part
// with fp32 atomics unless options.deterministic, which orders the additions by key tile: that mode
// is checked below (the scalar kernel, fp32) and in test/attention/backward_test.cpp (the tensor-core
// kernel). The embedding backward has ONE mode, deterministic (stable radix
// sort, each unique row summed in position order by one warp): its only atomics are integer ones
// (status record, bag ownership), so there is no non-deterministic mode whose guarantees could be
// weaker. Apart from the attention backward's default dQ, none of these operators uses floating-point
// atomics.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "../embedding/support.hpp"
#include "../unit/support.hpp"
#include "strata/attention.hpp"
#include "strata/gemm.hpp"

using namespace strata_test;
using host = strata::arch::host;

namespace {

using bytes = std::vector<unsigned char>;

std::vector<strata::emulator::options> option_sets() {
  using strata::emulator::placement;
  using strata::emulator::schedule;
  return {{.workers = 1, .order = schedule::round_robin},
          {.workers = 2, .order = schedule::round_robin},
          {.workers = 2, .order = schedule::reverse},
          {.workers = 2, .order = schedule::random, .seed = 12345},
          {.workers = 1, .order = schedule::random, .seed = 99, .chiplets = placement::shuffled}};
}

/// Appends b's bytes. Float outputs start poisoned with NaN (see nan_buffer), so a NaN left here
/// means an element was never written: that fails (a comparison of unwritten poison would be vacuous).
template <class T>
void append(strata::stream& s, bytes& out, const strata::device_buffer<T>& b) {
  const auto h = to_host(s, b);
  if constexpr (std::is_same_v<T, float>)
    for (float x : h) REQUIRE(x == x);
  const auto* p = reinterpret_cast<const unsigned char*>(h.data());
  out.insert(out.end(), p, p + h.size() * sizeof(T));
}

/// Runs `f` (which returns every output's bytes) under each option set; all results must be equal.
void require_bitwise_stable(const std::string& what, const std::function<bytes(strata::stream&)>& f) {
  bytes first;
  int i = 0;
  for (const auto& o : option_sets()) {
    INFO(what << ", option set " << i << " (workers " << o.workers << ", order " << int(o.order) << ", seed " << o.seed << ")");
    strata::stream s(o);
    const bytes r = f(s);
    REQUIRE(!r.empty());
    if (i++ == 0) {
      first = r;
      continue;
    }
    REQUIRE(r.size() == first.size());
    REQUIRE(std::memcmp(r.data(), first.data(), r.size()) == 0);
  }
}

strata::device_buffer<float> nan_buffer(strata::stream& s, std::size_t n) {
  return poisoned(s, n, std::numeric_limits<float>::quiet_NaN());
}

}  // namespace

// ---- GEMM ------------------------------------------------------------------------------------------

namespace sg = strata::ops::gemm;

namespace {
template <class T>
std::vector<T> values(std::size_t n, std::uint64_t seed) {
  const auto f = random_vector<float>(n, seed, -1.f, 1.f);
  return std::vector<T>(f.begin(), f.end());
}

template <class TA, class TD>
bytes gemm_run(strata::stream& s, strata::dtype ta, strata::dtype td, int m, int n, int k, sg::options o) {
  auto da = to_device(s, values<TA>(std::size_t(m) * k, 1)), db = to_device(s, values<TA>(std::size_t(k) * n, 2));
  auto dd = to_device(s, values<TD>(std::size_t(m) * n, 3));
  auto bias = to_device(s, values<float>(n, 4));
  const sg::matrix a{da.data(), m, k, k, sg::layout::row_major, ta}, b{db.data(), k, n, k, sg::layout::col_major, ta},
      d{dd.data(), m, n, n, sg::layout::row_major, td};
  o.bias = bias.data();
  strata::device_buffer<unsigned char> work(sg::workspace_size(d, o) + 16);
  o.work = {work.data(), work.size()};
  const auto before = to_host(s, dd);
  strata::gemm(s, a, b, d, d, o);
  bytes out;
  append(s, out, dd);
  REQUIRE(std::memcmp(out.data(), before.data(), out.size()) != 0);  // D was written
  return out;
}
}  // namespace

TEST_CASE("determinism: gemm, plain / split-K / stream-K", "[determinism][gemm]") {
  using strata::dtype;
  using strata::bf16;
  require_bitwise_stable("gemm f32 one split", [](strata::stream& s) {
    return gemm_run<float, float>(s, strata::dtype::fp32, strata::dtype::fp32, 70, 45, 96, {.alpha = 0.5f, .beta = 0.25f, .split_k = 1});
  });
  require_bitwise_stable("gemm f32 split-K 4", [](strata::stream& s) {
    return gemm_run<float, float>(s, strata::dtype::fp32, strata::dtype::fp32, 33, 40, 300, {.alpha = 0.5f, .beta = 0.25f, .split_k = 4});
  });
  require_bitwise_stable("gemm f32 split-K heuristic", [](strata::stream& s) {
    return gemm_run<float, float>(s, strata::dtype::fp32, strata::dtype::fp32, 20, 20, 512, {});
  });
  require_bitwise_stable("gemm bf16 split-K 3", [](strata::stream& s) {
    return gemm_run<bf16, bf16>(s, strata::dtype::bf16, strata::dtype::bf16, 40, 36, 200, {.beta = 1.f, .split_k = 3});
  });
  for (int blocks : {3, 5}) {
    require_bitwise_stable("gemm f32 stream-K " + std::to_string(blocks) + " blocks", [&](strata::stream& s) {
      return gemm_run<float, float>(s, strata::dtype::fp32, strata::dtype::fp32, 70, 45, 300, {.alpha = 0.75f, .stream_k = true, .stream_k_blocks = blocks});
    });
  }
  require_bitwise_stable("gemm bf16 stream-K 4 blocks", [](strata::stream& s) {
    return gemm_run<bf16, bf16>(s, strata::dtype::bf16, strata::dtype::bf16, 33, 70, 100, {.beta = 0.5f, .stream_k = true, .stream_k_blocks = 4});
  });
  require_bitwise_stable("gemm int8 split-K 2", [](strata::stream& s) {
    std::vector<std::int8_t> ha = random_vector<std::int8_t>(9 * 70, 5, -128, 127), hb = random_vector<std::int8_t>(70 * 10, 6, -128, 127);
    auto da = to_device(s, ha), db = to_device(s, hb);
    auto dd = poisoned(s, 90, std::int32_t(0));
    const sg::matrix a{da.data(), 9, 70, 70, sg::layout::row_major, strata::dtype::int8}, b{db.data(), 70, 10, 10, sg::layout::row_major, strata::dtype::int8},
        d{dd.data(), 9, 10, 10, sg::layout::row_major, strata::dtype::int32};
    sg::options o{.split_k = 2};
    strata::device_buffer<unsigned char> work(sg::workspace_size(d, o));
    o.work = {work.data(), work.size()};
    strata::gemm(s, a, b, d, d, o);
    bytes out;
    append(s, out, dd);
    return out;
  });
}

// ---- attention -------------------------------------------------------------------------------------

namespace A = strata::attn;

namespace {
constexpr int B = 2, H = 4, HK = 2, SQ = 37, SK = 45, D = 32;
A::tensor T(float* p, int sl, int h) { return A::bshd(p, strata::dtype::fp32, B, sl, h, D); }
}  // namespace

TEST_CASE("determinism: attention forward", "[determinism][attention]") {
  for (bool causal : {false, true}) {
    require_bitwise_stable(causal ? "attention forward causal" : "attention forward", [&](strata::stream& s) {
      auto q = to_device(s, random_vector<float>(std::size_t(B) * SQ * H * D, 1, -1.f, 1.f));
      auto k = to_device(s, random_vector<float>(std::size_t(B) * SK * HK * D, 2, -1.f, 1.f));
      auto v = to_device(s, random_vector<float>(std::size_t(B) * SK * HK * D, 3, -1.f, 1.f));
      auto o = nan_buffer(s, std::size_t(B) * SQ * H * D);
      auto lse = nan_buffer(s, std::size_t(B) * H * SQ);
      A::options opt;
      opt.causal = causal;
      opt.lse = lse.data();
      A::run<float, D, D, host>(s, T(q.data(), SQ, H), T(k.data(), SK, HK), T(v.data(), SK, HK), T(o.data(), SQ, H), opt);
      bytes out;
      append(s, out, o);
      append(s, out, lse);
      return out;
    });
  }
}

TEST_CASE("determinism: attention decode, split-KV + combine, append", "[determinism][attention]") {
  for (int splits : {1, 3}) {
    require_bitwise_stable("attention decode splits " + std::to_string(splits), [&](strata::stream& s) {
      const int S = 80, SQd = 2, s_new = 2;
      auto q = to_device(s, random_vector<float>(std::size_t(B) * SQd * H * D, 1, -1.f, 1.f));
      auto kc = to_device(s, random_vector<float>(std::size_t(B) * S * HK * D, 2, -1.f, 1.f));
      auto vc = to_device(s, random_vector<float>(std::size_t(B) * S * HK * D, 3, -1.f, 1.f));
      auto kn = to_device(s, random_vector<float>(std::size_t(B) * s_new * HK * D, 4, -1.f, 1.f));
      auto vn = to_device(s, random_vector<float>(std::size_t(B) * s_new * HK * D, 5, -1.f, 1.f));
      auto lens = to_device(s, std::vector<int>{37, 70});
      auto o = nan_buffer(s, std::size_t(B) * SQd * H * D);
      auto lse = nan_buffer(s, std::size_t(B) * H * SQd);
      A::decode_args dec;
      dec.cache_seqlens = lens.data();
      dec.k_new = T(kn.data(), s_new, HK);
      dec.v_new = T(vn.data(), s_new, HK);
      dec.num_splits = splits;
      A::options opt;
      opt.causal = true;
      opt.lse = lse.data();
      const A::tensor tq = T(q.data(), SQd, H);
      strata::device_buffer<unsigned char> ws(std::max<std::size_t>(16, strata::attention_decode_workspace_size(tq, D, splits)));
      strata::attention_decode<host>(s, tq, T(kc.data(), S, HK), T(vc.data(), S, HK), T(o.data(), SQd, H), dec, opt, {ws.data(), ws.size()});
      bytes out;
      append(s, out, o);
      append(s, out, lse);
      append(s, out, kc);  // the appended rows
      append(s, out, vc);
      return out;
    });
  }
}

TEST_CASE("determinism: attention backward with options.deterministic (scalar kernel)", "[determinism][attention]") {
  bytes ref;
  {
    const bool det = true;
    require_bitwise_stable("attention backward, options.deterministic", [&](strata::stream& s) {
      auto q = to_device(s, random_vector<float>(std::size_t(B) * SQ * H * D, 1, -1.f, 1.f));
      auto k = to_device(s, random_vector<float>(std::size_t(B) * SK * HK * D, 2, -1.f, 1.f));
      auto v = to_device(s, random_vector<float>(std::size_t(B) * SK * HK * D, 3, -1.f, 1.f));
      auto gout = to_device(s, random_vector<float>(std::size_t(B) * SQ * H * D, 4, -1.f, 1.f));
      auto sinks = to_device(s, std::vector<float>{0.5f, -0.25f, 1.f, 0.f});
      auto o = nan_buffer(s, std::size_t(B) * SQ * H * D);
      auto lse = nan_buffer(s, std::size_t(B) * H * SQ);
      auto dq = nan_buffer(s, std::size_t(B) * SQ * H * D), dk = nan_buffer(s, std::size_t(B) * SK * HK * D),
           dv = nan_buffer(s, std::size_t(B) * SK * HK * D), dsinks = nan_buffer(s, H);
      A::options opt;
      opt.causal = true;
      opt.lse = lse.data();
      opt.sinks = sinks.data();
      const A::tensor tq = T(q.data(), SQ, H), tk = T(k.data(), SK, HK), tv = T(v.data(), SK, HK), to = T(o.data(), SQ, H);
      A::run<float, D, D, host>(s, tq, tk, tv, to, opt);
      opt.dsinks = dsinks.data();
      opt.deterministic = det;
      strata::device_buffer<unsigned char> ws(std::max<std::size_t>(16, strata::attention_backward_workspace_size<host>(tq, tk, tv, opt)));
      A::run_backward<float, D, D, host>(s, tq, tk, tv, to, T(gout.data(), SQ, H), T(dq.data(), SQ, H), T(dk.data(), SK, HK),
                                         T(dv.data(), SK, HK), opt, {ws.data(), ws.size()});
      bytes out;
      append(s, out, dq);
      append(s, out, dk);
      append(s, out, dv);
      append(s, out, dsinks);
      if (ref.empty()) ref = out;
      REQUIRE(out == ref);
      return out;
    });
  }
}

// ---- embedding -------------------------------------------------------------------------------------

namespace {
namespace E = strata::embedding;

long long output_elements(const emb_test::problem& p) {
  long long n = 0;
  for (const auto& f : p.features) n += f.batch_size * p.host_tables[f.table].dim;
  return n;
}

emb_test::problem emb_problem(E::pooling mode) {
  // Few rows, many indices: every row is hit many times, so the order of the sums matters.
  auto p = emb_test::make_problem(E::scalar::fp32, {8, 24, 40}, 5, 9, 12, 41);
  p.mode = mode;
  for (auto& t : p.host_tables) t.num_rows = std::min<long long>(t.num_rows, 40);
  for (auto& i : p.indices) i %= 40;  // inside the shrunk tables (the padding row 3 stays 3)
  if (mode == E::pooling::sum) p.weights = random_vector<float>(p.indices.size(), 7, 0.5f, 1.5f);
  return p;
}
}  // namespace

TEST_CASE("determinism: embedding_bag forward", "[determinism][embedding]") {
  for (auto mode : {E::pooling::sum, E::pooling::mean, E::pooling::max}) {
    require_bitwise_stable("embedding forward mode " + std::to_string(int(mode)), [&](strata::stream& s) {
      auto p = emb_problem(mode);
      p.upload(s);
      E::forward_args a;
      a.in = p.device_lookup();
      auto out = nan_buffer(s, std::size_t(output_elements(p)));
      a.output = out.data();
      strata::device_buffer<unsigned char> ws(strata::embedding_bag_workspace_size(a));
      strata::embedding_bag(s, a, {ws.data(), ws.size()});
      bytes r;
      append(s, r, out);
      return r;
    });
  }
}

TEST_CASE("determinism: embedding_bag backward (its one mode is deterministic)", "[determinism][embedding]") {
  for (auto kind : {E::gradient::dense, E::gradient::sparse, E::gradient::fused}) {
    for (auto mode : {E::pooling::sum, E::pooling::mean}) {
      require_bitwise_stable("embedding backward kind " + std::to_string(int(kind)) + " mode " + std::to_string(int(mode)),
                             [&](strata::stream& s) {
        auto p = emb_problem(mode);
        p.upload(s);
        E::backward_args b;
        b.in = p.device_lookup();
        auto grad = to_device(s, random_vector<float>(std::size_t(output_elements(p)), 8, -1.f, 1.f));
        b.grad_output = grad.data();
        b.kind = kind;
        std::vector<strata::device_buffer<float>> dense, state;
        std::vector<float*> dense_ptrs, state_ptrs;
        const std::size_t T = p.host_tables.size();
        long long cap = static_cast<long long>(p.indices.size());
        strata::device_buffer<int> sp_tables(std::size_t(cap) + 1);
        strata::device_buffer<long long> sp_rows(std::size_t(cap) + 1), sp_count(1);
        strata::device_buffer<float> sp_grads(std::size_t(cap) * 40 + 1);
        for (std::size_t t = 0; t < T; ++t) {
          const std::size_t n = std::size_t(p.host_tables[t].num_rows) * std::size_t(p.host_tables[t].dim);
          dense.push_back(nan_buffer(s, n));
          dense_ptrs.push_back(dense.back().data());
          state.push_back(poisoned(s, std::size_t(p.host_tables[t].num_rows), 0.f));  // Adagrad state starts at 0
          state_ptrs.push_back(state.back().data());
        }
        if (kind == E::gradient::dense) b.dense_grads = dense_ptrs;
        if (kind == E::gradient::sparse) {
          b.sparse_tables = sp_tables.data(), b.sparse_rows = sp_rows.data(), b.sparse_grads = sp_grads.data();
          b.sparse_count = sp_count.data();
        }
        if (kind == E::gradient::fused) {
          b.opt = E::optimizer::rowwise_adagrad;
          b.learning_rate = 0.1f;
          b.optimizer_state = state_ptrs;
        }
        strata::device_buffer<unsigned char> ws(strata::embedding_bag_backward_workspace_size(b));
        strata::embedding_bag_backward(s, b, {ws.data(), ws.size()});
        bytes r;
        if (kind == E::gradient::dense)
          for (auto& g : dense) append(s, r, g);
        if (kind == E::gradient::sparse) {
          const long long cnt = to_host(s, sp_count)[0];
          REQUIRE(cnt > 0);
          const auto tb = to_host(s, sp_tables);
          const auto rw = to_host(s, sp_rows);
          const auto gr = to_host(s, sp_grads);
          const auto add = [&](const void* ptr, std::size_t n) {
            r.insert(r.end(), static_cast<const unsigned char*>(ptr), static_cast<const unsigned char*>(ptr) + n);
          };
          add(&cnt, sizeof cnt);
          add(tb.data(), std::size_t(cnt) * sizeof(int));
          add(rw.data(), std::size_t(cnt) * sizeof(long long));
          add(gr.data(), std::size_t(cnt) * 40 * sizeof(float));
        }
        if (kind == E::gradient::fused) {
          for (auto& st : state) append(s, r, st);
          for (std::size_t t = 0; t < T; ++t) {
            const auto h = p.dev_rows[t].download(s);  // the updated rows, in place
            r.insert(r.end(), h.begin(), h.end());
          }
        }
        return r;
      });
    }
  }
}
