// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/gemm/reference.hpp -- the plain GEMM every test and the example check against: the
// product A * B in double, one batch entry, any layouts. Host only, deliberately naive.
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "strata/numeric/numeric.hpp"
#include "strata/ops/gemm/kernel.hpp"

namespace strata::ops::gemm::reference {

/// An element as double: narrow floats widen exactly through float.
template <class T>
double to_double(T x) {
  if constexpr (std::is_arithmetic_v<T>) return static_cast<double>(x);
  else return static_cast<double>(static_cast<float>(x));
}

/// Element (r, c) of a matrix stored with leading dimension ld in `order`.
template <class T>
T element(const T* data, long long ld, layout order, int r, int c) {
  return order == layout::row_major ? data[r * ld + c] : data[c * ld + r];
}

/// P = A (m x k) * B (k x n) in double, row-major m x n.
template <class TA, class TB>
std::vector<double> product(int m, int n, int k, const TA* a, long long lda, layout a_order, const TB* b,
                            long long ldb, layout b_order) {
  std::vector<double> p(std::size_t(m) * n, 0.0);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) {
      double s = 0;
      for (int i = 0; i < k; ++i)
        s += to_double(element(a, lda, a_order, r, i)) * to_double(element(b, ldb, b_order, i, c));
      p[std::size_t(r) * n + c] = s;
    }
  return p;
}

/// The mantissa bits of an output type, for tolerance(): the type's own count where it declares one
/// (f16 10, bf16 7, the fp8 formats), 23 for float; integer outputs are exact and never ask.
template <class T>
constexpr int mantissa_bits() {
  if constexpr (requires { T::mantissa_bits; }) return T::mantissa_bits;
  else return 23;
}

/// A tolerance for |D - reference| relative to max(|reference|, sum |a_i b_i| scale): the rounding of
/// the inputs is not counted (the reference sees the same rounded inputs); what remains is the
/// accumulation (about sqrt(K) ulps of fp32, K for int overflow-free sums: exact) and the output's
/// own rounding (half an ulp of TD).
///   fp32 accumulate, fp32 out   1e-5 * (1 + sqrt(K) / 4)
///   tf32 multiplies             + 2^-10 (operands rounded to 10 mantissa bits)
///   f16 out / bf16 out          + 2^-10 / 2^-7
///   int8 -> int32               exact (0)
inline double tolerance(int k, int output_mantissa_bits, bool tf32 = false, bool integer = false) {
  if (integer) return 0.0;
  double t = 1e-5 * (1.0 + std::sqrt(double(k > 0 ? k : 1)) / 4.0);
  if (tf32) t += 1.0 / 1024.0;
  if (output_mantissa_bits < 23) t += 1.0 / double(1 << output_mantissa_bits);
  return t;
}

}  // namespace strata::ops::gemm::reference
