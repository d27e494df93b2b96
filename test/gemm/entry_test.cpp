// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host entry strata::gemm(stream, a, b, c, d, options): every dtype combination it takes on this
// build (fp8 included: the emulator has the units), validation errors naming the argument, split-K
// through a workspace.
#include "support.hpp"

using namespace strata_test;
using namespace strata_test::gemm;
using strata::dtype;
using sg::layout;

namespace {

/// Typed: through strata::gemm<TA, TD>, which compiles only that pair's kernels, else the runtime-typed entry.
template <class TA, class TD, bool Typed = false>
void entry_case(int m, int n, int k, layout la, layout lb, dtype ta, dtype td, float beta, int batch, int split_k,
                bool relu, std::uint64_t seed, int stream_k_blocks = 0, int runs = 1) {
  INFO(m << "x" << n << "x" << k << " " << sg::to_string(ta) << "->" << sg::to_string(td) << " split " << split_k);
  strata::stream s;
  const long long lda = ld_of(la, m, k, 1), ldb = ld_of(lb, k, n, 0), ldd = n;
  const std::size_t sa = size_of(la, m, k, 1), sb = size_of(lb, k, n, 0), sd = std::size_t(m) * n;
  const auto ha = random_values<TA>(sa * batch, seed), hb = random_values<TA>(sb * batch, seed + 1);
  const auto hc = random_values<TD>(sd * batch, seed + 2);
  const auto hbias = random_values<float>(n, seed + 3);
  auto da = to_device(s, ha), db = to_device(s, hb);
  auto dd = to_device(s, hc);
  auto dbias = to_device(s, hbias);
  const sg::matrix a{da.data(), m, k, lda, la, ta, (long long)sa}, b{db.data(), k, n, ldb, lb, ta, (long long)sb},
      d{dd.data(), m, n, ldd, layout::row_major, td, (long long)sd};
  sg::options o{.alpha = 0.75f, .beta = beta, .batch = batch, .bias = dbias.data(),
                .act = relu ? sg::activation::relu : sg::activation::none, .split_k = split_k,
                .stream_k = stream_k_blocks > 0, .stream_k_blocks = stream_k_blocks};
  // The workspace starts as garbage (0xFF bytes): the entry prepares what it needs itself.
  strata::device_buffer<std::uint8_t> work(sg::workspace_size(d, o) + 1);
  const std::vector<std::uint8_t> garbage(work.size(), 0xFF);
  strata::copy_to_device(s, work.data(), garbage.data(), garbage.size());
  o.work = {work.data(), work.size()};
  for (int run = 0; run < runs; ++run) {  // later runs reuse the workspace as the first left it
    if (run > 0) strata::copy_to_device(s, dd.data(), hc.data(), hc.size());
    if constexpr (Typed) strata::gemm<TA, TD>(s, a, b, d, d, o);  // C aliases D
    else strata::gemm(s, a, b, d, d, o);
  }
  const auto out = to_host(s, dd);
  const double tol = sg::reference::tolerance(k, mantissa_bits<TD>(), false, false) + (std::is_integral_v<TD> ? 1e-6 : 0);
  for (int bt = 0; bt < batch; ++bt) {
    const auto ref = sg::reference::product(m, n, k, ha.data() + bt * sa, lda, la, hb.data() + bt * sb, ldb, lb);
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < n; ++c) {
        double want = 0.75 * ref[std::size_t(r) * n + c] + beta * as_double(hc[bt * sd + std::size_t(r) * n + c]) + hbias[c];
        if (relu && want < 0) want = 0;
        if constexpr (std::is_integral_v<TD>) want = std::nearbyint(want);  // int32 output rounds to nearest
        const double got = as_double(out[bt * sd + std::size_t(r) * n + c]);
        const double scale = std::max({std::abs(want), 0.75 * std::max(1, k) * 0.25, 1.0});
        if (!(std::abs(got - want) / scale <= tol)) {
          INFO("D(" << r << ", " << c << ") = " << got << ", want " << want);
          REQUIRE(std::abs(got - want) / scale <= tol);
        }
      }
  }
}

}  // namespace

