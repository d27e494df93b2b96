// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The GEMV kernel (ops/gemm/gemv.hpp) on the emulator, against the double reference: every input
// type and output type, 1-8 rows on both row instantiations, K not a multiple of the 16-byte vector
// nor of a warp step, every K-slice count, N not a multiple of a warp's or a block's columns, batch
// (with B shared by every entry), alpha / beta with C aliasing D, bias and ReLU, column-major D,
// leading dimensions padded past the 16-byte rounding (D's padding never written). D is poisoned (NaN) when beta is 0. Then the CUDA and
// HIP entries' choice of it, through sg::detail::run with their platforms, and its refusals.
#include <limits>

#include "support.hpp"

using namespace strata_test;
using namespace strata_test::gemm;
namespace arch = strata::arch;
using sg::layout;
using strata::bf16;
using strata::f16;

namespace {

struct gemv_case {
  int m = 1, n = 1, k = 1;
  int slices = 1;
  int batch = 1;
  bool b_shared = false;  // B's batch stride 0: every entry multiplies the same weights
  float alpha = 1.f, beta = 0.f;
  bool bias_relu = false;
  layout d = layout::row_major;
  int pad = 0;  // extra elements per leading dimension of A and B (a multiple of 16 bytes) and of D
  std::uint64_t seed = 1;
};

template <class TD>
TD poison() {
  if constexpr (std::is_same_v<TD, float>) return std::numeric_limits<float>::quiet_NaN();
  else return TD::from_bits(std::is_same_v<TD, bf16> ? 0x7FC1 : 0x7E01);
}

/// Runs gemv_kernel<Target, TA, entry epilogue, Rows> on c and checks every element of D and its padding.
template <class Target, class TA, class TD, int Rows>
void check_gemv(const gemv_case& c) {
  using E = sg::detail::entry_epilogue_for<TA, TD>;
  using K = sg::gemv_kernel<Target, TA, E, Rows>;
  INFO(c.m << "x" << c.n << "x" << c.k << " rows " << Rows << " slices " << c.slices << " batch " << c.batch
           << (c.b_shared ? " (B shared)" : "") << " alpha " << c.alpha << " beta " << c.beta << (c.bias_relu ? " bias+relu" : "")
           << " D " << (c.d == layout::row_major ? "row" : "col") << " pad " << c.pad);
  strata::stream s;
  constexpr int v = 16 / int(sizeof(TA));  // rows padded to 16 bytes, as the kernel requires
  const long long lda = (c.k + v - 1) / v * v + c.pad, ldb = lda, ldd = (c.d == layout::row_major ? c.n : c.m) + c.pad;
  const std::size_t sa = std::size_t(c.m) * lda, sb = std::size_t(c.n) * ldb,
                    sd = std::size_t(c.d == layout::row_major ? c.m : c.n) * ldd;
  const auto ha = random_values<TA>(sa * c.batch, c.seed);
  const auto hb = random_values<TA>(sb * (c.b_shared ? 1 : c.batch), c.seed + 1);
  auto hc = random_values<TD>(sd * c.batch, c.seed + 2);
  if (c.beta == 0.f)
    for (auto& x : hc) x = poison<TD>();
  const auto hbias = random_values<float>(std::size_t(c.n), c.seed + 3);
  auto da = to_device(s, ha);
  auto db = to_device(s, hb);
  auto dd = to_device(s, hc);
  auto dbias = to_device(s, hbias);
  const ep::matrix_ref<TD> cref = c.d == layout::row_major ? ep::row_major<TD>(dd.data(), ldd) : ep::col_major<TD>(dd.data(), ldd);
  const auto e = E::make_params({.alpha = c.alpha, .beta = c.beta, .c = cref},
                                {.bias = c.bias_relu ? dbias.data() : nullptr, .act = c.bias_relu ? sg::activation::relu : sg::activation::none}, {});
  const sg::problem pr{c.m, c.n, c.k, c.batch};
  const auto p = K::make_params(pr, {da.data(), lda, layout::row_major, (long long)sa},
                                {db.data(), ldb, layout::col_major, c.b_shared ? 0 : (long long)sb}, {dd.data(), ldd, c.d, (long long)sd}, e,
                                c.slices);
  strata::launch(s, K::launch_shape_of(p), K{}, p);
  const auto out = to_host(s, dd);

  const double tol = sg::reference::tolerance(c.k, mantissa_bits<TD>());
  for (int bt = 0; bt < c.batch; ++bt) {
    const auto ref = sg::reference::product(c.m, c.n, c.k, ha.data() + bt * sa, lda, layout::row_major,
                                            hb.data() + (c.b_shared ? 0 : bt * sb), ldb, layout::col_major);
    const TD* cb = hc.data() + bt * sd;
    const TD* ob = out.data() + bt * sd;
    for (int r = 0; r < c.m; ++r)
      for (int col = 0; col < c.n; ++col) {
        double want = c.alpha * ref[std::size_t(r) * c.n + col];
        if (c.beta != 0.f) want += c.beta * as_double(sg::reference::element(cb, ldd, c.d, r, col));
        if (c.bias_relu) want = std::max(0.0, want + hbias[col]);
        const double got = as_double(sg::reference::element(ob, ldd, c.d, r, col));
        const double scale = std::max({std::abs(want), std::abs(c.alpha) * std::max(1, c.k) * 0.25, 1.0});
        if (!(std::abs(got - want) / scale <= tol)) {
          INFO("D(" << r << ", " << col << ") batch " << bt << " = " << got << ", want " << want);
          REQUIRE(std::abs(got - want) / scale <= tol);
        }
      }
    // The padding of D is never written (still the poison or C's values, bit for bit).
    const int outer = c.d == layout::row_major ? c.m : c.n, inner = c.d == layout::row_major ? c.n : c.m;
    for (int o = 0; o < outer; ++o)
      for (long long i = inner; i < ldd; ++i)
        if constexpr (std::is_same_v<TD, float>) REQUIRE(std::memcmp(&ob[o * ldd + i], &cb[o * ldd + i], 4) == 0);
        else REQUIRE(ob[o * ldd + i].bits() == cb[o * ldd + i].bits());
  }
}

/// The shapes every type runs: K around the vector and the warp step, N around 4 (a warp) and 16 (a
/// block), every slice count, K = 0, batch with shared weights, beta with C aliasing D, bias + ReLU.
template <class Target, class TA, class TD>
void gemv_shapes() {
  constexpr int v = 16 / int(sizeof(TA)), step = Target::warp_size * v;
  const std::vector<gemv_case> cases = {
      {.m = 1, .n = 1, .k = 1},
      {.m = 1, .n = 5, .k = v - 1, .seed = 2},
      {.m = 3, .n = 17, .k = step + 3, .slices = 2, .seed = 3},
      {.m = 4, .n = 4, .k = 2 * step, .slices = 4, .beta = 0.5f, .seed = 4},
      {.m = 2, .n = 33, .k = 5 * step + v + 1, .slices = 4, .bias_relu = true, .seed = 5},
      {.m = 5, .n = 9, .k = 3 * step - 1, .slices = 2, .batch = 3, .b_shared = true, .alpha = -1.5f, .beta = 0.25f, .seed = 6},
      {.m = 8, .n = 21, .k = 7 * step + 5, .slices = 4, .d = layout::col_major, .pad = v, .seed = 7},
      {.m = 7, .n = 3, .k = 0, .beta = 2.f, .seed = 8},  // K = 0: D = beta * C
      {.m = 6, .n = 40, .k = 4 * step, .slices = 1, .batch = 2, .bias_relu = true, .pad = 2 * v, .seed = 9},
  };
  for (const auto& c : cases) {
    if (c.m <= 4) check_gemv<Target, TA, TD, 4>(c);
    check_gemv<Target, TA, TD, 8>(c);
  }
}

}  // namespace

