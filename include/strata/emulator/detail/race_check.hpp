// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/emulator/detail/race_check.hpp -- the emulator's shared-memory race detector (opt-in).
//
// Two threads of a block touching the same shared-memory byte between two barriers, at least one of
// them writing, is a race: on a GPU the result depends on timing. The detector sees every load and
// store the kernel makes because the race-check build (CMake preset `racecheck`: clang with
// -fsanitize-coverage=trace-pc-guard,trace-loads,trace-stores and -DSTRATA_RACE_CHECK=1) makes the
// compiler call __sanitizer_cov_load<N>/__sanitizer_cov_store<N>(address) before each one. The hooks
// below keep a shadow cell per shared byte of every block the worker runs:
//
//   write          the last writer:  thread (1 + rank in the block), barrier epoch, warp epoch
//   read1, read2   the last two distinct readers since that write
//
// The block's barrier epoch advances at every completed block.sync() and cluster.sync(); a warp's
// epoch at every completed warp collective (warp.sync(), shuffles, votes, warp-wide atoms). An access
// is ordered after a recorded one when a block barrier lies between them, or when both threads are in
// one warp and a warp collective lies between them. Unordered accesses by two different threads, one
// a write, are a race; the first one of a launch fails it with the kernel, block, shared offset and
// address, both threads, their warps and the access kinds. Asynchronous copies (cp.async) count as
// writes of the issuing thread at the wait that lands them, as on the GPU.
//
// Not seen (documented in docs/reliability.md): ordering made through atomics or spin-waits on shared
// flags (such kernels may be reported; Strata's own kernels order shared memory with barriers only);
// accesses to another block's shared memory in a cluster; a third reader between two writes when the
// two recorded readers are ordered (the detector can miss, it never reports a race that is not
// there). Atomic operations (strata::atomic) are exempt: they are not races.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "strata/config/race_exempt.hpp"

#ifndef STRATA_RACE_CHECK
#define STRATA_RACE_CHECK 0
#endif
#if STRATA_RACE_CHECK
// The detector's own code must not be instrumented: its loads would call the hooks again.
#define STRATA_RACE_UNINSTRUMENTED __attribute__((no_sanitize("coverage")))
#else
#define STRATA_RACE_UNINSTRUMENTED
#endif
#include "strata/emulator/detail/state.hpp"

namespace strata::emulator::detail::race {

struct access {
  std::uint32_t thread = 0;  // 1 + thread rank in the block; 0: none
  std::uint32_t epoch = 0;   // the block's barrier epoch at the access
  std::uint32_t warp_epoch = 0;
  bool wrote = false;
};
struct cell {
  access write, read1, read2;
};

/// Bytes past a block's shared memory in which an access is reported as out of bounds (the
/// emulator's canary zone, scheduler.hpp's canary_bytes).
inline constexpr std::size_t overrun_zone = 64;

/// Per OS thread (worker): the shadow of the worker's shared-memory arena, the thread now running and
/// the first race found.
struct worker_state {
  gpu_thread* current = nullptr;
  const unsigned char* arena = nullptr;  // start of the shadowed arena (null: detector off)
  std::size_t shared_bytes = 0;          // each block's shared memory (static + dynamic)
  std::vector<cell> cells;
  int warp_size = 32;
  std::string first_race;  // set by the hooks, thrown by the scheduler after the resume
};

inline worker_state& local() {
  thread_local worker_state s;
  return s;
}

/// The worker's state while the detector is on, else null. Constant-initialized, so the hooks can
/// read it before anything else: constructing local() itself makes instrumented stores, which call
/// the hooks again.
inline thread_local worker_state* active = nullptr;

/// The worker runs a unit whose blocks' shared memory lies in [arena, arena + bytes); `on` false
/// turns the detector off for it.
inline void begin_unit(bool on, const unsigned char* arena, std::size_t bytes, std::size_t shared_bytes,
                       int warp_size) {
  worker_state& s = local();
  s.first_race.clear();
  s.warp_size = warp_size;
  s.shared_bytes = shared_bytes;
  if (!on || !STRATA_RACE_CHECK) {
    s.arena = nullptr;
    active = nullptr;
    return;
  }
  s.arena = arena;
  s.cells.assign(bytes, cell{});
  active = &s;
}

inline std::string describe(const access& a, int warp_size) {
  const int rank = static_cast<int>(a.thread) - 1;
  return "thread " + std::to_string(rank) + " (warp " + std::to_string(rank / warp_size) + ", lane " +
         std::to_string(rank % warp_size) + ") " + (a.wrote ? "wrote" : "read");
}

#if STRATA_RACE_CHECK
/// Records one access of `bytes` bytes at `p` by the running GPU thread.
STRATA_RACE_UNINSTRUMENTED inline void on_access(const void* p, std::size_t bytes, bool write) {
  if (!active || strata::detail::race_exempt || !active->current) return;
  worker_state& s = *active;
  const auto* a = static_cast<const unsigned char*>(p);
  gpu_thread& t = *s.current;
  const block_state& b = *t.block;
  const std::size_t shared = s.shared_bytes;
  if (a < b.smem || a >= b.smem + shared + overrun_zone) return;  // not this block's shared memory
  if (a + bytes > b.smem + shared) {
    // Past the end of the block's shared memory (into the emulator's canary): caught at the access,
    // with the thread, rather than at the end of the block.
    if (s.first_race.empty())
      s.first_race = "shared-memory access out of bounds: thread " + std::to_string(t.thread_rank) + " (warp " +
                     std::to_string(t.warp_index) + ", lane " + std::to_string(t.lane) + ") " +
                     (write ? "writes " : "reads ") + std::to_string(bytes) + " bytes at shared byte " +
                     std::to_string(a - b.smem) + ", past the end of the block's " + std::to_string(shared) +
                     " bytes of shared memory";
    return;
  }
  strata::detail::race_exempt_scope guard;
  const std::uint32_t me = static_cast<std::uint32_t>(t.thread_rank) + 1;
  const access now{me, b.sync_epoch, t.warp->sync_epoch, write};
  const int my_warp = t.warp_index;
  auto ordered = [&](const access& prev) {
    if (prev.thread == 0 || prev.thread == me) return true;
    if (prev.epoch != now.epoch) return true;  // a block barrier lies between (epochs only grow)
    const int prev_warp = static_cast<int>(prev.thread - 1) / s.warp_size;
    return prev_warp == my_warp && prev.warp_epoch != now.warp_epoch;
  };
  for (std::size_t i = 0; i < bytes; ++i) {  // in bounds: overruns returned above
    cell& c = s.cells[static_cast<std::size_t>(a + i - s.arena)];
    const access* clash = nullptr;
    if (!ordered(c.write)) clash = &c.write;
    if (write && !clash) {
      if (!ordered(c.read1)) clash = &c.read1;
      else if (!ordered(c.read2)) clash = &c.read2;
    }
    if (clash) {
      if (s.first_race.empty()) {
        const std::size_t offset = static_cast<std::size_t>(a + i - b.smem);
        char addr[32];
        std::snprintf(addr, sizeof addr, "%p", static_cast<const void*>(a + i));
        s.first_race = "shared-memory race at shared byte " + std::to_string(offset) + " (address " + addr +
                       "): " + describe(now, s.warp_size) + " it, and " + describe(*clash, s.warp_size) +
                       " it, with no barrier between them (block barrier epoch " + std::to_string(now.epoch) +
                       (b.last_barrier.line ? ", after the block.sync() at " + b.last_barrier.str() : std::string(", before the first block.sync()")) +
                       "). Separate the two with block.sync() (or warp.sync() inside one warp).";
      }
      return;
    }
    if (write) {
      c.write = now;
      c.read1 = c.read2 = access{};
    } else if (ordered(c.read1)) {
      // An empty slot, our own read, or a reader ordered before us: a later write that is unordered
      // with it is unordered with us too, so we may take its place.
      c.read1 = now;
    } else {
      c.read2 = now;
    }
  }
}
#else
inline void on_access(const void*, std::size_t, bool) {}  // not the race-check build
#endif

}  // namespace strata::emulator::detail::race