TEST_CASE("strata::gemm: every dtype combination of this build", "[gemm]") {
  using strata::bf16;
  using strata::f16;
  entry_case<float, float>(7, 11, 13, layout::row_major, layout::col_major, strata::dtype::fp32, strata::dtype::fp32, 0.5f, 1, 1, false, 1);
  entry_case<bf16, bf16>(40, 3, 29, layout::col_major, layout::row_major, strata::dtype::bf16, strata::dtype::bf16, 0.f, 2, 1, true, 2);
  entry_case<f16, float>(1, 17, 64, layout::row_major, layout::row_major, strata::dtype::fp16, strata::dtype::fp32, 1.f, 1, 4, false, 3);
  entry_case<f16, f16>(5, 6, 7, layout::col_major, layout::col_major, strata::dtype::fp16, strata::dtype::fp16, 0.f, 1, 1, false, 4);
  entry_case<bf16, float>(66, 33, 1, layout::row_major, layout::row_major, strata::dtype::bf16, strata::dtype::fp32, 0.f, 1, 1, true, 5);
  entry_case<std::int8_t, std::int32_t>(9, 10, 35, layout::row_major, layout::col_major, strata::dtype::int8, strata::dtype::int32, 0.f, 1, 2, false, 6);
  entry_case<float, float>(3, 4, 0, layout::row_major, layout::row_major, strata::dtype::fp32, strata::dtype::fp32, 0.5f, 1, 0, false, 7);  // K = 0
}

TEST_CASE("strata::gemm: split-K in one launch over a workspace of any content, reused", "[gemm][split-k]") {
  using strata::bf16;
  // Serial split-K: the entry zeroes the tile counters itself, and each run leaves them at zero.
  entry_case<float, float>(37, 70, 300, layout::row_major, layout::col_major, strata::dtype::fp32, strata::dtype::fp32, 0.5f, 2, 5, true, 21, 0, 2);
  entry_case<bf16, bf16>(1, 1, 200, layout::col_major, layout::row_major, strata::dtype::bf16, strata::dtype::bf16, 0.f, 1, 16, false, 22, 0, 2);
  entry_case<std::int8_t, std::int32_t>(65, 33, 96, layout::row_major, layout::row_major, strata::dtype::int8, strata::dtype::int32, 1.f, 3, 3, false, 23, 0, 3);
  entry_case<float, float>(40, 50, 800, layout::col_major, layout::col_major, strata::dtype::fp32, strata::dtype::fp32, 0.f, 1, 0, false, 24, 0, 2);  // automatic splits
}

TEST_CASE("strata::gemm<TA, TD>: the typed entry runs its pair and refuses descriptors of another dtype", "[gemm]") {
  using strata::bf16;
  using strata::f16;
  entry_case<bf16, bf16, true>(40, 3, 29, layout::col_major, layout::row_major, strata::dtype::bf16, strata::dtype::bf16, 0.5f, 2, 1, true, 11);
  entry_case<f16, float, true>(1, 17, 64, layout::row_major, layout::row_major, strata::dtype::fp16, strata::dtype::fp32, 1.f, 1, 4, false, 12);
  entry_case<std::int8_t, std::int32_t, true>(9, 10, 35, layout::row_major, layout::col_major, strata::dtype::int8, strata::dtype::int32, 0.f, 1, 2, false, 13);
  entry_case<float, float, true>(70, 45, 300, layout::row_major, layout::col_major, strata::dtype::fp32, strata::dtype::fp32, 0.5f, 1, 0, false, 14, 5);
  // The output type defaults to what the input type naturally produces.
  static_assert(std::is_same_v<sg::detail::natural_output<std::int8_t>, std::int32_t>);
  static_assert(std::is_same_v<sg::detail::natural_output<strata::f8_e5m2>, bf16>);
  static_assert(std::is_same_v<sg::detail::natural_output<f16>, f16>);
  strata::stream s;
  strata::device_buffer<bf16> x(64);
  const sg::matrix a{x.data(), 8, 8, 8, layout::row_major, strata::dtype::bf16};
  CHECK_THROWS_WITH(strata::gemm<f16>(s, a, a, a, a), Catch::Matchers::Contains("argument 'a' has dtype bf16, but this call is strata::gemm<f16, f16>"));
  CHECK_THROWS_WITH((strata::gemm<bf16, float>(s, a, a, a, a)), Catch::Matchers::Contains("argument 'd' has dtype bf16, but this call is strata::gemm<bf16, float>"));
  // The runtime checks come first, as in the runtime-typed entry.
  const sg::matrix wrong{x.data(), 8, 9, 9, layout::row_major, strata::dtype::bf16};
  CHECK_THROWS_WITH(strata::gemm<bf16>(s, a, wrong, a, a), Catch::Matchers::Contains("argument 'b' is 8 x 9, expected 8 x 8"));
}

