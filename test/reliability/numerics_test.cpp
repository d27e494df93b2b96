// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Defined numerics (issue "Reliability", item 5), each checked exactly:
//   GEMM: a NaN in row r of A poisons exactly row r of D; Inf * 0 = NaN; +-Inf stays +-Inf in fp32
//   output; narrow outputs (f16, bf16) SATURATE: a result beyond the largest finite value, Inf
//   included, becomes +-max (epilogue::convert_to's default overflow::saturate); NaN stays NaN; C is
//   not read when beta == 0 (a NaN there does not propagate); ReLU passes NaN through; the same with
//   split-K. int8 -> int32: products are accumulated exactly in int32 (no overflow for
//   K * 128 * 128 < 2^31, i.e. K <= 131071 at the extreme values); the epilogue goes through float,
//   so D is exact while |D| <= 2^24 and rounds to nearest even float above; a float beyond the int32
//   range saturates.
//   Attention: rows with no visible key give O = 0 and LSE = -inf (never NaN), with a sink O = 0 and
//   LSE = the sink; a score_mod returning -inf is exactly a masked key (bitwise); a row whose every
//   score is -inf is a fully masked row; the backward gives fully masked rows zero gradients.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "../unit/support.hpp"
#include "strata/attention.hpp"
#include "strata/gemm.hpp"

using namespace strata_test;
namespace sg = strata::ops::gemm;
using strata::dtype;
using sg::layout;
using strata::bf16;
using strata::f16;

namespace {

constexpr float inf = std::numeric_limits<float>::infinity();
const float qnan = std::numeric_limits<float>::quiet_NaN();

template <class T>
float to_f(T x) {
  return static_cast<float>(x);
}

template <class T>
constexpr dtype dt() {
  if constexpr (std::is_same_v<T, float>) return strata::dtype::fp32;
  else if constexpr (std::is_same_v<T, bf16>) return strata::dtype::bf16;
  else return strata::dtype::fp16;
}

// A (m x k) and B (k x n), row-major, values in [0.25, 1] (B all positive so an Inf keeps its sign),
// with the special values planted:
//   A(r_nan, 3) = NaN                 -> D row r_nan is NaN, every column
//   A(r_pinf, 5) = +Inf, B(5, c0) = 0 -> D(r_pinf, c0) = NaN (Inf * 0), D(r_pinf, c != c0) = +Inf
//   A(r_ninf, 7) = -Inf               -> D(r_ninf, *) = -Inf
// Every other element of D is finite.
struct special_case {
  int m = 40, n = 36, k = 20;
  int r_nan = 5, r_pinf = 33, r_ninf = 38, c0 = 17;
  std::vector<float> a, b;
  special_case() {
    std::mt19937_64 g(3);
    std::uniform_real_distribution<float> u(0.25f, 1.f);
    a.resize(std::size_t(m) * k);
    b.resize(std::size_t(k) * n);
    for (auto& x : a) x = (g() & 1) ? u(g) : -u(g);
    for (auto& x : b) x = u(g);
    a[std::size_t(r_nan) * k + 3] = qnan;
    a[std::size_t(r_pinf) * k + 5] = inf;
    a[std::size_t(r_ninf) * k + 7] = -inf;
    b[std::size_t(5) * n + c0] = 0.f;
  }
};

enum class expect { finite, nan, pinf, ninf, pmax, nmax };

template <class TA, class TD>
void gemm_specials(int split_k, bool relu, bool nan_in_c) {
  INFO("split_k " << split_k << " relu " << relu << " nan_in_c " << nan_in_c);
  special_case c;
  strata::stream s;
  std::vector<TA> ha(c.a.begin(), c.a.end()), hb(c.b.begin(), c.b.end());
  std::vector<TD> hd(std::size_t(c.m) * c.n, TD(0.f));
  if (nan_in_c)
    for (auto& x : hd) x = TD(qnan);  // C = D, read only when beta != 0: here beta == 0
  auto da = to_device(s, ha), db = to_device(s, hb);
  auto dd = to_device(s, hd);
  const sg::matrix a{da.data(), c.m, c.k, c.k, layout::row_major, dt<TA>()}, b{db.data(), c.k, c.n, c.n, layout::row_major, dt<TA>()},
      d{dd.data(), c.m, c.n, c.n, layout::row_major, dt<TD>()};
  sg::options o{.alpha = 1.f, .beta = 0.f, .act = relu ? sg::activation::relu : sg::activation::none, .split_k = split_k};
  strata::device_buffer<unsigned char> work(sg::workspace_size(d, o) + 16);
  if (split_k > 1) o.work = {work.data(), work.size()};
  strata::gemm(s, a, b, d, d, o);
  const auto out = to_host(s, dd);
  const bool narrow = !std::is_same_v<TD, float>;
  for (int r = 0; r < c.m; ++r)
    for (int col = 0; col < c.n; ++col) {
      expect want = expect::finite;
      if (r == c.r_nan) want = expect::nan;
      else if (r == c.r_pinf) want = col == c.c0 ? expect::nan : (narrow ? expect::pmax : expect::pinf);
      else if (r == c.r_ninf) want = narrow ? expect::nmax : expect::ninf;
      if (relu && (want == expect::ninf || want == expect::nmax)) want = expect::finite;  // max(-Inf, 0) = 0
      const float v = to_f(out[std::size_t(r) * c.n + col]);
      INFO("D(" << r << ", " << col << ") = " << v);
      switch (want) {
        case expect::finite:
          REQUIRE(std::isfinite(v));
          if (relu) REQUIRE(v >= 0.f);
          break;
        case expect::nan: REQUIRE(std::isnan(v)); break;
        case expect::pinf: REQUIRE(v == inf); break;
        case expect::ninf: REQUIRE(v == -inf); break;
        case expect::pmax: REQUIRE(v == to_f(std::numeric_limits<TD>::max())); break;
        case expect::nmax: REQUIRE(v == -to_f(std::numeric_limits<TD>::max())); break;
      }
    }
}

}  // namespace

