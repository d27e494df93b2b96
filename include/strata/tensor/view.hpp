// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/tensor/view.hpp -- non-owning views (pointer + layout) and thread-owned register tensors.
//
//   tensor_view<T, Layout, Space>   T* + a layout (plain or swizzled); Space says where the memory is
//                                   (global, shared, reg), so copy atoms can dispatch on it
//   make_view<Space>(ptr, layout)   global_view(ptr, layout), shared_view(ptr, layout)
//   register_tensor<T, Layout>      a small array owned by one thread, static layout; .view() is a
//                                   tensor_view<T, Layout, memory_space::reg>
//   v(i, j, ...), v(coord), v[i]    element access (linear indices are colexicographic, layout.hpp)
//   local_tile(v, shape, coord)     the tile at `coord` (in tiles) of shape `shape`
//   vectorize<V>(v)                 the same memory as vectors of V elements (static checks in words)
//
// Bounds-checking mode (STRATA_BOUNDS_CHECK=1, host and emulator builds; on by default in the race-check
// build): every v(i, j, ...) and v[i] checks each integer coordinate against its mode's extent (a
// linear index against the size) and throws strata::bounds_error naming the view, its memory space,
// its shape and the offending coordinate. A view's name is "view" unless set with named(v, "A tile");
// local_tile, tile and vectorize keep it. Inside a kernel on the emulator the error fails the launch
// with the kernel, block and thread. Off by default: the checks cost a branch per access.
#pragma once

#include <cstddef>
#include <type_traits>

#include "strata/config/config.hpp"

#ifndef STRATA_BOUNDS_CHECK
#if defined(STRATA_RACE_CHECK) && STRATA_RACE_CHECK
#define STRATA_BOUNDS_CHECK 1
#else
#define STRATA_BOUNDS_CHECK 0
#endif
#endif
#if STRATA_BOUNDS_CHECK && STRATA_DEVICE_PASS
#error "STRATA_BOUNDS_CHECK is a host and emulator mode; do not define it for a device compilation"
#endif
#if STRATA_BOUNDS_CHECK
#include <string>

#include "strata/runtime/error.hpp"
#endif
#include "strata/tensor/algebra.hpp"
#include "strata/tensor/layout.hpp"
#include "strata/tensor/swizzle.hpp"

namespace strata {

enum class memory_space { global, shared, reg };

#if STRATA_BOUNDS_CHECK
/// A view access outside the view's shape (bounds-checking mode only).
class bounds_error : public error {
 public:
  using error::error;
};

namespace detail {
inline const char* space_name(memory_space s) {
  return s == memory_space::global ? "global" : s == memory_space::shared ? "shared" : "register";
}
template <class X>
std::string coord_string(const X& x) {
  if constexpr (is_tuple_v<X>) {
    std::string r = "(";
    for_each(x, [&](const auto& e) { r += (r.size() > 1 ? ", " : "") + coord_string(e); });
    return r + ")";
  } else {
    return std::to_string(static_cast<long long>(value_of(x)));
  }
}
/// Throws bounds_error when a coordinate of an access to view (name, space, shape) is outside it.
template <class Shape, class... Cs>
void check_access(const char* name, memory_space space, const Shape& shape, long long size, const Cs&... cs) {
  auto fail = [&](const std::string& what) {
    std::string at;
    ((at += (at.empty() ? "" : ", ") + coord_string(cs)), ...);
    throw bounds_error("strata bounds check: view '" + std::string(name) + "' (" + space_name(space) +
                       " memory, shape " + coord_string(shape) + ") accessed at (" + at + "): " + what);
  };
  if constexpr (sizeof...(Cs) == 1 && (std::is_integral_v<std::remove_cvref_t<Cs>> && ...)) {
    const long long i = static_cast<long long>((cs, ...));
    if (i < 0 || i >= size)
      fail("linear index " + std::to_string(i) + " is outside [0, " + std::to_string(size) + ")");
  } else if constexpr (is_tuple_v<Shape> && sizeof...(Cs) == tuple_size_v<Shape>) {
    int mode = 0;
    auto one = [&](const auto& extent, const auto& c) {
      if constexpr (!is_tuple_v<decltype(extent)> && !is_tuple_v<decltype(c)>) {
        const long long x = static_cast<long long>(value_of(c)), e = static_cast<long long>(value_of(extent));
        if (x < 0 || x >= e)
          fail("coordinate " + std::to_string(mode) + " is " + std::to_string(x) + ", outside [0, " +
               std::to_string(e) + ")");
      }
      ++mode;
    };
    [&]<std::size_t... Is>(std::index_sequence<Is...>) {
      (one(get<Is>(shape), cs), ...);
    }(std::make_index_sequence<sizeof...(Cs)>{});
  }
}
}  // namespace detail
#endif

template <class T, class Layout, memory_space Space = memory_space::global>
struct tensor_view {
  using element_type = T;
  using layout_type = Layout;
  static constexpr memory_space space = Space;
  static constexpr int rank = Layout::rank;

