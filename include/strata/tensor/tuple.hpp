// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/tensor/tuple.hpp -- a small tuple for shapes, strides and coordinates, usable in device code.
//
// std::tuple's members are not __host__ __device__ under nvcc without --expt-relaxed-constexpr, so
// Strata has its own: an aggregate-like tuple whose empty elements (constant<N>) take no space.
// Shapes, strides and coordinates are tuples of integers or, for hierarchical modes, of tuples.
//
//   tuple<Ts...>, make_tuple(xs...), get<I>(t), tuple_size_v<T>, is_tuple_v<T>
//   shape(xs...) / stride(xs...) / coord(xs...)   readable spellings of make_tuple
//   product(t)    product of all integers in a (nested) tuple; a constant when all of them are
//   flatten(t)    the integers of a nested tuple, in order, as a flat tuple
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "strata/config/config.hpp"
#include "strata/tensor/integer.hpp"

namespace strata {

namespace detail {
template <std::size_t I, class T>
struct tuple_leaf {
  [[no_unique_address]] T value;
};

template <class Seq, class... Ts>
struct tuple_base;
template <std::size_t... Is, class... Ts>
struct tuple_base<std::index_sequence<Is...>, Ts...> : tuple_leaf<Is, Ts>... {
  constexpr tuple_base() = default;
  template <class Dummy = void>
    requires(sizeof...(Ts) > 0)
  STRATA_HOST_DEVICE constexpr tuple_base(Ts... xs) : tuple_leaf<Is, Ts>{xs}... {}
};
}  // namespace detail

template <class... Ts>
struct tuple : detail::tuple_base<std::index_sequence_for<Ts...>, Ts...> {
  using base = detail::tuple_base<std::index_sequence_for<Ts...>, Ts...>;
  static constexpr std::size_t size = sizeof...(Ts);
  constexpr tuple() = default;
  template <class... Us>
    requires(sizeof...(Us) == sizeof...(Ts) && sizeof...(Ts) > 0)
  STRATA_HOST_DEVICE constexpr tuple(Us... xs) : base(static_cast<Ts>(xs)...) {}
};
template <class... Ts>
tuple(Ts...) -> tuple<Ts...>;

template <class T>
struct is_tuple : std::false_type {};
template <class... Ts>
struct is_tuple<tuple<Ts...>> : std::true_type {};
template <class T>
inline constexpr bool is_tuple_v = is_tuple<std::remove_cvref_t<T>>::value;

template <class... Ts>
struct is_static<tuple<Ts...>> : std::bool_constant<(is_static_v<Ts> && ...)> {};

template <class T>
inline constexpr std::size_t tuple_size_v = std::remove_cvref_t<T>::size;

template <std::size_t I, class T>
STRATA_HOST_DEVICE constexpr auto& leaf_of(detail::tuple_leaf<I, T>& l) { return l.value; }
template <std::size_t I, class T>
STRATA_HOST_DEVICE constexpr const auto& leaf_of(const detail::tuple_leaf<I, T>& l) { return l.value; }

template <std::size_t I, class... Ts>
STRATA_HOST_DEVICE constexpr auto& get(tuple<Ts...>& t) {
  static_assert(I < sizeof...(Ts), "get<I>: index out of range of the tuple");
  return leaf_of<I>(t);
}
template <std::size_t I, class... Ts>
STRATA_HOST_DEVICE constexpr const auto& get(const tuple<Ts...>& t) {
  static_assert(I < sizeof...(Ts), "get<I>: index out of range of the tuple");
  return leaf_of<I>(t);
}

template <class... Ts>
STRATA_HOST_DEVICE constexpr tuple<Ts...> make_tuple(Ts... xs) { return tuple<Ts...>(xs...); }
template <class... Ts>
STRATA_HOST_DEVICE constexpr tuple<Ts...> shape(Ts... xs) { return tuple<Ts...>(xs...); }
template <class... Ts>
STRATA_HOST_DEVICE constexpr tuple<Ts...> stride(Ts... xs) { return tuple<Ts...>(xs...); }
template <class... Ts>
STRATA_HOST_DEVICE constexpr tuple<Ts...> coord(Ts... xs) { return tuple<Ts...>(xs...); }

template <class T>
using tuple_element_t = std::remove_cvref_t<T>;

/// f(get<0>(t), ..., get<N-1>(t)) collected into a tuple.
template <class T, class F>
STRATA_HOST_DEVICE constexpr auto transform(const T& t, F f) {
  return [&]<std::size_t... Is>(std::index_sequence<Is...>) {
    return make_tuple(f(get<Is>(t))...);
  }(std::make_index_sequence<tuple_size_v<T>>{});
}

/// f(get<I>(t)) for each I in order.
template <class T, class F>
STRATA_HOST_DEVICE constexpr void for_each(const T& t, F f) {
  [&]<std::size_t... Is>(std::index_sequence<Is...>) { (f(get<Is>(t)), ...); }(std::make_index_sequence<tuple_size_v<T>>{});
}

/// f(get<I>(a), get<I>(b)) collected into a tuple; a and b must have the same rank.
template <class A, class B, class F>
STRATA_HOST_DEVICE constexpr auto transform(const A& a, const B& b, F f) {
  static_assert(tuple_size_v<A> == tuple_size_v<B>, "transform: the two tuples have different ranks");
  return [&]<std::size_t... Is>(std::index_sequence<Is...>) {
    return make_tuple(f(get<Is>(a), get<Is>(b))...);
  }(std::make_index_sequence<tuple_size_v<A>>{});
}

/// The concatenation of tuples.
template <class... Ts>
STRATA_HOST_DEVICE constexpr tuple<Ts...> tuple_cat(const tuple<Ts...>& a) { return a; }
template <class... As, class... Bs, class... Rest>
STRATA_HOST_DEVICE constexpr auto tuple_cat(const tuple<As...>& a, const tuple<Bs...>& b, const Rest&... rest) {
  auto ab = [&]<std::size_t... I, std::size_t... J>(std::index_sequence<I...>, std::index_sequence<J...>) {
    return make_tuple(get<I>(a)..., get<J>(b)...);
  }(std::index_sequence_for<As...>{}, std::index_sequence_for<Bs...>{});
  if constexpr (sizeof...(Rest) == 0) return ab;
  else return tuple_cat(ab, rest...);
}

/// The integers of a (possibly nested) tuple, in order; an integer becomes a tuple of one.
template <class T>
STRATA_HOST_DEVICE constexpr auto flatten(const T& t) {
  if constexpr (!is_tuple_v<T>) return make_tuple(t);
  else if constexpr (tuple_size_v<T> == 0) return tuple<>{};
  else
    return [&]<std::size_t... Is>(std::index_sequence<Is...>) {
      return tuple_cat(flatten(get<Is>(t))...);
    }(std::make_index_sequence<tuple_size_v<T>>{});
}

/// Number of integers in a (possibly nested) tuple: its rank once flattened.
template <class T>
inline constexpr std::size_t flat_rank_v = decltype(flatten(std::declval<T>()))::size;

/// Product of every integer in a (possibly nested) tuple; constant<1> for an empty tuple.
template <class T>
STRATA_HOST_DEVICE constexpr auto product(const T& t) {
  if constexpr (!is_tuple_v<T>) return t;
  else
    return [&]<std::size_t... Is>(std::index_sequence<Is...>) {
      return (constant<1>{} * ... * product(get<Is>(t)));
    }(std::make_index_sequence<tuple_size_v<T>>{});
}

/// Two tuples with the same nesting (congruent), or two integers.
template <class A, class B>
struct congruent : std::bool_constant<!is_tuple_v<A> && !is_tuple_v<B>> {};
template <class... As, class... Bs>
  requires(sizeof...(As) == sizeof...(Bs))
struct congruent<tuple<As...>, tuple<Bs...>> : std::bool_constant<(congruent<As, Bs>::value && ...)> {};
template <class A, class B>
inline constexpr bool congruent_v = congruent<std::remove_cvref_t<A>, std::remove_cvref_t<B>>::value;

}  // namespace strata
