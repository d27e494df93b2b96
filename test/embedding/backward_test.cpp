// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Backward embedding bags on the emulator against the double-precision reference: dense and sparse
// gradients and the fused optimizers (SGD, Adagrad, row-wise Adagrad) over fp32 / fp16 / bf16 rows,
// duplicate indices (one row met thousands of times), sum / mean / none pooling, per-sample
// weights, padding rows, tables of odd dims; fp32 / fp16 / bf16 gradients (strata::dtype; the
// deprecated embedding::scalar spelling; other dtypes refused); guard zones around gradients, tables
// and state; and the same bits under every worker count and fiber order (no floating-point atomics).
#include <catch2/catch.hpp>

#include "support.hpp"

using namespace emb_test;
namespace arch = strata::arch;

namespace {

/// grad_output for problem p in fp32, fp16 or bf16, random.
struct grad_input {
  std::vector<unsigned char> host;
  guarded dev;
};
grad_input make_grad(strata::stream& s, const problem& p, dtype fmt, std::uint64_t seed) {
  const auto pl = E::detail::make_plan("t", p.host_lookup(), 4, 1, 32, 256);
  const long long n = p.mode == pooling::none ? static_cast<long long>(p.indices.size()) * pl.max_dim : pl.output_elements;
  const auto v = strata_test::random_vector<float>(static_cast<std::size_t>(n), seed, -1.f, 1.f);
  grad_input g;
  g.host.resize(static_cast<std::size_t>(n) * element_size(fmt));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (fmt == dtype::fp32) std::memcpy(g.host.data() + 4 * i, &v[i], 4);
    else {
      const auto b = fmt == dtype::fp16 ? strata::f16(v[i]).bits() : strata::bf16(v[i]).bits();
      std::memcpy(g.host.data() + 2 * i, &b, 2);
    }
  }
  g.dev = guarded(s, g.host.size());
  if (!g.host.empty()) g.dev.upload(s, g.host.data(), g.host.size());
  return g;
}

E::backward_args backward_of(const problem& p, bool device, const grad_input& g, dtype fmt) {
  E::backward_args a;
  a.in = device ? p.device_lookup() : p.host_lookup();
  a.grad_output = device ? g.dev.data() : g.host.data();
  a.grad_format = fmt;
  return a;
}

double grad_tol(const E::reference::backward_result& r, std::size_t t, std::size_t e) {
  return (static_cast<double>(r.terms[t][e]) + 4) * std::ldexp(1.0, -23) * r.mag[t][e] + 1e-30;
}

/// Dense gradients of every table, checked element by element; returns the raw bytes per table.
/// Typed >= 0: through embedding_bag_backward<scalar(Typed)>.
template <class Target = void, int Typed = -1>
std::vector<std::vector<unsigned char>> check_dense(strata::stream& s, problem& p, dtype gfmt, std::uint64_t seed) {
  const grad_input g = make_grad(s, p, gfmt, seed);
  std::vector<guarded> grads;
  std::vector<float*> ptrs;
  for (auto& t : p.host_tables) grads.emplace_back(s, static_cast<std::size_t>(t.num_rows * t.dim) * 4, 0, 0xFF);
  for (auto& b : grads) ptrs.push_back(static_cast<float*>(b.data()));
  E::backward_args a = backward_of(p, true, g, gfmt);
  a.kind = E::gradient::dense;
  a.dense_grads = ptrs;
  strata::device_buffer<unsigned char> ws(strata::embedding_bag_backward_workspace_size(a));
  if constexpr (Typed >= 0) strata::embedding_bag_backward<scalar(Typed), Target>(s, a, {ws.data(), ws.size()});
  else strata::embedding_bag_backward<Target>(s, a, {ws.data(), ws.size()});
  const auto ref = E::reference::embedding_bag_backward(backward_of(p, false, g, gfmt));
  std::vector<std::vector<unsigned char>> raw;
  long long bad = 0;
  for (std::size_t t = 0; t < grads.size(); ++t) {
    REQUIRE(grads[t].guards_intact(s));
    raw.push_back(grads[t].download(s));
    for (std::size_t e = 0; e < ref.grad[t].size(); ++e) {
      float x;
      std::memcpy(&x, raw.back().data() + 4 * e, 4);
      if (!(std::fabs(x - ref.grad[t][e]) <= grad_tol(ref, t, e))) {
        if (bad++ < 5) UNSCOPED_INFO("table " << t << " element " << e << ": got " << x << ", reference " << ref.grad[t][e]);
      }
    }
  }
  REQUIRE(bad == 0);
  REQUIRE(p.inputs_intact(s));
  REQUIRE(g.dev.guards_intact(s));
  return raw;
}

}  // namespace

