// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/copy/tma.hpp -- the tensor memory accelerator (TMA, sm90+): one thread moves a whole box of a
// tensor from global to shared memory, described by a tensor map made on the host, and the copy
// completes its bytes on an mbarrier (arch/mbarrier.hpp).
//
//   // host: a row-major M x K bf16 matrix with leading dimension lda, boxes of 128 rows x 64 columns
//   const copy::tensor_map map = copy::make_tensor_map_2d(a, M, K, lda, 128, 64, copy::tma_swizzle::b128);
//   // kernel (the map travels in the kernel's parameters; one thread issues):
//   if (elected) {
//     full.arrive_expect_tx(ctx, 128 * 64 * sizeof(bf16));
//     copy::tma_load(ctx, stage, p.map, full, k0, m0);   // coordinates: innermost dimension first
//   }
//   full.wait(ctx, phase);                                 // the box is in `stage`
//
// The box lands in shared memory densely, innermost dimension fastest (row r of a 2-D box at
// r * box[0] * element bytes), elements outside the tensor as zeros. With a swizzle (32, 64 or 128
// bytes) the box's rows must be exactly that many bytes, and the copy XORs address bits [7, ...) into
// bits [4, ...) of each shared address, the pattern wgmma's descriptors read (mma/wgmma.hpp): a tile
// loaded with tma_swizzle::b128 is a K-major wgmma operand with wgmma_swizzle::b128 and a stride byte
// offset of 1024. The destination must be 128-byte aligned, and, when swizzled, aligned to the
// pattern's period (8 rows: 1024 bytes for 128-byte rows) so that the pattern starts at the tile.
//
// Tensor maps (PTX ISA "Tensor Map"; CUDA driver cuTensorMapEncodeTiled): rank 1 to 5, dims and box in
// elements, dimension 0 contiguous, byte strides of dimensions 1.. multiples of 16 below 2^40, the
// base 16-byte aligned, box sides 1..256 with the innermost side a multiple of 16 bytes. A CUDA
// build encodes the map with the driver (fetched through cudaGetDriverEntryPointByVersion, no -lcuda),
// and the kernel reads it from its parameters (the trampoline declares them __grid_constant__); the
// emulator keeps Strata's own description in the same 128 bytes. HIP has no TMA: make_tensor_map
// throws strata::unsupported there.
//
// On the emulator (the kernel's target must list atom_family::tma: arch::sm90a) the copy reads the box
// at issue and poisons the destination (0xFF); the data lands, and completes its bytes on the
// barrier, when a thread waits on that barrier (mbarrier::wait / try_wait), so a kernel that reads
// the stage without waiting reads NaN. Reported as kernel bugs: a coordinate count that is not the
// map's rank, a destination outside the block's shared memory or not aligned.
//
// The other way, tma_store (cp.async.bulk.tensor ... global.shared::cta) copies a box from shared
// memory, laid out the same way, to the tensor, skipping the elements outside it; stores are grouped
// and waited for (tma_store_commit, tma_store_wait<N>) before their source is reused or the thread
// exits.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "strata/arch/mbarrier.hpp"
#include "strata/arch/target.hpp"
#include "strata/config/config.hpp"
#include "strata/tensor/swizzle.hpp"

#include <string>
#include <vector>

#include "strata/runtime/error.hpp"