  T* ptr = nullptr;
  [[no_unique_address]] Layout layout_{};
#if STRATA_BOUNDS_CHECK
  const char* name = "view";  // for bounds_error messages (named(v, "..."))
#endif

  constexpr tensor_view() = default;
  STRATA_HOST_DEVICE constexpr tensor_view(T* p, const Layout& l) : ptr(p), layout_(l) {}

  STRATA_HOST_DEVICE constexpr T* data() const { return ptr; }
  STRATA_HOST_DEVICE constexpr const Layout& layout() const { return layout_; }
  STRATA_HOST_DEVICE constexpr auto shape() const { return layout_.shape(); }
  STRATA_HOST_DEVICE constexpr auto size() const { return layout_.size(); }

  template <class... Cs>
  STRATA_HOST_DEVICE constexpr T& operator()(const Cs&... cs) const {
#if STRATA_BOUNDS_CHECK
    if (!std::is_constant_evaluated()) detail::check_access(name, Space, layout_.shape(), (long long)value_of(layout_.size()), cs...);
#endif
    return ptr[layout_(cs...)];
  }
  template <class I>
  STRATA_HOST_DEVICE constexpr T& operator[](I i) const {
#if STRATA_BOUNDS_CHECK
    if (!std::is_constant_evaluated()) detail::check_access(name, Space, layout_.shape(), (long long)value_of(layout_.size()), i);
#endif
    return ptr[layout_(i)];
  }
};

/// The same view, named `name` in bounds-checking messages (a no-op otherwise). `name` must outlive it.
template <class V>
STRATA_HOST_DEVICE constexpr V named(V v, [[maybe_unused]] const char* name) {
#if STRATA_BOUNDS_CHECK
  v.name = name;
#endif
  return v;
}

template <class T, class L, memory_space Sp>
STRATA_HOST_DEVICE constexpr auto size(const tensor_view<T, L, Sp>& v) { return v.size(); }

template <memory_space Space, class T, class L>
STRATA_HOST_DEVICE constexpr auto make_view(T* p, const L& l) { return tensor_view<T, L, Space>(p, l); }
template <class T, class L>
STRATA_HOST_DEVICE constexpr auto global_view(T* p, const L& l) { return tensor_view<T, L, memory_space::global>(p, l); }
template <class T, class L>
STRATA_HOST_DEVICE constexpr auto shared_view(T* p, const L& l) { return tensor_view<T, L, memory_space::shared>(p, l); }

/// A tensor in the registers of one thread: static layout, storage of cosize(Layout) elements.
template <class T, class Layout>
struct register_tensor {
  static_assert(is_static_v<Layout>, "register_tensor: the layout must be static (registers are allocated at compile time)");
  static constexpr int rank = Layout::rank;
  static constexpr int capacity = static_cast<int>(cosize(Layout{}));
  T storage[capacity];