TEST_CASE("gemm numerics: NaN and Inf propagation, f32", "[numerics][gemm]") {
  gemm_specials<float, float>(1, false, false);
  gemm_specials<float, float>(2, false, true);  // split-K: the NaN / Inf travel through the fp32 partials
  gemm_specials<float, float>(1, true, false);  // ReLU: NaN passes through, -Inf becomes 0
}

TEST_CASE("gemm numerics: NaN and Inf propagation, bf16 inputs", "[numerics][gemm]") {
  gemm_specials<bf16, float>(1, false, true);
  gemm_specials<bf16, float>(2, true, false);
  gemm_specials<bf16, bf16>(1, false, false);  // bf16 output: +-Inf saturates to +-max, NaN stays NaN
  gemm_specials<bf16, bf16>(2, false, false);
}

TEST_CASE("gemm numerics: beta != 0 reads C, so a NaN in C propagates to that element only", "[numerics][gemm]") {
  strata::stream s;
  std::vector<float> ha(16, 0.5f), hc(16, 1.f);
  hc[6] = qnan;
  auto da = to_device(s, ha), dc = to_device(s, hc);
  auto dd = poisoned(s, 16, 0.f);
  const sg::matrix a{da.data(), 4, 4, 4, layout::row_major, strata::dtype::fp32}, c{dc.data(), 4, 4, 4, layout::row_major, strata::dtype::fp32},
      d{dd.data(), 4, 4, 4, layout::row_major, strata::dtype::fp32};
  strata::gemm(s, a, a, c, d, {.beta = 1.f});
  const auto out = to_host(s, dd);
  for (int i = 0; i < 16; ++i) {
    INFO(i);
    if (i == 6) CHECK(std::isnan(out[i]));
    else CHECK(out[i] == 2.f);  // 4 * 0.25 + 1
  }
}

