// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/epilogue/activation.hpp -- smooth activation functions, computed in float (an int32 value
// is converted to float first). The definitions, and how each is evaluated:
//
//   gelu_erf   GELU(x) = x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2)))
//              evaluated as 0.5 * x * erfc(-x / sqrt(2)): the same function, but 1 + erf(x / sqrt(2))
//              cancels catastrophically for x < -3 (float erf rounds to -1 there, giving 0 instead of
//              e.g. GELU(-5) = -1.43e-6), while erfc keeps full relative accuracy.
//   gelu_tanh  GELU_tanh(x) = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
//              (Hendrycks & Gimpel's approximation; PyTorch's gelu(approximate="tanh")), evaluated as
//              x / (1 + exp(-2u)) with u = sqrt(2 / pi) * (x + 0.044715 * x^3), using the identity
//              1 + tanh(u) = 2 / (1 + exp(-2u)): again no cancellation for negative x.
//   silu       SiLU(x) = x * sigmoid(x) = x / (1 + exp(-x))   (a.k.a. swish with beta = 1)
//   sigmoid    sigmoid(x) = 1 / (1 + exp(-x))
//
// NaN in gives NaN out. Infinities give the limits: GELU(+Inf) = SiLU(+Inf) = +Inf,
// GELU(-Inf) = SiLU(-Inf) = -0 (the formulas alone would give -Inf * 0 = NaN there; for x below
// -20 (GELU) or -128 (SiLU) the exact result is below 1e-37 in magnitude and -0 is returned),
// sigmoid(+Inf) = 1, sigmoid(-Inf) = 0. Large |x| cannot overflow an intermediate into NaN:
// x^3 overflowing to +-Inf only drives exp(-2u) to 0 or Inf, whose results are the limits above.
#pragma once

#include "strata/config/config.hpp"
#include "strata/epilogue/detail/math.hpp"
#include "strata/epilogue/op.hpp"

namespace strata::epilogue {

/// GELU, exact (erf) form: 0.5 * x * (1 + erf(x / sqrt(2))).
struct gelu_erf {
  using params = no_params;
  template <value V>
  STRATA_HOST_DEVICE float operator()(V v, int, int, const params&) const {
    const float x = static_cast<float>(v);
    constexpr float inv_sqrt2 = 0.707106781186547524f;
    // Below -20, x * Phi(x) < 1e-88: -0 in float. The branch also turns -Inf into -0 instead of NaN.
    return x < -20.f ? -0.f : 0.5f * x * detail::erfc(-x * inv_sqrt2);
  }
};

/// GELU, tanh approximation: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))).
struct gelu_tanh {
  using params = no_params;
  template <value V>
  STRATA_HOST_DEVICE float operator()(V v, int, int, const params&) const {
    const float x = static_cast<float>(v);
    constexpr float sqrt_2_over_pi = 0.797884560802865356f;
    constexpr float k = 0.044715f;
    const float u = sqrt_2_over_pi * (x + k * x * x * x);
    return x < -20.f ? -0.f : x / (1.f + detail::exp(-2.f * u));
  }
};

/// SiLU (swish): x * sigmoid(x) = x / (1 + exp(-x)).
struct silu {
  using params = no_params;
  template <value V>
  STRATA_HOST_DEVICE float operator()(V v, int, int, const params&) const {
    const float x = static_cast<float>(v);
    // exp(-x) is Inf below -88.7 and x / Inf = -0 already; the branch only fixes -Inf / Inf = NaN.
    return x < -128.f ? -0.f : x / (1.f + detail::exp(-x));
  }
};

/// The logistic function 1 / (1 + exp(-x)).
struct sigmoid {
  using params = no_params;
  template <value V>
  STRATA_HOST_DEVICE float operator()(V v, int, int, const params&) const {
    return 1.f / (1.f + detail::exp(-static_cast<float>(v)));
  }
};

}  // namespace strata::epilogue
