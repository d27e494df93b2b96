// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/tensor/partition.hpp -- which block, warp and lane owns which elements, and which of them are
// inside the problem.
//
// A thread layout is a compact bijective layout from thread coordinates to thread indices, e.g.
// row_major(c_<8>, c_<32>) for 256 threads arranged 8 x 32 with consecutive threads along a row. The
// same function serves every level of the hierarchy: partition a block tile among warps with a warp
// layout and ctx.warp().index(), then a warp tile among lanes with a lane layout and
// ctx.lane().index(); or a block tile among all threads with ctx.block().thread_rank().
//
//   partition(v, thr, t)   thread t's elements of v: with thread coordinate (t0, t1, ...) in thr's
//                          shape (T0, T1, ...), element k = (k0, k1, ...) of the result is element
//                          (t0 + k0 * T0, t1 + k1 * T1, ...) of v ("cyclic": neighbouring threads own
//                          neighbouring elements, so a warp's accesses coalesce). Mode i of the result
//                          has extent ceil(S_i / T_i): where T_i does not divide S_i, some threads' last
//                          elements fall outside v and must be masked with the coordinate view.
//   make_identity(shape)   the coordinate view: element c is c itself. Tiled and partitioned exactly
//                          as the data view, it gives each owned element's coordinate in the problem.
//   in_bounds(c, extent)   c_i < extent_i for every mode: the predicate for one element.
//
// Every element of v is owned by exactly one thread (test/tensor/partition_test.cpp checks this for
// many thread layouts), and in_bounds masks exactly the elements outside the problem.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "strata/config/config.hpp"
#include "strata/tensor/algebra.hpp"
#include "strata/tensor/layout.hpp"
#include "strata/tensor/view.hpp"

namespace strata {

namespace detail {
template <class L>
struct thread_layout_check {
  static constexpr bool value = !is_static_v<L> || inverse_modes(to_modes(L{})).error == algebra_error::none;
};
}  // namespace detail

/// The coordinate of thread `t` in a compact bijective thread layout (strides may come in any order).
template <class S, class D, class I>
STRATA_HOST_DEVICE constexpr auto thread_coord(const layout<S, D>& thr, I t) {
  static_assert(detail::thread_layout_check<layout<S, D>>::value,
                "partition: the thread layout must be a bijection onto [0, threads): every thread index "
                "exactly once (strides are products of extents, in any order)");
  detail::require_flat_modes<S>();
  return transform(thr.shape(), thr.stride(),
                   [&](auto s, auto d) { return static_cast<int>((value_of(t) / value_of(d)) % value_of(s)); });
}

/// Thread `t`'s elements of `v` under thread layout `thr` (same rank as v).
template <class T, class L, memory_space Sp, class TS, class TD, class I>
STRATA_HOST_DEVICE constexpr auto partition(const tensor_view<T, L, Sp>& v, const layout<TS, TD>& thr, I t) {
  const auto& lin = detail::linear_part(v.layout());
  using S = typename std::remove_cvref_t<decltype(lin)>::shape_type;
  static_assert(layout<TS, TD>::rank == std::remove_cvref_t<decltype(lin)>::rank,
                "partition: the thread layout must have the same rank as the view (rank mismatch)");
  detail::require_flat_modes<S>();
  const auto tc = thread_coord(thr, t);
  auto counts = transform(lin.shape(), thr.shape(), [](auto s, auto n) { return ceil_div(s, n); });
  auto steps = transform(thr.shape(), lin.stride(), [](auto n, auto d) { return n * d; });
  return detail::rebase(v, lin(tc), make_layout(counts, steps));
}

// ---- coordinates and predicates ---------------------------------------------------------------------------

namespace detail {
/// One int per mode: names the type of a coordinate origin (a lambda outside a function would be host-only).
struct int_zero {
  template <class T>
  STRATA_HOST_DEVICE constexpr int operator()(T) const { return 0; }
};
}  // namespace detail

/// A view whose element k (one integer per mode) is the coordinate origin + k * step, per mode.
template <class Shape, class Step>
struct coord_view {
  static constexpr int rank = static_cast<int>(tuple_size_v<Shape>);
  using shape_type = Shape;
  [[no_unique_address]] Shape shape_;
  [[no_unique_address]] Step step_;
  decltype(transform(Shape{}, detail::int_zero{})) origin_;

