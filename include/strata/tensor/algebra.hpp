// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/tensor/algebra.hpp -- operations on layouts as functions.
//
//   coalesce(L)            the same function with the fewest modes (flat)
//   composition(A, B)      R(x) = A(B(x)) for every x in B's domain; one mode per top-level mode of B
//   complement(A, M)       the layout that, with A, covers [0, M): A's "rest"
//   inverse(L)             L^-1 for a bijection onto [0, size(L)): inverse(L)(L(i)) == i
//   logical_product(A, B)  (A, complement(A) o B): B copies of A
//   blocked_product(A, B)  mode i = (A_i, B_i): a B-arrangement of A-blocks, A innermost
//   raked_product(A, B)    mode i = (B_i, A_i): A's elements interleaved across the B copies
//   tile(L, T)             ((tile coordinate), (element in tile)): L cut into tiles of shape T
//   is_bijective(L)        whether L maps [0, size) onto [0, size) one to one
//   contiguous_extent(L)   elements that are consecutive in memory along L's stride-1 mode
//
// Static inputs give static results computed at compile time (detail/modes.hpp); inputs with run-time
// values give run-time int layouts of a rank fixed by the input types. Misuse of a static layout is a
// static_assert in words; for run-time layouts the same checks are the *_ok / is_* functions.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "strata/config/config.hpp"
#include "strata/tensor/detail/modes.hpp"
#include "strata/tensor/integer.hpp"
#include "strata/tensor/layout.hpp"
#include "strata/tensor/tuple.hpp"

