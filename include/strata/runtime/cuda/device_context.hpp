// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/cuda/device_context.hpp -- the hierarchy context of a kernel running on an NVIDIA GPU.
//
// Implements every level documented at the top of strata/hierarchy/levels.hpp with CUDA built-ins, intrinsics
// and PTX. This file (with runtime/gpu/ and the rest of runtime/cuda/) is where threadIdx, __syncthreads,
// shuffles and inline assembly live, so that kernels never name them.
//
// The level objects are empty or nearly empty and fully inlined: each query reads a special register
// (%tid, %ctaid, %laneid, %cluster_ctarank, ...) where it is used, and the compiler drops what a
// kernel does not ask for.
//
// The grid and block levels, the warp geometry and reductions and the shared-memory window are shared
// with HIP (runtime/gpu/device_context.hpp). What is here is NVIDIA's own: the chiplet index from %smid and
// the calibration table (NVIDIA documents no die id), thread block clusters and distributed shared
// memory (sm_90+, absent on AMD), 32-lane warps with the *_sync collectives, and __nanosleep back-off.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "strata/arch/arch.hpp"
#include "strata/config/config.hpp"
#include "strata/hierarchy/dims.hpp"
#include "strata/hierarchy/kernel.hpp"
#include "strata/hierarchy/levels.hpp"
#include "strata/runtime/chiplet_calibration.hpp"
#include "strata/runtime/detail/shuffle.hpp"
#include "strata/runtime/gpu/device_context.hpp"

namespace strata::cuda {

namespace detail {

using strata::detail::gpu::block_threads;
using strata::detail::gpu::thread_rank;

/// True in a device pass for a GPU with thread block clusters (sm_90 and later).
inline constexpr bool hardware_clusters = STRATA_CUDA_DEVICE_PASS && (arch::current::max_cluster_size > 1);

// Reads of PTX special registers. `volatile` where the value can change while the thread runs
// (%smid: a preempted block may resume on another SM); the others are constants of the launch.
#if STRATA_CUDA_DEVICE_PASS
#define STRATA_CUDA_SREG(name, reg)                               \
  STRATA_DEVICE STRATA_FORCEINLINE unsigned name() {              \
    unsigned r;                                                   \
    asm("mov.u32 %0, " reg ";" : "=r"(r));                        \
    return r;                                                     \
  }
#else
#define STRATA_CUDA_SREG(name, reg) \
  STRATA_DEVICE STRATA_FORCEINLINE unsigned name() { return 0; }
#endif
STRATA_CUDA_SREG(lane_id, "%%laneid")
STRATA_CUDA_SREG(cluster_ctarank, "%%cluster_ctarank")
STRATA_CUDA_SREG(cluster_nctarank, "%%cluster_nctarank")
STRATA_CUDA_SREG(cluster_nctaid_x, "%%cluster_nctaid.x")
STRATA_CUDA_SREG(cluster_nctaid_y, "%%cluster_nctaid.y")
STRATA_CUDA_SREG(cluster_nctaid_z, "%%cluster_nctaid.z")
STRATA_CUDA_SREG(clusterid_x, "%%clusterid.x")
STRATA_CUDA_SREG(clusterid_y, "%%clusterid.y")
STRATA_CUDA_SREG(clusterid_z, "%%clusterid.z")
STRATA_CUDA_SREG(nclusterid_x, "%%nclusterid.x")
STRATA_CUDA_SREG(nclusterid_y, "%%nclusterid.y")
STRATA_CUDA_SREG(nclusterid_z, "%%nclusterid.z")
STRATA_CUDA_SREG(nsmid, "%%nsmid")
#undef STRATA_CUDA_SREG

STRATA_DEVICE STRATA_FORCEINLINE unsigned smid() {
#if STRATA_CUDA_DEVICE_PASS
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
#else
  return 0;
#endif
}

/// The %smid -> chiplet calibration table a launch hands to the kernel (strata/runtime/chiplet_calibration.hpp).
/// Only a target with more than one chiplet carries it; elsewhere the slot is empty.
template <bool Multi>
struct smid_table_slot {
  const unsigned char* table = nullptr;
  int size = 0;
};
template <>
struct smid_table_slot<false> {};

}  // namespace detail

/// The context handed to a kernel by the CUDA trampoline (runtime/cuda/trampoline.hpp).
template <class Target>
class device_context : public strata::detail::gpu::context_base<device_context<Target>, Target> {
 public:
  // target, emulated (false), warp_size (Target's): gpu::context_base.
  // In the host pass arch::current is `host`; only the device pass knows the GPU's warp size.
  static_assert(!STRATA_CUDA_DEVICE_PASS || Target::warp_size == arch::current_warp_size,
                "strata::cuda::device_context: the kernel's target declares a warp size that differs from the "
                "GPU this pass compiles for (NVIDIA warps have 32 lanes); a kernel configured for a wave64 AMD "
                "target cannot be built with nvcc -- configure it with arch::sm80, sm90a or sm100a");