namespace strata::copy {

/// The swizzle of a TMA box in shared memory (the values of CUDA's CUtensorMapSwizzle).
enum class tma_swizzle : std::uint8_t { none = 0, b32 = 1, b64 = 2, b128 = 3 };

STRATA_HOST_DEVICE constexpr int swizzle_bytes(tma_swizzle s) {
  return s == tma_swizzle::b128 ? 128 : s == tma_swizzle::b64 ? 64 : s == tma_swizzle::b32 ? 32 : 16;
}

/// What the copy engine takes the elements for: bits it moves as they are (loads and stores), or fp32
/// values, which tma_reduce_add adds (a map of raw bits would add them as integers on the GPU).
enum class tma_element : std::uint8_t { bits = 0, f32 = 1 };

/// A tensor in global memory and the box one copy moves (dimension 0 contiguous).
struct tma_tensor {
  const void* base = nullptr;
  int element_bytes = 2;  // 1, 2, 4 or 8
  tma_element element = tma_element::bits;  // f32: element_bytes 4
  int rank = 2;           // 1..5
  long long dims[5] = {};     // elements per dimension
  long long strides[5] = {};  // bytes between consecutive indices of dimensions 1..rank-1 (strides[0] unused)
  int box[5] = {};            // elements per dimension of the box
  tma_swizzle swizzle = tma_swizzle::none;
};

/// The kernel parameter (128 bytes, 128-byte aligned like CUtensorMap): the CUDA driver's encoded
/// CUtensorMap on CUDA builds, Strata's own copy of the tma_tensor on the emulator. Pass it by value
/// inside the kernel's parameters.
struct alignas(128) tensor_map {
  unsigned char opaque[128];
};

namespace detail {

/// The emulator's contents of a tensor_map.
struct emulated_tensor_map {
  const void* base;
  std::int64_t dims[5];
  std::int64_t strides[5];
  std::uint16_t box[5];
  std::uint8_t rank, element_bytes, swizzle, element;
};
static_assert(sizeof(emulated_tensor_map) <= sizeof(tensor_map));

/// Checks a tma_tensor against the TMA's limits; throws strata::invalid_argument naming the field.
inline void check_tma_tensor(const tma_tensor& t) {
  const char* op = "strata::copy::make_tensor_map";
  const auto bad = [&](const std::string& arg, const std::string& problem) { throw invalid_argument(op, arg, problem); };
  if (t.rank < 1 || t.rank > 5) bad("rank", "is " + std::to_string(t.rank) + "; a tensor map has 1 to 5 dimensions");
  if (t.element_bytes != 1 && t.element_bytes != 2 && t.element_bytes != 4 && t.element_bytes != 8)
    bad("element_bytes", "is " + std::to_string(t.element_bytes) + "; TMA moves elements of 1, 2, 4 or 8 bytes");
  if (t.element == tma_element::f32 && t.element_bytes != 4)
    bad("element", "is f32 but element_bytes is " + std::to_string(t.element_bytes) + "; fp32 elements are 4 bytes");
  if (t.base == nullptr || reinterpret_cast<std::uintptr_t>(t.base) % 16 != 0)
    bad("base", "must be a non-null address aligned to 16 bytes");
  for (int d = 0; d < t.rank; ++d) {
    const std::string i = "[" + std::to_string(d) + "]";
    if (t.dims[d] < 1 || t.dims[d] > (1LL << 32)) bad("dims" + i, "is " + std::to_string(t.dims[d]) + "; it must be 1..2^32");
    if (t.box[d] < 1 || t.box[d] > 256) bad("box" + i, "is " + std::to_string(t.box[d]) + "; a box side is 1..256 elements");
    if (d > 0 && (t.strides[d] <= 0 || t.strides[d] % 16 != 0 || t.strides[d] >= (1LL << 40)))
      bad("strides" + i, "is " + std::to_string(t.strides[d]) + " bytes; it must be a positive multiple of 16 below 2^40");
  }
  const long long inner = static_cast<long long>(t.box[0]) * t.element_bytes;
  if (inner % 16 != 0) bad("box[0]", "spans " + std::to_string(inner) + " bytes; the innermost box side must be a multiple of 16 bytes");
  if (t.swizzle != tma_swizzle::none && inner != swizzle_bytes(t.swizzle))
    bad("box[0]", "spans " + std::to_string(inner) + " bytes; with a " + std::to_string(swizzle_bytes(t.swizzle)) +
                      "-byte swizzle the box rows must be exactly that long");
}

}  // namespace detail

#if STRATA_BACKEND_CUDA && !STRATA_DEVICE_PASS
namespace detail {
/// The CUDA driver's encoding (runtime/cuda/tensor_map.hpp, included at the end of this header).
inline tensor_map encode_tensor_map(const tma_tensor& t);
}  // namespace detail
#endif

/// A tensor map for `t`, checked against the TMA's limits (strata::invalid_argument naming the field).
inline tensor_map make_tensor_map(const tma_tensor& t) {
  detail::check_tma_tensor(t);
#if STRATA_BACKEND_HOST
  detail::emulated_tensor_map e{};
  e.base = t.base;
  for (int d = 0; d < 5; ++d) {
    e.dims[d] = d < t.rank ? t.dims[d] : 1;
    e.strides[d] = d == 0 ? t.element_bytes : d < t.rank ? t.strides[d] : 0;
    e.box[d] = static_cast<std::uint16_t>(d < t.rank ? t.box[d] : 1);
  }
  e.rank = static_cast<std::uint8_t>(t.rank);
  e.element_bytes = static_cast<std::uint8_t>(t.element_bytes);
  e.swizzle = static_cast<std::uint8_t>(t.swizzle);
  e.element = static_cast<std::uint8_t>(t.element);
  tensor_map m{};
  std::memcpy(m.opaque, &e, sizeof e);
  return m;
#elif STRATA_BACKEND_CUDA && !STRATA_DEVICE_PASS
  return detail::encode_tensor_map(t);
#else
  // HIP (and the device pass of a CUDA build, which never runs host code).
  throw unsupported("strata::copy::make_tensor_map: TMA (tensor maps) exists on NVIDIA sm90+ only, not on HIP");
#endif
}

/// A row-major rows x cols matrix of T with leading dimension ld (elements), moved in boxes of
/// box_rows x box_cols. Coordinates of tma_load: (column, row).
template <class T>
tensor_map make_tensor_map_2d(const T* base, long long rows, long long cols, long long ld, int box_rows, int box_cols,
                              tma_swizzle swizzle = tma_swizzle::none) {
  tma_tensor t;
  t.base = base;
  t.element_bytes = static_cast<int>(sizeof(T));
  t.rank = 2;
  t.dims[0] = cols;
  t.dims[1] = rows;
  t.strides[1] = ld * static_cast<long long>(sizeof(T));
  t.box[0] = box_cols;
  t.box[1] = box_rows;
  t.swizzle = swizzle;
  return make_tensor_map(t);
}

namespace detail {
template <class Target>
inline constexpr bool has_tma = Target::atoms.has(arch::atom_family::tma);

/// The box's swizzle on a shared address: the same as wgmma's descriptors read (tensor/swizzle.hpp).
STRATA_HOST_DEVICE constexpr std::uint32_t tma_swizzled(std::uint32_t address, tma_swizzle s) {
  return span_swizzled(address, swizzle_bytes(s));
}
}  // namespace detail

namespace detail {

#if !STRATA_DEVICE_PASS
/// The emulated map behind `map`, after checking that `rank` coordinates match it and that the box at
/// `box` (its bytes returned in `bytes`) lies in this block's shared memory, aligned as the copy needs.
template <class Thread>
emulated_tensor_map checked_box(Thread& t, const char* op, const unsigned char* box, const tensor_map& map, int rank,
                                std::size_t& bytes) {
  emulated_tensor_map m;
  std::memcpy(&m, map.opaque, sizeof m);
  if (m.rank != rank)
    kernel_bug(t, std::string(op) + ": " + std::to_string(rank) + " coordinates for a tensor map of rank " + std::to_string(m.rank));
  const unsigned char* smem = t.block->smem;
  const std::size_t smem_bytes = t.unit->info->shared_total;
  std::size_t elements = 1;
  for (int i = 0; i < rank; ++i) elements *= m.box[i];
  bytes = elements * m.element_bytes;
  if (box < smem || box + bytes > smem + smem_bytes)
    kernel_bug(t, std::string(op) + ": the " + std::to_string(bytes) + "-byte box does not fit in this block's shared memory at its " +
                      (op[4] == 'l' ? "destination" : "source"));
  const auto sw = static_cast<tma_swizzle>(m.swizzle);
  const std::uint32_t address = std::uint32_t(box - smem);
  const std::uint32_t align = sw == tma_swizzle::none ? 128u : 8u * std::uint32_t(swizzle_bytes(sw));
  if (address % align != 0)
    kernel_bug(t, std::string(op) + ": the " + (op[4] == 'l' ? "destination" : "source") + " (shared address " +
                      std::to_string(address) + ") must be aligned to " + std::to_string(align) + " bytes" +
                      (sw == tma_swizzle::none ? "" : " (the swizzle pattern's period)"));
  return m;
}

/// f(offset of the element in the box's shared bytes, its byte offset in the tensor or -1 outside it)
/// for each element of the box at coordinates `c`; `address`: the box's shared address (the swizzle
/// applies to whole addresses).
template <class F>
void for_each_box_element(const emulated_tensor_map& m, const int* c, std::uint32_t address, F&& f) {
  std::size_t elements = 1;
  for (int i = 0; i < m.rank; ++i) elements *= m.box[i];
  const auto sw = static_cast<tma_swizzle>(m.swizzle);
  for (std::size_t e = 0; e < elements; ++e) {
    std::size_t rest = e;
    bool inside = true;
    long long global = 0;
    for (int i = 0; i < m.rank; ++i) {
      const long long g = static_cast<long long>(c[i]) + static_cast<long long>(rest % m.box[i]);
      rest /= m.box[i];
      inside = inside && g >= 0 && g < m.dims[i];
      global += g * m.strides[i];
    }
    f(tma_swizzled(address + std::uint32_t(e * m.element_bytes), sw) - address, inside ? global : -1LL);
  }
}

/// The emulator's side of a TMA load: the box at `c` as it lands at `dst` (zeros outside the tensor,
/// the swizzle applied to each element's shared address), after checking the destination.
template <class Thread>
std::vector<unsigned char> tma_image(Thread& t, unsigned char* dst, const tensor_map& map, const int* c, int rank) {
  std::size_t bytes = 0;
  const emulated_tensor_map m = checked_box(t, "tma_load", dst, map, rank, bytes);
  std::vector<unsigned char> image(bytes, 0);
  for_each_box_element(m, c, std::uint32_t(dst - t.block->smem), [&](std::uint32_t at, long long global) {
    if (global >= 0) std::memcpy(&image[at], static_cast<const unsigned char*>(m.base) + global, m.element_bytes);
  });
  return image;
}

/// Queues `image` to land at `dst` of block `b` and complete on the barrier word `bar` there; poisons the
/// destination until then. A destination that a wgmma not yet waited for still reads is a kernel bug
/// (its stage was handed back before the wgmma_wait covering its reads).
template <class Thread, class Block>
void tma_queue(Thread& t, Block& b, unsigned char* dst, const void* bar, std::vector<unsigned char> image) {
  for (const auto& r : b.wgmma_reads)
    if (dst < r.hi && r.lo < dst + image.size())
      kernel_bug(t, "TMA copy into shared bytes " + std::to_string(dst - b.smem) + ".." + std::to_string(dst - b.smem + long(image.size())) +
                        " of block " + std::to_string(b.rank) + " that a wgmma still reads (bytes " + std::to_string(r.lo - b.smem) +
                        ".." + std::to_string(r.hi - b.smem) + "; no thread of its warpgroup has waited for it): the stage was "
                        "released before the wgmma_wait covering its reads");
  std::memset(dst, 0xFF, image.size());
  b.bulk_pending.push_back({dst, bar, std::move(image)});
}
#endif

/// The bulk tensor copy's PTX, for 1 to 5 coordinates; with Multicast, into the blocks of `mask`.
template <bool Multicast, int Rank>
STRATA_DEVICE STRATA_FORCEINLINE void tma_issue(std::uint32_t dst, const tensor_map* map, std::uint32_t bar, const int* c,
                                                std::uint16_t mask) {
#if STRATA_CUDA_DEVICE_PASS
#define STRATA_TMA_ASM(dims, coords, ...)                                                                          \
  if constexpr (Multicast)                                                                                       \
    asm volatile("cp.async.bulk.tensor." dims ".shared::cluster.global.tile.mbarrier::complete_tx::bytes"         \
                 ".multicast::cluster [%0], [%1, {" coords "}], [%2], %3;\n" ::"r"(dst),                          \
                 "l"(map), "r"(bar), "h"(mask), __VA_ARGS__ : "memory");                                         \
  else                                                                                                           \
    asm volatile("cp.async.bulk.tensor." dims ".shared::cluster.global.tile.mbarrier::complete_tx::bytes"         \
                 " [%0], [%1, {" coords "}], [%2];\n" ::"r"(dst), "l"(map), "r"(bar), "h"(mask), __VA_ARGS__      \
                 : "memory");
  if constexpr (Rank == 1) {
    STRATA_TMA_ASM("1d", "%4", "r"(c[0]))
  } else if constexpr (Rank == 2) {
    STRATA_TMA_ASM("2d", "%4, %5", "r"(c[0]), "r"(c[1]))
  } else if constexpr (Rank == 3) {
    STRATA_TMA_ASM("3d", "%4, %5, %6", "r"(c[0]), "r"(c[1]), "r"(c[2]))
  } else if constexpr (Rank == 4) {
    STRATA_TMA_ASM("4d", "%4, %5, %6, %7", "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]))
  } else {
    STRATA_TMA_ASM("5d", "%4, %5, %6, %7, %8", "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]))
  }
#undef STRATA_TMA_ASM
#else
  (void)dst, (void)map, (void)bar, (void)c, (void)mask;
#endif
}

}  // namespace detail

/// Copies the box at `coords` (innermost dimension first, one per dimension of the map; they may lie
/// outside the tensor, whose missing elements arrive as zeros) to `dst` in this block's shared memory;
/// the bytes complete on `bar`, on which the caller has announced them (arrive_expect_tx). Issued by
/// one thread per copy.
template <class Ctx, class... Coords>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void tma_load(Ctx& ctx, void* dst, const tensor_map& map, mbarrier& bar,
                                                   Coords... coords) {
  static_assert(detail::has_tma<typename Ctx::target>, "TMA needs sm90+ (atom_family::tma), which the kernel's target lacks");
  static_assert(sizeof...(Coords) >= 1 && sizeof...(Coords) <= 5, "tma_load takes 1 to 5 coordinates");
  static_assert((std::is_convertible_v<Coords, int> && ...), "TMA coordinates are 32-bit integers");
  const int c[5] = {static_cast<int>(coords)...};
  if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
    auto& t = ctx.emulated_thread();
    auto* d = static_cast<unsigned char*>(dst);
    detail::tma_queue(t, *t.block, d, &bar.word, detail::tma_image(t, d, map, c, int(sizeof...(Coords))));
#endif
  } else {
    (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
    detail::tma_issue<false, int(sizeof...(Coords))>(static_cast<std::uint32_t>(__cvta_generic_to_shared(dst)), &map,
                                                     static_cast<std::uint32_t>(__cvta_generic_to_shared(&bar.word)), c, 0);
#endif
  }
}

/// tma_load into every block of this block's cluster whose rank is set in `cta_mask`: the box lands at
/// `dst`'s place in each of their shared memories and completes its bytes on the barrier at `bar`'s
/// place in each (sm90+, a cluster launch). Each receiving block announces the bytes on its own barrier.
template <class Ctx, class... Coords>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void tma_load_multicast(Ctx& ctx, void* dst, const tensor_map& map, mbarrier& bar,
                                                             std::uint16_t cta_mask, Coords... coords) {
  static_assert(detail::has_tma<typename Ctx::target>, "TMA needs sm90+ (atom_family::tma), which the kernel's target lacks");
  static_assert(sizeof...(Coords) >= 1 && sizeof...(Coords) <= 5, "tma_load_multicast takes 1 to 5 coordinates");
  static_assert((std::is_convertible_v<Coords, int> && ...), "TMA coordinates are 32-bit integers");
  const int c[5] = {static_cast<int>(coords)...};
  if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
    auto& t = ctx.emulated_thread();
    auto* d = static_cast<unsigned char*>(dst);
    const auto image = detail::tma_image(t, d, map, c, int(sizeof...(Coords)));
    const int blocks = t.unit->info->cluster_blocks;
    if (cta_mask == 0 || (blocks < 16 && (cta_mask >> blocks) != 0))
      kernel_bug(t, "tma_load_multicast: the block mask " + std::to_string(cta_mask) + " names no block or one past the cluster's " +
                        std::to_string(blocks));
    const auto* bw = reinterpret_cast<const unsigned char*>(&bar.word);
    if (bw < t.block->smem || bw >= t.block->smem + t.unit->info->shared_total)
      kernel_bug(t, "tma_load_multicast: the barrier is not in this block's shared memory");
    for (int r = 0; r < blocks; ++r) {
      if (!((cta_mask >> r) & 1)) continue;
      auto& b = t.unit->blocks[t.block->cluster_base + r];
      detail::tma_queue(t, b, b.smem + (d - t.block->smem), b.smem + (bw - t.block->smem), image);
    }
#endif
  } else {
    (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
    detail::tma_issue<true, int(sizeof...(Coords))>(static_cast<std::uint32_t>(__cvta_generic_to_shared(dst)), &map,
                                                    static_cast<std::uint32_t>(__cvta_generic_to_shared(&bar.word)), c,
                                                    cta_mask);
#endif
  }
}

namespace detail {
/// What a bulk tensor write from shared memory does with the tensor's elements.
enum class bulk_write { store, reduce_add };

/// The bulk tensor store's or reduction's PTX, for 1 to 5 coordinates.
template <bulk_write Op, int Rank>
STRATA_DEVICE STRATA_FORCEINLINE void tma_write_issue(const tensor_map* map, std::uint32_t src, const int* c) {
#if STRATA_CUDA_DEVICE_PASS
#define STRATA_TMA_WRITE_ASM(dims, coords, ...)                                                                          \
  if constexpr (Op == bulk_write::store)                                                                               \
    asm volatile("cp.async.bulk.tensor." dims ".global.shared::cta.bulk_group [%0, {" coords "}], [%1];\n" ::"l"(map),  \
                 "r"(src), __VA_ARGS__ : "memory");                                                                    \
  else                                                                                                                 \
    asm volatile("cp.reduce.async.bulk.tensor." dims ".global.shared::cta.add.tile.bulk_group [%0, {" coords "}], [%1];\n" \
                 ::"l"(map), "r"(src), __VA_ARGS__ : "memory");
  if constexpr (Rank == 1) {
    STRATA_TMA_WRITE_ASM("1d", "%2", "r"(c[0]))
  } else if constexpr (Rank == 2) {
    STRATA_TMA_WRITE_ASM("2d", "%2, %3", "r"(c[0]), "r"(c[1]))
  } else if constexpr (Rank == 3) {
    STRATA_TMA_WRITE_ASM("3d", "%2, %3, %4", "r"(c[0]), "r"(c[1]), "r"(c[2]))
  } else if constexpr (Rank == 4) {
    STRATA_TMA_WRITE_ASM("4d", "%2, %3, %4, %5", "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]))
  } else {
    STRATA_TMA_WRITE_ASM("5d", "%2, %3, %4, %5, %6", "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]))
  }
#undef STRATA_TMA_WRITE_ASM
#else
  (void)map, (void)src, (void)c;
#endif
}

/// tma_store and tma_reduce_add: the box from shared memory into the tensor. On the emulator at issue,
/// element by element (outside the tensor skipped), as one more open bulk store of the thread.
template <bulk_write Op, class Ctx, class... Coords>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void tma_write(Ctx& ctx, const char* op, const tensor_map& map, const void* src,
                                                    Coords... coords) {
  static_assert(has_tma<typename Ctx::target>, "TMA needs sm90+ (atom_family::tma), which the kernel's target lacks");
  static_assert(sizeof...(Coords) >= 1 && sizeof...(Coords) <= 5, "a TMA store or reduction takes 1 to 5 coordinates");
  static_assert((std::is_convertible_v<Coords, int> && ...), "TMA coordinates are 32-bit integers");
  const int c[5] = {static_cast<int>(coords)...};
  if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
    auto& t = ctx.emulated_thread();
    const auto* box = static_cast<const unsigned char*>(src);
    std::size_t bytes = 0;
    const emulated_tensor_map m = checked_box(t, op, box, map, int(sizeof...(Coords)), bytes);
    if (Op == bulk_write::reduce_add && m.element != static_cast<std::uint8_t>(tma_element::f32))
      kernel_bug(t, std::string(op) + ": the tensor map's elements are raw bits; a reduction needs a map made with "
                                      "tma_tensor::element = tma_element::f32 (the GPU would add them as integers)");
    unsigned char* base = static_cast<unsigned char*>(const_cast<void*>(m.base));
    for_each_box_element(m, c, std::uint32_t(box - t.block->smem), [&](std::uint32_t at, long long global) {
      if (global < 0) return;
      if constexpr (Op == bulk_write::store) {
        std::memcpy(base + global, box + at, m.element_bytes);
      } else {
        float y;
        std::memcpy(&y, box + at, 4);
        std::atomic_ref<float>(*reinterpret_cast<float*>(base + global)).fetch_add(y, std::memory_order_relaxed);  // other blocks add beside it
      }
    });
    ++t.bulk_stores_open;
#endif
  } else {
    (void)ctx, (void)op;
#if STRATA_CUDA_DEVICE_PASS
    tma_write_issue<Op, int(sizeof...(Coords))>(&map, static_cast<std::uint32_t>(__cvta_generic_to_shared(src)), c);
#endif
  }
}
}  // namespace detail

/// Copies the box at `coords` from `src` in this block's shared memory, laid out as tma_load lands a
/// box (dense, innermost dimension fastest, the map's swizzle), to the tensor; elements outside the
/// tensor are not written. Issued by one thread, after every thread that wrote `src` fenced its writes
/// for the asynchronous proxy (mma::fence_async_shared) and a barrier ordered them before the issue.
/// The store joins this thread's open bulk group: tma_store_commit closes it, tma_store_wait<N> waits
/// until all but the N newest groups have read their sources (which may be overwritten then), and
/// every store must be waited for before the thread exits.
///
/// On the emulator the box is written at issue (so the tensor shows it at once), and a store never
/// waited for is a kernel bug at thread exit; writes into the source before the wait are not seen.
template <class Ctx, class... Coords>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void tma_store(Ctx& ctx, const tensor_map& map, const void* src, Coords... coords) {
  detail::tma_write<detail::bulk_write::store>(ctx, "tma_store", map, src, coords...);
}

/// Adds the box at `coords` from `src` in this block's shared memory (laid out as tma_store reads it)
/// into the tensor, element by element: the fp32 partial sums of several blocks into one accumulator
/// without an atomic per element (cp.reduce.async.bulk.tensor .add: the L2 adds whole lines). The map
/// must be made with tma_tensor::element = f32. Each element is added atomically with respect to the
/// other reductions, in no set order across blocks. Issued, committed and waited for as tma_store
/// (tma_store_commit, tma_store_wait<N> before the source is overwritten; tma_store_complete<N>
/// before another block may read the sums). On the emulator the addition happens at issue.
template <class Ctx, class... Coords>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void tma_reduce_add(Ctx& ctx, const tensor_map& map, const void* src, Coords... coords) {
  detail::tma_write<detail::bulk_write::reduce_add>(ctx, "tma_reduce_add", map, src, coords...);
}

/// cp.async.bulk.commit_group: this thread's TMA stores since the last commit form one group.
template <class Ctx>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void tma_store_commit(Ctx& ctx) {
  static_assert(detail::has_tma<typename Ctx::target>, "TMA needs sm90+ (atom_family::tma), which the kernel's target lacks");
  if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
    auto& t = ctx.emulated_thread();
    if (t.bulk_stores_open) ++t.bulk_store_groups, t.bulk_stores_open = 0;
#endif
  } else {
    (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
  }
}

namespace detail {
/// cp.async.bulk.wait_group[.read] Pending, for tma_store_wait (Read) and tma_store_complete.
template <bool Read, int Pending, class Ctx>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void bulk_wait(Ctx& ctx) {
  static_assert(has_tma<typename Ctx::target>, "TMA needs sm90+ (atom_family::tma), which the kernel's target lacks");
  static_assert(Pending >= 0 && Pending <= 7, "cp.async.bulk.wait_group takes 0..7 pending groups");
  if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
    auto& t = ctx.emulated_thread();  // the emulator's stores and reductions are done at issue
    if (t.bulk_store_groups > std::uint32_t(Pending)) t.bulk_store_groups = std::uint32_t(Pending);
#endif
  } else {
    (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
    if constexpr (Read) asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(Pending) : "memory");
    else asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(Pending) : "memory");
#endif
  }
}
}  // namespace detail

/// cp.async.bulk.wait_group.read Pending: all of this thread's committed TMA store groups but the
/// `Pending` newest have read their shared-memory sources.
template <int Pending, class Ctx>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void tma_store_wait(Ctx& ctx) {
  detail::bulk_wait<true, Pending>(ctx);
}

/// cp.async.bulk.wait_group Pending: all of this thread's committed TMA store (and reduction) groups
/// but the `Pending` newest are complete: their writes to global memory are done, so that after a
/// release (hierarchy/turn.hpp) another block reads them. tma_store_wait (.read) waits only for the
/// sources to be read.
template <int Pending, class Ctx>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void tma_store_complete(Ctx& ctx) {
  detail::bulk_wait<false, Pending>(ctx);
}

}  // namespace strata::copy

#if STRATA_BACKEND_CUDA && !STRATA_DEVICE_PASS
#include "strata/runtime/cuda/tensor_map.hpp"
#endif
