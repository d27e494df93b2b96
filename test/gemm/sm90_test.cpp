// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Hopper GEMM (ops/gemm/sm90_kernel.hpp) on the emulator, run as sm90a with the wgmma, TMA,
// mbarrier and setmaxnreg emulation: A row-major x B column-major, f16 and bf16, against the double
// reference over edges in M, N and K (the copy engine's zero fill), K = 0, more K steps than stages
// (the ring wraps), padded leading dimensions, batch, D row- and column-major, alpha and beta, under
// random schedules; make_params's refusals.
#include "strata/ops/gemm/sm90_kernel.hpp"
#include "support.hpp"

using namespace strata_test;
using namespace strata_test::gemm;
using strata::bf16;
using strata::f16;

namespace {

struct sm90_case {
  int m = 1, n = 1, k = 1, batch = 1;
  int pad = 0;  // extra elements per leading dimension of A and B (multiples of 8 keep TMA's 16-byte rows)
  sg::layout d = sg::layout::row_major;
  float alpha = 1.f, beta = 0.f;
  std::uint64_t seed = 1;
  bool random_schedule = false;
  int units = 0;  // > 0: a persistent grid of this many blocks
  int dpad = 3;   // extra elements per leading dimension of D (odd: element stores; even: pair stores inside)
};

template <class Kernel>
void check_sm90(const sm90_case& c) {
  using T = typename Kernel::ta;
  using TD = typename Kernel::td;
  using Epi = typename Kernel::epilogue_type;
  INFO(sg::name_of(Kernel::orders) << " " << c.m << "x" << c.n << "x" << c.k << " units " << c.units << " dpad " << c.dpad << " batch " << c.batch << " pad " << c.pad << " D "
           << (c.d == sg::layout::row_major ? "row" : "col") << " beta " << c.beta << " seed " << c.seed);
  using strata::emulator::schedule;
  strata::stream s = c.random_schedule ? strata::stream(strata::emulator::options{.workers = 2, .order = schedule::random, .seed = c.seed})
                                       : strata::stream();
  constexpr bool a_row = Kernel::a_k_major, b_col = Kernel::b_k_major;
  const sg::layout la = a_row ? sg::layout::row_major : sg::layout::col_major;
  const sg::layout lb = b_col ? sg::layout::col_major : sg::layout::row_major;
  // Leading dimensions: the contiguous extent rounded up to 8 elements (TMA's 16-byte rows), plus pad.
  const auto ld8 = [&](int x) { return (long long)(x + 7) / 8 * 8 + c.pad; };
  const long long lda = ld8(a_row ? c.k : c.m), ldb = ld8(b_col ? c.k : c.n);
  const long long ldd = (c.d == sg::layout::row_major ? c.n : c.m) + c.dpad;
  const std::size_t sa = std::size_t(a_row ? c.m : c.k) * lda, sb = std::size_t(b_col ? c.n : c.k) * ldb;
  const std::size_t sd = std::size_t(c.d == sg::layout::row_major ? c.m : c.n) * ldd;
  const auto ha = random_values<T>(std::max<std::size_t>(1, sa * c.batch), c.seed);
  const auto hb = random_values<T>(std::max<std::size_t>(1, sb * c.batch), c.seed + 1);
  const auto hc = random_values<TD>(std::max<std::size_t>(1, sd * c.batch), c.seed + 2);
  auto da = to_device(s, ha);
  auto db = to_device(s, hb);
  auto dd = to_device(s, hc);
  const ep::matrix_ref<TD> cref = c.d == sg::layout::row_major ? ep::row_major<TD>(dd.data(), ldd) : ep::col_major<TD>(dd.data(), ldd);
  const auto epp = Epi::make_params({.alpha = c.alpha, .beta = c.beta, .c = cref}, {});
  const sg::problem pr{c.m, c.n, c.k, c.batch};
  const auto p = Kernel::make_params(pr, {da.data(), lda, la, (long long)sa}, {db.data(), ldb, lb, (long long)sb},
                                     {dd.data(), ldd, c.d, (long long)sd}, epp, c.units);
  if (c.units > 0)
    REQUIRE(Kernel::launch_shape_of(p).grid.x ==
            Kernel::cluster_m * std::min<long long>(std::max(1, c.units / Kernel::cluster_m), p.work));
  strata::launch(s, Kernel::launch_shape_of(p), Kernel{}, p);
  const auto out = to_host(s, dd);
  const double tol = sg::reference::tolerance(c.k, mantissa_bits<TD>(), false, false);
  for (int bt = 0; bt < c.batch; ++bt) {
    const auto ref = sg::reference::product(c.m, c.n, c.k, ha.data() + bt * sa, lda, la, hb.data() + bt * sb, ldb, lb);
    for (int r = 0; r < c.m; ++r)
      for (int col = 0; col < c.n; ++col) {
        double want = c.alpha * ref[std::size_t(r) * c.n + col];
        if (c.beta != 0.f) want += c.beta * as_double(sg::reference::element(hc.data() + bt * sd, ldd, c.d, r, col));
        const double got = as_double(sg::reference::element(out.data() + bt * sd, ldd, c.d, r, col));
        const double scale = std::max({std::abs(want), std::abs(c.alpha) * std::max(1, c.k) * 0.25, 1.0});
        if (!(std::abs(got - want) / scale <= tol)) {
          INFO("D(" << r << ", " << col << ") batch " << bt << " = " << got << ", want " << want);
          REQUIRE(std::abs(got - want) / scale <= tol);
        }
      }
    // D's padding is never written.
    const int outer = c.d == sg::layout::row_major ? c.m : c.n, inner = c.d == sg::layout::row_major ? c.n : c.m;
    for (int o = 0; o < outer; ++o)
      for (long long i = inner; i < ldd; ++i)
        REQUIRE(as_double(out[bt * sd + o * ldd + i]) == as_double(hc[bt * sd + o * ldd + i]));
  }
}

template <class T, class TD>
using chain = ep::chain<ep::alpha_beta<TD>, ep::convert_to<TD>>;

}  // namespace