TEST_CASE("backward: dense gradients, every pooling with a backward, duplicates, padding, weights", "[embedding][backward]") {
  strata::stream s;
  for (pooling mode : {pooling::sum, pooling::mean, pooling::none}) {
    INFO("pooling " << E::to_string(mode));
    problem p = make_problem(scalar::fp32, {1, 3, 17, 130}, 6, 9, 12, 40 + static_cast<int>(mode));
    p.mode = mode;
    if (mode != pooling::mean) p.weights = strata_test::random_vector<float>(p.indices.size(), 3, -1.f, 1.f);
    p.upload(s);
    check_dense(s, p, dtype::fp32, 1);
    check_dense(s, p, dtype::bf16, 2);
  }
  SECTION("fixed-size bags, int32 indices, one row met thousands of times") {
    problem p = make_problem(scalar::fp16, {5, 64}, 2, 40, 50, 77, /*csr=*/false, /*padding=*/false);
    p.itype = E::index_type::int32;
    for (std::size_t i = 0; i < p.indices.size(); i += 2) p.indices[i] = 11;  // half of all indices: row 11
    p.upload(s);
    check_dense(s, p, dtype::fp32, 3);
  }
}

TEST_CASE("backward: the typed entry embedding_bag_backward<Rows> runs its row format and refuses others", "[embedding][backward]") {
  strata::stream s;
  problem p = make_problem(scalar::bf16, {1, 3, 17, 130}, 6, 9, 12, 44);
  p.upload(s);
  check_dense<void, int(scalar::bf16)>(s, p, dtype::fp32, 5);
  try {
    check_dense<void, int(scalar::fp16)>(s, p, dtype::fp32, 6);
    FAIL("a bf16 lookup was accepted by embedding_bag_backward<fp16>");
  } catch (const strata::invalid_argument& e) {
    CHECK_THAT(std::string(e.what()), Catch::Matchers::Contains(
                                          "argument 'in.row_format' is bf16, but this call is strata::embedding_bag_backward<fp16>"));
  }
}

TEST_CASE("backward: sparse gradients list each (table, row) once, ascending", "[embedding][backward]") {
  strata::stream s;
  problem p = make_problem(scalar::bf16, {3, 17, 40}, 5, 7, 10, 90);
  p.mode = pooling::mean;
  p.upload(s);
  const grad_input g = make_grad(s, p, dtype::fp32, 5);
  const long long n = static_cast<long long>(p.indices.size());
  const int stride = 41;
  guarded tables(s, static_cast<std::size_t>(n) * 4, 0, 0xFF), rows(s, static_cast<std::size_t>(n) * 8, 0, 0xFF),
      grads(s, static_cast<std::size_t>(n * stride) * 4, 0, 0xFF), count(s, 8, 0, 0xFF);
  E::backward_args a = backward_of(p, true, g, dtype::fp32);
  a.kind = E::gradient::sparse;
  a.sparse_tables = static_cast<int*>(tables.data());
  a.sparse_rows = static_cast<long long*>(rows.data());
  a.sparse_grads = static_cast<float*>(grads.data());
  a.sparse_grad_stride = stride;
  a.sparse_count = static_cast<long long*>(count.data());
  strata::device_buffer<unsigned char> ws(strata::embedding_bag_backward_workspace_size(a));
  strata::embedding_bag_backward(s, a, {ws.data(), ws.size()});
  const auto ref = E::reference::embedding_bag_backward(backward_of(p, false, g, dtype::fp32));
  // Expected unique rows: those with any occurrence, in (table, row) order.
  std::vector<std::pair<int, long long>> want;
  for (std::size_t t = 0; t < p.host_tables.size(); ++t)
    for (long long r = 0; r < p.host_tables[t].num_rows; ++r)
      if (ref.terms[t][static_cast<std::size_t>(r * p.host_tables[t].dim)] > 0) want.emplace_back(static_cast<int>(t), r);
  long long got_count;
  std::memcpy(&got_count, count.download(s).data(), 8);
  REQUIRE(got_count == static_cast<long long>(want.size()));
  const auto ht = tables.download(s), hr = rows.download(s), hg = grads.download(s);
  for (std::size_t u = 0; u < want.size(); ++u) {
    int t;
    long long r;
    std::memcpy(&t, ht.data() + 4 * u, 4);
    std::memcpy(&r, hr.data() + 8 * u, 8);
    REQUIRE(t == want[u].first);
    REQUIRE(r == want[u].second);
    const int dim = p.host_tables[t].dim;
    for (int c = 0; c < dim; ++c) {
      float x;
      std::memcpy(&x, hg.data() + 4 * (u * stride + c), 4);
      const auto e = static_cast<std::size_t>(r * dim + c);
      REQUIRE(std::fabs(x - ref.grad[t][e]) <= grad_tol(ref, t, e));
    }
  }
  for (auto* b : {&tables, &rows, &grads, &count}) REQUIRE(b->guards_intact(s));
}