  // Clusters exist only when both the compiled GPU and the kernel's target have them; a kernel
  // configured for sm80 never runs in a cluster (validate_launch rejects it), so it gets the cheaper
  // degenerate level even when compiled for sm_90a.
  static constexpr bool has_clusters = detail::hardware_clusters && (Target::max_cluster_size > 1);

  // ---- levels ------------------------------------------------------------------------------------

  using grid_level = strata::detail::gpu::grid_level;
  using block_level = strata::detail::gpu::block_level;

  /// The %smid -> chiplet table of the launch, carried only by targets with more than one chiplet.
  using smid_table_type = detail::smid_table_slot<(Target::chiplets.count > 1)>;

  struct chiplet_level {
    [[no_unique_address]] smid_table_type smid_table{};

    /// The chiplet this block runs on. On sm_100 (B200) NVIDIA documents no die id: the SM id goes
    /// through the user's calibration table when one is set (strata::set_chiplet_calibration), and
    /// otherwise is split into `count()` contiguous ranges, an EXPERIMENTAL guess that matches the
    /// sm100a topology's `contiguous` model (strata::chiplet_from_smid). Elsewhere the GPU is one
    /// die and the index is 0.
    STRATA_DEVICE int index() const {
      if constexpr (Target::chiplets.count <= 1) {
        return 0;
      } else if constexpr (STRATA_CUDA_DEVICE_PASS && std::is_same_v<arch::current, arch::sm100a>) {
        return chiplet_from_smid(detail::smid(), detail::nsmid(), Target::chiplets.count, smid_table.table,
                                 smid_table.size);
      } else {
        return 0;
      }
    }
    STRATA_DEVICE static constexpr int count() { return Target::chiplets.count; }
  };

