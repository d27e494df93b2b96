// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/emulator/context.hpp -- the hierarchy context of a kernel running on the host emulator.
//
// The same members as the CUDA and HIP contexts (see strata/hierarchy/levels.hpp). Barriers and
// collectives also take the caller's source position (a defaulted argument), so that a barrier that
// cannot complete is reported with the line where each thread waits.
#pragma once

#include <cstring>
#include <new>
#include <source_location>
#include <string>
#include <type_traits>

#include "strata/arch/target.hpp"
#include "strata/emulator/detail/scheduler.hpp"
#include "strata/hierarchy/kernel.hpp"
#include "strata/hierarchy/levels.hpp"

namespace strata::emulator {

template <class Target>
class context {
  using thread = detail::gpu_thread;
  using here = detail::call_site;  // the caller's line under GCC and clang alike (detail/state.hpp)

 public:
  using target = Target;
  static constexpr int warp_size = Target::warp_size;
  /// Atoms (mma/, copy/) take their emulator path under this context.
  static constexpr bool emulated = true;

  explicit context(thread& t) : t_(&t) {}

  class grid_level {
   public:
    explicit grid_level(thread* t) : t_(t) {}
    dims shape() const { return t_->unit->info->grid; }
    long long size() const { return t_->unit->info->blocks; }

   private:
    thread* t_;
  };

  class chiplet_level {
   public:
    explicit chiplet_level(thread* t) : t_(t) {}
    /// The chiplet the target's dispatch model places this block on (modelled; see arch/target.hpp).
    int index() const { return t_->block->chiplet; }
    int count() const { return t_->unit->info->chiplets.count; }

   private:
    thread* t_;
  };

  class cluster_level {
   public:
    explicit cluster_level(thread* t) : t_(t) {}
    long long index() const {
      const auto& L = *t_->unit->info;
      const dims b = t_->block->index;
      return L.clusters.linear(dims(b.x / L.cluster.x, b.y / L.cluster.y, b.z / L.cluster.z));
    }
    long long count() const { return t_->unit->info->clusters.volume(); }
    dims shape() const { return t_->unit->info->cluster; }
    int size() const { return t_->unit->info->cluster_blocks; }
    int block_rank() const { return t_->block->cluster_rank; }
    void sync(here loc = here::current()) const { detail::cluster_sync(*t_, loc); }

    /// The object at the same shared-memory offset as `local`, in block `rank` of this cluster.
    template <class T>
    T& shared_of(T& local, int rank) const {
      const auto& L = *t_->unit->info;
      if (rank < 0 || rank >= L.cluster_blocks)
        detail::kernel_bug(*t_, "cluster.shared_of(): rank " + std::to_string(rank) + " is outside the cluster of " +
                                    std::to_string(L.cluster_blocks) + " blocks");
      auto* p = reinterpret_cast<unsigned char*>(&local);
      unsigned char* base = t_->block->smem;
      if (p < base || p + sizeof(T) > base + L.shared_total)
        detail::kernel_bug(*t_, "cluster.shared_of(): the object is not in this block's shared memory");
      return *std::launder(reinterpret_cast<T*>(t_->unit->blocks[t_->block->cluster_base + rank].smem + (p - base)));
    }

   private:
    thread* t_;
  };

  class block_level {
   public:
    explicit block_level(thread* t) : t_(t) {}
    dims index() const { return t_->block->index; }
    long long rank() const { return t_->block->rank; }
    dims shape() const { return t_->unit->info->block; }
    int size() const { return t_->unit->info->threads_per_block; }
    dims thread_index() const { return t_->thread_index; }
    int thread_rank() const { return t_->thread_rank; }
    void sync(here loc = here::current()) const { detail::block_sync(*t_, loc); }

   private:
    thread* t_;
  };