namespace {

double stored(scalar fmt, const unsigned char* row, int c) { return E::reference::element(fmt, row, 0, c); }

void check_fused(strata::stream& s, scalar fmt, E::optimizer opt) {
  INFO("rows " << E::to_string(fmt) << ", optimizer " << static_cast<int>(opt));
  problem p = make_problem(fmt, {3, 17, 130}, 4, 6, 8, 300 + static_cast<int>(fmt) * 3 + static_cast<int>(opt));
  p.mode = pooling::sum;
  p.upload(s);
  const grad_input g = make_grad(s, p, dtype::fp32, 9);
  // Optimizer state: positive, per element (adagrad) or per row (row-wise).
  std::vector<std::vector<float>> state;
  std::vector<guarded> dstate;
  std::vector<float*> sp;
  for (auto& t : p.host_tables) {
    const long long n = opt == E::optimizer::adagrad ? t.num_rows * t.dim : t.num_rows;
    state.push_back(strata_test::random_vector<float>(static_cast<std::size_t>(n), n, 0.1f, 1.f));
    dstate.emplace_back(s, static_cast<std::size_t>(n) * 4);
    dstate.back().upload(s, state.back().data(), state.back().size() * 4);
  }
  for (auto& d : dstate) sp.push_back(static_cast<float*>(d.data()));
  E::backward_args a = backward_of(p, true, g, dtype::fp32);
  a.kind = E::gradient::fused;
  a.opt = opt;
  a.learning_rate = 0.05f;
  a.eps = 1e-6f;
  if (opt != E::optimizer::sgd) a.optimizer_state = sp;
  strata::device_buffer<unsigned char> ws(strata::embedding_bag_backward_workspace_size(a));
  strata::embedding_bag_backward(s, a, {ws.data(), ws.size()});
  // Reference: rows and state in double from the original host copies.
  E::backward_args ha = backward_of(p, false, g, dtype::fp32);
  ha.opt = opt;
  ha.learning_rate = a.learning_rate;
  ha.eps = a.eps;
  const auto ref = E::reference::embedding_bag_backward(ha);
  std::vector<std::vector<double>> rows, st;
  for (std::size_t t = 0; t < p.host_tables.size(); ++t) {
    const auto& tb = p.host_tables[t];
    rows.emplace_back();
    for (long long r = 0; r < tb.num_rows; ++r)
      for (int c = 0; c < tb.dim; ++c) rows.back().push_back(stored(fmt, p.rows[t].data() + r * E::packed_row_bytes(fmt, tb.dim), c));
    st.emplace_back(state[t].begin(), state[t].end());
  }
  E::reference::apply_optimizer(ha, ref, rows, st);
  const double fmt_eps = fmt == scalar::fp32 ? std::ldexp(1.0, -23) : fmt == scalar::fp16 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -7);
  long long bad = 0;
  for (std::size_t t = 0; t < p.host_tables.size(); ++t) {
    const auto& tb = p.host_tables[t];
    REQUIRE(p.dev_rows[t].guards_intact(s));
    REQUIRE(dstate[t].guards_intact(s));
    const auto got = p.dev_rows[t].download(s);
    for (long long r = 0; r < tb.num_rows; ++r) {
      const long long rb = r * E::packed_row_bytes(fmt, tb.dim);
      for (int c = 0; c < tb.dim; ++c) {
        const auto e = static_cast<std::size_t>(r * tb.dim + c);
        const double x = stored(fmt, got.data() + rb, c);
        if (ref.terms[t][e] == 0) {  // untouched rows keep their bits
          if (std::memcmp(got.data() + rb, p.rows[t].data() + rb, static_cast<std::size_t>(E::packed_row_bytes(fmt, tb.dim))) != 0) ++bad;
          continue;
        }
        // The kernel's fp32 gradient error, scaled by the step, plus one rounding of the result.
        const double dg = grad_tol(ref, t, e);
        const double h = opt == E::optimizer::sgd ? 1.0 : opt == E::optimizer::adagrad ? st[t][e] : st[t][static_cast<std::size_t>(r)];
        const double step = opt == E::optimizer::sgd ? a.learning_rate : a.learning_rate / (std::sqrt(h) + a.eps);
        const double tol = 2 * step * dg + fmt_eps * (std::fabs(rows[t][e]) + 1e-3) * 1.01 + 1e-5 * std::fabs(rows[t][e] - stored(fmt, p.rows[t].data() + rb, c));
        if (!(std::fabs(x - rows[t][e]) <= tol)) {
          if (bad < 5) UNSCOPED_INFO("table " << t << " row " << r << " col " << c << ": got " << x << ", reference " << rows[t][e] << ", tolerance " << tol);
          ++bad;
        }
      }
    }
  }
  REQUIRE(bad == 0);
}

}  // namespace

