// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bounds behaviour of the embedding operators: planted bad indices (negative, equal to the row count,
// huge) and malformed offsets (decreasing, negative, past the end) under each policy. bounds::error
// throws strata::embedding::bounds_error naming feature, table, bag, position and value of the FIRST
// bad entry; clamp and skip follow their documented semantics (checked against the reference) and
// count the bad input in the status record. Under every policy the guard zones around tables,
// indices, offsets, weights and outputs stay untouched. Also: argument validation names the
// argument, and the asynchronous entry reports through read_status / embedding_check.
#include <catch2/catch.hpp>

#include "support.hpp"

using namespace emb_test;

namespace {

struct outcome {
  std::vector<double> out;
  std::vector<unsigned char> raw;
  E::status st;
};

outcome run(strata::stream& s, problem& p, bool async = false) {
  E::forward_args a;
  a.in = p.device_lookup();
  const auto pl = E::detail::make_plan("t", p.host_lookup(), 4, 1, 32, 256);
  const std::size_t n = static_cast<std::size_t>(p.mode == pooling::none ? static_cast<long long>(p.indices.size()) * pl.max_dim
                                                                          : pl.output_elements);
  guarded out(s, n * 4, 0, 0xFF);
  a.output = out.data();
  strata::device_buffer<unsigned char> ws(strata::embedding_bag_workspace_size(a));
  outcome o;
  if (async) strata::embedding_bag_async(s, a, {ws.data(), ws.size()});
  else strata::embedding_bag(s, a, {ws.data(), ws.size()});
  o.st = E::read_status(s, {ws.data(), ws.size()});
  REQUIRE(out.guards_intact(s));
  REQUIRE(p.inputs_intact(s));
  o.raw = out.download(s);
  o.out = read_output(s, out, dtype::fp32, n);
  return o;
}

void compare(problem& p, const outcome& o) {
  E::forward_args ra;
  ra.in = p.host_lookup();
  const auto ref = E::reference::embedding_bag(ra);
  REQUIRE(o.st.bad_positions == ref.st.bad_positions);
  REQUIRE(o.st.bad_bags == ref.st.bad_bags);
  REQUIRE(o.st.first_bad_position == ref.st.first_bad_position);
  REQUIRE(o.st.first_bad_bag == ref.st.first_bad_bag);
  for (std::size_t i = 0; i < ref.out.size(); ++i) {
    if (std::isnan(ref.out[i])) {
      REQUIRE(is_poison(o.raw, dtype::fp32, i));
      continue;
    }
    INFO("element " << i);
    REQUIRE(std::fabs(o.out[i] - ref.out[i]) <= tolerance(ref.out[i], ref.mag[i], ref.terms[i], dtype::fp32));
  }
}

/// Plants bad indices: negative, == num_rows, huge. Returns the first bad position.
long long plant_indices(problem& p) {
  const long long n = static_cast<long long>(p.indices.size());
  const long long a = n / 3, b = n / 2, c = n - 1;
  const long long rows0 = p.host_tables[p.features[0].table].num_rows;
  p.indices[static_cast<std::size_t>(b)] = -3;
  p.indices[static_cast<std::size_t>(a)] = 1LL << 40;  // fits int64 only; int32 problems get rows0 below
  p.indices[static_cast<std::size_t>(c)] = rows0 + 1000;
  return a;
}

}  // namespace

TEST_CASE("bounds: bad indices under error, clamp and skip", "[embedding][bounds]") {
  strata::stream s;
  for (pooling mode : {pooling::sum, pooling::mean, pooling::max, pooling::none}) {
    problem p = make_problem(scalar::fp16, {3, 17, 64}, 5, 6, 9, 21);
    p.mode = mode;
    const long long first = plant_indices(p);
    p.upload(s);
    INFO("pooling " << E::to_string(mode));
    p.policy = bounds::error;
    try {
      run(s, p);
      FAIL("no bounds_error");
    } catch (const E::bounds_error& e) {
      REQUIRE(e.kind() == E::bounds_error::kind_t::index);
      REQUIRE(e.position() == first);
      REQUIRE(e.value() == (1LL << 40));
      REQUIRE(e.argument() == "indices");
      const std::string w = e.what();
      REQUIRE(w.find("strata::embedding_bag") != std::string::npos);
      REQUIRE(w.find("position " + std::to_string(first)) != std::string::npos);
      REQUIRE(w.find("table " + std::to_string(e.table())) != std::string::npos);
      // The bag and feature it names really hold that position.
      const auto pl = E::detail::make_plan("t", p.host_lookup(), 4, 1, 32, 256);
      const long long g = pl.bag_base[static_cast<std::size_t>(e.feature())] + e.bag();
      REQUIRE(p.offsets[static_cast<std::size_t>(g)] <= first);
      REQUIRE(first < p.offsets[static_cast<std::size_t>(g) + 1]);
      REQUIRE(e.table() == p.features[static_cast<std::size_t>(e.feature())].table);
    }
    for (bounds pol : {bounds::clamp, bounds::skip}) {
      INFO("policy " << E::to_string(pol));
      p.policy = pol;
      const outcome o = run(s, p);
      REQUIRE(o.st.bad_positions == 3);
      compare(p, o);
    }
  }
}

