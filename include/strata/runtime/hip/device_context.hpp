// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/hip/device_context.hpp -- the hierarchy context of a kernel running on an AMD GPU.
//
// Implements every level documented at the top of strata/hierarchy/levels.hpp with HIP built-ins, clang
// AMDGPU builtins and GCN assembly. This file (with runtime/gpu/ and the rest of runtime/hip/) is where
// threadIdx, __syncthreads, lane permutes and inline assembly live, so that kernels never name them.
//
// CDNA wavefronts have 64 lanes. Lane permutes go through ds_bpermute_b32 (LDS crossbar, no LDS
// storage used), which takes any source lane; ballots are the 64-bit compare masks of the wave.
//
// The grid and block levels, the warp geometry and reductions and the shared-memory window are shared
// with CUDA (runtime/gpu/device_context.hpp). What is here is AMD's own: the chiplet index from HW_REG_XCC_ID
// (the hardware names the XCD; NVIDIA has no such register), no thread block clusters, 64-lane
// wavefronts whose lanes run in lockstep (permutes and ballots instead of *_sync collectives, memory
// fences instead of a warp barrier), and s_sleep back-off.
#pragma once

#include <hip/hip_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "strata/arch/arch.hpp"
#include "strata/config/config.hpp"
#include "strata/hierarchy/dims.hpp"
#include "strata/hierarchy/kernel.hpp"
#include "strata/hierarchy/levels.hpp"
#include "strata/runtime/detail/shuffle.hpp"
#include "strata/runtime/gpu/device_context.hpp"

namespace strata::hip {

namespace detail {

using strata::detail::gpu::block_threads;
using strata::detail::gpu::thread_rank;

/// Lane of this thread in its wavefront: mbcnt counts the set bits of an all-ones mask below this lane.
STRATA_DEVICE STRATA_FORCEINLINE int lane_id() {
#if STRATA_HIP_DEVICE_PASS
  return static_cast<int>(__builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)));
#else
  return 0;
#endif
}

/// Word `w` of lane `src` (0..63). ds_bpermute addresses lanes in bytes, hence the shift.
STRATA_DEVICE STRATA_FORCEINLINE std::uint32_t permute(std::uint32_t w, int src) {
#if STRATA_HIP_DEVICE_PASS
  return static_cast<std::uint32_t>(__builtin_amdgcn_ds_bpermute(src << 2, static_cast<int>(w)));
#else
  (void)src;
  return w;
#endif
}

/// The XCD (accelerator complex die) this wavefront runs on, from HW_REG_XCC_ID bits [3:0]. The
/// register exists on gfx940/941/942 and gfx950 (arch::current is gfx942 or gfx950 there); clang 15
/// assembles the symbolic name for gfx940.
STRATA_DEVICE STRATA_FORCEINLINE int xcc_id() {
#if STRATA_HIP_DEVICE_PASS
  if constexpr (std::is_same_v<arch::current, arch::gfx942> || std::is_same_v<arch::current, arch::gfx950>) {
    unsigned r;
    // Not volatile: a workgroup never migrates between XCDs, so repeated reads may be merged.
    asm("s_getreg_b32 %0, hwreg(HW_REG_XCC_ID, 0, 4)" : "=s"(r));
    return static_cast<int>(r);
  } else {
    return 0;
  }
#else
  return 0;
#endif
}

}  // namespace detail

/// The context handed to a kernel by the HIP trampoline (runtime/hip/trampoline.hpp).
template <class Target>
class device_context : public strata::detail::gpu::context_base<device_context<Target>, Target> {
 public:
  // In the host pass arch::current is `host`; only the device pass knows the GPU's wavefront size.
  static_assert(!STRATA_HIP_DEVICE_PASS || Target::warp_size == arch::current_warp_size,
                "strata::hip::device_context: the kernel's target declares a warp size that differs from the "
                "GPU this pass compiles for (CDNA wavefronts have 64 lanes); a kernel configured for a 32-lane "
                "NVIDIA target cannot be built with hipcc -- configure it with arch::gfx90a, gfx942 or gfx950");

  // ---- levels ------------------------------------------------------------------------------------

  using grid_level = strata::detail::gpu::grid_level;
  using block_level = strata::detail::gpu::block_level;

  struct chiplet_level {
    /// The XCD this block runs on, read from the hardware on gfx94x/gfx950 (not the round-robin
    /// model: code that relies on two blocks sharing an L2 needs the truth). On gfx90a each GCD is
    /// its own device, so the index is 0.
    STRATA_DEVICE int index() const {
      if constexpr (Target::chiplets.count <= 1) {
        return 0;
      } else {
        return detail::xcc_id() % Target::chiplets.count;
      }
    }
    STRATA_DEVICE static constexpr int count() { return Target::chiplets.count; }
  };

