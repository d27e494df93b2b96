// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/epilogue/ops.hpp -- the linear and piecewise-linear epilogue ops:
//
//   alpha_beta<TC>   D = alpha * acc + beta * C(row, col); C is NOT read when beta == 0
//   bias_row<T>      v + bias[row]          (one bias per output row, e.g. per output channel of a
//   bias_col<T>      v + bias[col]           convolution whose rows are channels; per column: a
//                                             linear layer's bias when D is tokens x features)
//   scale_row<T>     v * scale[row]         per-row / per-column scale, e.g. fp8 or int8 dequantization
//   scale_col<T>     v * scale[col]           (stride 0: one per-tensor scale)
//   residual<T>      v + R(row, col)        a second tensor added element-wise
//   clamp<T>         min(max(v, lo), hi)    with NaN passing through
//   relu             max(v, 0)              with NaN passing through
//
// T / TC is the operand's storage type: float, f16, bf16, f8_e4m3, f8_e5m2, or an integer type. Which
// type the result has (float, or int32 for integer values and integer operands) is in op.hpp. Every
// op here is a template over the value type V, so it serves float and int32 accumulators alike.
//
// NaN AND INF. Ops here never turn a NaN into a number: relu(NaN) = NaN and clamp(NaN) = NaN (the
// comparisons are written so that NaN fails them; fmaxf would return 0 or lo instead). That way a NaN
// from a broken input reaches the output, where a check can see it, rather than a plausible 0.
// relu(+Inf) = +Inf, relu(-Inf) = +0, relu(-0) = +0; clamp(+-Inf) = hi / lo. alpha_beta follows IEEE
// (0 * Inf = NaN) except that C is not read at all when beta == 0.
#pragma once

#include <cstdint>

#include "strata/config/config.hpp"
#include "strata/epilogue/op.hpp"

namespace strata::epilogue {

/// D = alpha * acc + beta * C, computed in float (an int32 accumulator is converted to float first).
///
/// As in BLAS, C is read only when beta != 0: with beta == 0 the C operand may be a null pointer, or
/// point to uninitialized memory or NaNs, and D is alpha * acc exactly (a NaN in C never reaches D,
/// which `alpha * acc + 0 * C` would not guarantee). alpha == 0 is not special: alpha * acc is
/// computed, so a NaN or Inf accumulator still shows.
template <class TC = float>
struct alpha_beta {
  struct params {
    float alpha;
    float beta = 0.f;
    matrix_ref<TC> c = {nullptr, 0, 0};  // not read when beta == 0 (the defaults: D = alpha * acc)
  };

  template <value V>
  STRATA_HOST_DEVICE float operator()(V acc, int row, int col, const params& p) const {
    float d = p.alpha * static_cast<float>(acc);
    if (p.beta != 0.f) d += p.beta * detail::to<float>(p.c(row, col));
    return d;
  }
};

/// A vector operand: element i at data[i * stride]. stride 0 broadcasts data[0] to every index.
template <class T>
struct vector_params {
  const T* data;
  std::int64_t stride = 1;

  STRATA_HOST_DEVICE constexpr T operator[](int i) const { return data[i * stride]; }
};

/// v + bias[row].
template <class T = float>
struct bias_row {
  using params = vector_params<T>;
  template <value V>
  STRATA_HOST_DEVICE detail::promote_t<V, T> operator()(V v, int row, int, const params& p) const {
    using R = detail::promote_t<V, T>;
    return detail::add(detail::to<R>(v), detail::to<R>(p[row]));
  }
};

/// v + bias[col].
template <class T = float>
struct bias_col {
  using params = vector_params<T>;
  template <value V>
  STRATA_HOST_DEVICE detail::promote_t<V, T> operator()(V v, int, int col, const params& p) const {
    using R = detail::promote_t<V, T>;
    return detail::add(detail::to<R>(v), detail::to<R>(p[col]));
  }
};

/// v * scale[row].
template <class T = float>
struct scale_row {
  using params = vector_params<T>;
  template <value V>
  STRATA_HOST_DEVICE detail::promote_t<V, T> operator()(V v, int row, int, const params& p) const {
    using R = detail::promote_t<V, T>;
    return detail::mul(detail::to<R>(v), detail::to<R>(p[row]));
  }
};

/// v * scale[col].
template <class T = float>
struct scale_col {
  using params = vector_params<T>;
  template <value V>
  STRATA_HOST_DEVICE detail::promote_t<V, T> operator()(V v, int, int col, const params& p) const {
    using R = detail::promote_t<V, T>;
    return detail::mul(detail::to<R>(v), detail::to<R>(p[col]));
  }
};

/// v + R(row, col): a residual (skip) connection, or any second tensor of D's shape.
template <class T = float>
struct residual {
  struct params {
    matrix_ref<T> r;
  };
  template <value V>
  STRATA_HOST_DEVICE detail::promote_t<V, T> operator()(V v, int row, int col, const params& p) const {
    using R = detail::promote_t<V, T>;
    return detail::add(detail::to<R>(v), detail::to<R>(p.r(row, col)));
  }
};

/// lo if v < lo, hi if v > hi, else v (NaN stays NaN). Precondition: lo <= hi.
template <class T = float>
struct clamp {
  struct params {
    T lo;
    T hi;
  };
  template <value V>
  STRATA_HOST_DEVICE detail::promote_t<V, T> operator()(V v, int, int, const params& p) const {
    using R = detail::promote_t<V, T>;
    const R x = detail::to<R>(v), lo = detail::to<R>(p.lo), hi = detail::to<R>(p.hi);
    return x < lo ? lo : (x > hi ? hi : x);
  }
};

/// max(v, 0), with relu(NaN) = NaN and relu(-0) = +0. Keeps the value type (int32 stays int32).
struct relu {
  using params = no_params;
  template <value V>
  STRATA_HOST_DEVICE V operator()(V v, int, int, const params&) const {
    return v <= V(0) ? V(0) : v;  // NaN <= 0 is false: NaN passes through
  }
};

}  // namespace strata::epilogue
