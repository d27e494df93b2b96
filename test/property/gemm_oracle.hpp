// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/property/gemm_oracle.hpp -- checks what strata::gemm wrote against the double reference,
// reading every operand through its descriptor (any layout, ld, batch stride, dtype). Shared by the
// property test and the fuzz target; no Catch2. Emulator builds only: device pointers are host memory.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "strata/gemm.hpp"

namespace strata_oracle::gemm {

namespace sg = strata::ops::gemm;

/// Element `i` (in elements) of an array of `t` as double.
inline double load(strata::dtype t, const void* base, long long i) {
  const auto* p = static_cast<const unsigned char*>(base);
  switch (t) {
    case strata::dtype::fp32: { float x; std::memcpy(&x, p + 4 * i, 4); return x; }
    case strata::dtype::int32: { std::int32_t x; std::memcpy(&x, p + 4 * i, 4); return x; }
    case strata::dtype::fp16: { std::uint16_t b; std::memcpy(&b, p + 2 * i, 2); return double(float(strata::f16::from_bits(b))); }
    case strata::dtype::bf16: { std::uint16_t b; std::memcpy(&b, p + 2 * i, 2); return double(float(strata::bf16::from_bits(b))); }
    case strata::dtype::int8: return static_cast<std::int8_t>(p[i]);
    case strata::dtype::e4m3: return double(float(strata::f8_e4m3::from_bits(p[i])));
    case strata::dtype::e5m2: return double(float(strata::f8_e5m2::from_bits(p[i])));
    default: break;  // tf32, int4: no GEMM operand has them
  }
  return 0;
}

/// convert_to<T>'s default overflow (epilogue/convert.hpp): results beyond T's range saturate.
inline double saturate(strata::dtype t, double v) {
  const double hi = t == strata::dtype::fp16 ? 65504.0 : t == strata::dtype::bf16 ? 3.3895313892515355e38
                  : t == strata::dtype::int32 ? 2147483647.0 : t == strata::dtype::fp32 ? 3.4028234663852886e38 : 1e300;
  const double lo = t == strata::dtype::int32 ? -2147483648.0 : -hi;
  return t == strata::dtype::fp32 ? v : std::clamp(v, lo, hi);
}

inline int mantissa_bits(strata::dtype t) {
  return t == strata::dtype::fp16 ? 10 : t == strata::dtype::bf16 ? 7 : 23;
}

/// Offset (elements) of (r, c) of batch entry bt of x.
inline long long offset(const sg::matrix& x, int bt, int r, int c) {
  return static_cast<long long>(bt) * x.batch_stride + (x.order == sg::layout::row_major ? r * x.ld + c : c * x.ld + r);
}

/// Elements of the allocation a descriptor spans over `batch` entries (0 when it holds no element).
inline long long span(const sg::matrix& x, int batch) {
  if (x.rows <= 0 || x.cols <= 0) return 0;
  const long long outer = x.order == sg::layout::row_major ? x.rows : x.cols;
  const long long inner = x.order == sg::layout::row_major ? x.cols : x.rows;
  return static_cast<long long>(std::max(0, batch - 1)) * x.batch_stride + (outer - 1) * x.ld + inner;
}

/// Checks D after a call that returned. c_before / d_before: host copies (taken before the call) of
/// C's and D's allocations starting at c.data / d.data, c_elems / d_elems elements long; bias: host
/// copy of options.bias (or null). Every D element of the problem must match the reference within
/// the tolerance of test/gemm (reference::tolerance, scale = the sum of |terms|), every other element
/// of D's allocation must be unchanged. Returns "" or a description of the first mismatch.
inline std::string check(const sg::matrix& a, const sg::matrix& b, const sg::matrix& c, const sg::matrix& d,
                         const sg::options& o, const void* c_before, const void* d_before, long long d_elems,
                         const float* bias) {
  const int m = d.rows, n = d.cols, k = a.cols, batch = o.batch;
  const bool integer = d.type == strata::dtype::int32;
  const double tol = sg::reference::tolerance(k, mantissa_bits(d.type), false, integer);
  std::vector<char> covered(static_cast<std::size_t>(std::max<long long>(0, d_elems)), 0);
  // D entries of different batches may overlap only when D's batch stride is 0 (then the element
  // holds one of the batch entries' results).
  const bool shared_d = batch > 1 && d.batch_stride == 0;
  std::ostringstream why;
  for (int r = 0; r < m; ++r)
    for (int col = 0; col < n; ++col) {
      bool ok_any = false;
      std::string first_bad;
      for (int bt = 0; bt < batch; ++bt) {
        double p = 0, mag = 0;
        for (int i = 0; i < k; ++i) {
          const double x = load(a.type, a.data, offset(a, bt, r, i)) * load(b.type, b.data, offset(b, bt, i, col));
          p += x;
          mag += std::fabs(x);
        }
        double want = double(o.alpha) * p;
        mag *= std::fabs(double(o.alpha));
        if (o.beta != 0.f) {
          const double cv = double(o.beta) * load(c.type, c_before, offset(c, bt, r, col));
          want += cv;
          mag += std::fabs(cv);
        }
        if (bias) want += bias[col], mag += std::fabs(bias[col]);
        if (o.act == sg::activation::relu && want < 0) want = 0;
        const double sat = saturate(d.type, want);  // epilogue::convert_to's default: narrow outputs saturate
        if (sat != want) want = sat, mag = std::fabs(sat);  // a saturated result is checked against the bound
        const long long at = offset(d, bt, r, col);
        if (at < 0 || at >= d_elems) return "internal: D element outside the snapshot";
        covered[static_cast<std::size_t>(at)] = 1;
        const double got = load(d.type, d.data, at);
        bool ok;
        if (integer) ok = std::fabs(got - want) <= 0.5 + 1e-5 * std::max(1.0, mag);
        else {
          const double scale = std::max({std::fabs(want), mag, 1.0});
          ok = std::fabs(got - want) / scale <= tol;
        }
        if (ok) ok_any = true;
        else if (first_bad.empty()) {
          std::ostringstream s;
          s << "D(" << r << ", " << col << ") batch " << bt << " = " << got << ", want " << want << " (|terms| " << mag
            << ", tolerance " << tol << ")";
          first_bad = s.str();
        }
        if (!shared_d && !ok) return first_bad;
      }
      if (shared_d && !ok_any) return first_bad + " [D batch_stride 0: no batch entry matches]";
    }
  // Everything else of D's allocation is untouched.
  const std::size_t es = sg::size_of(d.type);
  for (long long i = 0; i < d_elems; ++i)
    if (!covered[static_cast<std::size_t>(i)] &&
        std::memcmp(static_cast<const unsigned char*>(d.data) + i * es, static_cast<const unsigned char*>(d_before) + i * es, es) != 0) {
      why << "D element " << i << " of the allocation (outside the problem) was written";
      return why.str();
    }
  return "";
}

inline std::string describe(const sg::matrix& a, const sg::matrix& b, const sg::matrix& c, const sg::matrix& d, const sg::options& o) {
  std::ostringstream s;
  auto one = [&](const char* nm, const sg::matrix& x) {
    s << nm << "{" << x.rows << "x" << x.cols << " ld " << x.ld << (x.order == sg::layout::row_major ? " row" : " col") << " "
      << sg::to_string(x.type) << " bs " << x.batch_stride << (x.data ? "" : " null") << "} ";
  };
  one("a", a), one("b", b), one("c", c), one("d", d);
  s << "alpha " << o.alpha << " beta " << o.beta << " batch " << o.batch << (o.bias ? " bias" : "")
    << (o.act == sg::activation::relu ? " relu" : "") << " split_k " << o.split_k << (o.stream_k ? " stream_k" : "")
    << " blocks " << o.stream_k_blocks << " work " << o.work.bytes << (c.data == d.data ? " C=D" : "");
  return s.str();
}

}  // namespace strata_oracle::gemm