  STRATA_HOST_DEVICE constexpr auto layout() const { return Layout{}; }
  STRATA_HOST_DEVICE constexpr auto shape() const { return Layout{}.shape(); }
  STRATA_HOST_DEVICE static constexpr auto size() { return Layout{}.size(); }
  template <class... Cs>
  STRATA_HOST_DEVICE constexpr T& operator()(const Cs&... cs) { return storage[Layout{}(cs...)]; }
  template <class... Cs>
  STRATA_HOST_DEVICE constexpr const T& operator()(const Cs&... cs) const { return storage[Layout{}(cs...)]; }
  template <class I>
  STRATA_HOST_DEVICE constexpr T& operator[](I i) { return storage[Layout{}(i)]; }
  template <class I>
  STRATA_HOST_DEVICE constexpr const T& operator[](I i) const { return storage[Layout{}(i)]; }
  STRATA_HOST_DEVICE constexpr auto view() { return tensor_view<T, Layout, memory_space::reg>(storage, Layout{}); }
};

/// A register tensor with the (static) shape of `v`, compact, first mode fastest.
template <class T, class V>
STRATA_HOST_DEVICE constexpr auto make_register_tensor_like(const V& v) {
  using L = decltype(make_layout(v.shape()));
  static_assert(is_static_v<L>, "make_register_tensor_like: the view's shape must be static");
  return register_tensor<T, L>{};
}

// ---- sub-views -----------------------------------------------------------------------------------------

namespace detail {
/// `to` with the bounds-checking name of `from`.
template <class From, class To>
STRATA_HOST_DEVICE constexpr To keep_name([[maybe_unused]] const From& from, To to) {
#if STRATA_BOUNDS_CHECK
  to.name = from.name;
#endif
  return to;
}
/// The linear layout under a possible swizzle.
template <class L>
STRATA_HOST_DEVICE constexpr const auto& linear_part(const L& l) {
  if constexpr (is_swizzled<L>::value) return l.inner;
  else return l;
}
/// A view of the same memory whose linear layout is `sub`, starting `offset` elements further.
template <class T, class L, memory_space Sp, class Sub, class Off>
STRATA_HOST_DEVICE constexpr auto rebase(const tensor_view<T, L, Sp>& v, Off offset, const Sub& sub) {
  if constexpr (is_swizzled<L>::value) {
    using R = swizzled_layout<typename L::swizzle_type, Sub>;
    return keep_name(v, tensor_view<T, R, Sp>(v.ptr, R(sub, v.layout().base + static_cast<long long>(offset))));
  } else {
    return keep_name(v, tensor_view<T, Sub, Sp>(v.ptr + offset, sub));
  }
}
template <class S, class Check = void>
STRATA_HOST_DEVICE constexpr void require_flat_modes() {
  [&]<std::size_t... Is>(std::index_sequence<Is...>) {
    static_assert((!is_tuple_v<decltype(get<Is>(std::declval<S>()))> && ...),
                  "tile/partition: every mode of the view must be an integer mode (flatten a nested layout first)");
  }(std::make_index_sequence<tuple_size_v<S>>{});
}
}  // namespace detail

/// The tile at tile coordinate `tc` (one integer per mode) of shape `tile_shape`: element (i, j, ...)
/// of the result is element (tc0 * T0 + i, tc1 * T1 + j, ...) of `v`. Tiles at the edge may reach past
/// a run-time extent: mask them with predicates (partition.hpp).
template <class T, class L, memory_space Sp, class TS, class TC>
STRATA_HOST_DEVICE constexpr auto local_tile(const tensor_view<T, L, Sp>& v, const TS& tile_shape, const TC& tc) {
  const auto& lin = detail::linear_part(v.layout());
  using S = typename std::remove_cvref_t<decltype(lin)>::shape_type;
  static_assert(is_tuple_v<TS> && is_tuple_v<TC> && tuple_size_v<TS> == tuple_size_v<S> && tuple_size_v<TC> == tuple_size_v<S>,
                "local_tile: the tile shape and the tile coordinate need one entry per mode of the view (rank mismatch)");
  detail::require_flat_modes<S>();
  const auto origin = transform(tile_shape, tc, [](auto t, auto c) { return value_of(t) * value_of(c); });
  return detail::rebase(v, lin(origin), make_layout(tile_shape, lin.stride()));
}

/// A view with the tiled layout tile(layout, tile_shape): ((tile coordinate), (element in tile)).
template <class T, class L, memory_space Sp, class TS>
STRATA_HOST_DEVICE constexpr auto tile(const tensor_view<T, L, Sp>& v, const TS& tile_shape) {
  return detail::rebase(v, 0, tile(detail::linear_part(v.layout()), tile_shape));
}

// ---- vectors -------------------------------------------------------------------------------------------

/// V consecutive elements moved as one access (16 bytes at most: the widest load of every target).
template <class T, int V>
struct alignas(sizeof(T) * V) vec {
  T v[V];
};

/// The same memory as a view of vec<T, V>: the stride-1 mode shrinks V times, other strides divide by V.
/// The pointer must be aligned to V * sizeof(T) bytes (a run-time property the caller guarantees).
template <int V, class T, class L, memory_space Sp>
STRATA_HOST_DEVICE constexpr auto vectorize(const tensor_view<T, L, Sp>& v) {
  static_assert(!is_swizzled<L>::value, "vectorize: view the swizzled layout's units instead (a swizzle keeps "
                                        "2^M-element units whole, see swizzle.hpp)");
  static_assert(is_static_v<L>, "vectorize: needs a static layout, so that the vector width can be checked");
  static_assert(detail::is_pow2(V * sizeof(T)) && V * sizeof(T) <= 16,
                "vectorize: a vector must be 2, 4, 8 or 16 bytes (the widest load of every target is 16 bytes)");
  static_assert(vectorizable(L{}, V),
                "vectorize: the layout's contiguous run or its strides are not multiples of the vector width, so "
                "some vector would start at an address the alignment forbids");
  auto fs = flatten(L{}.shape());
  auto fd = flatten(L{}.stride());
  auto shape_v = transform(fs, fd, [](auto s, auto d) {
    if constexpr (decltype(d)::value == 1) return s / constant<V>{};
    else return s;
  });
  auto stride_v = transform(fd, [](auto d) {
    if constexpr (decltype(d)::value == 1) return d;
    else return d / constant<V>{};
  });
  return detail::keep_name(v, tensor_view<vec<T, V>, decltype(make_layout(shape_v, stride_v)), Sp>(
                                 reinterpret_cast<vec<T, V>*>(v.ptr), make_layout(shape_v, stride_v)));
}

}  // namespace strata
