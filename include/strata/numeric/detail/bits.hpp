// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/numeric/detail/bits.hpp -- bit_cast and the raw bits of float/double, usable everywhere.
//
// std::bit_cast is constexpr, but nvcc only lets device code call a constexpr std:: function with
// --expt-relaxed-constexpr, which Strata does not require. The compiler builtin behind std::bit_cast
// (gcc >= 11, clang >= 9, nvcc's EDG front end) works in host and device code alike.
#pragma once

#include <cstdint>
#include <type_traits>

#include "strata/config/config.hpp"

namespace strata::detail::fp {

template <class To, class From>
STRATA_HOST_DEVICE constexpr To bit_cast(From const& from) noexcept {
  static_assert(sizeof(To) == sizeof(From), "bit_cast needs types of the same size");
  static_assert(std::is_trivially_copyable_v<To> && std::is_trivially_copyable_v<From>,
                "bit_cast needs trivially copyable types");
  return __builtin_bit_cast(To, from);
}

STRATA_HOST_DEVICE constexpr std::uint32_t bits_of(float x) noexcept { return bit_cast<std::uint32_t>(x); }
STRATA_HOST_DEVICE constexpr std::uint64_t bits_of(double x) noexcept { return bit_cast<std::uint64_t>(x); }

/// True while the call is being evaluated at compile time; device-side instruction paths must not
/// run there (inline asm is not constant-evaluable). The builtin is what std::is_constant_evaluated
/// wraps, and unlike it needs no relaxed-constexpr flag under nvcc.
STRATA_HOST_DEVICE constexpr bool constant_evaluated() noexcept { return __builtin_is_constant_evaluated(); }

}  // namespace strata::detail::fp
