// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/embedding/detail/rows.hpp -- reading rows of every format, 16 bytes at a time, and the
// device-side descriptors the kernels read from the workspace. Not a public header.
#pragma once

#include <cstdint>
#include <cstring>

#include "strata/arch/widen.hpp"
#include "strata/config/config.hpp"
#include "strata/numeric/numeric.hpp"
#include "strata/ops/embedding/types.hpp"

namespace strata::embedding::detail {

/// 16 bytes moved by one load: a plain aligned, trivially copyable struct.
struct alignas(16) vec16 {
  std::uint32_t w[4];
};

/// One 16-byte load of table rows (p 16-byte aligned). Table pointers reach the kernel through the
/// descriptors in the workspace, so the compilers cannot prove they point to global memory and would
/// emit generic (flat) loads; the row data is also read-only for the whole forward launch. So:
///   CUDA device pass  __ldg: ld.global.nc.v4 (the read-only data path)
///   HIP device pass   an address_space(1) pointer: global_load_dwordx4
///   host              a plain load
/// This is the one place to swap in the copy/ atoms (copy::vector_copy) once they are merged.
STRATA_HOST_DEVICE STRATA_FORCEINLINE vec16 load_vec(const unsigned char* p) {
#if STRATA_CUDA_DEVICE_PASS
  const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
  return vec16{{v.x, v.y, v.z, v.w}};
#elif STRATA_HIP_DEVICE_PASS
  typedef unsigned int u32x4 __attribute__((ext_vector_type(4)));
  typedef __attribute__((address_space(1))) const u32x4 global_u32x4;
  const u32x4 v = *(global_u32x4*)(p);
  return vec16{{v.x, v.y, v.z, v.w}};
#else
  return *reinterpret_cast<const vec16*>(p);
#endif
}

/// 16 bytes of table rows as two 8-byte loads (p 8-byte aligned): rows whose stride is a multiple of
/// 8 but not of 16, such as int8 row-wise rows of a dim that is a multiple of 8 (dim + 8 bytes).
STRATA_HOST_DEVICE STRATA_FORCEINLINE vec16 load_vec_8x2(const unsigned char* p) {
#if STRATA_CUDA_DEVICE_PASS
  const uint2 a = __ldg(reinterpret_cast<const uint2*>(p)), b = __ldg(reinterpret_cast<const uint2*>(p + 8));
  return vec16{{a.x, a.y, b.x, b.y}};
#elif STRATA_HIP_DEVICE_PASS
  typedef unsigned int u32x2 __attribute__((ext_vector_type(2)));
  typedef __attribute__((address_space(1))) const u32x2 global_u32x2;
  const u32x2 a = *(global_u32x2*)(p), b = *(global_u32x2*)(p + 8);
  return vec16{{a.x, a.y, b.x, b.y}};
#else
  vec16 v;
  std::memcpy(&v, p, 16);
  return v;
#endif
}

/// How a table's rows are read (table_desc::vector).
enum : int { rows_by_element = 0, rows_by_16 = 16, rows_by_8x2 = 8 };

/// One table as the kernels see it (written into the workspace by the host entry).
struct table_desc {
  const unsigned char* rows;
  unsigned char* rows_mut;   // the same rows, for fused optimizer updates
  float* state;              // optimizer state: adagrad rows*dim, rowwise adagrad rows; else null
  float* dense_grad;         // dense gradient rows*dim (fp32, packed); else null
  long long num_rows;
  long long stride;          // bytes
  long long padding;         // -1: none
  long long row_base;        // first global row id of this table (sorting key space)
  int dim;
  int vector;                // rows_by_16 / rows_by_8x2: 16 bytes at a time (one load / two); else
                             // rows_by_element
  int group;                 // lanes that share one bag (power of two, <= warp size)
  int passes;                // column passes per bag (dims wider than group * chunks * elements)
  int qwords;                // 1: the quantization parameters of every row are 4-byte aligned
  int pad_;
};

/// One feature, in the kernels' tile order (sorted by table, so a table's tiles are contiguous).
struct feature_desc {
  long long batch;           // bags of this feature
  long long bag_base;        // global bag id of its first bag (features in user order)
  long long out_offset;      // output / grad_output layout, elements
  long long out_stride;
  long long tile_begin;      // first tile of this feature in tile order
  int table;
  int feature;               // the user's feature number
  int bags_per_tile;
  int pad_;
};

/// Per row format: elements in 16 bytes, the decode of one element (arch/widen.hpp: exact, an
/// instruction or two, where the portable numeric decode cost the fp16 forward two thirds of its
/// bandwidth on the H200), and the row's quantization.
template <scalar S>
struct row_format;

template <>
struct row_format<scalar::fp32> {
  static constexpr int per_vec = 4;
  static constexpr int elem_bits = 32;
  static constexpr bool quantized = false;
  STRATA_HOST_DEVICE static float from_bits(std::uint32_t b) { return __builtin_bit_cast(float, b); }
};
template <>
struct row_format<scalar::fp16> {
  static constexpr int per_vec = 8;
  static constexpr int elem_bits = 16;
  static constexpr bool quantized = false;
  STRATA_HOST_DEVICE static float from_bits(std::uint32_t b) { return arch::widen_f16(std::uint16_t(b)); }
};
template <>
struct row_format<scalar::bf16> {
  static constexpr int per_vec = 8;
  static constexpr int elem_bits = 16;
  static constexpr bool quantized = false;
  STRATA_HOST_DEVICE static float from_bits(std::uint32_t b) { return arch::widen_bf16(std::uint16_t(b)); }
};
template <>
struct row_format<scalar::fp8_e4m3> {
  static constexpr int per_vec = 16;
  static constexpr int elem_bits = 8;
  static constexpr bool quantized = false;
  STRATA_HOST_DEVICE static float from_bits(std::uint32_t b) { return arch::widen_e4m3(std::uint8_t(b)); }
};
template <>
struct row_format<scalar::int8_rowwise> {
  static constexpr int per_vec = 16;
  static constexpr int elem_bits = 8;
  static constexpr bool quantized = true;
  STRATA_HOST_DEVICE static float from_bits(std::uint32_t b) { return arch::widen_u8(b); }
};
template <>
struct row_format<scalar::int4_rowwise> {
  static constexpr int per_vec = 32;
  static constexpr int elem_bits = 4;
  static constexpr bool quantized = true;
  STRATA_HOST_DEVICE static float from_bits(std::uint32_t b) { return arch::widen_u8(b); }
};

/// Bytes that hold the `dim` values of a row (without the quantization parameters).
STRATA_HOST_DEVICE constexpr long long payload_bytes(scalar s, long long dim) {
  return s == scalar::int4_rowwise ? (dim + 1) / 2 : packed_row_bytes(s, dim) - (s == scalar::int8_rowwise ? 8 : 0);
}

/// Element `e` of 16 bytes `v` (raw bits, not yet scaled).
template <scalar S>
STRATA_HOST_DEVICE STRATA_FORCEINLINE std::uint32_t element_bits(const vec16& v, int e) {
  constexpr int bits = row_format<S>::elem_bits;
  constexpr int per_word = 32 / bits;
  const std::uint32_t w = v.w[e / per_word];
  if constexpr (bits == 32) return w;
  else return (w >> ((e % per_word) * bits)) & ((1u << bits) - 1u);
}

/// 16 bytes as one little-endian 128-bit value, moved by `Bits` (4, 8, 16 or 32) bits. Used to fill and
/// drain the last, partial chunk of a row in a run-time loop: the loop variable never indexes v.w, so
/// v stays in registers (a private array indexed at run time lives in scratch memory on AMD).
template <int Bits>
STRATA_HOST_DEVICE STRATA_FORCEINLINE vec16 shift_in(const vec16& v, std::uint32_t low) {
  if constexpr (Bits == 32) return vec16{{low, v.w[0], v.w[1], v.w[2]}};
  else
    return vec16{{(v.w[0] << Bits) | low, (v.w[1] << Bits) | (v.w[0] >> (32 - Bits)),
                  (v.w[2] << Bits) | (v.w[1] >> (32 - Bits)), (v.w[3] << Bits) | (v.w[2] >> (32 - Bits))}};
}
template <int Bits>
STRATA_HOST_DEVICE STRATA_FORCEINLINE vec16 shift_out(const vec16& v) {
  if constexpr (Bits == 32) return vec16{{v.w[1], v.w[2], v.w[3], 0u}};
  else
    return vec16{{(v.w[0] >> Bits) | (v.w[1] << (32 - Bits)), (v.w[1] >> Bits) | (v.w[2] << (32 - Bits)),
                  (v.w[2] >> Bits) | (v.w[3] << (32 - Bits)), v.w[3] >> Bits}};
}

/// Chunk `c` (elements c*E ... c*E + E - 1, bytes 16c ... 16c + 15 of the row) of a row that may not be
/// 16-byte aligned: read in units of the element's width (whole bytes for int4), never past the row's
/// payload. Precondition: the chunk holds at least one element of the row (c * E < dim).
///
/// Why not one load per element with a bounds test each (what this replaced): the tests depend only on
/// the lane and the column pass, so the compilers hoisted all E of them out of the row loop and kept
/// them live across it. For int4 (E = 32) that was 32 lane masks, 64 SGPRs on AMD wave64: 32-36 SGPR
/// spills on gfx90a / gfx940 (clang 15). Here a full chunk (every chunk but a row's last) needs no
/// test at all, and the partial one is read by a run-time loop over just its units.
template <scalar S>
STRATA_HOST_DEVICE STRATA_FORCEINLINE vec16 load_chunk_unaligned(const unsigned char* row, int c, int dim) {
  constexpr int bits = row_format<S>::elem_bits, E = row_format<S>::per_vec;
  constexpr int unit = bits < 8 ? 8 : bits;  // bits per load: the element, or a byte of two int4 elements
  constexpr int units = 128 / unit, per_word = 32 / unit;
  // dim <= 2^20 (checked by the host entry), so byte offsets inside a row fit in 32 bits.
  const unsigned char* at = row + c * 16;
  const auto load_unit = [at](int u) -> std::uint32_t {
    if constexpr (unit == 32) return reinterpret_cast<const std::uint32_t*>(at)[u];
    else if constexpr (unit == 16) return reinterpret_cast<const std::uint16_t*>(at)[u];
    else return at[u];
  };
  vec16 v{{0u, 0u, 0u, 0u}};
  const int left = dim - c * E;  // elements of the row in this chunk, >= 1
  if (left >= E) {
    STRATA_UNROLL
    for (int u = 0; u < units; ++u) v.w[u / per_word] |= load_unit(u) << ((u % per_word) * unit);
  } else {
    // The units that hold the chunk's `left` elements; for int4 with `left` odd the last byte's high
    // nibble is not an element, but the byte is still inside the row's ceil(dim / 2) payload bytes.
    // Highest unit first: after n shifts unit 0 is in the low bits, units from n on are zero.
    const int n = (left * bits + unit - 1) / unit;
    STRATA_NO_UNROLL
    for (int u = n - 1; u >= 0; --u) v = shift_in<unit>(v, load_unit(u));
  }
  return v;
}

/// Scale and bias of a quantized row (stored after the payload, possibly unaligned: read by bytes).
struct qparams {
  float scale = 1.f, bias = 0.f;
};
template <scalar S>
STRATA_HOST_DEVICE STRATA_FORCEINLINE qparams load_qparams(const unsigned char* row, int dim, bool words = false) {
  qparams q;
  if constexpr (S == scalar::int8_rowwise) {
    const unsigned char* p = row + dim;
    if (words) {  // aligned: two word loads instead of eight byte loads
      q.scale = *reinterpret_cast<const float*>(p);
      q.bias = *reinterpret_cast<const float*>(p + 4);
      return q;
    }
    std::uint32_t s = 0, b = 0;
    STRATA_UNROLL
    for (int i = 0; i < 4; ++i) s |= std::uint32_t(p[i]) << (8 * i), b |= std::uint32_t(p[4 + i]) << (8 * i);
    q.scale = __builtin_bit_cast(float, s);
    q.bias = __builtin_bit_cast(float, b);
  } else if constexpr (S == scalar::int4_rowwise) {
    const unsigned char* p = row + (dim + 1) / 2;
    if (words) {
      const std::uint32_t w = *reinterpret_cast<const std::uint32_t*>(p);
      q.scale = arch::widen_f16(static_cast<std::uint16_t>(w));
      q.bias = arch::widen_f16(static_cast<std::uint16_t>(w >> 16));
      return q;
    }
    q.scale = float(f16::from_bits(std::uint16_t(p[0] | (p[1] << 8))));
    q.bias = float(f16::from_bits(std::uint16_t(p[2] | (p[3] << 8))));
  }
  return q;
}

/// Index `i` of an int32 or int64 index / offset array.
STRATA_HOST_DEVICE STRATA_FORCEINLINE long long load_index(const void* p, int is64, long long i) {
  return is64 ? static_cast<const long long*>(p)[i] : static_cast<long long>(static_cast<const int*>(p)[i]);
}

/// Stores one value of an output in `format`, a strata::dtype's value: fp32, fp16 or bf16 (the host
/// entries refuse the others).
STRATA_HOST_DEVICE STRATA_FORCEINLINE void store_value(void* base, long long at, int format, float v) {
  if (format == int(strata::dtype::fp16)) static_cast<f16*>(base)[at] = f16(v);
  else if (format == int(strata::dtype::bf16)) static_cast<bf16*>(base)[at] = bf16(v);
  else static_cast<float*>(base)[at] = v;
}
STRATA_HOST_DEVICE STRATA_FORCEINLINE float load_value(const void* base, long long at, int format) {
  if (format == int(strata::dtype::fp16)) return float(static_cast<const f16*>(base)[at]);
  if (format == int(strata::dtype::bf16)) return float(static_cast<const bf16*>(base)[at]);
  return static_cast<const float*>(base)[at];
}

/// The bag range [begin, end) of global bag `g` under `policy`; `ok` false for a malformed bag.
struct bag_range {
  long long begin, end;
  bool ok;
};
STRATA_HOST_DEVICE STRATA_FORCEINLINE bag_range bag_of(const void* offsets, int is64, long long bag_size, long long n,
                                                       long long g, int policy) {
  if (!offsets) return {g * bag_size, g * bag_size + bag_size, true};
  const long long b = load_index(offsets, is64, g), e = load_index(offsets, is64, g + 1);
  const bool ok = b >= 0 && e >= b && e <= n;
  if (ok) return {b, e, true};
  if (policy == int(bounds::clamp)) {
    const long long cb = b < 0 ? 0 : (b > n ? n : b);
    const long long ce = e < cb ? cb : (e > n ? n : e);
    return {cb, ce, false};
  }
  return {0, 0, false};
}

/// Largest power of two <= x (x >= 1).
STRATA_HOST_DEVICE constexpr int floor_pow2(int x) {
  int p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

}  // namespace strata::embedding::detail