TEST_CASE("gemm numerics: f16 output overflow saturates to +-65504 (Inf too); NaN stays NaN", "[numerics][gemm]") {
  // K = 1: D = a * b, computed in fp32 and converted once (round to nearest even, then saturate).
  strata::stream s;
  const std::vector<float> av{256.f, -256.f, 255.f, 100.f, inf, -inf, qnan, 65504.f};
  const std::vector<float> bv{256.f, 256.f, 256.875f, 655.1f, 1.f, 1.f, 1.f, 1.f};
  // 65536 -> max; -65536 -> -max; 65535 -> max (IEEE: +Inf); 100 * 655 = 65500 -> 65504 (below the
  // rounding boundary 65520: ordinary rounding); +Inf -> max; -Inf -> -max; NaN -> NaN; 65504 -> 65504.
  const int m = int(av.size());
  std::vector<f16> ha, hb;
  for (float x : av) ha.push_back(f16(x));
  for (float x : bv) hb.push_back(f16(x));
  auto da = to_device(s, ha), db = to_device(s, hb);
  auto dd = poisoned(s, std::size_t(m) * m, f16(0.f));
  // A: m x 1 column, B: 1 x m row -> D(i, j) = a_i * b_j; we read the diagonal.
  const sg::matrix a{da.data(), m, 1, 1, layout::row_major, strata::dtype::fp16}, b{db.data(), 1, m, m, layout::row_major, strata::dtype::fp16},
      d{dd.data(), m, m, m, layout::row_major, strata::dtype::fp16};
  strata::gemm(s, a, b, d, d);
  const auto out = to_host(s, dd);
  auto diag = [&](int i) { return static_cast<float>(out[std::size_t(i) * m + i]); };
  const float mx = 65504.f;
  CHECK(diag(0) == mx);
  CHECK(diag(1) == -mx);
  // f16(256.875) = 257 (tie to even), 255 * 257 = 65535: past the rounding boundary 65520, so IEEE
  // would give +Inf (numeric's f16(float) does); the GEMM output saturates to 65504.
  CHECK(static_cast<float>(f16(static_cast<float>(f16(255.f)) * static_cast<float>(f16(256.875f)))) == inf);
  CHECK(diag(2) == mx);
  CHECK(diag(3) == static_cast<float>(f16(static_cast<float>(f16(100.f)) * static_cast<float>(f16(655.1f)))));
  CHECK(std::isfinite(diag(3)));
  CHECK(diag(4) == mx);
  CHECK(diag(5) == -mx);
  CHECK(std::isnan(diag(6)));
  CHECK(diag(7) == mx);
  // f32 output of the same products: true IEEE values, Inf included.
  auto d32 = poisoned(s, std::size_t(m) * m, 0.f);
  const sg::matrix dd32{d32.data(), m, m, m, layout::row_major, strata::dtype::fp32};
  strata::gemm(s, a, b, dd32, dd32);
  const auto o32 = to_host(s, d32);
  CHECK(o32[0] == 65536.f);
  CHECK(o32[std::size_t(4) * m + 4] == inf);
  CHECK(o32[std::size_t(5) * m + 5] == -inf);
}

namespace {
/// int8 GEMM of one row a (1 x k) and two columns b (k x 2), int32 output.
std::vector<std::int32_t> int8_dot(const std::vector<std::int8_t>& a, const std::vector<std::int8_t>& b, int k) {
  strata::stream s;
  auto da = to_device(s, a), db = to_device(s, b);
  auto dd = poisoned(s, 2, std::int32_t(0x7eadbeef));
  const sg::matrix ma{da.data(), 1, k, k, layout::row_major, strata::dtype::int8}, mb{db.data(), k, 2, k, layout::col_major, strata::dtype::int8},
      md{dd.data(), 1, 2, 2, layout::row_major, strata::dtype::int32};
  strata::gemm(s, ma, mb, md, md);
  return to_host(s, dd);
}
}  // namespace

TEST_CASE("gemm numerics: int8 -> int32 accumulation range", "[numerics][gemm]") {
  SECTION("exact up to |D| = 2^24, nearest-even float above (the epilogue is float)") {
    const int k = 1025;
    std::vector<std::int8_t> a(k, -128), b(2 * k, -128);
    a[k - 1] = 1;
    b[k - 1] = 1;      // column 0: 1024 * 16384 + 1 = 2^24 + 1
    b[2 * k - 1] = 0;  // column 1: 1024 * 16384 = 2^24
    const auto d = int8_dot(a, b, k);
    CHECK(d[1] == (1 << 24));
    CHECK(d[0] == (1 << 24));  // 2^24 + 1 is not a float: ties to even -> 2^24 (documented in docs/gemm.md)
    std::vector<std::int8_t> a2(k, 127), b2(2 * k, -128);
    b2[k - 1] = 0;  // column 0: 1024 * -16256 = -16646144 (< 2^24): exact
    const auto d2 = int8_dot(a2, b2, k);
    CHECK(d2[0] == 1024 * 127 * -128);
    CHECK(d2[1] == 1025 * 127 * -128);  // -16662400: even, representable -> exact
  }
  SECTION("no int32 overflow up to K = 131071 at the extremes; beyond int32, float saturates") {
    // 131071 * (-128 * -128) = 2^31 - 16384: the int32 accumulator holds it, the float epilogue too.
    // Adding 127 * 127 + 127 * 2 reaches 2^31 - 1 = INT_MAX exactly; float(INT_MAX) = 2^31, which
    // convert_to<int32> saturates back to INT_MAX.
    const int k = 131073;
    std::vector<std::int8_t> a(k, -128), b(2 * k, -128);
    a[k - 2] = 127, b[k - 2] = 127;
    a[k - 1] = 127, b[k - 1] = 2;
    b[k + k - 2] = 0, b[k + k - 1] = 0;  // column 1: 131071 * 16384
    const auto d = int8_dot(a, b, k);
    CHECK(d[1] == 2147467264);
    CHECK(d[0] == 2147483647);
  }
}

