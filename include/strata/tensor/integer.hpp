// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/tensor/integer.hpp -- integers that are either known at compile time or only at run time,
// through one API.
//
//   constant<N>        a compile-time integer: an empty type whose value is N (N is an int)
//   int, long long     run-time integers, used as they are
//   is_static_v<T>     true for constant<N> and for tuples made only of constants (tuple.hpp)
//   value_of(x)        the integer value of either kind
//
// Arithmetic between two constants gives a constant (constant<4>{} * constant<8>{} is constant<32>);
// anything involving a run-time integer gives a run-time integer, through the implicit conversion of
// constant<N> to int. So a layout written once keeps every extent that is known statically static,
// and the compiler folds the index arithmetic of static layouts away entirely.
#pragma once

#include <concepts>
#include <type_traits>

#include "strata/config/config.hpp"

namespace strata {

/// A compile-time integer. Empty, so a layout made only of constants occupies no storage.
template <int N>
struct constant {
  static constexpr int value = N;
  using value_type = int;
  STRATA_HOST_DEVICE constexpr operator int() const { return N; }
};

template <int N>
inline constexpr constant<N> c_{};  // shorthand: c_<64> is constant<64>{}

namespace detail {
template <class T>
struct is_constant : std::false_type {};
template <int N>
struct is_constant<constant<N>> : std::true_type {};
}  // namespace detail

template <class T>
inline constexpr bool is_constant_v = detail::is_constant<std::remove_cvref_t<T>>::value;

/// An integer of either kind: a constant<N> or a built-in integer type.
template <class T>
concept integer = is_constant_v<T> || std::integral<std::remove_cvref_t<T>>;

/// Whether a value is fully known at compile time. Specialised for tuples in tuple.hpp.
template <class T>
struct is_static : std::bool_constant<is_constant_v<T>> {};
template <class T>
inline constexpr bool is_static_v = is_static<std::remove_cvref_t<T>>::value;

template <class T>
STRATA_HOST_DEVICE constexpr auto value_of(T x) {
  if constexpr (is_constant_v<T>) return T::value;
  else return x;
}

// Arithmetic that keeps constants constant. Mixed operands fall back to the built-in operators through
// constant's conversion to int, so `constant<4>{} * n` is an int.
#define STRATA_CONSTANT_BINARY_OP(op)                                                    \
  template <int A, int B>                                                                \
  STRATA_HOST_DEVICE constexpr auto operator op(constant<A>, constant<B>) {              \
    return constant<(A op B)>{};                                                         \
  }
STRATA_CONSTANT_BINARY_OP(+)
STRATA_CONSTANT_BINARY_OP(-)
STRATA_CONSTANT_BINARY_OP(*)
STRATA_CONSTANT_BINARY_OP(/)
STRATA_CONSTANT_BINARY_OP(%)
#undef STRATA_CONSTANT_BINARY_OP

template <int A, int B>
STRATA_HOST_DEVICE constexpr bool operator==(constant<A>, constant<B>) { return A == B; }

/// ceil(a / b) for positive integers; a constant when both are.
template <class A, class B>
STRATA_HOST_DEVICE constexpr auto ceil_div(A a, B b) {
  if constexpr (is_constant_v<A> && is_constant_v<B>) return constant<(A::value + B::value - 1) / B::value>{};
  else return (value_of(a) + value_of(b) - 1) / value_of(b);
}

/// min(a, b); a constant when both are.
template <class A, class B>
STRATA_HOST_DEVICE constexpr auto min_of(A a, B b) {
  if constexpr (is_constant_v<A> && is_constant_v<B>) return constant<(A::value < B::value ? A::value : B::value)>{};
  else return value_of(a) < value_of(b) ? value_of(a) : value_of(b);
}

namespace detail {
STRATA_HOST_DEVICE constexpr bool is_pow2(long long x) { return x > 0 && (x & (x - 1)) == 0; }
STRATA_HOST_DEVICE constexpr int log2_exact(long long x) {
  int r = 0;
  while ((1LL << r) < x) ++r;
  return r;
}
}  // namespace detail

}  // namespace strata
