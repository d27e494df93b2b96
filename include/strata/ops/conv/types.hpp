// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/conv/types.hpp -- what a convolution is: its geometry (1D, 2D and 3D in one form), the
// output-shape helper, and the device-side maps from a GEMM row to a tensor element.
//
//   namespace sc = strata::ops::conv;
//   sc::problem pr{.n = 32, .c = 64, .k = 128, .input = {1, 56, 56}, .filter = {1, 3, 3},
//                  .pad = {0, 1, 1}, .pad_end = {0, 1, 1}};
//   sc::spatial out = sc::output_extent(pr);   // {1, 56, 56}
//
// Every convolution is a 3D one: a 2D problem has depth 1 (input.d = filter.t = 1, pad 0, stride 1),
// a 1D one also height 1. The spatial triple is ordered (d, h, w) and the filter's (t, r, s), so a
// 2D NHWC tensor is the NDHWC tensor with D = 1.
//
// Layouts. Activations (x, y, dx, dy, a residual) are addressed through element strides for
// (n, d, h, w, c): packed channels-last (NWC / NHWC / NDHWC) is the fast path, any other order
// (NCHW: stride_c = H*W) is accepted at reduced speed (element-wise gathers). Filters are packed
// K x T x R x S x (C / groups): "KRSC", the layout cuDNN calls NHWC filters, group g owning output
// channels [g K/G, (g+1) K/G) and reading input channels [g C/G, (g+1) C/G).
//
// Output extent per spatial dimension (floor division, as every framework defines it):
//   out = (in + pad + pad_end - dilation * (filter - 1) - 1) / stride + 1
// and 0 when the padded input is smaller than the dilated filter (an empty output, which the host
// entries reject by name: a convolution with nothing to compute is almost always a shape mistake).
#pragma once

#include <cstdint>

#include "strata/config/config.hpp"

namespace strata::ops::conv {

/// Three spatial extents (or strides, paddings, dilations), ordered depth, height, width.
struct spatial {
  int d = 1, h = 1, w = 1;
  STRATA_HOST_DEVICE constexpr int operator[](int i) const { return i == 0 ? d : (i == 1 ? h : w); }
  friend constexpr bool operator==(const spatial&, const spatial&) = default;
};

/// The convolution: input N x (D, H, W) x C, filter K x (T, R, S) x C/groups, output N x (Z, P, Q) x K.
struct problem {
  int n = 1;       // batch
  int c = 0;       // input channels, all groups
  int k = 0;       // output channels, all groups
  int groups = 1;  // c and k are multiples of groups; groups == c is depthwise
  spatial input{1, 1, 1};
  spatial filter{1, 1, 1};
  spatial stride{1, 1, 1};
  spatial pad{0, 0, 0};      // zeros before the first element (front, top, left)
  spatial pad_end{0, 0, 0};  // zeros after the last (back, bottom, right): asymmetric padding
  spatial dilation{1, 1, 1};

  constexpr int c_per_group() const { return groups > 0 ? c / groups : 0; }
  constexpr int k_per_group() const { return groups > 0 ? k / groups : 0; }
  constexpr long long taps() const { return (long long)filter.d * filter.h * filter.w; }
};

/// One output extent (0 when the dilated filter does not fit the padded input).
STRATA_HOST_DEVICE constexpr int output_extent(int in, int filter, int stride, int pad, int pad_end, int dilation) {
  const long long span = (long long)in + pad + pad_end - (long long)dilation * (filter - 1) - 1;
  return span < 0 || stride <= 0 ? 0 : int(span / stride + 1);
}

/// The output's spatial extents (Z, P, Q).
constexpr spatial output_extent(const problem& p) {
  return {output_extent(p.input.d, p.filter.d, p.stride.d, p.pad.d, p.pad_end.d, p.dilation.d),
          output_extent(p.input.h, p.filter.h, p.stride.h, p.pad.h, p.pad_end.h, p.dilation.h),
          output_extent(p.input.w, p.filter.w, p.stride.w, p.pad.w, p.pad_end.w, p.dilation.w)};
}

/// Which product a kernel computes (the GEMM each one is, per group):
///   fprop  y  = conv(x, w)        M = N Z P Q (output pixels), N = K/G, K = T R S C/G
///   dgrad  dx = conv^T(dy, w)     M = N D H W (input pixels),  N = C/G, K = T R S K/G
///   wgrad  dw = dy^T (*) x        M = K/G, N = T R S C/G,              K = N Z P Q
/// dgrad is also the transposed convolution ("deconvolution") of dy.
enum class kind { fprop, dgrad, wgrad };

inline const char* to_string(kind k) {
  return k == kind::fprop ? "fprop" : (k == kind::dgrad ? "dgrad" : "wgrad");
}

/// A grid of pixels (N, D, H, W) with element strides: linear pixel index m <-> tensor offset.
/// The index runs w fastest, then h, d, n: the order of a channels-last tensor's pixels.
struct pixel_map {
  spatial extent{1, 1, 1};
  long long stride_n = 0, stride_d = 0, stride_h = 0, stride_w = 0;