TEST_CASE("gemv: bf16 and f16 inputs, every output type, on the sm80 target", "[gemm][gemv]") {
  gemv_shapes<arch::sm80, bf16, bf16>();
  gemv_shapes<arch::sm80, bf16, float>();
  gemv_shapes<arch::sm80, f16, f16>();
  gemv_shapes<arch::sm80, f16, bf16>();
}

TEST_CASE("gemv: fp32 inputs, and 64-lane warps (gfx942)", "[gemm][gemv]") {
  gemv_shapes<arch::sm80, float, float>();
  gemv_shapes<arch::gfx942, bf16, bf16>();
  gemv_shapes<arch::gfx942, f16, float>();
}

TEST_CASE("gemv: a long K split over slices sums in slice order, the same bits every run", "[gemm][gemv]") {
  // 4 slices of 8 warp steps each; run twice on two workers in random order: same bytes.
  using E = sg::detail::entry_epilogue_for<bf16, float>;
  using K = sg::gemv_kernel<arch::sm80, bf16, E, 8>;
  const int m = 8, n = 16, k = 4 * 8 * K::step + 3, ld = k + 5;
  const auto ha = random_values<bf16>(std::size_t(m) * ld, 41), hb = random_values<bf16>(std::size_t(n) * ld, 42);
  std::vector<std::vector<float>> runs;
  for (std::uint64_t seed : {1u, 2u}) {
    strata::stream s(strata::emulator::options{.workers = 2, .order = strata::emulator::schedule::random, .seed = seed});
    auto da = to_device(s, ha), db = to_device(s, hb);
    strata::device_buffer<float> dd(std::size_t(m) * n);
    const auto p = K::make_params({m, n, k, 1}, {da.data(), ld, layout::row_major, 0}, {db.data(), ld, layout::col_major, 0},
                                  {dd.data(), n, layout::row_major, 0}, E::make_params({.alpha = 1.f}, {}, {}), 4);
    strata::launch(s, K::launch_shape_of(p), K{}, p);
    runs.push_back(to_host(s, dd));
  }
  REQUIRE(std::memcmp(runs[0].data(), runs[1].data(), runs[0].size() * sizeof(float)) == 0);
}