TEST_CASE("backward: fused SGD, Adagrad and row-wise Adagrad over fp32, fp16 and bf16 rows", "[embedding][backward][optimizer]") {
  strata::stream s;
  for (scalar fmt : {scalar::fp32, scalar::fp16, scalar::bf16})
    for (E::optimizer opt : {E::optimizer::sgd, E::optimizer::adagrad, E::optimizer::rowwise_adagrad}) check_fused(s, fmt, opt);
}

TEST_CASE("backward: same bits under every worker count, fiber order and warp size", "[embedding][backward][determinism]") {
  strata::stream s;
  problem p = make_problem(scalar::fp32, {7, 33}, 4, 40, 30, 555);
  for (std::size_t i = 0; i < p.indices.size(); i += 3) p.indices[i] = 5;  // heavy duplicates
  p.upload(s);
  std::vector<std::vector<unsigned char>> first;
  for (const auto& opt : strata_test::schedules()) {
    s.set_emulator_options(opt);
    auto a = check_dense<void>(s, p, dtype::fp32, 8);
    auto b = check_dense<arch::gfx942>(s, p, dtype::fp32, 8);
    if (first.empty()) first = a;
    REQUIRE(a == first);
    REQUIRE(b == first);  // the sum order is the sorted position order, whatever the warp size
  }
}

TEST_CASE("backward: grad_format is a strata::dtype; the scalar spelling still compiles; other dtypes are refused",
          "[embedding][backward][dtype]") {
  strata::stream s;
  for (pooling mode : {pooling::sum, pooling::none}) {
    INFO("pooling " << E::to_string(mode));
    problem p = make_problem(scalar::fp16, {3, 17, 64}, 5, 7, 9, 60 + static_cast<int>(mode));
    p.mode = mode;
    p.upload(s);
    for (dtype grad : {dtype::bf16, dtype::fp16}) {
      INFO("gradient " << strata::to_string(grad));
      const auto now = check_dense(s, p, grad, 11);
      // Until the next release, code that assigns an embedding::scalar still compiles (with a warning
      // naming the dtype to write) and gives the same gradients.
      E::backward_args old;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
      old.grad_format = grad == dtype::bf16 ? scalar::bf16 : scalar::fp16;
#pragma GCC diagnostic pop
      REQUIRE(old.grad_format == grad);
      CHECK(check_dense(s, p, old.grad_format, 11) == now);
    }
  }
  // Any other dtype (or row format spelled as a gradient format) is refused, naming the entry, the
  // argument and what it takes; nothing is launched.
  problem p = make_problem(scalar::fp32, {8}, 1, 4, 3, 62);
  p.upload(s);
  const grad_input g = make_grad(s, p, dtype::fp32, 12);
  strata::device_buffer<unsigned char> ws(1 << 16);
  for (const auto& [type, name] : refused_element_types()) {
    E::backward_args a = backward_of(p, true, g, dtype::fp32);
    a.grad_format = type;
    require_refused([&] { strata::embedding_bag_backward(s, a, {ws.data(), ws.size()}); },
                    "strata::embedding_bag_backward", "grad_format",
                    std::string("strata::embedding_bag_backward: argument 'grad_format' has dtype ") + name +
                        "; embedding gradients are fp32, fp16 or bf16");
  }
  REQUIRE(g.dev.guards_intact(s));
}