// ---- attention -------------------------------------------------------------------------------------

namespace A = strata::attn;
using host = strata::arch::host;

namespace {

/// Keys with odd index get a score of -inf (through score_mod), or are masked (through mask_mod).
struct odd_keys_neg_inf {
  STRATA_HOST_DEVICE float operator()(float s, int, int, int, int k) const { return (k & 1) ? -__builtin_huge_valf() : s; }
};
struct odd_keys_masked {
  STRATA_HOST_DEVICE bool operator()(int, int, int, int k) const { return (k & 1) == 0; }
};
/// Every score of query rows 0 and 1 is -inf; other rows unchanged.
struct rows01_neg_inf {
  STRATA_HOST_DEVICE float operator()(float s, int, int, int q, int) const { return q < 2 ? -__builtin_huge_valf() : s; }
};

struct attn_io {
  static constexpr int B = 1, H = 2, SQ = 9, SK = 5, D = 32;
  strata::stream s;
  std::vector<float> q, k, v;
  strata::device_buffer<float> dq, dk, dv, dout, dlse;
  attn_io() {
    q = random_vector<float>(std::size_t(B) * SQ * H * D, 1, -1.f, 1.f);
    k = random_vector<float>(std::size_t(B) * SK * H * D, 2, -1.f, 1.f);
    v = random_vector<float>(std::size_t(B) * SK * H * D, 3, -1.f, 1.f);
    dq = to_device(s, q), dk = to_device(s, k), dv = to_device(s, v);
    dout = poisoned(s, q.size(), qnan);
    dlse = poisoned(s, std::size_t(B) * H * SQ, qnan);
  }
  A::tensor T(float* p, int sl) { return A::bshd(p, strata::dtype::fp32, B, sl, H, D); }
  template <class SM = A::no_score_mod, class MM = A::no_mask_mod>
  std::pair<std::vector<float>, std::vector<float>> run(A::options opt, SM sm = {}, MM mm = {}) {
    opt.lse = dlse.data();
    A::run<float, D, D, host>(s, T(dq.data(), SQ), T(dk.data(), SK), T(dv.data(), SK), T(dout.data(), SQ), opt, sm, mm);
    return {to_host(s, dout), to_host(s, dlse)};
  }
  float o(const std::vector<float>& x, int i, int h, int d) const { return x[(std::size_t(i) * H + h) * D + d]; }
};

}  // namespace

TEST_CASE("attention numerics: fully masked rows give O = 0 and LSE = -inf, never NaN", "[numerics][attention]") {
  attn_io io;
  // Causal, bottom-right alignment with SQ 9 > SK 5: query i sees keys j <= i - 4, so rows 0..3 see none.
  A::options opt;
  opt.causal = true;
  const auto [o, lse] = io.run(opt);
  for (int h = 0; h < attn_io::H; ++h)
    for (int i = 0; i < attn_io::SQ; ++i) {
      INFO("head " << h << " row " << i);
      const float l = lse[std::size_t(h) * attn_io::SQ + i];
      if (i < 4) {
        CHECK(l == -inf);
        for (int d = 0; d < attn_io::D; ++d) CHECK(io.o(o, i, h, d) == 0.f);
      } else {
        CHECK(std::isfinite(l));
        for (int d = 0; d < attn_io::D; ++d) CHECK(std::isfinite(io.o(o, i, h, d)));
      }
    }
}