TEST_CASE("gemv: the kernel refuses what it does not take, naming the argument", "[gemm][gemv]") {
  using E = sg::detail::entry_epilogue_for<bf16, bf16>;
  using K = sg::gemv_kernel<arch::sm80, bf16, E, 4>;
  strata::device_buffer<bf16> buf(1024);
  const sg::operand<const bf16> a{buf.data(), 64, layout::row_major, 0}, b{buf.data(), 64, layout::col_major, 0};
  const sg::operand<bf16> d{buf.data(), 8, layout::row_major, 0};
  const auto e = E::make_params({}, {}, {});
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(K::make_params({5, 8, 64, 1}, a, b, d, e, 1), Contains("argument 'm' is 5; this instantiation takes at most 4 rows"));
  CHECK_THROWS_WITH(K::make_params({4, 8, 64, 1}, b, b, d, e, 1), Contains("argument 'a' must be row-major"));
  CHECK_THROWS_WITH(K::make_params({4, 8, 64, 1}, a, a, d, e, 1), Contains("argument 'b' must be column-major"));
  CHECK_THROWS_WITH(K::make_params({4, 8, 64, 1}, a, b, d, e, 3), Contains("argument 'k_slices' must be 1, 2 or 4, got 3"));
  const sg::operand<const bf16> odd{buf.data(), 63, layout::row_major, 0};
  CHECK_THROWS_WITH(K::make_params({4, 8, 63, 1}, odd, b, d, e, 1), Contains("argument 'a' needs 16-byte aligned rows"));
  const sg::operand<const bf16> shifted{buf.data() + 1, 64, layout::col_major, 0};
  CHECK_THROWS_WITH(K::make_params({4, 8, 64, 1}, a, shifted, d, e, 1), Contains("argument 'b' needs 16-byte aligned columns"));
}

TEST_CASE("gemv: slices fill the device for small N, never below two warp steps each", "[gemm][gemv]") {
  CHECK(sg::gemv_slices(4096, 4096, 1, 132, 256) == 4);   // 1024 column groups: 7.8 warps per unit unsliced
  CHECK(sg::gemv_slices(4096, 4096, 1, 1, 256) == 1);
  CHECK(sg::gemv_slices(512, 4096, 1, 132, 256) == 4);
  CHECK(sg::gemv_slices(512, 1024, 1, 132, 256) == 2);    // 4 steps: two slices of two
  CHECK(sg::gemv_slices(512, 256, 1, 132, 256) == 1);
  CHECK(sg::gemv_slices(64, 0, 1, 132, 256) == 1);
}

