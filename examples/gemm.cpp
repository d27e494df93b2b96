// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// examples/gemm.cpp -- strata::gemm on the backend of this build (the host emulator unless built for
// CUDA or HIP), with an optional check against the double reference.
//
//   gemm --m M --n N --k K [--dtype fp32|tf32|fp16|bf16|int8|e4m3|e5m2] [--layout nn|nt|tn|tt] [--batch B]
//        [--epilogue none|bias_relu] [--scales tensor|rowcol] [--check] [--bench]
//
// Layout letters are BLAS's: n = the operand as stored row-major (not transposed), t = stored
// column-major. D is row-major; its type is the input's (int32 for i8, bf16 for the fp8 formats).
// fp8 (e4m3, e5m2) quantizes random fp32 data the way an fp8 training or inference step does: each
// tensor (--scales tensor, the default) or each row of A and column of B (--scales rowcol) is divided
// by amax / (the format's largest value), and those scales go to strata::gemm as its dequantization
// scales (options.a_scale / b_scale). fp8 needs a build with fp8 units (CUDA sm_90a+ with
// STRATA_GEMM_FP8, HIP gfx942) or the host emulator; elsewhere strata::gemm says so. With --check the last line is
// PASS or FAIL: the maximum relative error (|D - ref| / max(|ref|, K/4, 1)) against the tolerance of
// the dtype and K (ops/gemm/reference.hpp). On the emulator a product over about 2^31 multiply-adds
// would take many minutes, so larger shapes are refused with a message instead of running forever.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <strata/gemm.hpp>

#include "command_line.hpp"
#include "random_inputs.hpp"

namespace sg = strata::ops::gemm;

namespace {

using strata_examples::random_values;

template <class T>
inline constexpr bool is_fp8 = std::is_same_v<T, strata::f8_e4m3> || std::is_same_v<T, strata::f8_e5m2>;

/// fp8 quantization of a (rows x cols) operand stored with leading dimension ld in `order`, batch
/// entries `stride` apart: scale = amax / T's largest finite value, per tensor (one scale over every
/// batch entry, as strata::gemm shares its scales across the batch) or per row (`per_row`, the rows
/// of A) / per column (`per_col`, the columns of B); q = T(x / scale). An all-zero group gets scale 1.
template <class T>
std::vector<T> quantize(const std::vector<float>& x, int batch, std::size_t stride, int rows, int cols, long long ld,
                        sg::layout order, bool per_row, bool per_col, std::vector<float>& scales) {
  const double fmax = static_cast<float>(std::numeric_limits<T>::max());
  const int groups = per_row ? rows : per_col ? cols : 1;
  std::vector<double> amax(std::max(groups, 1), 0.0);
  auto at = [&](int bt, int r, int c) { return bt * stride + std::size_t(order == sg::layout::row_major ? r * ld + c : c * ld + r); };
  auto group = [&](int r, int c) { return per_row ? r : per_col ? c : 0; };
  for (int bt = 0; bt < batch; ++bt)
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) amax[group(r, c)] = std::max(amax[group(r, c)], double(std::abs(x[at(bt, r, c)])));
  scales.assign(amax.size(), 1.f);
  for (std::size_t g = 0; g < amax.size(); ++g)
    if (amax[g] > 0) scales[g] = float(amax[g] / fmax);
  std::vector<T> q(x.size(), T(0.f));
  for (int bt = 0; bt < batch; ++bt)
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) q[at(bt, r, c)] = T(x[at(bt, r, c)] / scales[group(r, c)]);
  return q;
}