TEST_CASE("Hopper GEMM (TMA, mbarrier, wgmma, warp-specialized) bf16 128 x 256 tile", "[gemm][sm90]") {
  using K = sg::sm90_kernel<bf16, 256, chain<bf16, bf16>>;
  check_sm90<K>({.m = 128, .n = 256, .k = 64, .seed = 1});
  check_sm90<K>({.m = 200, .n = 300, .k = 136, .beta = 0.5f, .seed = 2});             // edges in M, N, K
  check_sm90<K>({.m = 130, .n = 260, .k = 520, .pad = 8, .seed = 3});                 // 9 K steps over 4 stages
  check_sm90<K>({.m = 5, .n = 7, .k = 0, .beta = 1.f, .seed = 4});                    // K = 0: beta * C
  check_sm90<K>({.m = 70, .n = 90, .k = 40, .batch = 2, .d = sg::layout::col_major, .beta = 0.5f, .seed = 5});
  check_sm90<K>({.m = 1, .n = 1, .k = 8, .seed = 6});
  check_sm90<K>({.m = 256, .n = 256, .k = 320, .alpha = 0.5f, .seed = 7, .random_schedule = true});
}

TEST_CASE("Hopper GEMM f16 and bf16 at tile widths 64 and 128, two stages, f32 output", "[gemm][sm90]") {
  using K128 = sg::sm90_kernel<f16, 128, chain<f16, f16>>;
  using K64 = sg::sm90_kernel<bf16, 64, chain<bf16, float>, 2>;
  check_sm90<K128>({.m = 129, .n = 129, .k = 200, .pad = 16, .beta = 0.5f, .seed = 11});
  check_sm90<K128>({.m = 64, .n = 300, .k = 64, .batch = 3, .seed = 12, .random_schedule = true});
  check_sm90<K64>({.m = 150, .n = 70, .k = 264, .seed = 13});  // 5 K steps over 2 stages
  check_sm90<K64>({.m = 33, .n = 65, .k = 24, .d = sg::layout::col_major, .seed = 14});
}

TEST_CASE("Hopper GEMM in every pair of operand orders (M- and N-major operands read transposed)", "[gemm][sm90]") {
  using sg::operand_orders;
  using NN = sg::sm90_kernel<bf16, 256, chain<bf16, bf16>, 4, operand_orders::a_row_b_row>;  // x W, W (in, out)
  using TT = sg::sm90_kernel<bf16, 128, chain<bf16, bf16>, 3, operand_orders::a_col_b_col>;
  using TN = sg::sm90_kernel<f16, 128, chain<f16, float>, 2, operand_orders::a_col_b_row>;
  check_sm90<NN>({.m = 200, .n = 300, .k = 136, .beta = 0.5f, .seed = 31});
  check_sm90<NN>({.m = 130, .n = 70, .k = 330, .batch = 2, .pad = 8, .d = sg::layout::col_major, .seed = 32});
  check_sm90<NN>({.m = 3, .n = 5, .k = 0, .beta = 1.f, .seed = 33});
  check_sm90<TT>({.m = 129, .n = 131, .k = 72, .seed = 34, .random_schedule = true});
  check_sm90<TT>({.m = 64, .n = 16, .k = 520, .seed = 35});
  check_sm90<TN>({.m = 150, .n = 129, .k = 100, .beta = 0.5f, .seed = 36});
  check_sm90<TN>({.m = 1, .n = 1, .k = 1, .seed = 37});
}