  class warp_level {
   public:
    using mask_type = lane_mask<warp_size>;
    /// Atoms (mma/, copy/) take their emulator path for this warp: gather() below.
    static constexpr bool emulated = true;
    explicit warp_level(thread* t) : t_(t) {}
    static constexpr int size() { return warp_size; }
    int index() const { return t_->warp_index; }
    int count() const { return t_->unit->info->warps_per_block; }
    int lane_index() const { return t_->lane; }
    int active_lanes() const { return t_->warp->lanes; }
    /// The GPU warps' whole() (a warp known to have every lane, so that CUDA collectives use a
    /// constant mask): checked here, this warp itself.
    warp_level whole() const {
      if (t_->warp->lanes != warp_size)
        detail::kernel_bug(*t_, "warp.whole(): this warp has " + std::to_string(t_->warp->lanes) + " of " +
                                    std::to_string(warp_size) + " lanes; the kernel's blocks must be whole warps");
      return *this;
    }

    void sync(here loc = here::current()) const {
      detail::warp_rendezvous(*t_, detail::collective::sync, nullptr, 0, loc);
    }
    /// Value of `v` in lane `src` (taken modulo the warp size). A lane that does not exist in a
    /// partial warp yields the caller's own value.
    template <class T>
    T shfl(T v, int src, here loc = here::current()) const {
      return exchange(detail::collective::shfl, v, ((src % warp_size) + warp_size) % warp_size, loc);
    }
    template <class T>
    T shfl_xor(T v, int lane_mask, here loc = here::current()) const {
      return exchange(detail::collective::shfl_xor, v, (t_->lane ^ lane_mask) & (warp_size - 1), loc);
    }
    /// Lane i reads lane i - delta; lanes below delta keep their value.
    template <class T>
    T shfl_up(T v, int delta, here loc = here::current()) const {
      const int src = t_->lane - delta;
      return exchange(detail::collective::shfl_up, v, src < 0 ? t_->lane : src, loc);
    }
    /// Lane i reads lane i + delta; lanes whose source is past the warp keep their value.
    template <class T>
    T shfl_down(T v, int delta, here loc = here::current()) const {
      const int src = t_->lane + delta;
      return exchange(detail::collective::shfl_down, v, src >= warp_size ? t_->lane : src, loc);
    }
    mask_type ballot(bool p, here loc = here::current()) const {
      const int bank = detail::warp_rendezvous(*t_, detail::collective::ballot, &p, sizeof p, loc);
      mask_type m = 0;
      for (int i = 0; i < t_->warp->lanes; ++i)
        if (t_->warp->slots[bank][i][0]) m |= mask_type(1) << i;
      return m;
    }
    bool any(bool p, here loc = here::current()) const { return vote(detail::collective::any, p, loc) != 0; }
    bool all(bool p, here loc = here::current()) const { return vote(detail::collective::all, p, loc) == t_->warp->lanes; }

    template <class T, class Op>
    T reduce(T v, Op op) const { return strata::detail::tree_reduce(*this, v, op); }
    template <class T>
    T sum(T v) const { return reduce(v, strata::plus{}); }
    template <class T>
    T max(T v) const { return reduce(v, strata::maximum{}); }
    template <class T>
    T min(T v) const { return reduce(v, strata::minimum{}); }

    /// For atoms: every lane passes a pointer to its operands and results; once all lanes of the warp
    /// are here, fn(void* const* io, int lanes) runs once (io[l] is lane l's pointer), then all go on.
    /// This is how an MMA atom executes from its fragment layout: gather, compute, scatter.
    template <class Fn>
    void gather(const char* atom_name, void* io, Fn&& fn, here loc = here::current()) const {
      detail::warp_gather(*t_, atom_name, io, loc, static_cast<Fn&&>(fn));
    }

   private:
    template <class T>
    T exchange(detail::collective op, const T& v, int src, const here& loc) const {
      static_assert(std::is_trivially_copyable_v<T>, "warp shuffles move raw bytes: T must be trivially copyable");
      static_assert(sizeof(T) <= detail::max_exchange_bytes, "warp shuffles take values of at most 32 bytes");
      const int bank = detail::warp_rendezvous(*t_, op, &v, sizeof(T), loc);
      if (src >= t_->warp->lanes) return v;
      T out;
      std::memcpy(&out, t_->warp->slots[bank][src], sizeof(T));
      return out;
    }
    int vote(detail::collective op, bool p, const here& loc) const {
      const int bank = detail::warp_rendezvous(*t_, op, &p, sizeof p, loc);
      int yes = 0;
      for (int i = 0; i < t_->warp->lanes; ++i) yes += t_->warp->slots[bank][i][0] ? 1 : 0;
      return yes;
    }
    thread* t_;
  };