TEST_CASE("bounds: malformed offsets (decreasing, negative, past the end)", "[embedding][bounds]") {
  strata::stream s;
  problem p = make_problem(scalar::fp32, {5, 9}, 3, 6, 5, 22, true, false);
  const long long n = static_cast<long long>(p.indices.size());
  p.offsets[4] = p.offsets[3] - 1 < 0 ? 0 : p.offsets[3] - 1;  // bag 3 ends before it starts... (decreasing)
  p.offsets[3] = p.offsets[4] + 2;                              // bag 3: begin > end
  p.offsets[9] = -5;                                            // bags 8 and 9: negative
  p.offsets[12] = n + 7;                                        // bags 11 and 12: past the end
  p.upload(s);
  p.policy = bounds::error;
  try {
    run(s, p);
    FAIL("no bounds_error");
  } catch (const E::bounds_error& e) {
    REQUIRE(e.kind() == E::bounds_error::kind_t::offsets);
    REQUIRE(e.argument() == "offsets");
    REQUIRE(e.feature() == 0);
    REQUIRE(e.bag() == 3);
    REQUIRE(std::string(e.what()).find("bag 3") != std::string::npos);
  }
  for (bounds pol : {bounds::clamp, bounds::skip}) {
    INFO("policy " << E::to_string(pol));
    p.policy = pol;
    for (pooling mode : {pooling::sum, pooling::mean, pooling::max}) {
      p.mode = mode;
      compare(p, run(s, p));
    }
  }
}

TEST_CASE("bounds: the asynchronous entry reports through the status record", "[embedding][bounds]") {
  strata::stream s;
  problem p = make_problem(scalar::int8_rowwise, {16}, 2, 4, 6, 23);
  p.itype = E::index_type::int32;
  p.indices[5] = -1;
  p.upload(s);
  const outcome o = run(s, p, /*async=*/true);
  REQUIRE_FALSE(o.st.ok());
  REQUIRE(o.st.first_bad_position == 5);
  // embedding_check throws for the same workspace.
  E::forward_args a;
  a.in = p.device_lookup();
  guarded out(s, 4 * 16 * 10, 0, 0xFF);
  a.output = out.data();
  strata::device_buffer<unsigned char> ws(strata::embedding_bag_workspace_size(a));
  strata::embedding_bag_async(s, a, {ws.data(), ws.size()});
  REQUIRE_THROWS_AS(strata::embedding_check(s, a.in, {ws.data(), ws.size()}), E::bounds_error);
  // A clean input reads ok.
  p.indices[5] = 0;
  p.upload(s);
  a.in = p.device_lookup();
  strata::embedding_bag_async(s, a, {ws.data(), ws.size()});
  REQUIRE(E::read_status(s, {ws.data(), ws.size()}).ok());
}

