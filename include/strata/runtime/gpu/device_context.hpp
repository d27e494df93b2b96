// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/gpu/device_context.hpp -- the parts of the kernel context that NVIDIA and AMD GPUs
// implement alike: the grid and block levels (threadIdx, blockIdx, __syncthreads mean the same under
// CUDA and HIP), the warp geometry and reductions, and the context's accessors and shared-memory
// window. runtime/cuda/device_context.hpp and runtime/hip/device_context.hpp build their contexts
// from these and add what differs: the chiplet index, clusters, the warp's lane mask and collectives,
// the back-off.
#pragma once

#include <cstddef>

#include "strata/arch/arch.hpp"
#include "strata/config/config.hpp"
#include "strata/hierarchy/dims.hpp"
#include "strata/hierarchy/kernel.hpp"
#include "strata/hierarchy/levels.hpp"
#include "strata/runtime/gpu/api.hpp"

namespace strata::detail::gpu {

/// Linear thread id in the block, x fastest (the order in which the hardware packs threads into
/// warps and wavefronts).
STRATA_DEVICE STRATA_FORCEINLINE int thread_rank() {
  return static_cast<int>(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
}
STRATA_DEVICE STRATA_FORCEINLINE int block_threads() { return static_cast<int>(blockDim.x * blockDim.y * blockDim.z); }

struct grid_level {
  STRATA_DEVICE dims shape() const {
    return dims(static_cast<int>(gridDim.x), static_cast<int>(gridDim.y), static_cast<int>(gridDim.z));
  }
  STRATA_DEVICE long long size() const { return shape().volume(); }
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
  STRATA_DEVICE int size() const { return block_threads(); }
  STRATA_DEVICE dims thread_index() const {
    return dims(static_cast<int>(threadIdx.x), static_cast<int>(threadIdx.y), static_cast<int>(threadIdx.z));
  }
  STRATA_DEVICE int thread_rank() const { return gpu::thread_rank(); }
  /// Barrier of every thread of the block, with shared and global memory ordering: bar.sync 0 on
  /// NVIDIA, s_barrier between workgroup-scope release/acquire fences on AMD.
  STRATA_DEVICE void sync() const { __syncthreads(); }
};

/// What a vendor's warp level `Warp` (which provides shfl_xor) has alike on both vendors, for warps of
/// `Lanes` lanes (32 on NVIDIA, 64 on AMD): its place in the block, the lanes that exist, and the
/// all-reductions, with strata::detail::tree_reduce: the same order of operations on every backend.
template <class Warp, int Lanes>
struct warp_common {
  /// Atoms take the device path (inline asm / builtins) for this warp, not the emulator's.
  static constexpr bool emulated = false;

  STRATA_DEVICE static constexpr int size() { return Lanes; }
  /// Warp index inside the block.
  STRATA_DEVICE int index() const { return thread_rank() / Lanes; }
  /// Warps per block (the last one may be partial).
  STRATA_DEVICE int count() const { return (block_threads() + Lanes - 1) / Lanes; }
  /// Lanes that exist in this warp: all of them, except in the last warp of a block whose size is not
  /// a multiple of the warp size (on AMD the missing lanes are off in EXEC and take no part in ballots).
  STRATA_DEVICE int active_lanes() const {
    const int rest = block_threads() - index() * Lanes;
    return rest < Lanes ? rest : Lanes;
  }

  template <class T, class Op>
  STRATA_DEVICE T reduce(const T& v, Op op) const { return strata::detail::tree_reduce(static_cast<const Warp&>(*this), v, op); }
  template <class T>
  STRATA_DEVICE T sum(const T& v) const { return reduce(v, plus{}); }
  template <class T>
  STRATA_DEVICE T max(const T& v) const { return reduce(v, maximum{}); }
  template <class T>
  STRATA_DEVICE T min(const T& v) const { return reduce(v, minimum{}); }
};

/// What every vendor's device_context<Target> (`Context`, which defines the level types, chiplet() and
/// wait_until()) has alike: its target, the level accessors and the shared-memory window.
template <class Context, class Target>
class context_base {
  static_assert(arch::target<Target>, "strata::cuda::device_context<Target>, strata::hip::device_context<Target>: "
                                      "Target must be an arch descriptor");

 public:
  using target = Target;
  /// Atoms take their device path under this context (the emulator's context says true).
  static constexpr bool emulated = false;
  static constexpr int warp_size = Target::warp_size;

  STRATA_DEVICE auto grid() const { return typename Context::grid_level{}; }
  STRATA_DEVICE auto cluster() const { return typename Context::cluster_level{}; }
  STRATA_DEVICE auto block() const { return typename Context::block_level{}; }
  STRATA_DEVICE auto warp() const { return typename Context::warp_level{}; }
  STRATA_DEVICE auto lane() const { return typename Context::lane_level{}; }

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

 protected:
  /// `shared` is the block's shared-memory (LDS) window: the kernel's static storage at offset 0, the
  /// dynamic part at `dynamic_offset` (see strata::dynamic_shared_offset).
  STRATA_DEVICE context_base(unsigned char* shared, std::size_t dynamic_offset)
      : shared_(shared), dynamic_(shared + dynamic_offset) {}

 private:
  unsigned char* shared_;
  unsigned char* dynamic_;
};

}  // namespace strata::detail::gpu
