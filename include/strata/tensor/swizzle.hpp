// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/tensor/swizzle.hpp -- XOR swizzles that spread shared-memory accesses over the banks.
//
// swizzle<B, M, S> acts on an offset (in elements):
//     bits  [M, M+B)        "zzz": which M-element unit inside a bank line (e.g. which 16-byte chunk)
//     bits  [M+S, M+S+B)    "yyy": which row / bank line
//     result = offset ^ ((offset >> S) & zzz_mask)     -- yyy XORed into zzz
// With S >= B the yyy bits are never changed, so applying the swizzle twice gives the offset back:
// each swizzle is a bijection (an involution) on every aligned block of 2^(M+S+B) elements, and it
// keeps each 2^M-element unit contiguous, so vector accesses of 2^M elements stay vector accesses.
//
// swizzled_layout<Sw, L> is Sw(base + L(c)): the swizzle applies to the whole offset from the start of
// the buffer, so sub-views (tiles, partitions) keep a base offset inside the layout rather than moving
// the pointer (moving it would change which bits the swizzle sees).
//
// swizzle_for<T, RowBytes, LineBytes> picks the swizzle for rows of RowBytes bytes read 16 bytes per
// lane, several rows at a time (ldmatrix, 128-bit ld.shared, AMD ds_read_b128):
//     LineBytes = banks * 4: 128 for NVIDIA and AMD CDNA1-3 (32 banks), 256 for gfx950 (64 banks)
//     M = log2(16 / sizeof(T))                  one unit = 16 bytes
//     B = log2(min(RowBytes, LineBytes) / 16)   the units of one line that one row covers
//     S = log2(max(RowBytes, LineBytes) / sizeof(T)) - M   so yyy = the line (or row) index
// e.g. fp16 rows of 64 elements (128 bytes, the ldmatrix case) on NVIDIA: swizzle<3, 3, 3>; the same
// rows under gfx950's 64 banks: swizzle<3, 3, 4>. test/tensor/swizzle_test.cpp counts the conflicts.
#pragma once

#include <cstddef>
#include <type_traits>

#include "strata/config/config.hpp"
#include "strata/tensor/integer.hpp"
#include "strata/tensor/layout.hpp"

namespace strata {

template <int B, int M, int S>
struct swizzle {
  static_assert(B >= 0 && M >= 0, "swizzle<B, M, S>: B (bits to mix) and M (unit bits kept) must be >= 0");
  static_assert(S >= B, "swizzle<B, M, S>: S must be at least B, or the XOR would change the bits it reads "
                        "(the swizzle would not be a bijection)");
  static constexpr int bits = B, base = M, shift = S;
  static constexpr long long zzz_mask = ((1LL << B) - 1) << M;
  static constexpr long long yyy_mask = zzz_mask << S;
  /// The swizzle is a bijection on each aligned block of this many elements.
  static constexpr long long period = 1LL << (M + S + B);

  template <class I>
  STRATA_HOST_DEVICE constexpr auto operator()(I offset) const {
    const auto o = value_of(offset);
    return o ^ ((o >> S) & static_cast<decltype(o)>(zzz_mask));
  }
};

using no_swizzle = swizzle<0, 0, 0>;

/// The swizzle of Hopper's wgmma descriptors and TMA boxes on a shared-memory byte address, for a
/// swizzle span of 32, 64 or 128 bytes (16: none): swizzle<log2(span / 16), 4, 3>, address bits
/// [7, 7 + log2(span / 16)) XORed into bits [4, ...). The span is a run-time value there (a descriptor
/// field, a tensor map's mode), hence a function rather than the type.
STRATA_HOST_DEVICE constexpr unsigned span_swizzled(unsigned address, int span_bytes) {
  const unsigned mask = unsigned(span_bytes / 16 - 1);
  return address ^ (((address >> 7) & mask) << 4);
}
static_assert(span_swizzled(0x3A5u, 128) == unsigned(swizzle<3, 4, 3>{}(0x3A5)) &&
                  span_swizzled(0x3A5u, 64) == unsigned(swizzle<2, 4, 3>{}(0x3A5)) &&
                  span_swizzled(0x3A5u, 32) == unsigned(swizzle<1, 4, 3>{}(0x3A5)) && span_swizzled(0x3A5u, 16) == 0x3A5u,
              "span_swizzled is swizzle<log2(span / 16), 4, 3>");

template <class Sw, class L>
struct swizzled_layout {
  using swizzle_type = Sw;
  using layout_type = L;
  using shape_type = typename L::shape_type;
  static constexpr int rank = L::rank;

  [[no_unique_address]] L inner;
  long long base = 0;  // offset of this sub-view from the start of the swizzled buffer

  constexpr swizzled_layout() = default;
  STRATA_HOST_DEVICE constexpr swizzled_layout(const L& l, long long b = 0) : inner(l), base(b) {}

  STRATA_HOST_DEVICE constexpr auto shape() const { return inner.shape(); }
  STRATA_HOST_DEVICE constexpr auto size() const { return inner.size(); }
  template <class... Cs>
  STRATA_HOST_DEVICE constexpr long long operator()(const Cs&... cs) const {
    return Sw{}(base + static_cast<long long>(inner(cs...)));
  }
};

template <int B, int M, int S, class L>
STRATA_HOST_DEVICE constexpr auto make_swizzled(swizzle<B, M, S>, const L& l) {
  return swizzled_layout<swizzle<B, M, S>, L>(l);
}

template <class Sw, class L>
STRATA_HOST_DEVICE constexpr auto size(const swizzled_layout<Sw, L>& l) { return l.size(); }
template <class Sw, class L>
STRATA_HOST_DEVICE constexpr auto cosize(const swizzled_layout<Sw, L>& l) {
  // The swizzle permutes offsets inside aligned blocks of its period: round the buffer up to one.
  const long long c = static_cast<long long>(cosize(l.inner));
  return c < Sw::period ? Sw::period : (c + Sw::period - 1) / Sw::period * Sw::period;
}

template <class T>
struct is_swizzled : std::false_type {};
template <class Sw, class L>
struct is_swizzled<swizzled_layout<Sw, L>> : std::true_type {};

namespace detail {
template <class T, int RowBytes, int LineBytes>
struct swizzle_choice {
  static_assert(is_pow2(sizeof(T)) && sizeof(T) <= 16, "swizzle_for: the element size must be a power of two up to 16 bytes");
  static_assert(is_pow2(RowBytes) && RowBytes >= 16,
                "swizzle_for: rows must be a power of two of at least 16 bytes (one 16-byte vector)");
  static_assert(LineBytes == 128 || LineBytes == 256, "swizzle_for: LineBytes is banks * 4: 128 (32 banks) or 256 (64 banks)");
  static constexpr int M = log2_exact(16 / sizeof(T));
  static constexpr int B = log2_exact((RowBytes < LineBytes ? RowBytes : LineBytes) / 16);
  static constexpr int S = log2_exact((RowBytes > LineBytes ? RowBytes : LineBytes) / sizeof(T)) - M;
  using type = swizzle<B, M, S>;
};
}  // namespace detail

/// The swizzle for row-major tiles of T with RowBytes-byte rows read as 16-byte vectors, rows at a
/// time, on hardware whose bank line (banks * 4 bytes) is LineBytes.
template <class T, int RowBytes, int LineBytes = 128>
using swizzle_for = typename detail::swizzle_choice<T, RowBytes, LineBytes>::type;

}  // namespace strata