TEST_CASE("bounds: backward under error updates nothing and throws; skip and clamp match the reference",
          "[embedding][bounds][backward]") {
  strata::stream s;
  problem p = make_problem(scalar::fp32, {4, 6}, 3, 5, 6, 24);
  plant_indices(p);
  p.upload(s);
  const auto pl = E::detail::make_plan("t", p.host_lookup(), 4, 1, 32, 256);
  std::vector<float> g(static_cast<std::size_t>(pl.output_elements), 0.5f);
  guarded dg(s, g.size() * 4);
  dg.upload(s, g.data(), g.size() * 4);
  const auto before0 = p.dev_rows[0].download(s), before1 = p.dev_rows[1].download(s);
  for (bounds pol : {bounds::error, bounds::skip, bounds::clamp}) {
    p.policy = pol;
    E::backward_args a;
    a.in = p.device_lookup();
    a.grad_output = dg.data();
    a.kind = E::gradient::fused;
    a.opt = E::optimizer::sgd;
    strata::device_buffer<unsigned char> ws(strata::embedding_bag_backward_workspace_size(a));
    if (pol == bounds::error) {
      REQUIRE_THROWS_AS(strata::embedding_bag_backward(s, a, {ws.data(), ws.size()}), E::bounds_error);
      REQUIRE(p.dev_rows[0].download(s) == before0);  // untouched
      REQUIRE(p.dev_rows[1].download(s) == before1);
    } else {
      // Dense gradients match the reference (which follows the same policy).
      std::vector<guarded> grads;
      std::vector<float*> ptrs;
      for (auto& t : p.host_tables) grads.emplace_back(s, static_cast<std::size_t>(t.num_rows * t.dim) * 4, 0, 0xFF);
      for (auto& b : grads) ptrs.push_back(static_cast<float*>(b.data()));
      a.kind = E::gradient::dense;
      a.dense_grads = ptrs;
      strata::embedding_bag_backward(s, a, {ws.data(), ws.size()});
      E::backward_args ha = a;
      ha.in = p.host_lookup();
      ha.grad_output = g.data();
      const auto ref = E::reference::embedding_bag_backward(ha);
      REQUIRE(E::read_status(s, {ws.data(), ws.size()}).bad_positions == 3);
      for (std::size_t t = 0; t < grads.size(); ++t) {
        REQUIRE(grads[t].guards_intact(s));
        const auto raw = grads[t].download(s);
        for (std::size_t e = 0; e < ref.grad[t].size(); ++e) {
          float x;
          std::memcpy(&x, raw.data() + 4 * e, 4);
          REQUIRE(std::fabs(x - ref.grad[t][e]) <= (ref.terms[t][e] + 4) * std::ldexp(1.0, -23) * ref.mag[t][e] + 1e-30);
        }
      }
    }
    REQUIRE(p.inputs_intact(s));
  }
}

TEST_CASE("validation: errors name the operator and the argument", "[embedding][validation]") {
  strata::stream s;
  problem p = make_problem(scalar::fp32, {8}, 1, 4, 3, 25);
  p.upload(s);
  guarded out(s, 4 * 8 * 5, 0, 0xFF);
  auto expect = [&](E::forward_args a, const std::string& arg, std::size_t ws_bytes = 1 << 16) {
    strata::device_buffer<unsigned char> ws(ws_bytes);
    try {
      strata::embedding_bag(s, a, {ws.data(), ws.size()});
      FAIL("no error for " << arg);
    } catch (const strata::invalid_argument& e) {
      INFO(e.what());
      REQUIRE(e.op() == "strata::embedding_bag");
      REQUIRE(e.argument() == arg);
    }
  };
  E::forward_args a;
  a.in = p.device_lookup();
  a.output = out.data();
  { auto b = a; b.output = nullptr; expect(b, "output"); }
  { auto b = a; b.output_format = dtype::e4m3; expect(b, "output_format"); }
  { auto b = a; b.in.tables = {}; expect(b, "tables"); }
  { auto t = p.dev_tables; t[0].dim = 0; auto b = a; b.in.tables = t; expect(b, "tables[0].dim"); }
  { auto t = p.dev_tables; t[0].padding_index = 99; auto b = a; b.in.tables = t; expect(b, "tables[0].padding_index"); }
  { auto t = p.dev_tables; t[0].row_stride_bytes = 8; auto b = a; b.in.tables = t; expect(b, "tables[0].row_stride_bytes"); }
  { auto f = p.features; f[0].table = 3; auto b = a; b.in.features = f; expect(b, "features[0].table"); }
  { auto b = a; b.in.mode = pooling::mean; b.in.per_sample_weights = static_cast<const float*>(out.data()); expect(b, "per_sample_weights"); }
  { auto b = a; b.in.offsets = nullptr; b.in.bag_size = 2; expect(b, "num_indices"); }
  { auto b = a; expect(b, "workspace", 16); }
  REQUIRE(out.guards_intact(s));
}