TEST_CASE("Hopper GEMM on a persistent grid: the stage ring runs on across a block's tiles", "[gemm][sm90]") {
  using K = sg::sm90_kernel<bf16, 128, chain<bf16, bf16>, 3>;
  using NN = sg::sm90_kernel<f16, 64, chain<f16, f16>, 2, sg::operand_orders::a_row_b_row>;
  check_sm90<K>({.m = 300, .n = 400, .k = 200, .beta = 0.5f, .seed = 41, .units = 3});   // 12 tiles, 4 K steps
  check_sm90<K>({.m = 257, .n = 129, .k = 64, .batch = 3, .seed = 42, .units = 1});      // 18 items in one block
  check_sm90<K>({.m = 128, .n = 256, .k = 0, .beta = 1.f, .seed = 43, .units = 2});      // K = 0, no stage used
  check_sm90<NN>({.m = 200, .n = 200, .k = 136, .seed = 44, .random_schedule = true, .units = 5});
  check_sm90<K>({.m = 130, .n = 130, .k = 72, .seed = 45, .units = 100});                // more units than tiles
}

TEST_CASE("Hopper GEMM with e4m3 and e5m2 inputs on fp8 wgmma, dequantization scales in the epilogue", "[gemm][sm90]") {
  // The entry's fp8 epilogue: D = bf16(alpha * a_scale[row] * b_scale[col] * (A * B) + beta * C).
  using E = sg::detail::entry_epilogue_fp8<bf16>;
  using K4 = sg::sm90_kernel<strata::f8_e4m3, 256, E>;
  using K5 = sg::sm90_kernel<strata::f8_e5m2, 128, E, 3>;
  static_assert(K4::tile_k == 128 && K4::atom::K == 32);
  const auto run = [](auto kernel_tag, int m, int n, int k, int units, std::uint64_t seed) {
    using K = decltype(kernel_tag);
    using F8 = typename K::ta;
    INFO("fp8 " << m << "x" << n << "x" << k << " units " << units);
    strata::stream s;
    const long long ld = (k + 15) / 16 * 16;
    const auto ha = random_values<F8>(std::size_t(m) * ld, seed), hb = random_values<F8>(std::size_t(n) * ld, seed + 1);
    const auto sa = random_values<float>(std::size_t(m), seed + 2), sb = random_values<float>(std::size_t(n), seed + 3);
    auto da = to_device(s, ha);
    auto db = to_device(s, hb);
    auto dsa = to_device(s, sa);
    auto dsb = to_device(s, sb);
    auto dd = poisoned<bf16>(s, std::size_t(m) * n, bf16(NAN));
    const auto epp = E::make_params({.a = dsa.data(), .b = dsb.data(), .a_stride = 1, .b_stride = 1}, {.alpha = 2.f}, {}, {});
    const auto p = K::make_params({m, n, k, 1}, {da.data(), ld, sg::layout::row_major}, {db.data(), ld, sg::layout::col_major},
                                  {dd.data(), n, sg::layout::row_major}, epp, units);
    strata::launch(s, K::launch_shape_of(p), K{}, p);
    const auto out = to_host(s, dd);
    const auto ref = sg::reference::product(m, n, k, ha.data(), ld, sg::layout::row_major, hb.data(), ld, sg::layout::col_major);
    const double tol = sg::reference::tolerance(k, mantissa_bits<bf16>(), false, false);
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < n; ++c) {
        const double want = 2.0 * sa[r] * sb[c] * ref[std::size_t(r) * n + c];
        const double got = as_double(out[std::size_t(r) * n + c]);
        const double scale = std::max({std::abs(want), 2.0 * std::abs(sa[r] * sb[c]) * std::max(1, k) * 0.25, 1e-3});
        INFO("D(" << r << ", " << c << ") = " << got << ", want " << want);
        REQUIRE(std::abs(got - want) / scale <= tol);
      }
  };
  run(K4{}, 200, 300, 264, 0, 51);  // K: 2 full steps of 128 and a zero-filled partial one
  run(K4{}, 128, 256, 128, 1, 52);
  run(K5{}, 150, 129, 520, 2, 53);  // 5 K steps over 3 stages, persistent
  run(K5{}, 1, 1, 16, 0, 54);
}