  /// Four consecutive warps, 128 threads, the first warp's index a multiple of 4: what a Hopper
  /// warpgroup MMA (mma/wgmma.hpp) runs on. index() is the same in every thread of the group.
  class warpgroup_level {
   public:
    static constexpr bool emulated = true;
    explicit warpgroup_level(thread* t) : t_(t) {}
    static constexpr int size() { return 128; }
    int index() const { return t_->thread_rank / 128; }
    /// Warpgroups of the block (a last partial one included; atoms refuse to run on it).
    int count() const { return (t_->unit->info->threads_per_block + 127) / 128; }
    int thread_rank() const { return t_->thread_rank % 128; }
    /// For atoms: as warp().gather(), over the 128 threads of the warpgroup.
    template <class Fn>
    void gather(const char* atom_name, void* io, Fn&& fn, here loc = here::current()) const {
      detail::warpgroup_gather(*t_, atom_name, io, loc, static_cast<Fn&&>(fn));
    }

   private:
    thread* t_;
  };

  class lane_level {
   public:
    explicit lane_level(thread* t) : t_(t) {}
    int index() const { return t_->lane; }

   private:
    thread* t_;
  };

  grid_level grid() const { return grid_level(t_); }
  chiplet_level chiplet() const { return chiplet_level(t_); }
  cluster_level cluster() const { return cluster_level(t_); }
  block_level block() const { return block_level(t_); }
  warp_level warp() const { return warp_level(t_); }
  warpgroup_level warpgroup() const { return warpgroup_level(t_); }
  lane_level lane() const { return lane_level(t_); }

  /// Returns once pred() is true; meanwhile the thread yields to the others (a raw spin loop would
  /// starve them on the emulator). pred must have no side effects. A wait that can never end (nothing
  /// left running could make pred true) fails the launch with the line of the wait.
  template <class Pred>
  void wait_until(Pred&& pred, here loc = here::current()) const {
    detail::spin_until(*t_, static_cast<Pred&&>(pred), loc);
  }

  /// Lets the other threads run before this one goes on (for atoms whose step may unblock another
  /// thread: an mbarrier phase completing).
  void yield_to_others(here loc = here::current()) const { detail::yield_thread(*t_, loc); }

  /// The kernel's static shared storage (Kernel::shared_storage), shared by the threads of the block.
  template <class T>
  T& shared() const {
    static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>,
                  "shared memory runs no constructors or destructors: T must be trivially constructible and destructible");
    static_assert(alignof(T) <= shared_alignment, "shared objects may be aligned to at most 128 bytes");
    if (sizeof(T) > t_->unit->info->static_shared)
      detail::kernel_bug(*t_, "ctx.shared<T>() asks for " + std::to_string(sizeof(T)) +
                                  " bytes but the kernel's shared_storage has " +
                                  std::to_string(t_->unit->info->static_shared) +
                                  "; declare the type as the kernel's shared_storage");
    return *std::launder(reinterpret_cast<T*>(t_->block->smem));
  }

  /// The dynamic shared memory of the launch (launch_shape::dynamic_shared_bytes), after the static part.
  template <class T>
  T* dynamic_shared() const {
    static_assert(alignof(T) <= shared_alignment, "shared objects may be aligned to at most 128 bytes");
    return std::launder(reinterpret_cast<T*>(t_->block->smem + t_->unit->info->static_shared));
  }

  /// The emulator's record of this thread (for tools built on the emulator; kernels do not need it).
  detail::gpu_thread& emulated_thread() const { return *t_; }

 private:
  thread* t_;
};

}  // namespace strata::emulator