template <class TA, class TD>
int run(int m, int n, int k, int batch, bool ta, bool tb, strata::dtype in, strata::dtype out, bool bias_relu, bool check,
        bool bench, bool tf32 = false, bool rowcol = false) {
  strata::stream s;
  const auto la = ta ? sg::layout::col_major : sg::layout::row_major, lb = tb ? sg::layout::col_major : sg::layout::row_major;
  const long long lda = ta ? m : k, ldb = tb ? k : n;
  const std::size_t sa = std::size_t(m) * k, sb = std::size_t(k) * n, sd = std::size_t(m) * n;
  // fp8: random fp32 data quantized with its scales; the reference multiplies the fp8 values and scales.
  std::vector<float> hsa, hsb;
  std::vector<TA> ha, hb;
  if constexpr (is_fp8<TA>) {
    ha = quantize<TA>(random_values<float>(sa * batch, 1), batch, sa, m, k, lda, la, rowcol, false, hsa);
    hb = quantize<TA>(random_values<float>(sb * batch, 2), batch, sb, k, n, ldb, lb, false, rowcol, hsb);
  } else {
    ha = random_values<TA>(sa * batch, 1);
    hb = random_values<TA>(sb * batch, 2);
  }
  strata::device_buffer<float> dsa(std::max<std::size_t>(1, hsa.size())), dsb(std::max<std::size_t>(1, hsb.size()));
  const auto hbias = random_values<float>(std::max(n, 1), 3);
  std::vector<TD> hd(sd * batch, TD(-7));  // poisoned
  strata::device_buffer<TA> da(std::max<std::size_t>(1, sa * batch)), db(std::max<std::size_t>(1, sb * batch));
  strata::device_buffer<TD> dd(std::max<std::size_t>(1, sd * batch));
  strata::device_buffer<float> dbias(hbias.size());
  strata::copy_to_device(s, da.data(), ha.data(), ha.size());
  strata::copy_to_device(s, db.data(), hb.data(), hb.size());
  strata::copy_to_device(s, dd.data(), hd.data(), hd.size());
  strata::copy_to_device(s, dbias.data(), hbias.data(), hbias.size());
  if (!hsa.empty()) strata::copy_to_device(s, dsa.data(), hsa.data(), hsa.size());
  if (!hsb.empty()) strata::copy_to_device(s, dsb.data(), hsb.data(), hsb.size());
  const sg::matrix a{da.data(), m, k, std::max(1LL, lda), la, in, (long long)sa},
      b{db.data(), k, n, std::max(1LL, ldb), lb, in, (long long)sb}, d{dd.data(), m, n, std::max(1, n), sg::layout::row_major, out, (long long)sd};
  sg::options o{.batch = batch, .bias = bias_relu ? dbias.data() : nullptr,
                .act = bias_relu ? sg::activation::relu : sg::activation::none, .tf32 = tf32};
  if constexpr (is_fp8<TA>) {
    o.a_scale = dsa.data();
    o.b_scale = dsb.data();
    o.a_scale_per_row = o.b_scale_per_col = rowcol;
  }
  const auto t0 = std::chrono::steady_clock::now();
  strata::gemm(s, a, b, d, d, o);
  s.synchronize();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const double flops = 2.0 * m * n * k * batch;
  std::printf("gemm %dx%dx%d batch %d %s -> %s layout %c%c epilogue %s%s: %.3f ms, %.3f GFLOP/s\n", m, n, k, batch,
              sg::to_string(in), sg::to_string(out), ta ? 't' : 'n', tb ? 't' : 'n', bias_relu ? "bias_relu" : "none",
              is_fp8<TA> ? (rowcol ? " scales rowcol" : " scales tensor") : "", ms, ms > 0 ? flops / ms / 1e6 : 0.0);
  if (bench) {
    const int reps = 3;
    const auto t1 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) strata::gemm(s, a, b, d, d, o);
    s.synchronize();
    const double bms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count() / reps;
    std::printf("bench: %.3f ms per call, %.3f GFLOP/s (%d calls)\n", bms, bms > 0 ? flops / bms / 1e6 : 0.0, reps);
  }
  if (!check) return 0;
  std::vector<TD> got(sd * batch);
  strata::copy_to_host(s, got.data(), dd.data(), got.size());
  s.synchronize();
  // TF32 rounds the inputs to 10 mantissa bits (where the target has TF32 units; elsewhere it is exact fp32).
  const double tol = sg::reference::tolerance(k, tf32 ? 10 : strata::ops::gemm::reference::mantissa_bits<TD>());
  double worst = 0;
  for (int bt = 0; bt < batch; ++bt) {
    const auto ref = sg::reference::product(m, n, k, ha.data() + bt * sa, lda, la, hb.data() + bt * sb, ldb, lb);
    for (std::size_t i = 0; i < sd; ++i) {
      double want = ref[i];
      if constexpr (is_fp8<TA>) want *= double(hsa[rowcol ? i / std::max(n, 1) : 0]) * double(hsb[rowcol ? i % n : 0]);
      if (bias_relu) want = std::max(0.0, want + hbias[i % n]);
      if constexpr (std::is_integral_v<TD>) want = std::nearbyint(want);
      const double v = sg::reference::to_double(got[bt * sd + i]);
      const double err = std::abs(v - want) / std::max({std::abs(want), k / 4.0, 1.0});
      worst = std::isnan(err) ? INFINITY : std::max(worst, err);
    }
  }
  std::printf("max relative error %.3g (tolerance %.3g)\n", worst, tol);
  std::printf("%s\n", worst <= tol ? "PASS" : "FAIL");
  return worst <= tol ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  long long m = -1, n = -1, k = -1, batch = 1;
  std::string dtype = "bf16", layout = "nn", epi = "none", scales = "tensor";
  bool check = false, bench = false;
  strata_examples::command_line cl(
      "gemm",
      "usage: gemm --m M --n N --k K [--dtype fp32|tf32|fp16|bf16|int8|e4m3|e5m2] [--layout nn|nt|tn|tt]\n"
      "            [--batch B] [--epilogue none|bias_relu] [--scales tensor|rowcol] [--check] [--bench]",
      argc, argv, strata_examples::usage_shown::after_errors);
  constexpr long long max_number = (1LL << 31) - 1;
  while (cl.next()) {
    if (cl.is("--m")) m = cl.integer(0, max_number);
    else if (cl.is("--n")) n = cl.integer(0, max_number);
    else if (cl.is("--k")) k = cl.integer(0, max_number);
    else if (cl.is("--batch")) batch = cl.integer(0, max_number);
    else if (cl.is("--dtype")) dtype = cl.value();
    else if (cl.is("--layout")) layout = cl.value();
    else if (cl.is("--epilogue")) epi = cl.value();
    else if (cl.is("--scales")) scales = cl.value();
    else if (cl.is("--check")) check = true;
    else if (cl.is("--bench")) bench = true;
    else cl.unknown();
  }
  if (m < 0 || n < 0 || k < 0) cl.fail("--m, --n and --k are required");
  if (batch < 1 || batch > 65535) cl.fail("--batch must be 1..65535");
  if (layout.size() != 2 || (layout[0] != 'n' && layout[0] != 't') || (layout[1] != 'n' && layout[1] != 't'))
    cl.fail("--layout must be nn, nt, tn or tt, got '" + layout + "'");
  if (epi != "none" && epi != "bias_relu") cl.fail("--epilogue must be none or bias_relu, got '" + epi + "'");
  if (scales != "tensor" && scales != "rowcol") cl.fail("--scales must be tensor or rowcol, got '" + scales + "'");
  const double work = double(m) * n * k * batch;
  const double elements = double(m) * std::max(n, k) * batch + double(k) * n * batch;
  if (elements > 4e8) cl.fail("the operands would need more than ~1.6 GB; choose smaller sizes");