TEST_CASE("attention numerics: with a sink, fully masked rows give O = 0 and LSE = the sink", "[numerics][attention]") {
  attn_io io;
  const std::vector<float> sinks{0.75f, -1.5f};
  auto dsinks = to_device(io.s, sinks);
  A::options opt;
  opt.causal = true;
  opt.sinks = dsinks.data();
  const auto [o, lse] = io.run(opt);
  for (int h = 0; h < attn_io::H; ++h)
    for (int i = 0; i < 4; ++i) {
      INFO("head " << h << " row " << i);
      CHECK(lse[std::size_t(h) * attn_io::SQ + i] == sinks[h]);
      for (int d = 0; d < attn_io::D; ++d) CHECK(io.o(o, i, h, d) == 0.f);
    }
}

TEST_CASE("attention numerics: a score of -inf is exactly a masked key", "[numerics][attention]") {
  attn_io io;
  const auto [o1, l1] = io.run({}, odd_keys_neg_inf{});
  const auto [o2, l2] = io.run({}, A::no_score_mod{}, odd_keys_masked{});
  REQUIRE(o1.size() == o2.size());
  CHECK(std::memcmp(o1.data(), o2.data(), o1.size() * 4) == 0);
  CHECK(std::memcmp(l1.data(), l2.data(), l1.size() * 4) == 0);
  for (float x : o1) REQUIRE(std::isfinite(x));
  // A row whose every score is -inf behaves as a fully masked row: O = 0, LSE = -inf (no NaN).
  const auto [o3, l3] = io.run({}, rows01_neg_inf{});
  for (int h = 0; h < attn_io::H; ++h)
    for (int i = 0; i < attn_io::SQ; ++i) {
      INFO("head " << h << " row " << i);
      const float l = l3[std::size_t(h) * attn_io::SQ + i];
      if (i < 2) CHECK(l == -inf);
      else CHECK(std::isfinite(l));
      for (int d = 0; d < attn_io::D; ++d) {
        const float x = io.o(o3, i, h, d);
        if (i < 2) CHECK(x == 0.f);
        else CHECK(std::isfinite(x));
      }
    }
}

TEST_CASE("attention numerics: the backward gives fully masked rows zero gradients", "[numerics][attention]") {
  attn_io io;
  A::options opt;
  opt.causal = true;
  const auto fwd = io.run(opt);
  (void)fwd;
  const int SQ = attn_io::SQ, SK = attn_io::SK, H = attn_io::H, D = attn_io::D;
  auto gout = to_device(io.s, random_vector<float>(std::size_t(SQ) * H * D, 9, -1.f, 1.f));
  auto gq = poisoned(io.s, std::size_t(SQ) * H * D, qnan), gk = poisoned(io.s, std::size_t(SK) * H * D, qnan),
       gv = poisoned(io.s, std::size_t(SK) * H * D, qnan);
  opt.lse = io.dlse.data();
  const A::tensor q = io.T(io.dq.data(), SQ), k = io.T(io.dk.data(), SK), v = io.T(io.dv.data(), SK), o = io.T(io.dout.data(), SQ);
  strata::device_buffer<unsigned char> ws(std::max<std::size_t>(16, strata::attention_backward_workspace_size<host>(q, k, v, opt)));
  A::run_backward<float, 32, 32, host>(io.s, q, k, v, o, io.T(gout.data(), SQ), io.T(gq.data(), SQ), io.T(gk.data(), SK),
                                       io.T(gv.data(), SK), opt, {ws.data(), ws.size()});
  const auto hq = to_host(io.s, gq), hk = to_host(io.s, gk), hv = to_host(io.s, gv);
  for (int i = 0; i < SQ; ++i)
    for (int h = 0; h < H; ++h)
      for (int d = 0; d < D; ++d) {
        const float x = hq[(std::size_t(i) * H + h) * D + d];
        INFO("dq(" << i << ", " << h << ", " << d << ") = " << x);
        if (i < 4) REQUIRE(x == 0.f);
        else REQUIRE(std::isfinite(x));
      }
  for (float x : hk) REQUIRE(std::isfinite(x));
  for (float x : hv) REQUIRE(std::isfinite(x));
}
