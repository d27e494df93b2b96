// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/conv/epilogue.hpp -- the fused epilogues the convolution entries launch with, apart
// from the entries so that a kernel (or a compile test) can name them without instantiating every
// configuration the host dispatch holds:
//
//   entry_epilogue<TD>  fprop / dgrad: act(alpha acc + beta residual(pixel, channel) + bias[channel]) -> TD
//   wgrad_epilogue<TD>  wgrad: alpha acc + beta dw -> TD
//
// Rows are output pixels (the output's pixel_map turns a GEMM row into an address, so NCHW and padded
// tensors work), columns output channels.
#pragma once

#include "strata/config/config.hpp"
#include "strata/epilogue/epilogue.hpp"
#include "strata/ops/conv/types.hpp"

namespace strata::ops::conv {

enum class activation { none, relu, silu, gelu_tanh, sigmoid };

namespace detail {

/// The host entry's fused epilogue op: alpha * acc + beta * residual(pixel, channel) + bias[channel],
/// then the activation. Rows are pixels of the output's pixel map, columns channels.
template <class TR>
struct entry_op {
  struct params {
    float alpha = 1.f, beta = 0.f;
    const TR* residual = nullptr;
    pixel_map map;
    long long stride_c = 1;
    const float* bias = nullptr;
    activation act = activation::none;
  };
  template <epilogue::value V>
  STRATA_HOST_DEVICE float operator()(V acc, int row, int col, const params& p) const {
    float v = p.alpha * static_cast<float>(acc);
    if (p.beta != 0.f) v += p.beta * epilogue::detail::to<float>(p.residual[p.map.offset(row) + col * p.stride_c]);
    if (p.bias) v += p.bias[col];
    switch (p.act) {
      case activation::none: break;
      case activation::relu: v = v <= 0.f ? 0.f : v; break;  // NaN passes through
      case activation::silu: v = epilogue::silu{}(v, row, col, {}); break;
      case activation::gelu_tanh: v = epilogue::gelu_tanh{}(v, row, col, {}); break;
      case activation::sigmoid: v = epilogue::sigmoid{}(v, row, col, {}); break;
    }
    return v;
  }
};

template <class TD>
using entry_epilogue = epilogue::chain<entry_op<TD>, epilogue::convert_to<TD>>;
template <class TD>
using wgrad_epilogue = epilogue::chain<epilogue::alpha_beta<TD>, epilogue::convert_to<TD>>;

}  // namespace detail
}  // namespace strata::ops::conv
