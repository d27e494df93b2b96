// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/epilogue/op.hpp -- what an epilogue op is, the value types that flow through a chain, and
// the operand references (matrices and vectors in global memory) ops read from.
//
// THE OP CONCEPT. An epilogue op is a stateless class with
//
//   struct params { ... };   // or `using params = strata::epilogue::no_params;`
//       Everything the op needs at run time (pointers, scalars). A trivially copyable aggregate: the
//       parameters of a whole chain travel to the kernel by value, as one aggregate built from these.
//   template <strata::epilogue::value V>
//   STRATA_HOST_DEVICE R operator()(V v, int row, int col, const params& p) const;
//       v:        the element so far, float or std::int32_t (see below);
//       row, col: the element's coordinates in the OUTPUT matrix D (global, not tile-relative), so a
//                 bias or scale pointer in `params` refers to the whole vector and a matrix operand
//                 to the whole matrix;
//       p:        this op's own params (two ops of the same type in a chain each get their own);
//       R:        float or std::int32_t for an ordinary op.
//
// An OUTPUT CONVERSION additionally declares `using output_type = T;` and returns T: the type stored
// to memory. A chain ends with exactly one conversion (convert.hpp has convert_to<T>); a user may
// write their own, e.g. to pack or to apply a different rounding.
//
// V is passed as it is. Write the call operator as a template over V (constrained with `value`, as
// the built-in ops do) to serve both value types. A non-template `float operator()(float v, ...)` also
// works: an int32 value then reaches it through C++'s implicit conversion to float. Do not declare a
// parameter of type std::int32_t only: a float value would be truncated by the same implicit rules.
//
// The op is default-constructed where it is applied (`Op{}(v, row, col, p)`): keep all run-time data
// in `params`. Only STRATA_HOST_DEVICE code, no std containers, no exceptions, no allocation.
//
// VALUE TYPES. A chain computes in float, or in std::int32_t for integer accumulators (int8 GEMM,
// integer convolution). An op keeps an int32 value int32 only when every operand it brings is an
// integer type (e.g. bias_col<std::int32_t>, relu, clamp<std::int32_t>); anything with a float
// operand or a transcendental function (alpha_beta, scale_row<float>, gelu, ...) turns it into float,
// and the rest of the chain computes in float. int32 arithmetic wraps (two's complement), as GPU
// integer units do: no undefined behaviour on overflow.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>

#include "strata/config/config.hpp"
#include "strata/numeric/numeric.hpp"

namespace strata::epilogue {

/// The types a value may have between two ops of a chain.
template <class V>
concept value = std::same_as<V, float> || std::same_as<V, std::int32_t>;

/// The params of an op that needs none.
struct no_params {};

/// Two neighbouring outputs, stored as one access of 2 x sizeof(T) bytes (aligned to that): what a
/// kernel writes when its accumulator holds D's elements in adjacent pairs (gemm::kernel's
/// store_pairs).
template <class T>
struct alignas(2 * sizeof(T)) output_pair {
  T first, second;
};

/// An ordinary (non-converting) op: see the header comment.
template <class Op>
concept op = std::is_default_constructible_v<Op> && requires { typename Op::params; } &&
             std::is_trivially_copyable_v<typename Op::params> &&
             requires(const Op o, float v, int i, const typename Op::params& p) {
               { o(v, i, i, p) } -> value;
             };

/// An output conversion: an op that declares output_type and returns it.
template <class Op>
concept conversion = std::is_default_constructible_v<Op> && requires { typename Op::params; } &&
                     std::is_trivially_copyable_v<typename Op::params> && requires {
                       typename Op::output_type;
                     } && requires(const Op o, float v, int i, const typename Op::params& p) {
                       { o(v, i, i, p) } -> std::same_as<typename Op::output_type>;
                     };

/// A matrix in global memory: element (row, col) at data[row * row_stride + col * col_stride].
/// Row-major with leading dimension ld is {data, ld, 1}, column-major {data, 1, ld}; a stride of 0
/// broadcasts (e.g. {data, 0, 1}: one row repeated for every row).
template <class T>
struct matrix_ref {
  const T* data;
  std::int64_t row_stride;
  std::int64_t col_stride;

  STRATA_HOST_DEVICE constexpr T operator()(int row, int col) const {
    return data[row * row_stride + col * col_stride];
  }
};

template <class T>
STRATA_HOST_DEVICE constexpr matrix_ref<T> row_major(const T* data, std::int64_t ld) {
  return {data, ld, 1};
}
template <class T>
STRATA_HOST_DEVICE constexpr matrix_ref<T> col_major(const T* data, std::int64_t ld) {
  return {data, 1, ld};
}

namespace detail {

/// The value type an op computes in when it combines value type V with an operand stored as S:
/// int32 only if both are integers (S of at most 32 bits), float otherwise.
template <class V, class S>
using promote_t = std::conditional_t<std::same_as<V, std::int32_t> && std::is_integral_v<S> &&
                                         !std::same_as<S, bool> && sizeof(S) <= 4,
                                     std::int32_t, float>;

/// An operand or value, as compute type R (float or int32). Narrow floats widen exactly to float.
template <class R, class S>
STRATA_HOST_DEVICE constexpr R to(S s) {
  if constexpr (narrow_float<S>)
    return static_cast<R>(static_cast<float>(s));
  else
    return static_cast<R>(s);
}

// Arithmetic in compute type R. int32 goes through uint32, whose overflow is defined (modulo 2^32), so
// a sum past INT32_MAX wraps as on the GPU instead of being undefined behaviour on the host.
template <class R>
STRATA_HOST_DEVICE constexpr R add(R a, R b) {
  if constexpr (std::same_as<R, std::int32_t>)
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
  else
    return a + b;
}
template <class R>
STRATA_HOST_DEVICE constexpr R mul(R a, R b) {
  if constexpr (std::same_as<R, std::int32_t>)
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) * static_cast<std::uint32_t>(b));
  else
    return a * b;
}

}  // namespace detail
}  // namespace strata::epilogue
