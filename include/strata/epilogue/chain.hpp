// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/epilogue/chain.hpp -- chain<Ops...>: epilogue ops composed in one template argument.
//
//   using ep = epilogue::chain<epilogue::alpha_beta<>, epilogue::bias_col<bf16>, epilogue::gelu_tanh,
//                              epilogue::convert_to<bf16>>;
//   ep::params p = ep::make_params({.alpha = 1.f, .beta = 0.f}, {.data = bias}, {}, {});
//   // in the kernel, per accumulator element with its coordinates in D:
//   d[i] = ep::apply(acc[i], row, col, p);        // returns ep::output_type (bf16 here)
//
// The ops run left to right; the last must be the output conversion (and no other op may be one).
// A malformed chain stops the compile with a static_assert that says what is wrong.
//
// ep::params is ONE aggregate with a slot per op, in chain order, holding that op's params; it is
// trivially copyable, so it travels to a kernel by value inside the kernel's own params. Build it with
//   ep::make_params(p0, p1, ...)          one argument per op, in order ({} for ops without params);
//                                         each may be a designated initializer {.alpha = 2.f, ...}
//   ep::params{{...}, {...}, {}, {}}      plain aggregate initialization, same order
// and read or change one op's params with
//   epilogue::get<I>(p)                   the params of the I-th op
//   epilogue::get<Op>(p)                  the params of op Op, when Op appears once in the chain
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "strata/config/config.hpp"
#include "strata/epilogue/op.hpp"
#include "strata/numeric/numeric.hpp"

namespace strata::epilogue {

namespace detail {

// Small type-list helpers, written out rather than taken from <tuple> to keep the header light.
template <std::size_t I, class T, class... Ts>
struct type_at {
  using type = typename type_at<I - 1, Ts...>::type;
};
template <class T, class... Ts>
struct type_at<0, T, Ts...> {
  using type = T;
};

template <class... Ts>
struct last {
  using type = void;  // an empty chain; reported by a static_assert in chain
};
template <class T, class... Ts>
struct last<T, Ts...> {
  using type = typename type_at<sizeof...(Ts), T, Ts...>::type;
};

template <class Target, class... Ts>
inline constexpr std::size_t count_of = (std::size_t(std::is_same_v<Target, Ts>) + ... + 0);

template <class Target, class... Ts>
constexpr std::size_t index_of() {
  std::size_t i = 0;
  const bool found[] = {std::is_same_v<Target, Ts>..., false};
  while (!found[i]) ++i;
  return i;
}

// The params of Op, or no_params when Op declares none (so that a chain with a bad op reports the
// static_assert of chain, not an error about Op::params).
template <class Op>
struct params_of {
  using type = no_params;
};
template <class Op>
  requires requires { typename Op::params; }
struct params_of<Op> {
  using type = typename Op::params;
};
template <class Op>
using params_of_t = typename params_of<Op>::type;

// Op::output_type, or void (again so that the static_assert is the error the user reads).
template <class Op>
struct output_of {
  using type = void;
};
template <class Op>
  requires requires { typename Op::output_type; }
struct output_of<Op> {
  using type = typename Op::output_type;
};

// One op's params inside the chain's aggregate. A member rather than a base, so that params of any
// type (a scalar, a final class, the same type twice) fit. Indexed, so that two ops of one type get
// separate slots.
template <std::size_t I, class P>
struct slot {
  P value;
};

template <class Indices, class... Ops>
struct chain_params;
template <std::size_t... I, class... Ops>
struct chain_params<std::index_sequence<I...>, Ops...> : slot<I, params_of_t<Ops>>... {};

template <class... Ops>
using chain_params_t = chain_params<std::index_sequence_for<Ops...>, Ops...>;

}  // namespace detail

/// The params of the I-th op of a chain.
template <std::size_t I, class Seq, class... Ops>
STRATA_HOST_DEVICE constexpr auto& get(detail::chain_params<Seq, Ops...>& p) {
  static_assert(I < sizeof...(Ops), "epilogue::get<I>: I is past the end of the chain.");
  using P = detail::params_of_t<typename detail::type_at<I, Ops...>::type>;
  return static_cast<detail::slot<I, P>&>(p).value;
}
template <std::size_t I, class Seq, class... Ops>
STRATA_HOST_DEVICE constexpr const auto& get(const detail::chain_params<Seq, Ops...>& p) {
  static_assert(I < sizeof...(Ops), "epilogue::get<I>: I is past the end of the chain.");
  using P = detail::params_of_t<typename detail::type_at<I, Ops...>::type>;
  return static_cast<const detail::slot<I, P>&>(p).value;
}

/// The params of op Op, which must appear exactly once in the chain.
template <class Op, class Seq, class... Ops>
STRATA_HOST_DEVICE constexpr auto& get(detail::chain_params<Seq, Ops...>& p) {
  static_assert(detail::count_of<Op, Ops...> == 1,
                "epilogue::get<Op>: Op must appear exactly once in the chain; use get<index> otherwise.");
  return get<detail::index_of<Op, Ops...>()>(p);
}
template <class Op, class Seq, class... Ops>
STRATA_HOST_DEVICE constexpr const auto& get(const detail::chain_params<Seq, Ops...>& p) {
  static_assert(detail::count_of<Op, Ops...> == 1,
                "epilogue::get<Op>: Op must appear exactly once in the chain; use get<index> otherwise.");
  return get<detail::index_of<Op, Ops...>()>(p);
}

/// Element-wise ops applied left to right to each accumulator element; the last converts to the
/// output type. See the header comment for use and op.hpp for how to write an op.
template <class... Ops>
struct chain {
  static_assert(sizeof...(Ops) > 0,
                "epilogue::chain<>: a chain needs at least its output conversion, e.g. chain<convert_to<float>>.");
  static_assert((... && (op<Ops> || conversion<Ops>)),
                "epilogue::chain: every op must declare `params` (a trivially copyable type, no_params if it "
                "needs none) and be callable as op(float v, int row, int col, const params&), returning "
                "float or std::int32_t (or, for an output conversion, its declared output_type). See "
                "strata/epilogue/op.hpp.");
  static_assert(sizeof...(Ops) == 0 || conversion<typename detail::last<Ops...>::type>,
                "epilogue::chain: the last op must be an output conversion such as convert_to<bf16>, so that "
                "the type written to memory is stated, not implied.");
  static_assert((std::size_t(conversion<Ops>) + ... + 0) ==
                    std::size_t(conversion<typename detail::last<Ops...>::type>),
                "epilogue::chain: an output conversion (convert_to<...>) may only be the last op: the ops "
                "after it would compute on an already narrowed value.");

