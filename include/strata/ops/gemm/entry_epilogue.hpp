// strata/ops/gemm/entry_epilogue.hpp -- the epilogue the host entry (strata::gemm) fuses into every
// kernel it launches: D = convert(act(alpha * acc + beta * C + bias[col])). In its own header so that
// naming it (compile tests, users reproducing the entry's kernels on the template path) does not
// instantiate the entry's whole dispatch, which gemm.hpp's inline functions do.
#pragma once

#include "strata/config/config.hpp"
#include "strata/epilogue/epilogue.hpp"

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

}  // namespace detail
}  // namespace strata::ops::gemm
