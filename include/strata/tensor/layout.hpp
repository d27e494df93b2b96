// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/tensor/layout.hpp -- a layout maps a coordinate to an offset: layout<Shape, Stride>.
//
// A shape is a tuple of extents, a stride a tuple of the same nesting; each extent and stride is an
// integer of either kind (constant<N> or a run-time int), and a mode may itself be a tuple (a
// hierarchical mode, e.g. the ((tile), (element)) modes that tile() makes). A layout is a function:
//
//   L(c0, c1, ...)  = sum_i c_i * stride_i                 a coordinate, one integer per mode
//   L(coord(...))   = the same, with a (possibly nested) coordinate tuple
//   L(i)            = L(idx2crd(i, shape))                  a linear index, split colexicographically
//
// Colexicographic means the FIRST mode varies fastest (as in CuTe and Fortran): in a (4, 8) shape the
// linear index 5 is the coordinate (1, 1). This is a property of linear indices only; the memory order
// of a layout is entirely its strides: row_major(4, 8) has strides (8, 1) and still takes (i, j)
// coordinates. Any single integer given for a nested mode is split the same way over its sub-modes.
//
// Strides are non-negative. size(L) is the number of coordinates, cosize(L) = L(size - 1 along every
// mode) + 1 is the extent of the offsets (the elements a buffer must have).
//
//   make_layout(shape, stride)  any strides          make_layout(shape)  compact, first mode fastest
//   column_major(m, n, ...)     first mode fastest    row_major(m, n, ...) last mode fastest
//   row_major_padded(m, n, ld)  (m, n):(ld, 1)        column_major_padded(m, n, ld)  (m, n):(1, ld)
//   size, cosize, rank, mode<I>(L), idx2crd, crd2idx
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "strata/config/config.hpp"
#include "strata/tensor/integer.hpp"
#include "strata/tensor/tuple.hpp"

namespace strata {

// ---- coordinate <-> index ----------------------------------------------------------------------

template <class I, class S>
STRATA_HOST_DEVICE constexpr auto idx2crd(I i, const S& s);

/// The offset of coordinate `c` (an integer or a tuple congruent to a prefix of the shape's nesting).
template <class C, class S, class D>
STRATA_HOST_DEVICE constexpr auto crd2idx(const C& c, const S& s, const D& d) {
  if constexpr (is_tuple_v<C>) {
    static_assert(is_tuple_v<S> && tuple_size_v<C> == tuple_size_v<S>,
                  "layout: the coordinate has a different rank than the layout's shape");
    return [&]<std::size_t... Is>(std::index_sequence<Is...>) {
      return (constant<0>{} + ... + crd2idx(get<Is>(c), get<Is>(s), get<Is>(d)));
    }(std::make_index_sequence<tuple_size_v<C>>{});
  } else if constexpr (is_tuple_v<S>) {
    // One integer for a tuple of modes: split it colexicographically (first sub-mode fastest); the
    // last sub-mode takes whatever is left, so an index past the end extends the last mode.
    return crd2idx(idx2crd(c, s), s, d);
  } else {
    return c * d;
  }
}

/// The coordinate (congruent to `s`, run-time integers) of the linear index `i`, first mode fastest.
template <class I, class S>
STRATA_HOST_DEVICE constexpr auto idx2crd(I i, const S& s) {
  if constexpr (!is_tuple_v<S>) {
    return value_of(i);
  } else {
    constexpr std::size_t n = tuple_size_v<S>;
    return [&]<std::size_t... Is>(std::index_sequence<Is...>) {
      auto rest = value_of(i);
      auto mode_coord = [&](auto k) {
        if constexpr (k.value + 1 == n) {
          return idx2crd(rest, get<k.value>(s));
        } else {
          const auto ext = value_of(product(get<k.value>(s)));
          auto here = idx2crd(rest % ext, get<k.value>(s));
          rest = rest / ext;
          return here;
        }
      };
      // A braced list is evaluated left to right, which the running `rest` relies on.
      using result = tuple<decltype(idx2crd(value_of(i), get<Is>(s)))...>;
      return result{mode_coord(std::integral_constant<std::size_t, Is>{})...};
    }(std::make_index_sequence<n>{});
  }
}

// ---- the layout ------------------------------------------------------------------------------------

template <class Shape, class Stride>
struct layout {
  static_assert(is_tuple_v<Shape>, "layout: the shape must be a tuple (use shape(...))");
  static_assert(congruent_v<Shape, Stride>, "layout: the shape and the stride must have the same rank and nesting");

  using shape_type = Shape;
  using stride_type = Stride;
  static constexpr int rank = static_cast<int>(tuple_size_v<Shape>);

  [[no_unique_address]] Shape shape_;
  [[no_unique_address]] Stride stride_;

  constexpr layout() = default;
  STRATA_HOST_DEVICE constexpr layout(const Shape& s, const Stride& d) : shape_(s), stride_(d) {}

  STRATA_HOST_DEVICE constexpr const Shape& shape() const { return shape_; }
  STRATA_HOST_DEVICE constexpr const Stride& stride() const { return stride_; }
  STRATA_HOST_DEVICE constexpr auto size() const { return product(shape_); }