TEST_CASE("Hopper GEMM epilogue: pair stores inside a row-major D with an even leading dimension", "[gemm][sm90]") {
  using K = sg::sm90_kernel<bf16, 256, chain<bf16, bf16>, 4>;
  using KF = sg::sm90_kernel<f16, 128, chain<f16, float>, 3, sg::operand_orders::a_row_b_row>;
  check_sm90<K>({.m = 256, .n = 512, .k = 72, .beta = 0.5f, .seed = 61, .dpad = 0});              // all tiles inside
  check_sm90<K>({.m = 200, .n = 300, .k = 64, .batch = 2, .beta = 0.5f, .seed = 62, .dpad = 2});  // edges: both paths
  check_sm90<KF>({.m = 130, .n = 257, .k = 40, .seed = 63, .units = 2, .dpad = 1});                // odd n, even ld
  check_sm90<KF>({.m = 128, .n = 128, .k = 16, .alpha = -1.f, .seed = 64, .dpad = 0});
}

TEST_CASE("Hopper GEMM on 2 x 1 clusters: B's tile multicast into both blocks", "[gemm][sm90][cluster]") {
  using sg::operand_orders;
  using K = sg::sm90_kernel<bf16, 256, chain<bf16, bf16>, 4, operand_orders::a_row_b_col, 2>;
  using NN = sg::sm90_kernel<f16, 128, chain<f16, f16>, 3, operand_orders::a_row_b_row, 2>;
  using F8 = sg::sm90_kernel<strata::f8_e4m3, 128, chain<strata::f8_e4m3, bf16>, 2, operand_orders::a_row_b_col, 2>;
  REQUIRE(K::launch_shape_of(K::params{}).cluster.x == 2);
  check_sm90<K>({.m = 256, .n = 256, .k = 128, .seed = 71, .dpad = 0});                  // one cluster, one group
  check_sm90<K>({.m = 300, .n = 300, .k = 200, .beta = 0.5f, .seed = 72});                // 3 M tiles: a half-empty group
  check_sm90<K>({.m = 520, .n = 600, .k = 72, .batch = 2, .seed = 73, .units = 4});       // persistent, 2 clusters
  check_sm90<NN>({.m = 130, .n = 260, .k = 136, .seed = 74, .random_schedule = true});
  check_sm90<NN>({.m = 64, .n = 128, .k = 0, .beta = 1.f, .seed = 75});
  using B2 = sg::sm90_kernel<bf16, 128, chain<bf16, bf16>, 2, operand_orders::a_row_b_col, 2>;
  check_sm90<B2>({.m = 200, .n = 130, .k = 192, .seed = 77, .units = 2});               // 2 stages, ring wraps
  check_sm90<F8>({.m = 200, .n = 130, .k = 300, .pad = 16, .seed = 76, .units = 2});
}

TEST_CASE("Hopper GEMM make_params names what TMA cannot read", "[gemm][sm90][negative]") {
  using K = sg::sm90_kernel<bf16, 128, chain<bf16, bf16>>;
  strata::device_buffer<bf16> a(4096), b(4096), d(4096);
  const auto ep_ = chain<bf16, bf16>::make_params({.alpha = 1.f}, {});
  const sg::operand<bf16> od{d.data(), 64, sg::layout::row_major, 0};
  const auto refused = [&](sg::operand<const bf16> oa, sg::operand<const bf16> ob) {
    try {
      (void)K::make_params({16, 16, 32, 1}, oa, ob, od, ep_);
    } catch (const strata::invalid_argument& e) {
      return e.argument() + ": " + e.what();
    }
    return std::string("accepted");
  };
  const sg::operand<const bf16> ok_a{a.data(), 32, sg::layout::row_major, 0}, ok_b{b.data(), 32, sg::layout::col_major, 0};
  CHECK(refused(ok_a, ok_b) == "accepted");
  CHECK_THAT(refused({a.data(), 36, sg::layout::row_major, 0}, ok_b), Catch::Contains("a: ") && Catch::Contains("multiples of 16 bytes"));
  CHECK_THAT(refused({a.data() + 1, 32, sg::layout::row_major, 0}, ok_b), Catch::Contains("a: ") && Catch::Contains("16-byte"));
  CHECK_THAT(refused({a.data(), 32, sg::layout::col_major, 0}, ok_b), Catch::Contains("a: ") && Catch::Contains("row-major"));
  CHECK_THAT(refused(ok_a, {b.data(), 32, sg::layout::row_major, 0}), Catch::Contains("b: ") && Catch::Contains("column-major"));
}