#if STRATA_RACE_CHECK
namespace strata::emulator::detail {
// The shared-memory traffic statistics count plain accesses outside the atoms (wavefronts.hpp).
inline void note_plain_access(const void* p);
}  // namespace strata::emulator::detail

// The compiler's instrumentation calls these before every load and store of the race-check build.
// Weak, so that every translation unit may define them; never instrumented themselves.
#define STRATA_RACE_HOOK __attribute__((weak, no_sanitize("coverage"), used))
extern "C" {
STRATA_RACE_HOOK void __sanitizer_cov_load1(std::uint8_t* p) {
  strata::emulator::detail::note_plain_access(p);
  strata::emulator::detail::race::on_access(p, 1, false);
}
STRATA_RACE_HOOK void __sanitizer_cov_load2(std::uint16_t* p) {
  strata::emulator::detail::note_plain_access(p);
  strata::emulator::detail::race::on_access(p, 2, false);
}
STRATA_RACE_HOOK void __sanitizer_cov_load4(std::uint32_t* p) {
  strata::emulator::detail::note_plain_access(p);
  strata::emulator::detail::race::on_access(p, 4, false);
}
STRATA_RACE_HOOK void __sanitizer_cov_load8(std::uint64_t* p) {
  strata::emulator::detail::note_plain_access(p);
  strata::emulator::detail::race::on_access(p, 8, false);
}
STRATA_RACE_HOOK void __sanitizer_cov_load16(__int128* p) {
  strata::emulator::detail::note_plain_access(p);
  strata::emulator::detail::race::on_access(p, 16, false);
}
STRATA_RACE_HOOK void __sanitizer_cov_store1(std::uint8_t* p) {
  strata::emulator::detail::note_plain_access(p);
  strata::emulator::detail::race::on_access(p, 1, true);
}
STRATA_RACE_HOOK void __sanitizer_cov_store2(std::uint16_t* p) {
  strata::emulator::detail::note_plain_access(p);
  strata::emulator::detail::race::on_access(p, 2, true);
}
STRATA_RACE_HOOK void __sanitizer_cov_store4(std::uint32_t* p) {
  strata::emulator::detail::note_plain_access(p);
  strata::emulator::detail::race::on_access(p, 4, true);
}
STRATA_RACE_HOOK void __sanitizer_cov_store8(std::uint64_t* p) {
  strata::emulator::detail::note_plain_access(p);
  strata::emulator::detail::race::on_access(p, 8, true);
}
STRATA_RACE_HOOK void __sanitizer_cov_store16(__int128* p) {
  strata::emulator::detail::note_plain_access(p);
  strata::emulator::detail::race::on_access(p, 16, true);
}
// trace-pc-guard is the coverage mode the load/store tracing rides on; its callbacks do nothing here.
STRATA_RACE_HOOK void __sanitizer_cov_trace_pc_guard_init(std::uint32_t*, std::uint32_t*) {}
STRATA_RACE_HOOK void __sanitizer_cov_trace_pc_guard(std::uint32_t*) {}
}
#undef STRATA_RACE_HOOK
#endif
