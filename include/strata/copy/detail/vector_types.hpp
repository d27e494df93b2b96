// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/copy/detail/vector_types.hpp -- raw vectors of 1..16 bytes, the unit every copy atom moves,
// and the checks that name a missing atom family.
//
// A vector is a trivially copyable struct aligned to its size, so that a load through a pointer to
// it is one instruction on the GPU (16 bytes: ld.global.v4.u32 / ld.shared.v4.u32 on NVIDIA,
// global_load_dwordx4 / ds_read_b128 on AMD). On the host backend the same bytes move with memcpy,
// which keeps the emulator free of aliasing undefined behaviour and still compiles to one move.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "strata/arch/target.hpp"
#include "strata/config/config.hpp"

namespace strata::copy::detail {

template <int Bytes>
struct raw_vector;
template <>
struct alignas(1) raw_vector<1> { std::uint8_t w[1]; };
template <>
struct alignas(2) raw_vector<2> { std::uint16_t w[1]; };
template <>
struct alignas(4) raw_vector<4> { std::uint32_t w[1]; };
template <>
struct alignas(8) raw_vector<8> { std::uint32_t w[2]; };
template <>
struct alignas(16) raw_vector<16> { std::uint32_t w[4]; };

#if STRATA_HIP_DEVICE_PASS
// clang splits a load of a struct of four words into scalar loads when the words are used one by one
// (SROA), and the LDS read then becomes ds_read_b32 + ds_read2_b32; loading a vector type keeps the
// one 128-bit access (ds_read_b128, global_load_dwordx4).
typedef unsigned u32x2_vector __attribute__((ext_vector_type(2)));
typedef unsigned u32x4_vector __attribute__((ext_vector_type(4)));
#endif

template <int Bytes>
STRATA_HOST_DEVICE STRATA_FORCEINLINE raw_vector<Bytes> load_raw(const void* p) {
#if STRATA_HIP_DEVICE_PASS
  if constexpr (Bytes == 16 || Bytes == 8) {
    using vec = std::conditional_t<Bytes == 16, u32x4_vector, u32x2_vector>;
    const vec x = *static_cast<const vec*>(p);
    raw_vector<Bytes> v;
    __builtin_memcpy(&v, &x, Bytes);
    return v;
  } else {
    return *static_cast<const raw_vector<Bytes>*>(p);
  }
#elif STRATA_DEVICE_PASS
  return *static_cast<const raw_vector<Bytes>*>(p);
#else
  raw_vector<Bytes> v;
  std::memcpy(&v, p, Bytes);
  return v;
#endif
}

template <int Bytes>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void store_raw(void* p, const raw_vector<Bytes>& v) {
#if STRATA_DEVICE_PASS
  *static_cast<raw_vector<Bytes>*>(p) = v;
#else
  std::memcpy(p, &v, Bytes);
#endif
}

template <int Bytes>
STRATA_HOST_DEVICE STRATA_FORCEINLINE raw_vector<Bytes> zero_raw() {
  raw_vector<Bytes> v{};
  return v;
}

/// The first `count` elements at `p` as a vector of Bytes bytes, zero past them; nothing past them is
/// read (a vector that straddles the end of a row or matrix). Element by element into the vector's
/// 32-bit words: no array in private memory (an element array went to scratch on gfx940).
template <int Bytes, class T>
STRATA_HOST_DEVICE raw_vector<Bytes> load_first_elements(const T* p, int count) {
  constexpr int bytes = static_cast<int>(sizeof(T)), per_vector = Bytes / bytes;
  static_assert(bytes == 1 || bytes == 2 || bytes == 4, "load_first_elements: 1-, 2- or 4-byte elements");
  static_assert(Bytes >= 4, "load_first_elements: vectors of whole 32-bit words");
  using bits_t = std::conditional_t<bytes == 1, std::uint8_t, std::conditional_t<bytes == 2, std::uint16_t, std::uint32_t>>;
  raw_vector<Bytes> v{};
  STRATA_UNROLL
  for (int j = 0; j < per_vector; ++j) {
    const bits_t b = j < count ? __builtin_bit_cast(bits_t, p[j]) : bits_t{0};
    v.w[(j * bytes) / 4] |= static_cast<std::uint32_t>(b) << (8 * ((j * bytes) % 4));
  }
  return v;
}

constexpr bool is_vector_bytes(long long b) { return b == 1 || b == 2 || b == 4 || b == 8 || b == 16; }

/// The widest access (bytes) that moves `contiguous` elements of `elem` bytes at a guaranteed alignment
/// of `align` bytes: 16 where both allow, halving until the run and the alignment are multiples of it.
constexpr int widest_vector_bytes(std::size_t elem, long long contiguous, std::size_t align) {
  long long b = 16;
  while (b > static_cast<long long>(elem) &&
         ((contiguous * static_cast<long long>(elem)) % b != 0 || static_cast<long long>(align) % b != 0))
    b /= 2;
  return static_cast<int>(b);
}

// ---- atom families: an atom used on a target without its family fails to compile, naming the target.
// The failing static_assert sits in a class template instantiated with the target, so the compiler's
// "required from" note shows which target (e.g. `target_lacks_cp_async<strata::arch::gfx90a>`).

template <class Target>
struct target_lacks_cp_async {
  static_assert(Target::atoms.has(arch::atom_family::cp_async),
                "cp.async needs a target with atom_family::cp_async (sm80, sm90a, sm100a); the kernel's target, "
                "named in this template's argument, has none: use copy::vector_copy / tile_copy::block_copy, or "
                "strata::pipeline, whose portable path uses plain loads and a block barrier");
  static constexpr bool ok = true;
};

template <class Target>
struct target_lacks_ldmatrix {
  static_assert(Target::atoms.has(arch::atom_family::ldmatrix),
                "ldmatrix needs a target with atom_family::ldmatrix (sm80, sm90a, sm100a); the kernel's target, "
                "named in this template's argument, has none: load fragments with plain shared-memory loads");
  static constexpr bool ok = true;
};

template <class Target>
struct target_lacks_buffer_load {
  static_assert(Target::atoms.has(arch::atom_family::buffer_load),
                "AMD buffer loads need a target with atom_family::buffer_load (gfx90a, gfx942, gfx950); the "
                "kernel's target, named in this template's argument, has none: use copy::vector_copy with an "
                "explicit predicate");
  static constexpr bool ok = true;
};

}  // namespace strata::copy::detail
