// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/detail/shuffle.hpp -- warp shuffles of any small trivially copyable type, shared by
// the CUDA and HIP device contexts.
//
// The hardware moves 32-bit registers between lanes. A value of another type is split into 32-bit
// words, each word is moved by the backend's word shuffle, and the words are put back together.
// Doing it here, once, keeps the two backends' semantics identical for f16 pairs, doubles, small
// structs and so on, and the byte copies compile to register moves (no local memory) because every
// size is a compile-time constant.
#pragma once

#include <cstdint>
#include <type_traits>

#include "strata/config/config.hpp"

namespace strata::detail {

/// Largest value a warp shuffle moves: 8 words. Bigger values should go through shared memory,
/// which is both cheaper and clearer than a long train of shuffles.
inline constexpr std::size_t max_shuffle_bytes = 32;

/// Number of 32-bit words that hold a T (the last one zero-padded).
template <class T>
inline constexpr int shuffle_words = static_cast<int>((sizeof(T) + 3) / 4);

/// Applies `word_shuffle(std::uint32_t) -> std::uint32_t` to every 32-bit word of `v`.
template <class T, class WordShuffle>
STRATA_DEVICE STRATA_FORCEINLINE T shuffle_by_words(const T& v, WordShuffle&& word_shuffle) {
  static_assert(std::is_trivially_copyable_v<T>,
                "strata warp shuffle: the value must be trivially copyable, it is moved between lanes as raw words");
  static_assert(sizeof(T) <= max_shuffle_bytes,
                "strata warp shuffle: values larger than 32 bytes are not shuffled; exchange them through shared memory");
  if constexpr (sizeof(T) == 4) {
    // The common case (int, float, two f16): one word, no padding to clear.
    return __builtin_bit_cast(T, static_cast<std::uint32_t>(word_shuffle(__builtin_bit_cast(std::uint32_t, v))));
  } else {
    constexpr int n = shuffle_words<T>;
    std::uint32_t w[n] = {};  // zeroed: the padding word bytes are defined, so nothing uninitialized moves
    __builtin_memcpy(w, &v, sizeof(T));
    STRATA_UNROLL
    for (int i = 0; i < n; ++i) w[i] = word_shuffle(w[i]);
    T r = v;  // T need not be default constructible; every byte is overwritten below
    __builtin_memcpy(&r, w, sizeof(T));
    return r;
  }
}

}  // namespace strata::detail
