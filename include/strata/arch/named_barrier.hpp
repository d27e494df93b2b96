// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/named_barrier.hpp -- the block's hardware barriers 1..15 for a subset of its warps
// (PTX bar.sync / bar.arrive with a barrier id and a thread count): how warp-specialized kernels order
// warpgroups among themselves without stopping the others (the Hopper attention's ping-pong: one
// consumer warpgroup issues its wgmmas while the other runs its softmax).
//
//   constexpr strata::arch::named_barrier turn{1, 256};   // id 1, two warpgroups take part
//   turn.sync(ctx);     // this thread arrives and waits until 256 threads have arrived
//   turn.arrive(ctx);   // this thread arrives and goes on (a producer's signal)
//
// Semantics (PTX ISA 9.7.13.4, bar / barrier): a round of barrier `id` completes when `threads`
// threads have arrived at it, by sync or arrive; the threads that synced wait for it, the others do
// not. Every warp takes part whole (all its threads arrive; the count is a multiple of 32). Barrier 0
// is the block's own (block().sync()), so ids are 1..15. A round orders the arriving threads' earlier
// memory accesses before the syncing threads' later ones (PTX's producer / consumer pattern: write,
// bar.arrive; bar.sync, read).
//
// Targets: NVIDIA (sm_80 and later here). AMD has one barrier per workgroup and no named ones; a
// kernel that uses them is NVIDIA-only (static_assert).
//
// On the emulator each block holds the 15 barriers' state (arrivals of the open round, its thread
// count, a generation counter). Reported as kernel bugs: an id outside 1..15, a count that is not a
// positive multiple of 32 or exceeds the block, two threads naming different counts in one round, and
// a sync nobody can complete (the emulator's deadlock report names the line).
#pragma once

#include <cstdint>

#include "strata/arch/target.hpp"
#include "strata/config/config.hpp"

#if !STRATA_DEVICE_PASS
#include <string>
#endif

namespace strata::arch {

struct named_barrier {
  int id;       // 1..15
  int threads;  // threads taking part in a round: a multiple of 32

  /// Arrives and waits until the round has `threads` arrivals.
  template <class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE void sync(Ctx& ctx) const {
    require_nvidia<typename Ctx::target>();
    if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
      auto& t = ctx.emulated_thread();
      auto& b = slot(t, "sync");
      const std::uint32_t round = b.generation;
      count(t, b, "sync");
      if (b.generation == round) ctx.wait_until([&b, round] { return b.generation != round; });
#endif
    } else {
      (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
      asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
#endif
    }
  }

  /// Arrives without waiting.
  template <class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE void arrive(Ctx& ctx) const {
    require_nvidia<typename Ctx::target>();
    if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
      auto& t = ctx.emulated_thread();
      count(t, slot(t, "arrive"), "arrive");
#endif
    } else {
      (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
      asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
#endif
    }
  }

 private:
  template <class Target>
  STRATA_HOST_DEVICE static constexpr void require_nvidia() {
    static_assert(Target::vendor_id != arch::vendor::amd,
                  "named barriers (bar.sync / bar.arrive with an id) are NVIDIA's; AMD has one barrier per workgroup");
  }

#if !STRATA_DEVICE_PASS
  std::string what(const char* op) const {
    return std::string("named_barrier{") + std::to_string(id) + ", " + std::to_string(threads) + "}." + op;
  }

  /// The barrier's state in the calling thread's block, after checking the id and the count.
  template <class Thread>
  auto& slot(Thread& t, const char* op) const {
    if (id < 1 || id > 15) kernel_bug(t, what(op) + ": the id must be 1..15 (0 is the block barrier's)");
    if (threads <= 0 || threads % 32 != 0 || threads > t.block->threads)
      kernel_bug(t, what(op) + ": the thread count must be a positive multiple of 32, at most the block's " +
                        std::to_string(t.block->threads));
    return t.block->named[id];
  }

  /// One arrival; the last of a round closes it and moves the generation on.
  template <class Thread, class Barrier>
  void count(Thread& t, Barrier& b, const char* op) const {
    if (b.arrived == 0) {
      b.expected = threads;
    } else if (b.expected != threads) {
      kernel_bug(t, what(op) + ": another thread of this round named " + std::to_string(b.expected) +
                        " threads; every arrival of a round must name the same count");
    }
    if (++b.arrived == b.expected) {
      b.arrived = 0;
      b.expected = 0;
      ++b.generation;
    }
  }
#endif
};

}  // namespace strata::arch
