// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Grouped GEMM (many problems of different shapes in one launch, as MoE layers need): the template
// path (grouped_kernel over the FMA host configuration and the sm80 mma.sync configuration) and the
// host entry run_grouped, against the double reference, on the emulator.
#include "support.hpp"

using namespace strata_test;
using namespace strata_test::gemm;
namespace arch = strata::arch;
namespace cfg = strata::ops::gemm::configs;
using strata::bf16;
using sg::layout;

namespace {

struct shape3 {
  int m, n, k;
};

// Runs a group through `launch_group(stream, host entries, work)` and checks every problem.
template <class TA, class TD, class Launch>
void group_case(const std::vector<shape3>& shapes, layout la, layout lb, layout ld, float alpha, float beta,
                std::uint64_t seed, Launch&& launch_group) {
  strata::stream s;
  using entry = sg::group_entry<TA, TA, TD>;
  std::vector<std::vector<TA>> ha, hb;
  std::vector<std::vector<TD>> hc;
  std::vector<strata::device_buffer<TA>> da, db;
  std::vector<strata::device_buffer<TD>> dd;
  std::vector<entry> es;
  for (std::size_t g = 0; g < shapes.size(); ++g) {
    const auto [m, n, k] = shapes[g];
    ha.push_back(random_values<TA>(std::max<std::size_t>(1, size_of(la, m, k, 1)), seed + 10 * g));
    hb.push_back(random_values<TA>(std::max<std::size_t>(1, size_of(lb, k, n, 0)), seed + 10 * g + 1));
    hc.push_back(random_values<TD>(std::max<std::size_t>(1, size_of(ld, m, n, 2)), seed + 10 * g + 2));
    da.push_back(to_device(s, ha.back()));
    db.push_back(to_device(s, hb.back()));
    dd.push_back(to_device(s, hc.back()));
    entry e;
    e.m = m, e.n = n, e.k = k;
    e.a = da.back().data(), e.lda = ld_of(la, m, k, 1);
    e.b = db.back().data(), e.ldb = ld_of(lb, k, n, 0);
    e.d = dd.back().data(), e.ldd = ld_of(ld, m, n, 2);
    e.c = e.d, e.ldc = e.ldd;  // C aliases D
    es.push_back(e);
  }
  launch_group(s, es);
  for (std::size_t g = 0; g < shapes.size(); ++g) {
    const auto [m, n, k] = shapes[g];
    INFO("problem " << g << ": " << m << "x" << n << "x" << k);
    const auto out = to_host(s, dd[g]);
    const auto ref = sg::reference::product(m, n, k, ha[g].data(), es[g].lda, la, hb[g].data(), es[g].ldb, lb);
    const double tol = sg::reference::tolerance(k, mantissa_bits<TD>(), false, std::is_integral_v<TD>);
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < n; ++c) {
        const double want = alpha * ref[std::size_t(r) * n + c] +
                            beta * as_double(sg::reference::element(hc[g].data(), es[g].ldd, ld, r, c));
        const double got = as_double(sg::reference::element(out.data(), es[g].ldd, ld, r, c));
        const double scale = std::max({std::abs(want), std::abs(alpha) * std::max(1, k) * 0.25, 1.0});
        if (!(std::abs(got - want) / scale <= tol)) {
          INFO("D(" << r << ", " << c << ") = " << got << ", want " << want);
          REQUIRE(std::abs(got - want) / scale <= tol);
        }
      }
  }
}

template <class K, class TD>
auto template_launch(float alpha, float beta, layout la, layout lb, layout ld) {
  return [=](strata::stream& s, std::vector<typename sg::grouped_kernel<K>::entry> es) {
    using G = sg::grouped_kernel<K>;
    using E = typename K::epilogue_type;
    const long long tiles = G::prepare(es);
    auto dev = to_device(s, es);
    const auto p = G::make_params(dev.data(), int(es.size()), tiles, la, lb, ld,
                                  E::make_params({.alpha = alpha, .beta = beta, .c = {}}, {}));
    strata::launch(s, G::launch_shape_of(p), G{}, p);
    s.synchronize();
  };
}

// MoE-like: experts with very different token counts, one with none, K = 0 and 1x1x1.
const std::vector<shape3> moe = {{37, 20, 24}, {0, 20, 24}, {1, 1, 1}, {70, 33, 9}, {5, 20, 0}, {16, 64, 40}, {3, 7, 65}};

}  // namespace

TEST_CASE("grouped gemm: FMA host configuration, every layout", "[gemm]") {
  using E = ep::chain<ep::alpha_beta<float>, ep::convert_to<float>>;
  using K = cfg::fma<arch::host, float, E>;
  for (auto la : {layout::row_major, layout::col_major})
    for (auto lb : {layout::row_major, layout::col_major}) {
      const auto ld = la == lb ? layout::row_major : layout::col_major;
      group_case<float, float>(moe, la, lb, ld, 1.25f, 0.5f, 100, template_launch<K, float>(1.25f, 0.5f, la, lb, ld));
    }
}

TEST_CASE("grouped gemm: sm80 mma.sync bf16 -> bf16 and gfx942 MFMA on the emulator", "[gemm]") {
  using E = ep::chain<ep::alpha_beta<bf16>, ep::convert_to<bf16>>;
  using K = cfg::sm80<arch::sm80, bf16, E, cfg::sm80_medium>;
  group_case<bf16, bf16>(moe, layout::row_major, layout::col_major, layout::row_major, 1.f, 0.f, 200,
                         template_launch<K, bf16>(1.f, 0.f, layout::row_major, layout::col_major, layout::row_major));
  using KC = cfg::cdna<arch::gfx942, bf16, E, false>;
  group_case<bf16, bf16>(moe, layout::col_major, layout::row_major, layout::row_major, -1.f, 1.f, 300,
                         template_launch<KC, bf16>(-1.f, 1.f, layout::col_major, layout::row_major, layout::row_major));
}

TEST_CASE("grouped gemm: host entry run_grouped", "[gemm]") {
  auto entry = [](float alpha, float beta, layout la, layout lb, layout ld) {
    return [=](strata::stream& s, std::vector<sg::group_entry<bf16, bf16, float>> es) {
      strata::device_buffer<std::uint8_t> work(sg::grouped_workspace_size<bf16, float>(es.size()));
      sg::run_grouped<bf16, float>(s, es, la, lb, ld, alpha, beta, {work.data(), work.size()});
      s.synchronize();
    };
  };
  group_case<bf16, float>(moe, layout::row_major, layout::row_major, layout::row_major, 0.5f, 2.f, 400,
                          entry(0.5f, 2.f, layout::row_major, layout::row_major, layout::row_major));
  // Validation names the problem and the argument.
  strata::stream s;
  std::vector<sg::group_entry<bf16, bf16, float>> bad(1);
  bad[0].m = bad[0].n = bad[0].k = 2;
  try {
    sg::run_grouped<bf16, float>(s, bad, layout::row_major, layout::row_major, layout::row_major, 1.f, 0.f, {});
    FAIL("a null A must be rejected");
  } catch (const strata::invalid_argument& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("problems[0]"));
  }
}
