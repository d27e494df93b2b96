// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/mbarrier.hpp -- the shared-memory barrier with phases and transaction counts (PTX
// mbarrier): what the Hopper pipelines wait on (TMA copies complete on it, consumers release stages
// through it).
//
//   struct shared_storage { strata::mbarrier full[Stages], empty[Stages]; ... };
//   if (ctx.block().thread_rank() == 0) s.full[i].init(ctx, 1);   // one thread initializes
//   ctx.block().sync();                                             // before anyone else uses it
//   s.full[i].arrive_expect_tx(ctx, bytes);    // producer: one arrival, and `bytes` still to come
//   ... the copy engine completes the bytes (complete_tx) ...
//   s.full[i].wait(ctx, phase);                // consumer: until the phase of that parity completed
//
// Semantics (PTX ISA 9.7.13.15, "Parallel Synchronization and Communication Instructions: mbarrier"):
// a barrier initialized with count c starts in phase 0 with c pending arrivals and a transaction
// count of 0. arrive() takes one pending arrival; expect_tx(b) adds b bytes to the transaction count
// and complete_tx(b) (the copy engine, or a thread) takes them off. The phase completes when no
// arrival is pending and the transaction count is 0: its parity flips and c arrivals are pending
// again. wait(parity) returns once the phase with that parity has completed, i.e. while the current
// phase's parity differs from it: on a fresh barrier wait(1) returns at once (the "previous" phase),
// wait(0) waits for the first phase. An arrival releases the arriving thread's earlier writes to
// the threads whose wait observes the phase it completes (arrive: release; wait: acquire; CTA scope).
//
// Targets: init, arrive, wait on sm80 and later (mbarrier.test_wait on sm80, try_wait on sm90+);
// the transaction counts (expect_tx, arrive_expect_tx, complete_tx) on sm90+ (atom_family::tma).
//
// On the emulator the barrier's 8 bytes hold its state (pending and expected arrivals, transaction
// count, phase, and a marker that it was initialized), so it works wherever the block's shared memory
// is seen. Reported as kernel bugs: use before init, init of a barrier already initialized (inval()
// first), a count outside 1..65535 (the emulator's limit; PTX allows 2^20 - 1), more arrivals than
// the count in one phase, more bytes completed than expected when the last arrival came, and a wait
// that nothing can end (the emulator's deadlock report names the line). arrive_cluster() arrives on the
// barrier at the same place in another block of the cluster (sm90+). Not modelled yet: the race
// detector does not see the ordering a barrier phase gives (a kernel synchronized only by mbarriers
// reports races under the race-check build).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "strata/arch/target.hpp"
#include "strata/config/config.hpp"
#include "strata/config/race_exempt.hpp"

#if !STRATA_DEVICE_PASS
#include <string>
#endif

namespace strata {

namespace detail {

template <class Target>
inline constexpr bool has_mbarrier = Target::atoms.has(arch::atom_family::cp_async);
template <class Target>
inline constexpr bool has_mbarrier_tx = Target::atoms.has(arch::atom_family::tma);

/// The emulator's encoding of a barrier's state in its 8 bytes.
struct mbarrier_state {
  static constexpr std::uint64_t marker = 0x2A5;  // bits 54-63; shared memory starts as 0xFF bytes
  int pending = 0, expected = 0;  // 16 bits each (bits 0-15, 16-31)
  int tx = 0;                     // 21-bit two's complement (bits 32-52)
  int phase = 0;                  // bit 53
  static constexpr bool initialized(std::uint64_t w) { return (w >> 54) == marker; }
  static constexpr mbarrier_state decode(std::uint64_t w) {
    mbarrier_state s;
    s.pending = int(w & 0xFFFFu);
    s.expected = int((w >> 16) & 0xFFFFu);
    const int tx21 = int((w >> 32) & 0x1FFFFFu);
    s.tx = tx21 >= (1 << 20) ? tx21 - (1 << 21) : tx21;
    s.phase = int((w >> 53) & 1u);
    return s;
  }
  constexpr std::uint64_t encode() const {
    return std::uint64_t(pending & 0xFFFF) | (std::uint64_t(expected & 0xFFFF) << 16) |
           (std::uint64_t(std::uint32_t(tx) & 0x1FFFFFu) << 32) | (std::uint64_t(phase & 1) << 53) | (marker << 54);
  }
};

}  // namespace detail

/// A barrier in shared memory (8 bytes, 8-byte aligned). Trivial, so it can sit in a kernel's
/// shared_storage; init() it before use.
struct alignas(8) mbarrier {
  std::uint64_t word;

  /// Sets up the barrier for `count` arrivals per phase, phase 0. One thread calls it; the others may
  /// use the barrier after a block barrier that follows.
  template <class Ctx>
  STRATA_HOST_DEVICE void init(Ctx& ctx, int count) {
    static_assert(detail::has_mbarrier<typename Ctx::target>, "mbarrier needs sm80+ (the kernel's target lacks it)");
    if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
      auto& t = here(ctx, "init");
      STRATA_RACE_EXEMPT();
      if (detail::mbarrier_state::initialized(word))
        kernel_bug(t, "mbarrier.init on a barrier that is already initialized (inval() it first)");
      if (count < 1 || count > 0xFFFF)
        kernel_bug(t, "mbarrier.init: count " + std::to_string(count) + " is outside 1..65535 (the emulator's limit)");
      word = detail::mbarrier_state{count, count, 0, 0}.encode();
#endif
    } else {
      (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(address()), "r"(count) : "memory");
#else
      (void)count;
#endif
    }
  }