  STRATA_HOST_DEVICE constexpr const Shape& shape() const { return shape_; }
  STRATA_HOST_DEVICE constexpr auto size() const { return product(shape_); }

  template <class... Cs>
  STRATA_HOST_DEVICE constexpr auto operator()(const Cs&... cs) const {
    if constexpr (sizeof...(Cs) == 1 && !(is_tuple_v<Cs> && ...)) {
      return (*this)(idx2crd(cs..., shape_));
    } else if constexpr (sizeof...(Cs) == 1) {
      return at(cs...);
    } else {
      return at(make_tuple(cs...));
    }
  }
  template <class I>
  STRATA_HOST_DEVICE constexpr auto operator[](I i) const { return (*this)(i); }

 private:
  template <class C>
  STRATA_HOST_DEVICE constexpr auto at(const C& c) const {
    return [&]<std::size_t... Is>(std::index_sequence<Is...>) {
      return make_tuple(static_cast<int>(get<Is>(origin_) + value_of(get<Is>(c)) * value_of(get<Is>(step_)))...);
    }(std::make_index_sequence<rank>{});
  }
};

template <class S, class St>
STRATA_HOST_DEVICE constexpr auto size(const coord_view<S, St>& v) { return v.size(); }

/// The coordinates of a tensor of shape `s`: element c is c.
template <class S>
STRATA_HOST_DEVICE constexpr auto make_identity(const S& s) {
  auto ones = transform(s, [](auto) { return constant<1>{}; });
  using V = coord_view<S, decltype(ones)>;
  return V{s, ones, {}};
}

template <class S, class St, class TS, class TC>
STRATA_HOST_DEVICE constexpr auto local_tile(const coord_view<S, St>& v, const TS& tile_shape, const TC& tc) {
  static_assert(tuple_size_v<TS> == tuple_size_v<S> && tuple_size_v<TC> == tuple_size_v<S>,
                "local_tile: the tile shape and the tile coordinate need one entry per mode (rank mismatch)");
  // element i of the tile is element tc * T + i of v: origin + (tc * T) * step + i * step
  const auto origin = v(transform(tile_shape, tc, [](auto t, auto c) { return static_cast<int>(value_of(t) * value_of(c)); }));
  return coord_view<TS, St>{tile_shape, v.step_, origin};
}

template <class S, class St, class TS, class TD, class I>
STRATA_HOST_DEVICE constexpr auto partition(const coord_view<S, St>& v, const layout<TS, TD>& thr, I t) {
  static_assert(layout<TS, TD>::rank == coord_view<S, St>::rank,
                "partition: the thread layout must have the same rank as the view (rank mismatch)");
  const auto tc = thread_coord(thr, t);
  auto counts = transform(v.shape(), thr.shape(), [](auto s, auto n) { return ceil_div(s, n); });
  auto steps = transform(thr.shape(), v.step_, [](auto n, auto d) { return n * d; });
  auto origin = v(tc);
  using R = coord_view<decltype(counts), decltype(steps)>;
  return R{counts, steps, origin};
}

/// Whether coordinate `c` lies inside `extent` (every c_i < extent_i).
template <class C, class E>
STRATA_HOST_DEVICE constexpr bool in_bounds(const C& c, const E& extent) {
  static_assert(tuple_size_v<C> == tuple_size_v<E>, "in_bounds: the coordinate and the extent have different ranks");
  return [&]<std::size_t... Is>(std::index_sequence<Is...>) {
    return ((value_of(get<Is>(c)) < value_of(get<Is>(extent))) && ...);
  }(std::make_index_sequence<tuple_size_v<C>>{});
}

}  // namespace strata
