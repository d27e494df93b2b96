// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/copy/vector.hpp -- the per-thread vector copy atom: `Contiguous` elements of T moved with the
// widest loads and stores the guaranteed alignment allows, with edge predication.
//
//   using atom = strata::copy::vector_copy<float, 8, 16>;   // 8 floats, rows aligned to 16 B -> 2 x 16 B
//   atom::copy(dst, src);                                    // all 8 elements
//   atom::copy<strata::copy::fill::zero>(dst, src, valid);   // elements [valid, 8) are not read; set to 0
//
// Works between any two memories a thread can address (global -> shared, shared -> global, ...).
// The width is chosen at compile time from (element type, contiguous elements, alignment in bytes):
// 16 bytes where the alignment and the run allow it, narrower otherwise. Asking for a width the
// alignment cannot give is a compile error in words ("a 16-byte vector copy needs 16-byte alignment;
// this view guarantees 4").
//
// Predication: `valid` counts the leading elements that may be read. Elements at and past `valid`
// are never read; the destination there is set to zero (fill::zero, the default: a tile edge then
// contributes nothing to a sum or a dot product) or left as it was (fill::keep: for outputs and for
// partial tiles that a later pass completes). A vector that is entirely valid moves as one access; a
// vector that straddles the edge moves element by element, so nothing past `valid` is touched.
#pragma once

#include <cstddef>
#include <type_traits>

#include "strata/config/config.hpp"
#include "strata/copy/detail/vector_types.hpp"

namespace strata::copy {

/// What a predicated-off element of the destination becomes.
enum class fill {
  zero,  // written with zero bytes (the value cp.async's zero-fill and AMD's out-of-range loads give)
  keep,  // left as it was: not written at all
};

/// The widest vector (bytes) that moves `Contiguous` elements of T whose first element is aligned to
/// `AlignBytes`: 16, 8, 4, 2 or 1, never narrower than one element.
template <class T, int Contiguous, std::size_t AlignBytes>
inline constexpr int widest_vector_bytes = detail::widest_vector_bytes(sizeof(T), Contiguous, AlignBytes);

namespace detail {

// One static_assert per impossible (vector, alignment) pair, so that the message states both numbers.
#define STRATA_COPY_ALIGNMENT_CHECK(V, A)                                                                    \
  static_assert(!(Bytes == V && Align == A), "a " #V "-byte vector copy needs " #V "-byte alignment; this view " \
                                             "guarantees " #A)

template <int Bytes, std::size_t Align>
constexpr bool check_vector_alignment() {
  STRATA_COPY_ALIGNMENT_CHECK(16, 8);
  STRATA_COPY_ALIGNMENT_CHECK(16, 4);
  STRATA_COPY_ALIGNMENT_CHECK(16, 2);
  STRATA_COPY_ALIGNMENT_CHECK(16, 1);
  STRATA_COPY_ALIGNMENT_CHECK(8, 4);
  STRATA_COPY_ALIGNMENT_CHECK(8, 2);
  STRATA_COPY_ALIGNMENT_CHECK(8, 1);
  STRATA_COPY_ALIGNMENT_CHECK(4, 2);
  STRATA_COPY_ALIGNMENT_CHECK(4, 1);
  STRATA_COPY_ALIGNMENT_CHECK(2, 1);
  static_assert(Align % Bytes == 0 || (is_vector_bytes(static_cast<long long>(Align)) && Align < Bytes),
                "a vector copy needs an alignment that is a multiple of its width; this view's is not");
  return true;
}
#undef STRATA_COPY_ALIGNMENT_CHECK

}  // namespace detail

/// Copies `Contiguous` elements of T with `VectorBytes`-wide accesses (default: the widest possible).
/// `AlignBytes` is what the caller guarantees about both `src` and `dst`: each is a multiple of it.
template <class T, int Contiguous, std::size_t AlignBytes,
          int VectorBytes = widest_vector_bytes<T, Contiguous, AlignBytes>>
struct vector_copy {
  // Preconditions, in words.
  static_assert(std::is_trivially_copyable_v<T>, "vector_copy moves raw bytes: T must be trivially copyable");
  static_assert(detail::is_vector_bytes(sizeof(T)), "vector_copy takes elements of 1, 2, 4, 8 or 16 bytes");
  static_assert(Contiguous > 0, "vector_copy: the contiguous run must hold at least one element");
  static_assert(AlignBytes >= alignof(T) && AlignBytes % alignof(T) == 0,
                "vector_copy: the guaranteed alignment is less than the element type's own alignment");
  static_assert(detail::is_vector_bytes(VectorBytes), "vector_copy: vectors are 1, 2, 4, 8 or 16 bytes wide");
  static_assert(VectorBytes >= static_cast<int>(sizeof(T)) && VectorBytes % sizeof(T) == 0,
                "vector_copy: a vector must hold a whole number of elements");
  static_assert(detail::check_vector_alignment<VectorBytes, AlignBytes>());
  static_assert((Contiguous * sizeof(T)) % VectorBytes == 0,
                "vector_copy: the contiguous run is not a multiple of the vector width; choose a narrower "
                "vector or copy a longer run");