  struct cluster_level {
    /// Linear id of this block's cluster in the grid (x fastest).
    STRATA_DEVICE long long index() const {
      if constexpr (has_clusters) {
        return detail::clusterid_x() +
               static_cast<long long>(detail::nclusterid_x()) *
                   (detail::clusterid_y() + static_cast<long long>(detail::nclusterid_y()) * detail::clusterid_z());
      } else {
        return block_level{}.rank();
      }
    }
    /// Clusters in the grid.
    STRATA_DEVICE long long count() const {
      if constexpr (has_clusters) {
        return static_cast<long long>(detail::nclusterid_x()) * detail::nclusterid_y() * detail::nclusterid_z();
      } else {
        return grid_level{}.size();
      }
    }
    /// Blocks of one cluster in each dimension.
    STRATA_DEVICE dims shape() const {
      if constexpr (has_clusters) {
        return dims(static_cast<int>(detail::cluster_nctaid_x()), static_cast<int>(detail::cluster_nctaid_y()),
                    static_cast<int>(detail::cluster_nctaid_z()));
      } else {
        return dims(1, 1, 1);
      }
    }
    STRATA_DEVICE int size() const {
      if constexpr (has_clusters) return static_cast<int>(detail::cluster_nctarank());
      else return 1;
    }
    STRATA_DEVICE int block_rank() const {
      if constexpr (has_clusters) return static_cast<int>(detail::cluster_ctarank());
      else return 0;
    }
    /// Barrier of every thread of every block of the cluster. arrive has release and wait acquire
    /// semantics at cluster scope, so shared-memory writes before it are visible to the other
    /// blocks' shared_of() reads after it. `.aligned`: every thread of a warp executes the same
    /// barrier, which the context's contract already demands (all threads reach each sync()).
    /// A launch without clusters on sm_90+ is an implicit cluster of one block, where the same
    /// instructions act as a block barrier.
    STRATA_DEVICE void sync() const {
      if constexpr (has_clusters) {
#if STRATA_CUDA_DEVICE_PASS
        asm volatile("barrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
#endif
      } else {
        __syncthreads();
      }
    }
    /// The object at the same shared-memory address as `local`, in the block of this cluster with
    /// rank `rank` (distributed shared memory). `mapa` on a generic address yields a generic address,
    /// so the result is an ordinary reference usable with plain loads and stores.
    template <class T>
    STRATA_DEVICE T& shared_of(T& local, int rank) const {
      if constexpr (has_clusters) {
#if STRATA_CUDA_DEVICE_PASS
        std::uint64_t remote;
        asm("mapa.u64 %0, %1, %2;" : "=l"(remote) : "l"(reinterpret_cast<std::uint64_t>(&local)), "r"(rank));
        return *reinterpret_cast<T*>(remote);
#else
        (void)rank;
        return local;
#endif
      } else {
        (void)rank;  // a cluster of one block: rank can only be 0, this block
        return local;
      }
    }
  };

  /// emulated, size(), index(), count(), active_lanes(), reduce/sum/max/min: gpu::warp_common.
  /// Whole: the warp is known to have all 32 lanes (whole()).
  template <bool Whole>
  struct basic_warp_level : strata::detail::gpu::warp_common<basic_warp_level<Whole>, 32> {
    using mask_type = lane_mask<32>;

    STRATA_DEVICE int lane_index() const { return static_cast<int>(detail::lane_id()); }
    /// The lanes that exist. Collectives name exactly these lanes: a full-warp mask on a partial
    /// warp would wait for lanes that were never launched. A mask computed at run time costs each
    /// loop that shuffles a convergence check (WARPSYNC, MATCH.ANY, REDUX, a BRA.DIV; the attention
    /// softmax's row reductions), which a whole warp's constant mask does not.
    STRATA_DEVICE mask_type lanes() const {
      if constexpr (Whole) {
        return 0xffffffffu;
      } else {
        const int n = this->active_lanes();
        return n >= 32 ? 0xffffffffu : ((1u << n) - 1u);
      }
    }
    /// This warp as one whose 32 lanes all exist, for a kernel whose blocks are whole warps (the
    /// caller's promise; the emulator checks it): its collectives use the constant full mask.
    STRATA_DEVICE basic_warp_level<true> whole() const { return {}; }

    STRATA_DEVICE void sync() const { __syncwarp(lanes()); }

