// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/hip/device_context.hpp -- the hierarchy context of a kernel running on an AMD GPU.
//
// Implements every level documented at the top of strata/hierarchy/levels.hpp with HIP built-ins,
// clang AMDGPU builtins and GCN assembly. This file (with the rest of runtime/hip/) is where
// threadIdx, __syncthreads, lane permutes and inline assembly live, so that kernels never name them.
//
// CDNA wavefronts have 64 lanes. Lane permutes go through ds_bpermute_b32 (LDS crossbar, no LDS
// storage used), which takes any source lane; ballots are the 64-bit compare masks of the wave.
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

namespace strata::hip {

namespace detail {

/// Linear thread id in the block, x fastest (the order in which the hardware packs wavefronts).
STRATA_DEVICE STRATA_FORCEINLINE int thread_rank() {
  return static_cast<int>(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
}
STRATA_DEVICE STRATA_FORCEINLINE int block_threads() { return static_cast<int>(blockDim.x * blockDim.y * blockDim.z); }

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

/// The context handed to a kernel by the HIP trampoline (runtime/hip/launch.hpp).
template <class Target>
class device_context {
 public:
  using target = Target;
  /// Atoms take their device path under this context (the emulator's context says true).
  static constexpr bool emulated = false;
  static constexpr int warp_size = Target::warp_size;

  static_assert(arch::target<Target>, "strata::hip::device_context<Target>: Target must be an arch descriptor");
  // In the host pass arch::current is `host`; only the device pass knows the GPU's wavefront size.
  static_assert(!STRATA_HIP_DEVICE_PASS || Target::warp_size == arch::current_warp_size,
                "strata::hip::device_context: the kernel's target declares a warp size that differs from the "
                "GPU this pass compiles for (CDNA wavefronts have 64 lanes); a kernel configured for a 32-lane "
                "NVIDIA target cannot be built with hipcc -- configure it with arch::gfx90a, gfx942 or gfx950");

  // ---- levels ------------------------------------------------------------------------------------

  struct grid_level {
    STRATA_DEVICE dims shape() const {
      return dims(static_cast<int>(gridDim.x), static_cast<int>(gridDim.y), static_cast<int>(gridDim.z));
    }
    STRATA_DEVICE long long size() const { return shape().volume(); }
  };

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

  struct block_level {
    STRATA_DEVICE dims index() const {
      return dims(static_cast<int>(blockIdx.x), static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.z));
    }
    /// Linear block id in the grid, x fastest.
    STRATA_DEVICE long long rank() const {
      return blockIdx.x + static_cast<long long>(gridDim.x) * (blockIdx.y + static_cast<long long>(gridDim.y) * blockIdx.z);
    }
    STRATA_DEVICE dims shape() const {
      return dims(static_cast<int>(blockDim.x), static_cast<int>(blockDim.y), static_cast<int>(blockDim.z));
    }
    STRATA_DEVICE int size() const { return detail::block_threads(); }
    STRATA_DEVICE dims thread_index() const {
      return dims(static_cast<int>(threadIdx.x), static_cast<int>(threadIdx.y), static_cast<int>(threadIdx.z));
    }
    STRATA_DEVICE int thread_rank() const { return detail::thread_rank(); }
    /// Workgroup barrier (s_barrier) with workgroup-scope release/acquire fences around it.
    STRATA_DEVICE void sync() const { __syncthreads(); }
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

  struct warp_level {
    /// Atoms take the device path (inline asm / builtins) for this warp, not the emulator's.
    static constexpr bool emulated = false;
    using mask_type = lane_mask<64>;

    STRATA_DEVICE static constexpr int size() { return 64; }
    STRATA_DEVICE int index() const { return detail::thread_rank() / 64; }
    STRATA_DEVICE int count() const { return (detail::block_threads() + 63) / 64; }
    STRATA_DEVICE int lane_index() const { return detail::lane_id(); }
    /// Lanes that exist in this wavefront: 64, except in the last wavefront of a block whose size is
    /// not a multiple of 64 (the missing lanes are off in EXEC and take no part in ballots).
    STRATA_DEVICE int active_lanes() const {
      const int rest = detail::block_threads() - index() * 64;
      return rest < 64 ? rest : 64;
    }

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

    /// All-reduce with strata::detail::tree_reduce: the same order of operations on every backend.
    template <class T, class Op>
    STRATA_DEVICE T reduce(const T& v, Op op) const { return strata::detail::tree_reduce(*this, v, op); }
    template <class T>
    STRATA_DEVICE T sum(const T& v) const { return reduce(v, plus{}); }
    template <class T>
    STRATA_DEVICE T max(const T& v) const { return reduce(v, maximum{}); }
    template <class T>
    STRATA_DEVICE T min(const T& v) const { return reduce(v, minimum{}); }
  };

  struct lane_level {
    STRATA_DEVICE int index() const { return detail::lane_id(); }
  };

  // ---- the context -------------------------------------------------------------------------------

  /// `shared` is the block's LDS window: the kernel's static storage at offset 0, the dynamic part
  /// at `dynamic_offset` (see strata::dynamic_shared_offset).
  STRATA_DEVICE device_context(unsigned char* shared, std::size_t dynamic_offset)
      : shared_(shared), dynamic_(shared + dynamic_offset) {}

  STRATA_DEVICE grid_level grid() const { return {}; }
  STRATA_DEVICE chiplet_level chiplet() const { return {}; }
  STRATA_DEVICE cluster_level cluster() const { return {}; }
  STRATA_DEVICE block_level block() const { return {}; }
  STRATA_DEVICE warp_level warp() const { return {}; }
  STRATA_DEVICE lane_level lane() const { return {}; }

  /// Returns once pred() is true, backing off between checks so a spinning warp leaves issue slots
  /// to the warps it waits for. pred reads memory another block writes: use strata::atomic loads.
  template <class Pred>
  STRATA_DEVICE void wait_until(Pred&& pred) const {
    while (!pred()) __builtin_amdgcn_s_sleep(1);
  }

  /// The kernel's static shared storage (Kernel::shared_storage).
  template <class T>
  STRATA_DEVICE T& shared() const {
    static_assert(alignof(T) <= shared_alignment, "ctx.shared<T>(): T needs more than the 128-byte alignment of shared memory");
    return *reinterpret_cast<T*>(shared_);
  }
  /// The dynamic shared memory requested with launch_shape::dynamic_shared_bytes.
  template <class T>
  STRATA_DEVICE T* dynamic_shared() const {
    static_assert(alignof(T) <= shared_alignment, "ctx.dynamic_shared<T>(): T needs more than the 128-byte alignment of shared memory");
    return reinterpret_cast<T*>(dynamic_);
  }

 private:
  unsigned char* shared_;
  unsigned char* dynamic_;
};

}  // namespace strata::hip