  struct coords {
    int n, d, h, w;
  };
  STRATA_HOST_DEVICE constexpr coords decode(long long m) const {
    coords x{};
    x.w = int(m % extent.w);
    m /= extent.w;
    x.h = int(m % extent.h);
    m /= extent.h;
    x.d = int(m % extent.d);
    x.n = int(m / extent.d);
    return x;
  }
  STRATA_HOST_DEVICE constexpr long long offset(int n, int d, int h, int w) const {
    return n * stride_n + d * stride_d + h * stride_h + w * stride_w;
  }
  STRATA_HOST_DEVICE constexpr long long offset(long long m) const {
    const coords x = decode(m);
    return offset(x.n, x.d, x.h, x.w);
  }
  /// The same for a pixel index that is an int (every implicit-GEMM row and K index is): 32-bit
  /// unsigned division, a short sequence on GPUs where the 64-bit one is a long subroutine. With the
  /// 64-bit form the per-element epilogue of the MFMA fprop kernel grew past the unroller's limit on
  /// gfx940 and its accumulator went to scratch; the gathers run it for every vector of every stage.
  STRATA_HOST_DEVICE constexpr coords decode(int m) const {
    unsigned u = static_cast<unsigned>(m);
    coords x{};
    x.w = int(u % unsigned(extent.w));
    u /= unsigned(extent.w);
    x.h = int(u % unsigned(extent.h));
    u /= unsigned(extent.h);
    x.d = int(u % unsigned(extent.d));
    x.n = int(u / unsigned(extent.d));
    return x;
  }
  STRATA_HOST_DEVICE constexpr long long offset(int m) const {
    const coords x = decode(m);
    return offset(x.n, x.d, x.h, x.w);
  }
};

/// The geometry a kernel needs on the device (one group's GEMM plus the index maps).
struct geometry {
  spatial filter{1, 1, 1}, stride{1, 1, 1}, pad{0, 0, 0}, dilation{1, 1, 1};
  pixel_map in;            // x or dx: (N, D, H, W)
  pixel_map out;           // y or dy: (N, Z, P, Q)
  long long in_stride_c = 1, out_stride_c = 1;
  int n = 1;                     // batch
  int c_group = 0, k_group = 0;  // channels per group: input, output
  int groups = 1;

  STRATA_HOST_DEVICE constexpr int taps() const { return filter.d * filter.h * filter.w; }
  /// Elements of one output channel's filter (T R S C/G): the filter's row length.
  STRATA_HOST_DEVICE constexpr long long filter_row() const { return (long long)taps() * c_group; }
};

/// Element strides of an activation tensor for (n, d, h, w, c).
struct strides {
  long long n = 0, d = 0, h = 0, w = 0, c = 0;
  friend constexpr bool operator==(const strides&, const strides&) = default;
};

/// Packed channels-last (NDHWC; NHWC and NWC with D = 1, H = 1): the fast path.
constexpr strides channels_last(spatial e, int channels) {
  const long long c = channels;
  return {(long long)e.d * e.h * e.w * c, (long long)e.h * e.w * c, (long long)e.w * c, c, 1};
}
/// Packed channels-first (NCDHW; NCHW, NCW): accepted, element-wise gathers.
constexpr strides channels_first(spatial e, int channels) {
  const long long hw = (long long)e.h * e.w, dhw = hw * e.d;
  return {dhw * channels, hw, (long long)e.w, 1, dhw};
}

/// The device geometry of problem `p` whose input-side activation (x, dx) has strides `in` and
/// output-side activation (y, dy) strides `out`.
constexpr geometry make_geometry(const problem& p, strides in, strides out) {
  geometry g{};
  g.filter = p.filter;
  g.stride = p.stride;
  g.pad = p.pad;
  g.dilation = p.dilation;
  g.in = {p.input, in.n, in.d, in.h, in.w};
  g.out = {output_extent(p), out.n, out.d, out.h, out.w};
  g.in_stride_c = in.c;
  g.out_stride_c = out.c;
  g.n = p.n;
  g.c_group = p.c_per_group();
  g.k_group = p.k_per_group();
  g.groups = p.groups;
  return g;
}

}  // namespace strata::ops::conv
