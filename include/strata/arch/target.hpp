// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/target.hpp -- what a target descriptor says, and the concept every descriptor meets.
//
// A target is an empty struct with static constexpr members (see sm80.hpp for a full example).
// Kernels take the target as a template parameter; the emulator runs a kernel "as" a target:
// with its warp size, its shared-memory limit and its chiplet dispatch model.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "strata/config/config.hpp"

namespace strata::arch {

enum class vendor { nvidia, amd, host };

/// Families of MMA and copy atoms. A target lists the families its hardware executes; an atom
/// used on a target without its family is a compile error (never a silent slow path).
enum class atom_family : std::uint32_t {
  fma = 1u << 0,              // scalar fused multiply-add: every target
  mma_sync_f16 = 1u << 1,     // mma.sync m16n8k16 f16/bf16 -> f32 (sm80+)
  mma_sync_tf32 = 1u << 2,    // mma.sync m16n8k8 tf32 -> f32 (sm80+)
  mma_sync_i8 = 1u << 3,      // mma.sync m16n8k32 s8 -> s32 (sm80+)
  mma_sync_f8 = 1u << 4,      // mma.sync m16n8k32 e4m3/e5m2 -> f32 (sm89+)
  wgmma = 1u << 5,            // warpgroup MMA (sm90a)
  tcgen05 = 1u << 6,          // 5th-generation tensor core MMA (sm100a)
  mfma_f16 = 1u << 7,         // MFMA f16/bf16 -> f32 (CDNA2+)
  mfma_i8 = 1u << 8,          // MFMA i8 -> i32 (CDNA2+)
  mfma_f8 = 1u << 9,          // MFMA fp8 -> f32 (CDNA3+)
  cp_async = 1u << 10,        // cp.async global->shared with commit/wait groups (sm80+)
  ldmatrix = 1u << 11,        // ldmatrix shared->register (sm80+)
  tma = 1u << 12,             // tensor memory accelerator, mbarrier transactions (sm90+)
  buffer_load = 1u << 13,     // AMD buffer loads with hardware range checks
  buffer_load_lds = 1u << 14, // AMD buffer load straight into LDS (CDNA3+)
  mfma_f32 = 1u << 15,        // MFMA f32 -> f32, full fp32 products (CDNA2+)
  red_vector = 1u << 16,      // red.global.add.v2/.v4.f32: one atomic add for 2-4 floats (sm90+)
};

/// A set of atom families, usable in constant expressions.
struct atom_set {
  std::uint32_t bits = 0;
  constexpr atom_set() = default;
  constexpr atom_set(atom_family f) : bits(static_cast<std::uint32_t>(f)) {}
  constexpr bool has(atom_family f) const { return (bits & static_cast<std::uint32_t>(f)) != 0; }
  friend constexpr atom_set operator|(atom_set a, atom_set b) {
    atom_set r;
    r.bits = a.bits | b.bits;
    return r;
  }
  friend constexpr atom_set operator|(atom_set a, atom_family b) { return a | atom_set(b); }
};

constexpr atom_set operator|(atom_family a, atom_family b) { return atom_set(a) | atom_set(b); }

/// How the hardware hands the blocks of an ordinary grid to chiplets.
///  - monolithic: one chiplet; every block on chiplet 0.
///  - round_robin: block with linear id b runs on chiplet b % count (AMD SPX mode, per CK and HipKittens;
///    a model, not a guarantee: code that relies on two blocks sharing an L2 reads the hardware id).
///  - contiguous: the grid is split into `count` balanced contiguous ranges (a guess for B200's two
///    dies; NVIDIA documents no die placement, so this is marked experimental).
/// The model as functions (and their inverses) is in arch/dispatch.hpp.
enum class dispatch_model { monolithic, round_robin, contiguous };

/// The chiplet level of a target: how many chiplets, their compute units and L2, and how blocks land.
struct chiplet_topology {
  int count = 1;                         // chiplets (XCDs, dies) presented as one device
  int units_per_chiplet = 1;             // CUs or SMs per chiplet (active ones)
  std::size_t l2_bytes_per_chiplet = 0;  // private L2 of one chiplet
  int l2_partitions = 1;                 // L2 partitions inside one chiplet (H100/H200: 2, not exposed by CUDA)
  std::size_t last_level_cache_bytes = 0;  // shared cache below the L2s (MI300 Infinity Cache), 0 if none
  dispatch_model dispatch = dispatch_model::monolithic;
  bool experimental = false;             // the dispatch model is a guess, not documented by the vendor

  constexpr int units() const { return count * units_per_chiplet; }
};

constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * 1024;

/// What every target descriptor provides.
template <class T>
concept target = requires {
  { T::name } -> std::convertible_to<std::string_view>;
  { T::vendor_id } -> std::convertible_to<vendor>;
  { T::warp_size } -> std::convertible_to<int>;
  { T::max_threads_per_block } -> std::convertible_to<int>;
  { T::shared_memory_per_block } -> std::convertible_to<std::size_t>;
  { T::max_cluster_size } -> std::convertible_to<int>;
  { T::atoms } -> std::convertible_to<atom_set>;
  { T::chiplets } -> std::convertible_to<chiplet_topology>;
} && (T::warp_size == 32 || T::warp_size == 64);

template <target T>
constexpr bool supports(atom_family f) {
  return T::atoms.has(f);
}

}  // namespace strata::arch