  /// The type the chain writes to memory.
  using output_type = typename detail::output_of<typename detail::last<Ops...>::type>::type;
  /// Every op's params, one slot per op in chain order (see the header comment).
  using params = detail::chain_params_t<Ops...>;
  static_assert(std::is_trivially_copyable_v<params>,
                "epilogue::chain: the params of every op must be trivially copyable: they are passed to kernels "
                "by value.");

  static constexpr std::size_t size = sizeof...(Ops);

  /// Builds the params from each op's params, in chain order.
  STRATA_HOST_DEVICE static constexpr params make_params(const detail::params_of_t<Ops>&... p) {
    return make_params_impl(std::index_sequence_for<Ops...>{}, p...);
  }

  /// Runs the chain on one accumulator element at (row, col) of D. Acc is float or std::int32_t
  /// (a narrow float accumulator, e.g. f16 from an f16-accumulating MMA, is widened to float).
  template <class Acc>
  STRATA_HOST_DEVICE static output_type apply(Acc acc, int row, int col, const params& p) {
    static_assert(value<Acc> || narrow_float<Acc>,
                  "epilogue::chain::apply: the accumulator must be float, std::int32_t or a narrow float type.");
    return step<0>(widen(acc), row, col, p);
  }

  /// apply() on two neighbouring elements of D, the first at (row, col), the second at (row2, col2),
  /// returned as the pair a kernel stores in one access. The same values as two apply() calls; the
  /// output conversion converts both at once where it has a paired form (convert_to::pair).
  template <class Acc>
  STRATA_HOST_DEVICE static output_pair<output_type> apply_pair(Acc a, Acc b, int row, int col, int row2,
                                                                int col2, const params& p) {
    using Last = typename detail::last<Ops...>::type;
    if constexpr (requires(const Last o, float v) { o.pair(v, v, get<sizeof...(Ops) - 1>(p)); }) {
      const auto x = before_conversion<0>(widen(a), row, col, p),
                 y = before_conversion<0>(widen(b), row2, col2, p);
      return Last{}.pair(x, y, get<sizeof...(Ops) - 1>(p));
    } else {
      return {apply(a, row, col, p), apply(b, row2, col2, p)};
    }
  }

  /// apply() on an element; lets a chain be used as a function object.
  template <class Acc>
  STRATA_HOST_DEVICE output_type operator()(Acc acc, int row, int col, const params& p) const {
    return apply(acc, row, col, p);
  }

 private:
  template <std::size_t... I>
  STRATA_HOST_DEVICE static constexpr params make_params_impl(std::index_sequence<I...>,
                                                             const detail::params_of_t<Ops>&... p) {
    return params{detail::slot<I, detail::params_of_t<Ops>>{p}...};
  }

  /// A narrow float accumulator as float; float and std::int32_t as they are.
  template <class Acc>
  STRATA_HOST_DEVICE static auto widen(Acc acc) {
    if constexpr (narrow_float<Acc>) return static_cast<float>(acc);
    else return acc;
  }

  /// Ops I .. size - 2: everything but the output conversion.
  template <std::size_t I, class V>
  STRATA_HOST_DEVICE static auto before_conversion(V v, int row, int col, const params& p) {
    if constexpr (I + 1 == sizeof...(Ops)) {
      return v;
    } else {
      using Op = typename detail::type_at<I, Ops...>::type;
      return before_conversion<I + 1>(Op{}(v, row, col, get<I>(p)), row, col, p);
    }
  }

  template <std::size_t I, class V>
  STRATA_HOST_DEVICE static output_type step(V v, int row, int col, const params& p) {
    using Op = typename detail::type_at<I, Ops...>::type;
    static_assert(std::is_invocable_v<const Op&, V, int, int, const detail::params_of_t<Op>&>,
                  "epilogue::chain: an op cannot take the value the chain gives it (std::int32_t from an integer "
                  "accumulator, or float): accept both with template <epilogue::value V>, or put an op that "
                  "converts to float before it.");
    if constexpr (I + 1 == sizeof...(Ops)) {
      return Op{}(v, row, col, get<I>(p));
    } else {
      const auto r = Op{}(v, row, col, get<I>(p));
      static_assert(value<std::remove_cv_t<decltype(r)>>,
                    "epilogue::chain: an op before the output conversion must return float or std::int32_t.");
      return step<I + 1>(r, row, col, p);
    }
  }
};

}  // namespace strata::epilogue