  /// L(i) for a linear index, L(c) for a coordinate tuple, L(c0, c1, ...) for one integer per mode.
  template <class... Cs>
  STRATA_HOST_DEVICE constexpr auto operator()(const Cs&... cs) const {
    if constexpr (sizeof...(Cs) == 1) {
      return crd2idx(cs..., shape_, stride_);
    } else {
      static_assert(sizeof...(Cs) == static_cast<std::size_t>(rank),
                    "layout: give one coordinate per mode, a coordinate tuple, or one linear index");
      return crd2idx(make_tuple(cs...), shape_, stride_);
    }
  }
};

template <class S, class D>
struct is_static<layout<S, D>> : std::bool_constant<is_static_v<S> && is_static_v<D>> {};

template <class T>
struct is_layout : std::false_type {};
template <class S, class D>
struct is_layout<layout<S, D>> : std::true_type {};
template <class T>
inline constexpr bool is_layout_v = is_layout<std::remove_cvref_t<T>>::value;

template <class S, class D>
STRATA_HOST_DEVICE constexpr auto make_layout(const S& s, const D& d) {
  if constexpr (is_tuple_v<S>) return layout<S, D>(s, d);
  else return layout<tuple<S>, tuple<D>>(make_tuple(s), make_tuple(d));
}

namespace detail {
/// Product of the extents of modes [Begin, Begin + Count) of a shape tuple.
template <std::size_t Begin, class T, std::size_t... Js>
STRATA_HOST_DEVICE constexpr auto product_of_modes(const T& t, std::index_sequence<Js...>) {
  return (constant<1>{} * ... * product(get<Begin + Js>(t)));
}
template <class S, class Start, std::size_t... Is>
STRATA_HOST_DEVICE constexpr auto compact_colex_stride(const S& s, Start start, std::index_sequence<Is...>);
}  // namespace detail

/// Compact strides, first mode fastest: (1, s0, s0*s1, ...), recursively through nested modes.
template <class S, class Start = constant<1>>
STRATA_HOST_DEVICE constexpr auto compact_colex_stride(const S& s, Start start = {}) {
  if constexpr (!is_tuple_v<S>) return start;
  else return detail::compact_colex_stride(s, start, std::make_index_sequence<tuple_size_v<S>>{});
}

namespace detail {
template <class S, class Start, std::size_t... Is>
STRATA_HOST_DEVICE constexpr auto compact_colex_stride(const S& s, Start start, std::index_sequence<Is...>) {
  return make_tuple(strata::compact_colex_stride(get<Is>(s), start * product_of_modes<0>(s, std::make_index_sequence<Is>{}))...);
}
template <class S, std::size_t... Is>
STRATA_HOST_DEVICE constexpr auto row_major_stride(const S& s, std::index_sequence<Is...>) {
  return make_tuple(product_of_modes<Is + 1>(s, std::make_index_sequence<sizeof...(Is) - 1 - Is>{})...);
}
}  // namespace detail

/// The compact layout of a shape, first mode fastest (CuTe's default).
template <class S>
STRATA_HOST_DEVICE constexpr auto make_layout(const S& s) {
  if constexpr (is_tuple_v<S>) return layout(s, compact_colex_stride(s));
  else return make_layout(make_tuple(s));
}

/// (s0, s1, ...) with the first mode contiguous.
template <class... Ss>
STRATA_HOST_DEVICE constexpr auto column_major(Ss... s) {
  return make_layout(make_tuple(s...));
}

/// (s0, s1, ...) with the last mode contiguous (C order).
template <class... Ss>
STRATA_HOST_DEVICE constexpr auto row_major(Ss... s) {
  auto sh = make_tuple(s...);
  // stride of mode i = product of the extents after it
  return make_layout(sh, detail::row_major_stride(sh, std::index_sequence_for<Ss...>{}));
}

/// (rows, cols) row-major with a leading dimension `ld` >= cols: padding at the end of every row.
template <class M, class N, class LD>
STRATA_HOST_DEVICE constexpr auto row_major_padded(M m, N n, LD ld) {
  if constexpr (is_constant_v<N> && is_constant_v<LD>) static_assert(LD::value >= N::value, "row_major_padded: the leading dimension is smaller than a row");
  return make_layout(make_tuple(m, n), make_tuple(ld, constant<1>{}));
}
/// (rows, cols) column-major with a leading dimension `ld` >= rows.
template <class M, class N, class LD>
STRATA_HOST_DEVICE constexpr auto column_major_padded(M m, N n, LD ld) {
  if constexpr (is_constant_v<M> && is_constant_v<LD>) static_assert(LD::value >= M::value, "column_major_padded: the leading dimension is smaller than a column");
  return make_layout(make_tuple(m, n), make_tuple(constant<1>{}, ld));
}

template <class S, class D>
STRATA_HOST_DEVICE constexpr auto size(const layout<S, D>& l) { return l.size(); }
template <class S, class D>
STRATA_HOST_DEVICE constexpr int rank(const layout<S, D>&) { return layout<S, D>::rank; }

/// One past the largest offset: the number of elements a buffer for this layout needs.
template <class S, class D>
STRATA_HOST_DEVICE constexpr auto cosize(const layout<S, D>& l) {
  auto fs = flatten(l.shape());
  auto fd = flatten(l.stride());
  return [&]<std::size_t... Is>(std::index_sequence<Is...>) {
    return (constant<1>{} + ... + ((get<Is>(fs) - constant<1>{}) * get<Is>(fd)));
  }(std::make_index_sequence<tuple_size_v<decltype(fs)>>{});
}

/// Mode I of a layout as a layout of its own (an integer mode becomes a rank-1 layout).
template <std::size_t I, class S, class D>
STRATA_HOST_DEVICE constexpr auto mode(const layout<S, D>& l) {
  static_assert(I < tuple_size_v<S>, "mode<I>: the layout has fewer modes");
  return make_layout(get<I>(l.shape()), get<I>(l.stride()));
}

/// The layout with every mode flattened to integers (same function).
template <class S, class D>
STRATA_HOST_DEVICE constexpr auto flatten(const layout<S, D>& l) {
  return make_layout(flatten(l.shape()), flatten(l.stride()));
}

}  // namespace strata
