// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/gemm/entry_epilogue.hpp -- the epilogue the host entry (strata::gemm) fuses into every
// kernel it launches: D = convert(act(alpha * acc + beta * C + bias[col])), and for fp8 inputs
// D = convert(act(alpha * (a_scale * b_scale * acc) + beta * C + bias[col])). In its own header so that
// naming it (compile tests, users reproducing the entry's kernels on the template path) does not
// instantiate the entry's whole dispatch, which gemm.hpp's inline functions do.
#pragma once

#include <type_traits>

#include "strata/config/config.hpp"
#include "strata/epilogue/epilogue.hpp"
#include "strata/numeric/numeric.hpp"

namespace strata::ops::gemm {

/// The activation the host entry applies after alpha/beta and the bias.
enum class activation { none, relu };

namespace detail {

/// The host entry's epilogue op after alpha/beta: + bias[col] (when given), then the activation.
struct bias_activation {
  struct params {
    const float* bias = nullptr;
    activation act = activation::none;
  };
  STRATA_HOST_DEVICE float operator()(float v, int, int col, const params& p) const {
    if (p.bias) v += p.bias[col];
    if (p.act == activation::relu) v = v <= 0.f ? 0.f : v;  // NaN passes through
    return v;
  }
};

template <class TD>
using entry_epilogue = epilogue::chain<epilogue::alpha_beta<TD>, bias_activation, epilogue::convert_to<TD>>;

/// fp8 dequantization, first in the fp8 entry's chain: acc * a[row * a_stride] * b[col * b_stride].
/// Stride 0 reads one per-tensor scale, stride 1 one per row of A (M floats) or column of B (N
/// floats); a null pointer stands for 1. In float, before alpha, as cuBLASLt applies its A/B scales.
struct dequantize {
  struct params {
    const float* a = nullptr;
    const float* b = nullptr;
    int a_stride = 0;
    int b_stride = 0;
  };
  STRATA_HOST_DEVICE float operator()(float v, int row, int col, const params& p) const {
    if (p.a) v *= p.a[row * p.a_stride];
    if (p.b) v *= p.b[col * p.b_stride];
    return v;
  }
};

template <class TD>
using entry_epilogue_fp8 =
    epilogue::chain<dequantize, epilogue::alpha_beta<TD>, bias_activation, epilogue::convert_to<TD>>;

template <class T>
inline constexpr bool is_fp8 = std::is_same_v<T, f8_e4m3> || std::is_same_v<T, f8_e5m2>;

/// The epilogue strata::gemm fuses for inputs TA and output TD.
template <class TA, class TD>
using entry_epilogue_for = std::conditional_t<is_fp8<TA>, entry_epilogue_fp8<TD>, entry_epilogue<TD>>;

}  // namespace detail
}  // namespace strata::ops::gemm