namespace strata {

namespace detail {
template <class L>
struct coalesce_holder {
  static constexpr modes value = coalesce_modes(to_modes(L{}));
};
template <class L>
struct inverse_holder {
  static constexpr modes value = coalesce_modes(inverse_modes(to_modes(L{})));
};
template <class L, int M>
struct complement_holder {
  static constexpr modes value = coalesce_modes(complement_modes(to_modes(L{}), M));
};

template <class S, std::size_t... Is>
constexpr auto top_mode_flat_ranks(std::index_sequence<Is...>) {
  struct r {
    int n[sizeof...(Is) + 1];
  };
  return r{{static_cast<int>(flat_rank_v<decltype(get<Is>(std::declval<S>()))>)..., 0}};
}

template <class A, class B>
STRATA_HOST_DEVICE constexpr modes compose(const A& a, const B& b) {
  constexpr auto sizes = top_mode_flat_ranks<typename B::shape_type>(std::make_index_sequence<B::rank>{});
  return compose_modes(to_modes(a), to_modes(b), sizes.n, B::rank);
}
template <class A, class B>
struct compose_holder {
  static constexpr modes value = coalesce_groups(compose(A{}, B{}));
};

STRATA_HOST_DEVICE constexpr const char* describe(algebra_error e) {
  switch (e) {
    case algebra_error::too_many_modes: return "too many modes";
    case algebra_error::not_divisible: return "not divisible";
    case algebra_error::not_injective: return "not injective";
    case algebra_error::not_bijective: return "not a bijection";
    default: return "ok";
  }
}
}  // namespace detail

/// The same function with the fewest modes: extent-1 modes dropped, contiguous neighbours merged.
template <class S, class D>
STRATA_HOST_DEVICE constexpr auto coalesce(const layout<S, D>& l) {
  using L = layout<S, D>;
  if constexpr (is_static_v<L>) {
    return detail::lift_t<detail::coalesce_holder<L>>{};
  } else {
    return detail::dynamic_flat<flat_rank_v<S>>(detail::coalesce_modes(detail::to_modes(l)));
  }
}

/// Whether `l` maps its coordinates one to one onto [0, size(l)).
template <class S, class D>
STRATA_HOST_DEVICE constexpr bool is_bijective(const layout<S, D>& l) {
  return detail::inverse_modes(detail::to_modes(l)).error == detail::algebra_error::none;
}

/// inverse(L)(L(i)) == i and L(inverse(L)(k)) == k, for a bijection L onto [0, size(L)).
template <class S, class D>
STRATA_HOST_DEVICE constexpr auto inverse(const layout<S, D>& l) {
  using L = layout<S, D>;
  if constexpr (is_static_v<L>) {
    static_assert(detail::inverse_holder<L>::value.error == detail::algebra_error::none,
                  "inverse: the layout is not a bijection onto [0, size): two coordinates share an offset, or "
                  "some offset below size is never reached (pad or stride gaps)");
    return detail::lift_t<detail::inverse_holder<L>>{};
  } else {
    return detail::dynamic_flat<flat_rank_v<S>>(detail::inverse_modes(detail::to_modes(l)));
  }
}

/// The complement of `a` in [0, m): the layout whose offsets, added to a's, reach every offset below m
/// once (a must be injective with strides that divide one another when sorted).
template <class S, class D, class M>
STRATA_HOST_DEVICE constexpr auto complement(const layout<S, D>& a, M m) {
  using L = layout<S, D>;
  if constexpr (is_static_v<L> && is_constant_v<M>) {
    using H = detail::complement_holder<L, M::value>;
    static_assert(H::value.error == detail::algebra_error::none,
                  "complement: the layout is not injective (sorted by stride, a stride does not clear the "
                  "span of the modes below it)");
    return detail::lift_t<H>{};
  } else {
    return detail::dynamic_flat<flat_rank_v<S> + 1>(detail::complement_modes(detail::to_modes(a), value_of(m)));
  }
}
template <class S, class D>
STRATA_HOST_DEVICE constexpr auto complement(const layout<S, D>& a) {
  return complement(a, cosize(a));
}

/// A o B: R(x) == A(B(x)) for every x in B's domain. R has one mode per top-level mode of B.
template <class SA, class DA, class SB, class DB>
STRATA_HOST_DEVICE constexpr auto composition(const layout<SA, DA>& a, const layout<SB, DB>& b) {
  using A = layout<SA, DA>;
  using B = layout<SB, DB>;
  if constexpr (is_static_v<A> && is_static_v<B>) {
    using H = detail::compose_holder<A, B>;
    static_assert(H::value.error != detail::algebra_error::not_divisible,
                  "composition: B's strides and extents do not divide A's extents (B would need to step "
                  "part-way through a mode of A)");
    static_assert(H::value.error == detail::algebra_error::none, "composition: too many modes");
    return detail::lift_t<H>{};
  } else {
    const detail::modes m = detail::compose(a, b);
    return [&]<std::size_t... Is>(std::index_sequence<Is...>) {
      return detail::dynamic_grouped<flat_rank_v<decltype(get<Is>(b.shape()))> * flat_rank_v<SA>...>(m);
    }(std::make_index_sequence<B::rank>{});
  }
}

/// Whether composition(a, b) is well defined for these run-time values.
template <class SA, class DA, class SB, class DB>
STRATA_HOST_DEVICE constexpr bool composition_ok(const layout<SA, DA>& a, const layout<SB, DB>& b) {
  return detail::compose(a, b).error == detail::algebra_error::none;
}

/// (A, complement(A, size(A) * cosize(B)) o B): mode 0 walks one copy of A, mode 1 picks the copy.
template <class SA, class DA, class SB, class DB>
STRATA_HOST_DEVICE constexpr auto logical_product(const layout<SA, DA>& a, const layout<SB, DB>& b) {
  auto rest = composition(complement(a, size(a) * cosize(b)), b);
  return make_layout(make_tuple(a.shape(), rest.shape()), make_tuple(a.stride(), rest.stride()));
}

namespace detail {
template <bool BlockFirst, class A, class C, std::size_t... Is>
STRATA_HOST_DEVICE constexpr auto zip_modes(const A& a, const C& c, std::index_sequence<Is...>) {
  if constexpr (BlockFirst)
    return make_layout(make_tuple(make_tuple(get<Is>(a.shape()), get<Is>(c.shape()))...),
                       make_tuple(make_tuple(get<Is>(a.stride()), get<Is>(c.stride()))...));
  else
    return make_layout(make_tuple(make_tuple(get<Is>(c.shape()), get<Is>(a.shape()))...),
                       make_tuple(make_tuple(get<Is>(c.stride()), get<Is>(a.stride()))...));
}
}  // namespace detail

/// Mode i is (A_i, B_i): B's arrangement of whole A blocks (e.g. a (2,2) block repeated (3,4) times
/// gives a (6,8) layout whose (2,2) sub-blocks are contiguous copies of A).
template <class SA, class DA, class SB, class DB>
STRATA_HOST_DEVICE constexpr auto blocked_product(const layout<SA, DA>& a, const layout<SB, DB>& b) {
  static_assert(layout<SA, DA>::rank == layout<SB, DB>::rank,
                "blocked_product: the block and the arrangement must have the same rank");
  auto rest = composition(complement(a, size(a) * cosize(b)), b);
  return detail::zip_modes<true>(a, rest, std::make_index_sequence<layout<SA, DA>::rank>{});
}

/// Mode i is (B_i, A_i): the copies of A interleaved element by element (a "raked" distribution).
template <class SA, class DA, class SB, class DB>
STRATA_HOST_DEVICE constexpr auto raked_product(const layout<SA, DA>& a, const layout<SB, DB>& b) {
  static_assert(layout<SA, DA>::rank == layout<SB, DB>::rank,
                "raked_product: the block and the arrangement must have the same rank");
  auto rest = composition(complement(a, size(a) * cosize(b)), b);
  return detail::zip_modes<false>(a, rest, std::make_index_sequence<layout<SA, DA>::rank>{});
}

// ---- tiling ------------------------------------------------------------------------------------------

namespace detail {
template <class S, class T, std::size_t... Is>
STRATA_HOST_DEVICE constexpr void check_tile(std::index_sequence<Is...>) {
  static_assert((!is_tuple_v<decltype(get<Is>(std::declval<S>()))> && ...),
                "tile: every mode of the layout must be an integer mode (flatten a nested layout first)");
  static_assert(((!is_constant_v<decltype(get<Is>(std::declval<S>()))> ||
                  !is_constant_v<decltype(get<Is>(std::declval<T>()))> ||
                  value_of(decltype(get<Is>(std::declval<S>())){}) % value_of(decltype(get<Is>(std::declval<T>())){}) == 0) &&
                 ...),
                "tile: the tile shape does not divide the layout's static shape; use a run-time extent and "
                "predicates (partition.hpp) for partial tiles at the edges");
}
}  // namespace detail

/// Cut L into tiles of shape T: the result has two modes, ((tile coordinate), (element in tile)).
/// Mode i of the tile coordinate has extent ceil(S_i / T_i): with run-time extents the last tile may
/// reach past the edge, which the caller masks with predicates. Static extents must divide.
template <class S, class D, class T>
STRATA_HOST_DEVICE constexpr auto tile(const layout<S, D>& l, const T& tile_shape) {
  static_assert(is_tuple_v<T> && tuple_size_v<T> == tuple_size_v<S>,
                "tile: the tile shape must have one extent per mode of the layout (rank mismatch)");
  detail::check_tile<S, T>(std::make_index_sequence<tuple_size_v<S>>{});
  auto counts = transform(l.shape(), tile_shape, [](auto s, auto t) { return ceil_div(s, t); });
  auto steps = transform(tile_shape, l.stride(), [](auto t, auto d) { return t * d; });
  return make_layout(make_tuple(counts, tile_shape), make_tuple(steps, l.stride()));
}

/// Elements consecutive in memory along the stride-1 mode of a static layout (0 if it has none).
template <class S, class D>
STRATA_HOST_DEVICE constexpr int contiguous_extent(const layout<S, D>& l) {
  const detail::modes m = detail::coalesce_modes(detail::to_modes(l));
  for (int i = 0; i < m.n; ++i)
    if (m.d[i] == 1) return static_cast<int>(m.s[i]);
  return 0;
}

/// Whether vectors of `width` consecutive elements can be read from every offset where a vector starts
/// (its stride-1 run holds a multiple of `width`, every other stride is a multiple of `width`).
template <class S, class D>
STRATA_HOST_DEVICE constexpr bool vectorizable(const layout<S, D>& l, int width) {
  const detail::modes m = detail::to_modes(l);  // not coalesced: vectorize() divides these very modes
  if (width == 1) return true;
  bool has_run = false;
  for (int i = 0; i < m.n; ++i) {
    if (m.s[i] == 1) continue;
    if (m.d[i] == 1) {
      if (m.s[i] % width != 0) return false;
      has_run = true;
    } else if (m.d[i] % width != 0) {
      return false;
    }
  }
  return has_run;
}

}  // namespace strata