  using value_type = T;
  static constexpr int vector_bytes = VectorBytes;
  static constexpr int elements_per_vector = VectorBytes / static_cast<int>(sizeof(T));
  static constexpr int vectors = Contiguous / elements_per_vector;
  static constexpr int elements = Contiguous;

  /// Vector `i` (elements [i * elements_per_vector, ...)), of which the first `valid` elements are read.
  template <fill Fill = fill::zero>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void copy_vector(T* dst, const T* src, int valid) {
    if (valid >= elements_per_vector) {
      detail::store_raw<VectorBytes>(dst, detail::load_raw<VectorBytes>(src));
    } else if (valid <= 0) {
      if constexpr (Fill == fill::zero) detail::store_raw<VectorBytes>(dst, detail::zero_raw<VectorBytes>());
    } else {
      // The edge: element by element, never touching src past `valid`.
      STRATA_UNROLL
      for (int e = 0; e < elements_per_vector; ++e) {
        if (e < valid) {
          detail::store_raw<sizeof(T)>(dst + e, detail::load_raw<sizeof(T)>(src + e));
        } else if constexpr (Fill == fill::zero) {
          detail::store_raw<sizeof(T)>(dst + e, detail::zero_raw<sizeof(T)>());
        }
      }
    }
  }

  /// All `Contiguous` elements.
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void copy(T* dst, const T* src) {
    STRATA_UNROLL
    for (int i = 0; i < vectors; ++i)
      detail::store_raw<VectorBytes>(dst + i * elements_per_vector,
                                     detail::load_raw<VectorBytes>(src + i * elements_per_vector));
  }

  /// The first `valid` elements are read; the rest of dst is zero-filled or kept (see `fill`).
  template <fill Fill = fill::zero>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void copy(T* dst, const T* src, int valid) {
    STRATA_UNROLL
    for (int i = 0; i < vectors; ++i)
      copy_vector<Fill>(dst + i * elements_per_vector, src + i * elements_per_vector,
                        valid - i * elements_per_vector);
  }

  /// All or nothing: the whole run when `pred`, else none of it is read.
  template <fill Fill = fill::zero>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void copy_if(bool pred, T* dst, const T* src) {
    copy<Fill>(dst, src, pred ? Contiguous : 0);
  }
};

/// A plain load of `N` elements from shared memory (or any memory) as one vector access: on AMD the
/// compiler emits ds_read_b32 / ds_read_b64 / ds_read_b128 (or ds_read2_b32 / ds_read2_b64 pairs)
/// from it, on NVIDIA ld.shared{.v2,.v4}. `p` must be aligned to N * sizeof(T) bytes.
template <class T, int N>
struct vector_of {
  T v[N];
};

template <class T, int N>
STRATA_HOST_DEVICE STRATA_FORCEINLINE vector_of<T, N> shared_load(const T* p) {
  constexpr int bytes = N * static_cast<int>(sizeof(T));
  static_assert(bytes == 4 || bytes == 8 || bytes == 16,
                "shared_load reads 32, 64 or 128 bits (ds_read_b32 / b64 / b128): N * sizeof(T) must be 4, 8 or 16");
  const auto raw = detail::load_raw<bytes>(p);
  vector_of<T, N> out;
#if STRATA_DEVICE_PASS
  out = *reinterpret_cast<const vector_of<T, N>*>(&raw);
#else
  std::memcpy(&out, &raw, bytes);
#endif
  return out;
}

/// The store counterpart of shared_load (ds_write_b32 / b64 / b128; st.shared.v2 / v4).
template <class T, int N>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void shared_store(T* p, const vector_of<T, N>& v) {
  constexpr int bytes = N * static_cast<int>(sizeof(T));
  static_assert(bytes == 4 || bytes == 8 || bytes == 16,
                "shared_store writes 32, 64 or 128 bits: N * sizeof(T) must be 4, 8 or 16");
  detail::raw_vector<bytes> raw;
#if STRATA_DEVICE_PASS
  raw = *reinterpret_cast<const detail::raw_vector<bytes>*>(&v);
#else
  std::memcpy(&raw, &v, bytes);
#endif
  detail::store_raw<bytes>(p, raw);
}

}  // namespace strata::copy