#if STRATA_BACKEND_HOST
  // The emulator runs about 1e8 multiply-adds a second on this kind of machine; 2^31 is minutes.
  if (work > 2147483648.0)
    cl.fail("M*N*K*batch = " + std::to_string((long long)work) +
            " multiply-adds is too large for the CPU emulator (limit 2^31, a few minutes); choose smaller sizes or "
            "build for a GPU (-DSTRATA_ENABLE_CUDA=ON / -DSTRATA_ENABLE_HIP=ON)");
  // The double reference is K multiply-adds per element as well; the same bound covers it.
#endif
  const bool ta = layout[0] == 't', tb = layout[1] == 't', br = epi == "bias_relu";
  const int M = int(m), N = int(n), K = int(k), B = int(batch);
  using D = strata::dtype;
  std::string why;
  const auto type = strata::try_parse_dtype(dtype, {D::fp32, D::tf32, D::fp16, D::bf16, D::int8, D::e4m3, D::e5m2}, &why);
  if (!type) cl.fail("--dtype " + why);
  const bool rc = scales == "rowcol";
  try {
    switch (*type) {
      case D::fp32: return run<float, float>(M, N, K, B, ta, tb, strata::dtype::fp32, strata::dtype::fp32, br, check, bench);
      case D::tf32: return run<float, float>(M, N, K, B, ta, tb, strata::dtype::fp32, strata::dtype::fp32, br, check, bench, true);
      case D::fp16: return run<strata::f16, strata::f16>(M, N, K, B, ta, tb, strata::dtype::fp16, strata::dtype::fp16, br, check, bench);
      case D::bf16: return run<strata::bf16, strata::bf16>(M, N, K, B, ta, tb, strata::dtype::bf16, strata::dtype::bf16, br, check, bench);
      case D::int8: return run<std::int8_t, std::int32_t>(M, N, K, B, ta, tb, strata::dtype::int8, strata::dtype::int32, br, check, bench);
      case D::e4m3:
        return run<strata::f8_e4m3, strata::bf16>(M, N, K, B, ta, tb, strata::dtype::e4m3, strata::dtype::bf16, br, check, bench, false, rc);
      case D::e5m2:
        return run<strata::f8_e5m2, strata::bf16>(M, N, K, B, ta, tb, strata::dtype::e5m2, strata::dtype::bf16, br, check, bench, false, rc);
      default: break;  // try_parse_dtype accepted only the cases above
    }
  } catch (const strata::error& e) {
    std::fprintf(stderr, "gemm: %s\n", e.what());
    if (check) std::printf("FAIL\n");
    return 1;
  }
  return 2;
}