namespace {
using cuda_platform = sg::detail::platform<sg::detail::platform_kind::cuda>;
using hip_platform = sg::detail::platform<sg::detail::platform_kind::hip>;

/// The platform's entry (sg::detail::run) on one decode shape, A row-major and B column-major.
template <class P, class TA, class TD>
void entry_case(int m, int n, int k, int ld_pad, float beta, int split_k, int units, std::uint64_t seed) {
  INFO(m << "x" << n << "x" << k << " pad " << ld_pad << " beta " << beta << " split_k " << split_k << " units " << units);
  strata::stream s;
  const long long lda = k + ld_pad, ldb = k + ld_pad;
  const auto ha = random_values<TA>(std::size_t(m) * lda, seed), hb = random_values<TA>(std::size_t(n) * ldb, seed + 1);
  const auto hc = random_values<TD>(std::size_t(m) * n, seed + 2);
  const auto hbias = random_values<float>(std::size_t(n), seed + 3);
  auto da = to_device(s, ha);
  auto db = to_device(s, hb);
  auto dd = to_device(s, hc);
  auto dbias = to_device(s, hbias);
  strata::device_buffer<float> work(std::size_t(16) * m * n + 64);
  const auto dt = sg::detail::dtype_of<TA>, dtd = sg::detail::dtype_of<TD>;
  const sg::matrix a{da.data(), m, k, lda, layout::row_major, dt}, b{db.data(), k, n, ldb, layout::col_major, dt},
      d{dd.data(), m, n, n, layout::row_major, dtd};
  sg::options o{.alpha = 0.5f, .beta = beta, .bias = dbias.data(), .act = sg::activation::relu, .split_k = split_k};
  o.work = {work.data(), work.size() * sizeof(float)};
  sg::detail::check_arguments(a, b, d, d, o);
  sg::detail::run<P, TA, TD>(s, a, b, d, d, o, units);
  const auto out = to_host(s, dd);
  const auto ref = sg::reference::product(m, n, k, ha.data(), lda, layout::row_major, hb.data(), ldb, layout::col_major);
  const double tol = sg::reference::tolerance(k, mantissa_bits<TD>());
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) {
      const std::size_t i = std::size_t(r) * n + c;
      const double want = std::max(0.0, 0.5 * ref[i] + beta * as_double(hc[i]) + hbias[c]);
      const double scale = std::max({std::abs(want), 0.5 * std::max(1, k) * 0.25, 1.0});
      INFO("D(" << r << ", " << c << ")");
      REQUIRE(std::abs(as_double(out[i]) - want) / scale <= tol);
    }
}
}  // namespace

TEST_CASE("gemv: the CUDA and HIP entries run it for up to 8 rows with 16-byte rows, and only then", "[gemm][gemv]") {
  const sg::detail::read_mode tn16{.rows16 = true, .orders = sg::operand_orders::a_row_b_col};
  CHECK(sg::detail::gemv_fits(1, tn16, {}));
  CHECK(sg::detail::gemv_fits(8, tn16, {.split_k = 1}));
  CHECK_FALSE(sg::detail::gemv_fits(9, tn16, {}));
  CHECK_FALSE(sg::detail::gemv_fits(0, tn16, {}));
  CHECK_FALSE(sg::detail::gemv_fits(4, {.rows16 = false, .orders = sg::operand_orders::a_row_b_col}, {}));
  CHECK_FALSE(sg::detail::gemv_fits(4, {.rows16 = true, .orders = sg::operand_orders::a_row_b_row}, {}));
  CHECK_FALSE(sg::detail::gemv_fits(4, tn16, {.split_k = 2}));   // an explicit split-K keeps the tiles
  CHECK_FALSE(sg::detail::gemv_fits(4, tn16, {.stream_k = true}));
  // Through the platforms' entries (GEMV for 16-byte rows, the skinny tiles beside it), many units:
  // the slices come from the heuristic.
  entry_case<cuda_platform, bf16, bf16>(1, 70, 1000, 8, 0.f, 0, 132, 51);
  entry_case<cuda_platform, f16, float>(6, 9, 700, 0, 0.5f, 0, 132, 52);
  entry_case<cuda_platform, float, float>(3, 12, 333 + 3, 4, 0.f, 0, 8, 53);   // K 336: 16-byte fp32 rows
  entry_case<cuda_platform, bf16, f16>(8, 5, 77, 2, 0.f, 0, 132, 54);           // lda 79: the element-wise tiles
  entry_case<cuda_platform, bf16, bf16>(2, 33, 512, 0, 0.f, 4, 132, 55);       // explicit split-K: tiles
  entry_case<hip_platform, bf16, bf16>(5, 20, 900, 4, 1.f, 0, 104, 56);
}