  /// Ends the barrier's use (before its memory is used for something else, or init() again).
  template <class Ctx>
  STRATA_HOST_DEVICE void inval(Ctx& ctx) {
    static_assert(detail::has_mbarrier<typename Ctx::target>, "mbarrier needs sm80+ (the kernel's target lacks it)");
    if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
      (void)here(ctx, "inval");
      STRATA_RACE_EXEMPT();
      word = ~std::uint64_t(0);
#endif
    } else {
      (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
      asm volatile("mbarrier.inval.shared::cta.b64 [%0];\n" ::"r"(address()) : "memory");
#endif
    }
  }

  /// One arrival of this thread (release: its earlier writes are seen by the threads that wait for
  /// the phase this arrival completes).
  template <class Ctx>
  STRATA_HOST_DEVICE void arrive(Ctx& ctx) {
    static_assert(detail::has_mbarrier<typename Ctx::target>, "mbarrier needs sm80+ (the kernel's target lacks it)");
    if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
      // A completed phase may release a waiting thread (a producer refilling a stage): it runs before
      // this thread goes on, as it may on the GPU. Then work this thread still owed before releasing
      // (a wgmma reading the stage) shows as the kernel bug it is (copy/tma.hpp).
      if (update(ctx, "arrive", 1, 0)) ctx.yield_to_others();
#endif
    } else {
      (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
      asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(address()) : "memory");
#endif
    }
  }

  /// One arrival on the barrier at this one's place in block `rank` of the cluster (distributed shared
  /// memory; sm90+): how a consumer releases a stage that another block of its cluster multicasts
  /// into. Release at cluster scope. The barriers must have been initialized and made visible to the
  /// cluster (fence_init, then cluster().sync()) before.
  template <class Ctx>
  STRATA_HOST_DEVICE void arrive_cluster(Ctx& ctx, int rank) {
    static_assert(detail::has_mbarrier_tx<typename Ctx::target>, "cluster-scope mbarrier arrivals need sm90+");
    if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
      (void)here(ctx, "arrive (cluster)");
      if (ctx.cluster().shared_of(*this, rank).update(ctx, "arrive (cluster)", 1, 0, /*remote=*/true)) ctx.yield_to_others();
#endif
    } else {
      (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
      asm volatile(
          "{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
          " mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}\n" ::"r"(address()),
          "r"(rank)
          : "memory");
#else
      (void)rank;
#endif
    }
  }

  /// Makes this thread's barrier initializations visible to the other blocks of its cluster (before the
  /// cluster barrier that precedes their first remote use). A no-op on the emulator.
  template <class Ctx>
  STRATA_HOST_DEVICE static void fence_init(Ctx& ctx) {
    static_assert(detail::has_mbarrier_tx<typename Ctx::target>, "cluster-scope mbarriers need sm90+");
    (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
  }

  /// `bytes` more to come in the current phase (sm90+), then one arrival of this thread.
  template <class Ctx>
  STRATA_HOST_DEVICE void arrive_expect_tx(Ctx& ctx, std::uint32_t bytes) {
    static_assert(detail::has_mbarrier_tx<typename Ctx::target>, "mbarrier transaction counts need sm90+ (atom_family::tma)");
    if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
      update(ctx, "arrive.expect_tx", 1, int(bytes));
#endif
    } else {
      (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
      asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}\n" ::"r"(address()),
                   "r"(bytes)
                   : "memory");
#else
      (void)bytes;
#endif
    }
  }

  /// `bytes` more to come in the current phase, without an arrival (sm90+).
  template <class Ctx>
  STRATA_HOST_DEVICE void expect_tx(Ctx& ctx, std::uint32_t bytes) {
    static_assert(detail::has_mbarrier_tx<typename Ctx::target>, "mbarrier transaction counts need sm90+ (atom_family::tma)");
    if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
      update(ctx, "expect_tx", 0, int(bytes));
#endif
    } else {
      (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
      asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(address()), "r"(bytes) : "memory");
#else
      (void)bytes;
#endif
    }
  }

  /// `bytes` of the current phase's transactions done (what the copy engine does as a TMA copy lands;
  /// a thread may do it too) (sm90+).
  template <class Ctx>
  STRATA_HOST_DEVICE void complete_tx(Ctx& ctx, std::uint32_t bytes) {
    static_assert(detail::has_mbarrier_tx<typename Ctx::target>, "mbarrier transaction counts need sm90+ (atom_family::tma)");
    if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
      update(ctx, "complete_tx", 0, -int(bytes));
#endif
    } else {
      (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
      asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(address()), "r"(bytes) : "memory");
#else
      (void)bytes;
#endif
    }
  }

  /// Whether the phase with parity `parity` has completed (acquire when it has).
  template <class Ctx>
  STRATA_HOST_DEVICE bool try_wait(Ctx& ctx, int parity) {
    static_assert(detail::has_mbarrier<typename Ctx::target>, "mbarrier needs sm80+ (the kernel's target lacks it)");
    if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
      (void)here(ctx, "try_wait");
      land_bulk(ctx);
      return completed(parity);
#else
      return true;
#endif
    } else {
      (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
      std::uint32_t done;
      if constexpr (detail::has_mbarrier_tx<typename Ctx::target>) {
        asm volatile(
            "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(address()), "r"(parity)
            : "memory");
      } else {
        asm volatile(
            "{\n .reg .pred p;\n mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(address()), "r"(parity)
            : "memory");
      }
      return done != 0;
#else
      (void)parity;
      return true;
#endif
    }
  }

  /// Returns once the phase with parity `parity` has completed.
  template <class Ctx>
  STRATA_HOST_DEVICE void wait(Ctx& ctx, int parity) {
    if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
      auto& t = here(ctx, "wait");
      for (;;) {
        land_bulk(ctx);
        if (completed(parity)) return;
        ctx.wait_until([&] { return completed(parity) || bulk_pending_here(t); });
      }
#endif
    } else {
      while (!try_wait(ctx, parity)) {
      }
    }
  }

 private:
#if STRATA_CUDA_DEVICE_PASS
  STRATA_DEVICE std::uint32_t address() const { return static_cast<std::uint32_t>(__cvta_generic_to_shared(&word)); }
#endif

#if !STRATA_DEVICE_PASS
  /// The calling thread, after checking the barrier is in its block's shared memory.
  template <class Ctx>
  auto& here(Ctx& ctx, const char* op) const {
    auto& t = ctx.emulated_thread();
    const auto* p = reinterpret_cast<const unsigned char*>(&word);
    const unsigned char* smem = t.block->smem;
    if (p < smem || p + sizeof word > smem + t.unit->info->shared_total)
      kernel_bug(t, std::string("mbarrier.") + op + ": the barrier is not in this block's shared memory");
    return t;
  }

  /// Lands the bulk copies (copy/tma.hpp) that complete on this barrier: their data, then their bytes
  /// as completed transactions, in issue order.
  template <class Ctx>
  void land_bulk(Ctx& ctx) {
    auto& q = ctx.emulated_thread().block->bulk_pending;
    for (std::size_t i = 0; i < q.size();) {
      if (q[i].barrier != &word) {
        ++i;
        continue;
      }
      auto copy = std::move(q[i]);
      q.erase(q.begin() + std::ptrdiff_t(i));
      {
        STRATA_RACE_EXEMPT();
        std::memcpy(copy.dst, copy.data.data(), copy.data.size());
      }
      update(ctx, "complete_tx (a bulk copy landing)", 0, -int(copy.data.size()));
    }
  }

  template <class Thread>
  bool bulk_pending_here(const Thread& t) const {
    for (const auto& c : t.block->bulk_pending)
      if (c.barrier == &word) return true;
    return false;
  }

  bool completed(int parity) const {
    STRATA_RACE_EXEMPT();
    return detail::mbarrier_state::decode(word).phase != (parity & 1);
  }

  /// Takes `arrivals` arrivals and adds `tx` to the transaction count; completes the phase when both
  /// are done, and says whether it did.
  template <class Ctx>
  bool update(Ctx& ctx, const char* op, int arrivals, int tx, bool remote = false) {
    // A remote barrier (another block of the cluster) was located by cluster().shared_of, which checked it.
    auto& t = remote ? ctx.emulated_thread() : here(ctx, op);
    STRATA_RACE_EXEMPT();
    if (!detail::mbarrier_state::initialized(word))
      kernel_bug(t, std::string("mbarrier.") + op + " on a barrier that was never initialized (init() it first)");
    auto s = detail::mbarrier_state::decode(word);
    s.tx += tx;
    if (s.tx >= (1 << 20) || s.tx <= -(1 << 20))
      kernel_bug(t, std::string("mbarrier.") + op + ": the transaction count leaves -(2^20 - 1)..2^20 - 1 (" +
                        std::to_string(s.tx) + " bytes)");
    if (arrivals > 0) {
      if (s.pending == 0)
        kernel_bug(t, std::string("mbarrier.") + op + ": more arrivals than the barrier's count (" +
                          std::to_string(s.expected) + ") in one phase");
      s.pending -= arrivals;
    }
    if (s.pending == 0 && s.tx < 0)
      kernel_bug(t, std::string("mbarrier.") + op + ": " + std::to_string(-s.tx) +
                        " more bytes completed than the phase expected (expect_tx) by its last arrival");
    const bool phase_done = s.pending == 0 && s.tx == 0;
    if (phase_done) {
      s.phase ^= 1;
      s.pending = s.expected;
    }
    word = s.encode();
    return phase_done;
  }
#endif
};

}  // namespace strata