    /// Value of `v` in lane `src` (taken modulo the warp size, as CUDA does).
    template <class T>
    STRATA_DEVICE T shfl(const T& v, int src) const {
      const mask_type m = lanes();
      return strata::detail::shuffle_by_words(v, [&](std::uint32_t w) { return __shfl_sync(m, w, src); });
    }
    /// Value of `v` in lane (lane ^ mask); a lane whose partner is outside the warp keeps its own value.
    template <class T>
    STRATA_DEVICE T shfl_xor(const T& v, int lane_mask_) const {
      const mask_type m = lanes();
      return strata::detail::shuffle_by_words(v, [&](std::uint32_t w) { return __shfl_xor_sync(m, w, lane_mask_); });
    }
    /// Value of `v` in lane (lane - delta); lanes below `delta` keep their own value.
    template <class T>
    STRATA_DEVICE T shfl_up(const T& v, int delta) const {
      const mask_type m = lanes();
      return strata::detail::shuffle_by_words(v, [&](std::uint32_t w) { return __shfl_up_sync(m, w, static_cast<unsigned>(delta)); });
    }
    /// Value of `v` in lane (lane + delta); lanes whose source is past lane 31 keep their own value.
    template <class T>
    STRATA_DEVICE T shfl_down(const T& v, int delta) const {
      const mask_type m = lanes();
      return strata::detail::shuffle_by_words(v, [&](std::uint32_t w) { return __shfl_down_sync(m, w, static_cast<unsigned>(delta)); });
    }
    /// Bit i set when lane i exists and its predicate is true.
    STRATA_DEVICE mask_type ballot(bool p) const { return __ballot_sync(lanes(), p); }
    STRATA_DEVICE bool any(bool p) const { return __any_sync(lanes(), p) != 0; }
    STRATA_DEVICE bool all(bool p) const { return __all_sync(lanes(), p) != 0; }
  };
  using warp_level = basic_warp_level<false>;

  struct lane_level {
    STRATA_DEVICE int index() const { return static_cast<int>(detail::lane_id()); }
  };

  /// Four consecutive warps, 128 threads, the first warp's index a multiple of 4: what a Hopper
  /// warpgroup MMA (mma/wgmma.hpp) runs on.
  struct warpgroup_level {
    static constexpr bool emulated = false;
    STRATA_DEVICE static constexpr int size() { return 128; }
    /// Read from lane 0, so that the compiler sees a warp-uniform value: a branch on the warpgroup's
    /// role (producer or consumer) then compiles without divergence handling.
    STRATA_DEVICE int index() const { return __shfl_sync(0xffffffffu, block_level{}.thread_rank() / 128, 0); }
    STRATA_DEVICE int count() const { return (block_level{}.size() + 127) / 128; }
    STRATA_DEVICE int thread_rank() const { return block_level{}.thread_rank() % 128; }
  };
  STRATA_DEVICE warpgroup_level warpgroup() const { return {}; }

  // ---- the context -------------------------------------------------------------------------------

  /// `shared` is the block's shared-memory window: the kernel's static storage at offset 0, the
  /// dynamic part at `dynamic_offset` (see strata::dynamic_shared_offset). `smid_table` /
  /// `smid_table_size` are the launch's %smid -> chiplet calibration (nullptr, 0 when none); a
  /// target with one chiplet ignores them.
  STRATA_DEVICE device_context(unsigned char* shared, std::size_t dynamic_offset,
                               const unsigned char* smid_table = nullptr, int smid_table_size = 0)
      : strata::detail::gpu::context_base<device_context, Target>(shared, dynamic_offset) {
    if constexpr (Target::chiplets.count > 1) {
      smid_table_.table = smid_table;
      smid_table_.size = smid_table_size;
    } else {
      (void)smid_table;
      (void)smid_table_size;
    }
  }

  // grid(), cluster(), block(), warp(), lane(), shared<T>(), dynamic_shared<T>(): gpu::context_base.
  STRATA_DEVICE chiplet_level chiplet() const { return chiplet_level{smid_table_}; }

  /// Returns once pred() is true, backing off between checks so a spinning warp leaves issue slots
  /// to the warps it waits for. pred reads memory another block writes: use strata::atomic loads.
  template <class Pred>
  STRATA_DEVICE void wait_until(Pred&& pred) const {
    while (!pred()) __nanosleep(64);
  }

 private:
  [[no_unique_address]] smid_table_type smid_table_{};
};

}  // namespace strata::cuda
