// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/copy/buffer.hpp -- AMD buffer loads: global loads whose range check is done by the hardware
// (CDNA2 gfx90a, CDNA3 gfx94x, gfx950; atom_family::buffer_load).
//
//   auto res = strata::copy::make_buffer(ctx, p.a, rows * ld);        // base + size in elements
//   auto v   = strata::copy::buffer_load<float, 4>(ctx, res, index);  // 4 floats; 0 where out of range
//
// A buffer resource (V#) is four dwords (AMD CDNA3 ISA, "Buffer Resource"):
//   word 0-1  base address bits [47:0] (word 1 bits [15:0]), stride 0 (a raw, byte-addressed buffer)
//   word 2    num_records: the size in bytes that the range check compares against
//   word 3    DST_SEL / NUM_FORMAT / DATA_FORMAT ...: 0x00020000 on gfx90a and gfx94x (data format 32
//             bits, the value AMD's own libraries use for raw buffer loads on these chips)
// Hardware semantics reproduced on the emulator: a load whose offset lies outside num_records returns 0
// (writes would be dropped); multi-dword loads (dwordx2, dwordx4) are range-checked per 32-bit
// component, so a vector straddling the end returns its in-range words and zeros after them. Offsets are
// unsigned 32-bit and the per-word check saturates: a negative index is out of range, and so is every
// word of a vector that starts below the buffer, even words that would fall inside it. Sub-dword elements (f16, bf16, int8) are loaded in
// dword units too, so give such buffers a byte size that is a multiple of 4 to keep the check exact.
//
// clang 15 (Debian's HIP) has no __builtin_amdgcn_raw_buffer_load_*: the LLVM intrinsics
// llvm.amdgcn.raw.buffer.load.{i32,v2i32,v4i32} are reached by declaring device functions with those
// names as assembler labels (newer clang accepts the same declarations). The descriptor must be
// wave-uniform (SGPRs): build it from kernel parameters, not from per-lane values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "strata/arch/target.hpp"
#include "strata/config/config.hpp"
#include "strata/copy/detail/vector_types.hpp"
#include "strata/copy/vector.hpp"

namespace strata::copy {

namespace detail {
#if STRATA_HIP_DEVICE_PASS
typedef int i32x2 __attribute__((ext_vector_type(2)));
typedef int i32x4 __attribute__((ext_vector_type(4)));
// (resource, voffset in bytes, soffset in bytes, aux: glc/slc cache bits)
STRATA_DEVICE int amdgcn_raw_buffer_load_b32(i32x4 rsrc, int voffset, int soffset, int aux)
    __asm("llvm.amdgcn.raw.buffer.load.i32");
STRATA_DEVICE i32x2 amdgcn_raw_buffer_load_b64(i32x4 rsrc, int voffset, int soffset, int aux)
    __asm("llvm.amdgcn.raw.buffer.load.v2i32");
STRATA_DEVICE i32x4 amdgcn_raw_buffer_load_b128(i32x4 rsrc, int voffset, int soffset, int aux)
    __asm("llvm.amdgcn.raw.buffer.load.v4i32");
#endif

/// Word 3 of a raw buffer descriptor on gfx90a / gfx94x / gfx950 (see the header comment).
inline constexpr std::uint32_t buffer_word3_cdna = 0x00020000u;
}  // namespace detail

/// A raw buffer: base address and size in bytes (num_records). Build with make_buffer().
struct buffer_resource {
  const void* base = nullptr;
  std::uint32_t num_records = 0;  // bytes
};

/// The buffer of `elements` elements of T at `base` (at most 4 GiB: num_records is 32 bits).
template <class Ctx, class T>
STRATA_HOST_DEVICE STRATA_FORCEINLINE buffer_resource make_buffer(Ctx&, const T* base, long long elements) {
  static_assert(detail::target_lacks_buffer_load<typename Ctx::target>::ok);
  const long long bytes = elements < 0 ? 0 : elements * static_cast<long long>(sizeof(T));
  return {base, static_cast<std::uint32_t>(bytes > 0xFFFFFFFFll ? 0xFFFFFFFFll : bytes)};
}

/// Loads N elements of T starting at element `index` of the buffer (N * sizeof(T) = 4, 8 or 16 bytes:
/// buffer_load_dword / dwordx2 / dwordx4). 32-bit words outside the buffer read as 0.
template <class T, int N, class Ctx>
STRATA_HOST_DEVICE STRATA_FORCEINLINE vector_of<T, N> buffer_load(Ctx& ctx, const buffer_resource& res, int index) {
  static_assert(detail::target_lacks_buffer_load<typename Ctx::target>::ok);
  static_assert(std::is_trivially_copyable_v<T>, "buffer_load moves raw bytes: T must be trivially copyable");
  constexpr int bytes = N * static_cast<int>(sizeof(T));
  static_assert(bytes == 4 || bytes == 8 || bytes == 16,
                "buffer_load reads 4, 8 or 16 bytes (buffer_load_dword, _dwordx2, _dwordx4)");
  vector_of<T, N> out;
  const std::uint32_t offset = static_cast<std::uint32_t>(index) * static_cast<std::uint32_t>(sizeof(T));
  if constexpr (Ctx::emulated) {
    (void)ctx;
    std::uint32_t words[bytes / 4];
    for (int w = 0; w < bytes / 4; ++w) {
      // Per-component check on the unsigned byte offset (saturating, as the hardware computes it).
      const std::uint64_t at = static_cast<std::uint64_t>(offset) + 4u * w;  // no 32-bit wrap: saturates
      if (at + 4 <= res.num_records) std::memcpy(&words[w], static_cast<const unsigned char*>(res.base) + at, 4);
      else words[w] = 0;
    }
    std::memcpy(&out, words, bytes);
  } else {
    (void)ctx;
#if STRATA_HIP_DEVICE_PASS
    const auto base = reinterpret_cast<std::uint64_t>(res.base);
    const detail::i32x4 rsrc = {static_cast<int>(base & 0xFFFFFFFFu), static_cast<int>((base >> 32) & 0xFFFFu),
                                static_cast<int>(res.num_records), static_cast<int>(detail::buffer_word3_cdna)};
    if constexpr (bytes == 4) {
      const int v = detail::amdgcn_raw_buffer_load_b32(rsrc, static_cast<int>(offset), 0, 0);
      __builtin_memcpy(&out, &v, 4);
    } else if constexpr (bytes == 8) {
      const detail::i32x2 v = detail::amdgcn_raw_buffer_load_b64(rsrc, static_cast<int>(offset), 0, 0);
      __builtin_memcpy(&out, &v, 8);
    } else {
      const detail::i32x4 v = detail::amdgcn_raw_buffer_load_b128(rsrc, static_cast<int>(offset), 0, 0);
      __builtin_memcpy(&out, &v, 16);
    }
#else
    (void)res;
    out = {};
#endif
  }
  return out;
}

}  // namespace strata::copy