TEST_CASE("strata::gemm: stream-K through the host entry", "[gemm][stream-k]") {
  using strata::bf16;
  entry_case<float, float>(70, 45, 300, layout::row_major, layout::col_major, strata::dtype::fp32, strata::dtype::fp32, 0.5f, 1, 0, false, 8, 5);
  entry_case<bf16, bf16>(33, 70, 100, layout::col_major, layout::row_major, strata::dtype::bf16, strata::dtype::bf16, 0.f, 2, 0, true, 9, 3);
  entry_case<std::int8_t, std::int32_t>(9, 10, 0, layout::row_major, layout::row_major, strata::dtype::int8, strata::dtype::int32, 0.f, 1, 0, false, 10, 2);
  // Too small a workspace names the argument.
  strata::stream s;
  std::vector<float> x(64, 1.f);
  strata::device_buffer<float> dx(64);
  const sg::matrix a{dx.data(), 8, 8, 8, layout::row_major, strata::dtype::fp32};
  sg::options o{.stream_k = true, .stream_k_blocks = 4};
  o.work = {dx.data(), 16};
  CHECK_THROWS_WITH(strata::gemm(s, a, a, a, a, o), Catch::Matchers::Contains("options.work"));
  o.stream_k_blocks = -1;
  CHECK_THROWS_WITH(strata::gemm(s, a, a, a, a, o), Catch::Matchers::Contains("options.stream_k_blocks"));
}

TEST_CASE("strata::gemm: validation names the argument", "[gemm]") {
  strata::stream s;
  strata::device_buffer<float> buf(64);
  const sg::matrix a{buf.data(), 4, 4, 4, layout::row_major, strata::dtype::fp32}, d{buf.data(), 4, 4, 4, layout::row_major, strata::dtype::fp32};
  auto msg = [&](sg::matrix aa, sg::matrix bb, sg::matrix dd, sg::options o = {}) {
    try {
      strata::gemm(s, aa, bb, dd, dd, o);
    } catch (const strata::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto bad_b = a;
  bad_b.rows = 5;
  CHECK_THAT(msg(a, bad_b, d), Catch::Contains("strata::gemm: argument 'b' is 5 x 4, expected 4 x 4"));
  auto bad_ld = a;
  bad_ld.ld = 3;
  CHECK_THAT(msg(bad_ld, a, d), Catch::Contains("argument 'a' has leading dimension 3"));
  auto bad_t = a;
  bad_t.type = strata::dtype::fp16;
  CHECK_THAT(msg(a, bad_t, d), Catch::Contains("argument 'b' has dtype fp16"));
  CHECK_THAT(msg(a, a, d, {.batch = 0}), Catch::Contains("argument 'options.batch'"));
  const sg::matrix row{buf.data(), 1, 64, 64, layout::row_major, strata::dtype::fp32}, col{buf.data(), 64, 1, 1, layout::row_major, strata::dtype::fp32},
      one{buf.data(), 1, 1, 1, layout::row_major, strata::dtype::fp32};
  CHECK_THAT(msg(row, col, one, {.split_k = 4}), Catch::Contains("argument 'options.work'"));
  auto null_a = a;
  null_a.data = nullptr;
  CHECK_THAT(msg(null_a, a, d), Catch::Contains("argument 'a' is a null pointer"));
  // With beta != 0, C is read at D's batch offsets, so a batched C must have D's batch stride.
  strata::device_buffer<float> cbuf(64), dbuf(64);
  const sg::matrix c2{cbuf.data(), 4, 4, 4, layout::row_major, strata::dtype::fp32, 20},
      d2{dbuf.data(), 4, 4, 4, layout::row_major, strata::dtype::fp32, 16};
  CHECK_THROWS_WITH(strata::gemm(s, a, a, c2, d2, {.beta = 1.f, .batch = 2}),
                    Catch::Contains("argument 'c' batch_stride must equal d's when beta != 0"));
}

TEST_CASE("strata::gemm: fp8 on the host emulator", "[gemm][fp8]") {
  using strata::bf16;
  entry_case<strata::f8_e4m3, bf16>(13, 21, 40, layout::row_major, layout::col_major, strata::dtype::e4m3, strata::dtype::bf16, 0.5f, 2, 1, true, 11);
  entry_case<strata::f8_e5m2, bf16>(40, 9, 17, layout::col_major, layout::row_major, strata::dtype::e5m2, strata::dtype::bf16, 0.f, 1, 3, false, 12);
}
