// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/mma/detail/registers.hpp -- fragments as the 32-bit registers an instruction reads.
//
// Fragment value v is element v of the instruction's operand, lowest first, and the hardware keeps
// the lower-numbered element in the lower bits of a register. So register r of a fragment of T is
// the values [r * 4/sizeof(T), (r+1) * 4/sizeof(T)) packed from the low bits up.
#pragma once

#include <cstdint>
#include <type_traits>

#include "strata/config/config.hpp"
#include "strata/mma/layout.hpp"
#include "strata/numeric/detail/bits.hpp"

namespace strata::mma::detail {

/// The raw bits of one operand element, zero-extended.
template <class T>
STRATA_HOST_DEVICE STRATA_FORCEINLINE constexpr std::uint32_t raw_bits(const T& x) {
  if constexpr (std::is_same_v<T, float>) return strata::detail::fp::bit_cast<std::uint32_t>(x);
  else if constexpr (std::is_integral_v<T>) return static_cast<std::uint32_t>(static_cast<std::make_unsigned_t<T>>(x));
  else return static_cast<std::uint32_t>(x.bits());  // Strata's narrow float types
}

template <class T, int N>
STRATA_HOST_DEVICE STRATA_FORCEINLINE constexpr std::uint32_t reg32(const fragment<T, N>& f, int r) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4, "operand elements are 8, 16 or 32 bits");
  constexpr int per = 4 / static_cast<int>(sizeof(T));
  std::uint32_t x = 0;
  STRATA_UNROLL
  for (int i = 0; i < per; ++i) x |= raw_bits(f.v[r * per + i]) << (8 * static_cast<int>(sizeof(T)) * i);
  return x;
}

template <class T, int N>
STRATA_HOST_DEVICE STRATA_FORCEINLINE constexpr std::uint64_t reg64(const fragment<T, N>& f, int r) {
  return static_cast<std::uint64_t>(reg32(f, 2 * r)) | (static_cast<std::uint64_t>(reg32(f, 2 * r + 1)) << 32);
}

}  // namespace strata::mma::detail