  /// AMD GPUs have no thread block clusters: every block is a cluster of one.
  struct cluster_level {
    STRATA_DEVICE long long index() const { return block_level{}.rank(); }
    STRATA_DEVICE long long count() const { return grid_level{}.size(); }
    STRATA_DEVICE dims shape() const { return dims(1, 1, 1); }
    STRATA_DEVICE int size() const { return 1; }
    STRATA_DEVICE int block_rank() const { return 0; }
    STRATA_DEVICE void sync() const { __syncthreads(); }
    template <class T>
    STRATA_DEVICE T& shared_of(T& local, int rank) const {
      (void)rank;  // can only be 0: this block
      return local;
    }
  };

  /// A wavefront of 64 lanes (CDNA; NVIDIA warps have 32): 64-bit lane masks, and lanes that run in
  /// lockstep. emulated, size(), index(), count(), active_lanes(), reduce/sum/max/min: gpu::warp_common.
  struct warp_level : strata::detail::gpu::warp_common<warp_level, 64> {
    using mask_type = lane_mask<64>;

    STRATA_DEVICE int lane_index() const { return detail::lane_id(); }
    /// The CUDA warp's whole(): wavefront shuffles name no lane mask, so it is this warp itself.
    STRATA_DEVICE warp_level whole() const { return *this; }

    /// Wavefront lanes execute in lockstep; what needs ordering is memory. The fences make this
    /// lane's shared/global writes visible to the other lanes of the wave, and wave_barrier keeps
    /// the compiler from moving memory operations across the point.
    STRATA_DEVICE void sync() const {
#if STRATA_HIP_DEVICE_PASS
      __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
      __builtin_amdgcn_wave_barrier();
      __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
#endif
    }

    // Source-lane rules follow CUDA's shuffles with width == 64: shfl takes src modulo 64; shfl_up,
    // shfl_down and shfl_xor keep the lane's own value when the source is outside the wavefront.
    template <class T>
    STRATA_DEVICE T shfl(const T& v, int src) const {
      const int j = src & 63;
      return strata::detail::shuffle_by_words(v, [j](std::uint32_t w) { return detail::permute(w, j); });
    }
    template <class T>
    STRATA_DEVICE T shfl_xor(const T& v, int lane_mask_) const {
      const int me = detail::lane_id();
      const int x = me ^ lane_mask_;
      const int j = (x >= 0 && x < 64) ? x : me;
      return strata::detail::shuffle_by_words(v, [j](std::uint32_t w) { return detail::permute(w, j); });
    }
    template <class T>
    STRATA_DEVICE T shfl_up(const T& v, int delta) const {
      const int me = detail::lane_id();
      const int j = me - delta >= 0 ? me - delta : me;
      return strata::detail::shuffle_by_words(v, [j](std::uint32_t w) { return detail::permute(w, j); });
    }
    template <class T>
    STRATA_DEVICE T shfl_down(const T& v, int delta) const {
      const int me = detail::lane_id();
      const int j = me + delta < 64 ? me + delta : me;
      return strata::detail::shuffle_by_words(v, [j](std::uint32_t w) { return detail::permute(w, j); });
    }
    /// Bit i set when lane i exists and its predicate is true (64-bit mask on wave64).
    STRATA_DEVICE mask_type ballot(bool p) const {
#if STRATA_HIP_DEVICE_PASS
      return static_cast<mask_type>(__ballot(p));
#else
      return p ? 1u : 0u;
#endif
    }
    STRATA_DEVICE bool any(bool p) const { return ballot(p) != 0; }
    /// True when the predicate holds on every lane that exists (lanes off in EXEC do not vote).
    STRATA_DEVICE bool all(bool p) const { return ballot(!p) == 0; }
  };

  struct lane_level {
    STRATA_DEVICE int index() const { return detail::lane_id(); }
  };

  // ---- the context -------------------------------------------------------------------------------

  /// `shared` is the block's LDS window: the kernel's static storage at offset 0, the dynamic part
  /// at `dynamic_offset` (see strata::dynamic_shared_offset).
  STRATA_DEVICE device_context(unsigned char* shared, std::size_t dynamic_offset)
      : strata::detail::gpu::context_base<device_context, Target>(shared, dynamic_offset) {}

  // grid(), cluster(), block(), warp(), lane(), shared<T>(), dynamic_shared<T>(): gpu::context_base.
  STRATA_DEVICE chiplet_level chiplet() const { return {}; }

  /// Returns once pred() is true, backing off between checks so a spinning warp leaves issue slots
  /// to the warps it waits for. pred reads memory another block writes: use strata::atomic loads.
  template <class Pred>
  STRATA_DEVICE void wait_until(Pred&& pred) const {
    while (!pred()) __builtin_amdgcn_s_sleep(1);
  }
};

}  // namespace strata::hip
