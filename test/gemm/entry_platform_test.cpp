// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The entry paths for fp8 (e4m3 / e5m2 -> bf16 with per-tensor and per-row / per-column dequantization
// scales) of every platform, on the emulator: sg::detail::run with the CUDA platform picks the same
// configurations (sm90a mma.sync m16n8k32, skinny tile; medium tile under stream-K; 16-byte or
// element-wise copies) and builds the same epilogue parameters as a CUDA build with STRATA_GEMM_FP8;
// the HIP platform picks gfx942's MFMA tiles with the OCP -> FNUZ operand remap (mma/mfma_ocp_fp8.hpp);
// each runs here with the atoms' exact fragment layouts. The host platform is this build's own, run
// through the public entry. Validation of the scale options goes through the public entry too
// (test/gemm/entry_test.cpp covers the rest).
#include "support.hpp"

using namespace strata_test;
using namespace strata_test::gemm;
using strata::dtype;
using sg::layout;
using strata::bf16;

namespace {

using cuda_fp8 = sg::detail::platform<sg::detail::platform_kind::cuda, true>;
using hip_fp8 = sg::detail::platform<sg::detail::platform_kind::hip, true>;
using host_fp8 = sg::detail::platform<sg::detail::platform_kind::host, true>;

enum class scales { none, tensor, vector, a_only_vector, b_only_tensor };

struct fp8_case {
  int m = 1, n = 1, k = 1;
  layout la = layout::row_major, lb = layout::col_major;
  int pad = 0;  // extra elements per leading dimension of A and B (odd: element-wise copies)
  scales sc = scales::tensor;
  float beta = 0.f;
  int batch = 1;
  int split_k = 1;
  int stream_k_blocks = 0;
  bool relu = false;
  bool specials = false;  // plant -0 in A and one NaN in B (their own rows / columns of D)
  std::uint64_t seed = 1;
};

/// Random scales in [0.5, 2): never 1, so a scale that is dropped or applied twice shows.
std::vector<float> random_scales(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> u(0.5f, 2.f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(g);
  return v;
}

/// Platform P's entry path for one fp8 case, against the double reference. The host platform goes
/// through the public strata::gemm (this test's build is the host build), the others through
/// sg::detail::run with P, which picks P's configurations and runs them here as their targets.
template <class P, class TA>
void fp8_entry_case(const fp8_case& c, dtype ta) {
  INFO(c.m << "x" << c.n << "x" << c.k << " " << sg::to_string(ta) << " scales " << int(c.sc) << " pad " << c.pad
           << " beta " << c.beta << " batch " << c.batch << " split " << c.split_k << " stream-K " << c.stream_k_blocks);
  strata::stream s;
  const int m = c.m, n = c.n, k = c.k, batch = c.batch;
  // At least 1: the public entry (host platform) requires it even when a row is empty (K = 0).
  const long long lda = std::max(1LL, ld_of(c.la, m, k, c.pad)), ldb = std::max(1LL, ld_of(c.lb, k, n, c.pad)), ldd = std::max(1, n);
  const std::size_t sa = size_of(c.la, m, k, c.pad), sb = size_of(c.lb, k, n, c.pad), sd = std::size_t(m) * n;
  auto ha = random_values<TA>(sa * batch, c.seed), hb = random_values<TA>(sb * batch, c.seed + 1);
  if (c.specials && m > 0 && n > 0 && k > 0) {
    // -0 (0x80) is FNUZ's NaN: a platform that hands OCP bytes to an FNUZ unit unmapped turns these
    // rows of D into NaN. One NaN in B must make exactly its column of D NaN.
    for (std::size_t i = 0; i < ha.size(); i += 3) ha[i] = TA::from_bits(0x80);
    hb[c.lb == layout::row_major ? std::size_t(n / 2) : std::size_t(n / 2) * ldb] = TA::from_bits(0x7F);
  }
  const auto hc = random_values<bf16>(sd * batch, c.seed + 2);
  const auto hbias = random_values<float>(std::size_t(n), c.seed + 3);
  const bool a_vec = c.sc == scales::vector || c.sc == scales::a_only_vector, b_vec = c.sc == scales::vector;
  const bool has_a = c.sc != scales::none && c.sc != scales::b_only_tensor, has_b = c.sc != scales::none && c.sc != scales::a_only_vector;
  const auto hsa = random_scales(a_vec ? std::size_t(m) : 1, c.seed + 4), hsb = random_scales(b_vec ? std::size_t(n) : 1, c.seed + 5);
  auto da = to_device(s, ha), db = to_device(s, hb);  // one declaration per element type (clang)
  auto dd = to_device(s, hc);
  auto dbias = to_device(s, hbias), dsa = to_device(s, hsa), dsb = to_device(s, hsb);
  const sg::matrix a{da.data(), m, k, lda, c.la, ta, (long long)sa}, b{db.data(), k, n, ldb, c.lb, ta, (long long)sb},
      d{dd.data(), m, n, ldd, layout::row_major, strata::dtype::bf16, (long long)sd};
  sg::options o{.alpha = 0.75f, .beta = c.beta, .batch = batch, .bias = dbias.data(),
                .act = c.relu ? sg::activation::relu : sg::activation::none, .split_k = c.split_k,
                .stream_k = c.stream_k_blocks > 0, .stream_k_blocks = c.stream_k_blocks};
  o.a_scale = has_a ? dsa.data() : nullptr;
  o.b_scale = has_b ? dsb.data() : nullptr;
  o.a_scale_per_row = has_a && a_vec;
  o.b_scale_per_col = has_b && b_vec;
  strata::device_buffer<std::uint8_t> work(sg::workspace_size(d, o) + 1);
  o.work = {work.data(), work.size()};
  if constexpr (P::kind == sg::detail::platform_kind::host) strata::gemm(s, a, b, d, d, o);  // C aliases D
  else sg::detail::run<P, TA, bf16>(s, a, b, d, d, o, 4);  // "4 multiprocessors"
  const auto out = to_host(s, dd);
  const double tol = sg::reference::tolerance(k, mantissa_bits<bf16>());
  for (int bt = 0; bt < batch; ++bt) {
    const auto ref = sg::reference::product(m, n, k, ha.data() + bt * sa, lda, c.la, hb.data() + bt * sb, ldb, c.lb);
    for (int r = 0; r < m; ++r)
      for (int col = 0; col < n; ++col) {
        const double sar = has_a ? hsa[a_vec ? r : 0] : 1.0, sbc = has_b ? hsb[b_vec ? col : 0] : 1.0;
        const double dq = 0.75 * sar * sbc;
        double want = dq * ref[std::size_t(r) * n + col] + c.beta * as_double(hc[bt * sd + std::size_t(r) * n + col]) + hbias[col];
        if (c.relu && want < 0) want = 0;
        const double got = as_double(out[bt * sd + std::size_t(r) * n + col]);
        if (std::isnan(want)) {
          INFO("D(" << r << ", " << col << ") batch " << bt << " = " << got << ", want NaN");
          REQUIRE(std::isnan(got));
          continue;
        }
        const double scale = std::max({std::abs(want), dq * std::max(1, k) * 0.25, 1.0});
        if (!(std::abs(got - want) / scale <= tol)) {
          INFO("D(" << r << ", " << col << ") batch " << bt << " = " << got << ", want " << want);
          REQUIRE(std::abs(got - want) / scale <= tol);
        }
      }
  }
}

/// The cases every fp8 platform runs: scales of every kind, both copy widths, odd shapes, K = 0,
/// -0 and NaN inputs.
template <class P>
void fp8_cases() {
  using strata::f8_e4m3;
  using strata::f8_e5m2;
  // Per-tensor scales, 16-byte rows (cp.async 16 B), odd shape under the skinny tile.
  fp8_entry_case<P, f8_e4m3>({.m = 7, .n = 70, .k = 96, .sc = scales::tensor, .seed = 1}, strata::dtype::e4m3);
  // Per-row and per-column scales, element-wise copies (odd padding), C aliasing D, two batch entries.
  fp8_entry_case<P, f8_e4m3>({.m = 19, .n = 33, .k = 45, .la = layout::col_major, .lb = layout::row_major, .pad = 3,
                              .sc = scales::vector, .beta = 0.5f, .batch = 2, .relu = true, .seed = 2},
                             strata::dtype::e4m3);
  // One side scaled only; no scales at all (plain fp8 product); K = 0 (D = beta C + bias).
  fp8_entry_case<P, f8_e5m2>({.m = 16, .n = 64, .k = 64, .sc = scales::a_only_vector, .seed = 3}, strata::dtype::e5m2);
  fp8_entry_case<P, f8_e5m2>({.m = 1, .n = 1, .k = 1, .sc = scales::b_only_tensor, .beta = 1.f, .seed = 4}, strata::dtype::e5m2);
  fp8_entry_case<P, f8_e4m3>({.m = 3, .n = 5, .k = 32, .sc = scales::none, .seed = 5}, strata::dtype::e4m3);
  fp8_entry_case<P, f8_e4m3>({.m = 5, .n = 9, .k = 0, .sc = scales::vector, .beta = 0.5f, .seed = 6}, strata::dtype::e4m3);
  // Large tiles where the platform has them (M > 32 on HIP: 128 x 128; M > 128 on CUDA's fp8: skinny).
  fp8_entry_case<P, f8_e5m2>({.m = 133, .n = 70, .k = 72, .la = layout::col_major, .sc = scales::tensor, .seed = 9},
                             strata::dtype::e5m2);
  // The other pairs of orders with 16-byte rows (tiles compiled for each pair; on HIP the operand
  // along M or N is written into its stage transposed): A column-major x B row-major on the large
  // tile, N not a multiple of the 16-byte vector; A row-major x B row-major on the skinny one.
  fp8_entry_case<P, f8_e4m3>({.m = 45, .n = 77, .k = 64, .la = layout::col_major, .lb = layout::row_major, .pad = 3,
                              .sc = scales::vector, .seed = 12},
                             strata::dtype::e4m3);
  fp8_entry_case<P, f8_e5m2>({.m = 16, .n = 48, .k = 96, .lb = layout::row_major, .sc = scales::tensor, .beta = 0.5f, .seed = 13},
                             strata::dtype::e5m2);
  // -0 must count as zero and NaN must stay NaN (the bytes the OCP -> FNUZ remap rewrites).
  fp8_entry_case<P, f8_e4m3>({.m = 37, .n = 21, .k = 50, .sc = scales::tensor, .specials = true, .seed = 10}, strata::dtype::e4m3);
  fp8_entry_case<P, f8_e5m2>({.m = 9, .n = 30, .k = 70, .lb = layout::row_major, .pad = 1, .sc = scales::none,
                              .specials = true, .seed = 11},
                             strata::dtype::e5m2);
}

/// Split-K and stream-K: partials and fix-ups must carry the scales (and the OCP remap's factor) once.
template <class P>
void fp8_split_cases() {
  using strata::f8_e4m3;
  using strata::f8_e5m2;
  // The parallel reduction applies the epilogue, scales included, once to the summed partials.
  fp8_entry_case<P, f8_e4m3>({.m = 20, .n = 40, .k = 320, .sc = scales::vector, .beta = 0.5f, .split_k = 3, .seed = 7},
                             strata::dtype::e4m3);
  // Stream-K (medium tile) finishes split tiles in fix-ups that must scale exactly once.
  fp8_entry_case<P, f8_e5m2>({.m = 70, .n = 65, .k = 200, .pad = 1, .sc = scales::vector, .stream_k_blocks = 3, .seed = 8},
                             strata::dtype::e5m2);
}

}  // namespace

TEST_CASE("strata::gemm CUDA fp8 path: e4m3 / e5m2 -> bf16 with dequantization scales", "[gemm][fp8]") {
  fp8_cases<cuda_fp8>();
}

TEST_CASE("strata::gemm HIP fp8 path (gfx942): OCP inputs on the FNUZ MFMA, remapped", "[gemm][fp8][cdna]") {
  fp8_cases<hip_fp8>();
}

TEST_CASE("strata::gemm host emulator fp8 path: scalar FMA", "[gemm][fp8]") {
  fp8_cases<host_fp8>();
}

TEST_CASE("strata::gemm fp8 paths: scales under split-K and stream-K", "[gemm][fp8][stream-k]") {
  fp8_split_cases<cuda_fp8>();
  fp8_split_cases<hip_fp8>();
  fp8_split_cases<host_fp8>();
}

TEST_CASE("strata::gemm: fp8 scale options are validated", "[gemm][fp8]") {
  strata::stream s;
  strata::device_buffer<float> buf(64);
  const sg::matrix a{buf.data(), 4, 4, 4, layout::row_major, strata::dtype::fp32};
  auto msg = [&](const sg::matrix& x, sg::options o) {
    try {
      strata::gemm(s, x, x, x, x, o);
    } catch (const strata::error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  sg::options o;
  o.a_scale = buf.data();
  CHECK_THAT(msg(a, o), Catch::Contains("argument 'options.a_scale' applies to fp8 (e4m3 / e5m2) inputs only; A and B are fp32"));
  o = {};
  o.b_scale = buf.data();
  CHECK_THAT(msg(a, o), Catch::Contains("argument 'options.b_scale' applies to fp8"));
  o = {};
  o.b_scale_per_col = true;
  CHECK_THAT(msg(a, o), Catch::Contains("argument 'options.b_scale_per_col' is set, but options.b_scale is a null pointer"));
  o = {};
  o.a_scale_per_row = true;
  CHECK_THAT(msg(a, o), Catch::Contains("argument 'options.a_scale_per_row'"));
  auto f8 = a;
  f8.type = strata::dtype::e4m3;
  auto bf = a;
  bf.type = strata::dtype::bf16;
  o = {};
  o.a_scale = reinterpret_cast<const float*>(reinterpret_cast<const char*>(buf.data()) + 2);
  try {
    strata::gemm(s, f8, f8, bf, bf, o);
    FAIL("a misaligned scale pointer must be rejected");
  } catch (const strata::invalid_argument& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("argument 'options.a_scale' is not aligned to a float"));
  }
  // A build without fp8 units says so: strata::unsupported, not a slow path.
  try {
    sg::detail::fp8_unsupported("e4m3 -> bf16");
    FAIL("fp8_unsupported must throw");
  } catch (const strata::unsupported& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("strata::gemm: e4m3 -> bf16 needs fp8 matrix units"));
  }
  // fp8 -> anything but bf16 names D.
  o.a_scale = buf.data();
  CHECK_THAT(msg(f8, o), Catch::Contains("dtype combination e4m3 -> e4m3 is not supported"));
}
