// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/tensor/detail/modes.hpp -- the layout algebra on plain numbers, and the bridge back to types.
//
// Every algebra operation (coalesce, composition, complement, inverse) is written once, as a
// constexpr function on a flat list of (extent, stride) modes. For a static layout it runs at compile
// time and its result is lifted back into constant<N> extents and strides (lift_t below), so the
// result is static, minimal and free at run time. For a layout with run-time values the same function
// runs at run time and the result has run-time ints and a rank fixed by the input types (size-1 modes
// pad it), which keeps the function and the type independent of the values.
#pragma once

#include <cstddef>
#include <utility>

#include "strata/config/config.hpp"
#include "strata/tensor/layout.hpp"

namespace strata::detail {

inline constexpr int max_modes = 32;

enum class algebra_error { none, too_many_modes, not_divisible, not_injective, not_bijective };

/// A flat list of (extent, stride) modes, optionally cut into consecutive groups (a nested result).
struct modes {
  int n = 0;
  long long s[max_modes] = {};
  long long d[max_modes] = {};
  int groups = 0;               // 0: flat; otherwise the result is a tuple of `groups` modes
  int group_size[max_modes] = {};
  algebra_error error = algebra_error::none;

  STRATA_HOST_DEVICE constexpr void push(long long extent, long long str) {
    if (n >= max_modes) {
      error = algebra_error::too_many_modes;
      return;
    }
    s[n] = extent;
    d[n] = str;
    ++n;
  }
  STRATA_HOST_DEVICE constexpr void close_group(int count) { group_size[groups++] = count; }
};

template <class S, class D>
STRATA_HOST_DEVICE constexpr modes to_modes(const layout<S, D>& l) {
  modes m;
  auto fs = flatten(l.shape());
  auto fd = flatten(l.stride());
  [&]<std::size_t... Is>(std::index_sequence<Is...>) {
    (m.push(value_of(get<Is>(fs)), value_of(get<Is>(fd))), ...);
  }(std::make_index_sequence<tuple_size_v<decltype(fs)>>{});
  return m;
}

/// Drop extent-1 modes and merge neighbours (s0, d0), (s1, s0 * d0) into (s0 * s1, d0): same function.
STRATA_HOST_DEVICE constexpr modes coalesce_range(const modes& in, int begin, int end) {
  modes out;
  for (int i = begin; i < end; ++i) {
    if (in.s[i] == 1) continue;
    if (out.n > 0 && in.d[i] == out.s[out.n - 1] * out.d[out.n - 1]) {
      out.s[out.n - 1] *= in.s[i];
    } else {
      out.push(in.s[i], in.d[i]);
    }
  }
  if (out.n == 0) out.push(1, 0);
  out.error = in.error;
  return out;
}
STRATA_HOST_DEVICE constexpr modes coalesce_modes(const modes& in) { return coalesce_range(in, 0, in.n); }

/// Coalesce each group on its own (keeps the grouping).
STRATA_HOST_DEVICE constexpr modes coalesce_groups(const modes& in) {
  if (in.groups == 0) return coalesce_modes(in);
  modes out;
  int begin = 0;
  for (int g = 0; g < in.groups; ++g) {
    const modes part = coalesce_range(in, begin, begin + in.group_size[g]);
    for (int i = 0; i < part.n; ++i) out.push(part.s[i], part.d[i]);
    out.close_group(part.n);
    begin += in.group_size[g];
  }
  out.error = in.error;
  return out;
}

/// Sort the modes with extent > 1 and stride > 0 by stride (then extent); the order is written in `perm`.
STRATA_HOST_DEVICE constexpr modes sorted_by_stride(const modes& in, int* perm) {
  modes out;
  for (int i = 0; i < in.n; ++i)
    if (in.s[i] > 1 && in.d[i] > 0) {
      perm[out.n] = i;
      out.push(in.s[i], in.d[i]);
    }
  for (int i = 1; i < out.n; ++i)  // insertion sort: a handful of modes
    for (int j = i; j > 0 && (out.d[j] < out.d[j - 1] || (out.d[j] == out.d[j - 1] && out.s[j] < out.s[j - 1])); --j) {
      const long long ts = out.s[j], td = out.d[j];
      const int tp = perm[j];
      out.s[j] = out.s[j - 1], out.d[j] = out.d[j - 1], perm[j] = perm[j - 1];
      out.s[j - 1] = ts, out.d[j - 1] = td, perm[j - 1] = tp;
    }
  out.error = in.error;
  return out;
}

/// A o B. For each mode (s, d) of B, walk A's modes: skip what the stride d steps over, then take s
/// elements. Needs the usual divisibility (CuTe's "stride and shape divisibility"); A's last mode
/// extends without bound. One group per top-level mode of B, each with flat(A) entries per flat
/// sub-mode of B (extent-1 padding where a mode of A is not used).
STRATA_HOST_DEVICE constexpr modes compose_modes(const modes& a, const modes& b, const int* b_group_size, int b_groups) {
  modes out;
  int bi = 0;
  for (int g = 0; g < b_groups; ++g) {
    int count = 0;
    for (int k = 0; k < b_group_size[g]; ++k, ++bi) {
      long long rest_stride = b.d[bi], rest_size = b.s[bi];
      for (int i = 0; i < a.n; ++i, ++count) {
        const bool last = i + 1 == a.n;
        if (rest_size == 1) {
          out.push(1, 0);
          continue;
        }
        if (last) {
          out.push(rest_size, a.d[i] * rest_stride);
          rest_size = 1;
          continue;
        }
        if (rest_stride % a.s[i] == 0) {  // the stride steps over this whole mode
          rest_stride /= a.s[i];
          out.push(1, 0);
          continue;
        }
        if (a.s[i] % rest_stride != 0) out.error = algebra_error::not_divisible;
        const long long avail = a.s[i] / rest_stride;
        const long long str = a.d[i] * rest_stride;
        rest_stride = 1;
        if (rest_size <= avail) {
          out.push(rest_size, str);
          rest_size = 1;
        } else {
          if (rest_size % avail != 0) out.error = algebra_error::not_divisible;
          out.push(avail, str);
          rest_size /= avail;
        }
      }
    }
    out.close_group(count);
  }
  if (a.error != algebra_error::none) out.error = a.error;
  if (b.error != algebra_error::none) out.error = b.error;
  return out;
}

/// The layout that fills the gaps of an injective layout `a` up to `cosize_target` offsets: sorted by
/// stride, each gap between d_k and s_{k-1} * d_{k-1} becomes a mode, and one last mode repeats the
/// whole pattern. Pads to flat(a) + 1 modes (extent 1) so the dynamic rank is fixed.
STRATA_HOST_DEVICE constexpr modes complement_modes(const modes& a, long long cosize_target) {
  int perm[max_modes] = {};
  const modes sorted = sorted_by_stride(a, perm);
  modes out;
  long long current = 1;
  for (int i = 0; i < sorted.n; ++i) {
    if (sorted.d[i] % current != 0 || sorted.d[i] < current) out.error = algebra_error::not_injective;
    out.push(sorted.d[i] / current, current);
    current = sorted.s[i] * sorted.d[i];
  }
  out.push((cosize_target + current - 1) / current, current);
  while (out.n < a.n + 1) out.push(1, 0);
  if (a.error != algebra_error::none) out.error = a.error;
  return out;
}

/// The inverse of a bijection onto [0, size): offset -> linear index. Sorted by stride the modes must
/// tile [0, size) exactly (strides 1, s0, s0*s1, ...); mode k of the inverse has the extent of the
/// k-th smallest stride and, as stride, that mode's place in the colexicographic linear index.
STRATA_HOST_DEVICE constexpr modes inverse_modes(const modes& a) {
  int perm[max_modes] = {};
  const modes sorted = sorted_by_stride(a, perm);
  long long colex[max_modes] = {};
  long long run = 1;
  for (int i = 0; i < a.n; ++i) colex[i] = run, run *= a.s[i];
  modes out;
  long long expect = 1;
  for (int i = 0; i < sorted.n; ++i) {
    if (sorted.d[i] != expect) out.error = algebra_error::not_bijective;
    out.push(sorted.s[i], colex[perm[i]]);
    expect = sorted.s[i] * sorted.d[i];
  }
  for (int i = 0; i < a.n; ++i)  // a stride-0 mode of extent > 1 maps two coordinates to one offset
    if (a.s[i] > 1 && a.d[i] == 0) out.error = algebra_error::not_bijective;
  if (out.n == 0) out.push(1, 0);
  while (out.n < a.n) out.push(1, 0);
  if (a.error != algebra_error::none) out.error = a.error;
  return out;
}

// ---- back to layouts ---------------------------------------------------------------------------------

/// Holder: a type with `static constexpr modes value`. lift_t<Holder> is the static layout it describes.
template <class Holder, std::size_t Begin, std::size_t... Is>
auto lift_flat(std::index_sequence<Is...>)
    -> tuple<constant<static_cast<int>(Holder::value.s[Begin + Is])>...>;
template <class Holder, std::size_t Begin, std::size_t... Is>
auto lift_flat_stride(std::index_sequence<Is...>)
    -> tuple<constant<static_cast<int>(Holder::value.d[Begin + Is])>...>;

STRATA_HOST_DEVICE constexpr int group_begin(const modes& m, int g) {
  int b = 0;
  for (int i = 0; i < g; ++i) b += m.group_size[i];
  return b;
}

// A group of one mode becomes an integer mode, a larger group a nested mode.
template <class Holder, std::size_t G>
auto lift_group_shape() {
  constexpr int b = group_begin(Holder::value, G), n = Holder::value.group_size[G];
  if constexpr (n == 1) return constant<static_cast<int>(Holder::value.s[b])>{};
  else return decltype(lift_flat<Holder, b>(std::make_index_sequence<n>{})){};
}
template <class Holder, std::size_t G>
auto lift_group_stride() {
  constexpr int b = group_begin(Holder::value, G), n = Holder::value.group_size[G];
  if constexpr (n == 1) return constant<static_cast<int>(Holder::value.d[b])>{};
  else return decltype(lift_flat_stride<Holder, b>(std::make_index_sequence<n>{})){};
}
template <class Holder, std::size_t... Gs>
auto lift_grouped(std::index_sequence<Gs...>)
    -> layout<tuple<decltype(lift_group_shape<Holder, Gs>())...>, tuple<decltype(lift_group_stride<Holder, Gs>())...>>;

template <class Holder>
auto lift() {
  if constexpr (Holder::value.groups == 0)
    return layout<decltype(lift_flat<Holder, 0>(std::make_index_sequence<Holder::value.n>{})),
                  decltype(lift_flat_stride<Holder, 0>(std::make_index_sequence<Holder::value.n>{}))>{};
  else
    return decltype(lift_grouped<Holder>(std::make_index_sequence<Holder::value.groups>{})){};
}
template <class Holder>
using lift_t = decltype(lift<Holder>());

/// A run-time layout of N flat int modes read from `m` (m.n <= N; missing modes are extent 1).
template <std::size_t N>
STRATA_HOST_DEVICE constexpr auto dynamic_flat(const modes& m, int begin = 0) {
  return [&]<std::size_t... Is>(std::index_sequence<Is...>) {
    return make_layout(make_tuple(static_cast<int>(static_cast<int>(Is) + begin < m.n ? m.s[Is + begin] : 1)...),
                       make_tuple(static_cast<int>(static_cast<int>(Is) + begin < m.n ? m.d[Is + begin] : 0)...));
  }(std::make_index_sequence<N>{});
}

/// A run-time layout of groups of Ns... int modes (every group full, as compose_modes makes them).
template <std::size_t... Ns>
STRATA_HOST_DEVICE constexpr auto dynamic_grouped(const modes& m) {
  constexpr std::size_t sizes[] = {Ns...};
  return [&]<std::size_t... Gs>(std::index_sequence<Gs...>) {
    auto parts = make_tuple(dynamic_flat<Ns>(m, group_begin(m, static_cast<int>(Gs)))...);
    (void)sizes;
    return make_layout(make_tuple(get<Gs>(parts).shape()...), make_tuple(get<Gs>(parts).stride()...));
  }(std::index_sequence_for<decltype(Ns)...>{});
}

}  // namespace strata::detail
