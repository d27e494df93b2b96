// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/conv/reference.hpp -- the direct convolution every test and the example check against:
// fprop, dgrad and wgrad in double, written straight from the definition (a loop over every output,
// filter tap and channel), sharing nothing with the kernels but types.hpp's geometry. Host only.
//
//   y[n, z, p, q, k]  = sum_{t, r, s, c in group(k)} x[n, z S_d - P_d + t D_d, ..., c] w[k, t, r, s, c - c0]
//   dx[n, d, h, w, c] = sum over every (output pixel, tap) that reads x[n, d, h, w, c] of dy * w
//   dw[k, t, r, s, c] = sum_{n, z, p, q} dy[n, z, p, q, k] x[n, z S_d - P_d + t D_d, ..., c0 + c]
#pragma once

#include <cstddef>
#include <vector>

#include "strata/ops/conv/types.hpp"
#include "strata/ops/gemm/reference.hpp"

namespace strata::ops::conv::reference {

using gemm::reference::to_double;

/// Calls f(n, out pixel (z, p, q), in pixel (d, h, w), tap (t, r, s)) for every pair that overlaps.
template <class F>
void for_each_tap(const problem& pr, F&& f) {
  const spatial o = output_extent(pr);
  for (int n = 0; n < pr.n; ++n)
    for (int z = 0; z < o.d; ++z)
      for (int p = 0; p < o.h; ++p)
        for (int q = 0; q < o.w; ++q)
          for (int t = 0; t < pr.filter.d; ++t)
            for (int r = 0; r < pr.filter.h; ++r)
              for (int s = 0; s < pr.filter.w; ++s) {
                const int d = z * pr.stride.d - pr.pad.d + t * pr.dilation.d;
                const int h = p * pr.stride.h - pr.pad.h + r * pr.dilation.h;
                const int w = q * pr.stride.w - pr.pad.w + s * pr.dilation.w;
                if (d < 0 || d >= pr.input.d || h < 0 || h >= pr.input.h || w < 0 || w >= pr.input.w) continue;
                f(n, z, p, q, d, h, w, t, r, s);
              }
}

inline long long at(const strides& st, int n, int d, int h, int w, int c) {
  return n * st.n + d * st.d + h * st.h + w * st.w + c * st.c;
}
/// Filter element (k, t, r, s, c within the group), packed KTRSC.
inline long long filter_at(const problem& pr, int k, int t, int r, int s, int c) {
  return (((long long)k * pr.filter.d + t) * pr.filter.h + r) * pr.filter.w * pr.c_per_group() +
         (long long)s * pr.c_per_group() + c;
}

/// y (as doubles, packed NDHWC of the output extent) = conv(x, w).
template <class T>
std::vector<double> fprop(const problem& pr, const T* x, strides xs, const T* w) {
  const spatial o = output_extent(pr);
  const strides ys = channels_last(o, pr.k);
  std::vector<double> y(std::size_t(pr.n) * o.d * o.h * o.w * pr.k, 0.0);
  const int cg = pr.c_per_group(), kg = pr.k_per_group();
  for_each_tap(pr, [&](int n, int z, int p, int q, int d, int h, int ww, int t, int r, int s) {
    for (int k = 0; k < pr.k; ++k) {
      const int g = k / kg;
      double sum = 0;
      for (int c = 0; c < cg; ++c)
        sum += to_double(x[at(xs, n, d, h, ww, g * cg + c)]) * to_double(w[filter_at(pr, k, t, r, s, c)]);
      y[at(ys, n, z, p, q, k)] += sum;
    }
  });
  return y;
}

/// dx (packed NDHWC of the input extent) = the gradient of fprop with respect to x, for dy.
template <class T>
std::vector<double> dgrad(const problem& pr, const T* dy, strides dys, const T* w) {
  const strides xs = channels_last(pr.input, pr.c);
  std::vector<double> dx(std::size_t(pr.n) * pr.input.d * pr.input.h * pr.input.w * pr.c, 0.0);
  const int cg = pr.c_per_group(), kg = pr.k_per_group();
  for_each_tap(pr, [&](int n, int z, int p, int q, int d, int h, int ww, int t, int r, int s) {
    for (int c = 0; c < pr.c; ++c) {
      const int g = c / cg;
      double sum = 0;
      for (int k = g * kg; k < (g + 1) * kg; ++k)
        sum += to_double(dy[at(dys, n, z, p, q, k)]) * to_double(w[filter_at(pr, k, t, r, s, c - g * cg)]);
      dx[at(xs, n, d, h, ww, c)] += sum;
    }
  });
  return dx;
}

/// dw (packed KTRSC) = the gradient of fprop with respect to w, for x and dy.
template <class T>
std::vector<double> wgrad(const problem& pr, const T* x, strides xs, const T* dy, strides dys) {
  std::vector<double> dw(std::size_t(pr.k) * pr.taps() * pr.c_per_group(), 0.0);
  const int cg = pr.c_per_group(), kg = pr.k_per_group();
  for_each_tap(pr, [&](int n, int z, int p, int q, int d, int h, int ww, int t, int r, int s) {
    for (int k = 0; k < pr.k; ++k) {
      const int g = k / kg;
      const double dyv = to_double(dy[at(dys, n, z, p, q, k)]);
      for (int c = 0; c < cg; ++c) dw[filter_at(pr, k, t, r, s, c)] += dyv * to_double(x[at(xs, n, d, h, ww, g * cg + c)]);
    }
  });
  return dw;
}

/// The sum of |products| behind each element is at most (terms) * max|x| max|w|: the tests scale
/// their tolerance by the reduction length, as gemm::reference::tolerance does by K.
inline int reduction_length(const problem& pr, kind k) {
  const spatial o = output_extent(pr);
  if (k == kind::fprop) return int(pr.taps() * pr.c_per_group());
  if (k == kind::dgrad) return int(pr.taps() * pr.k_per_group());
  return int((long long)pr.n * o.d * o.h * o.w);
}

}  // namespace strata::ops::conv::reference
