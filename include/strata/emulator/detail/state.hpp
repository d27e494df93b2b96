// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/emulator/detail/state.hpp -- what the emulator keeps per GPU thread, warp, block and cluster.
#pragma once

#include <boost/context/fiber.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <source_location>
#include <string>
#include <vector>

#include "strata/emulator/detail/asan.hpp"
#include "strata/emulator/statistics.hpp"
#include "strata/hierarchy/dims.hpp"

namespace strata::emulator::detail {

/// What a suspended GPU thread waits for. `none` while it runs or is ready to run.
enum class wait_kind : std::uint8_t { none, block_barrier, cluster_barrier, warp_collective, spin, exited };

/// Kinds of warp collective, so that lanes meeting at different collectives are told apart.
enum class collective : std::uint8_t { sync, shfl, shfl_xor, shfl_up, shfl_down, ballot, any, all, gather, group_gather };

constexpr const char* to_string(collective c) {
  switch (c) {
    case collective::sync: return "warp.sync()";
    case collective::shfl: return "warp.shfl()";
    case collective::shfl_xor: return "warp.shfl_xor()";
    case collective::shfl_up: return "warp.shfl_up()";
    case collective::shfl_down: return "warp.shfl_down()";
    case collective::ballot: return "warp.ballot()";
    case collective::any: return "warp.any()";
    case collective::all: return "warp.all()";
    case collective::gather: return "a warp-wide atom";
    case collective::group_gather: return "a warpgroup-wide atom";
  }
  return "warp collective";
}

#if defined(__clang__)
/// Where a barrier or collective was called, taken as a default argument (`here loc = here::current()`).
/// Not std::source_location under clang: clang 15 (the oldest clang we test) evaluates the consteval
/// std::source_location::current() of a default argument where the default argument is written, so
/// every block.sync() of every kernel was "context.hpp:97", deadlock reports named no kernel line, and
/// two different barriers looked like one (found by building the tests with clang 15). The builtins are
/// not consteval and are evaluated at each call. GCC has no __builtin_COLUMN and no such bug.
struct call_site {
  const char* file = "";
  unsigned line = 0, column = 0;
  static constexpr call_site current(const char* f = __builtin_FILE(), unsigned l = __builtin_LINE(),
                                     unsigned c = __builtin_COLUMN()) noexcept {
    return {f, l, c};
  }
};
#else
using call_site = std::source_location;
#endif

/// A source position: where a thread waits. Two waits match when file and line and column match.
struct site {
  const char* file = "";
  unsigned line = 0, column = 0;
  site() = default;
  site(const std::source_location& l) : file(l.file_name()), line(l.line()), column(l.column()) {}
#if defined(__clang__)
  site(const call_site& l) : file(l.file), line(l.line), column(l.column) {}
#endif
  friend bool operator==(const site& a, const site& b) {
    return a.line == b.line && a.column == b.column && std::strcmp(a.file, b.file) == 0;
  }
  std::string str() const {
    const char* base = std::strrchr(file, '/');
    return std::string(base ? base + 1 : file) + ":" + std::to_string(line);
  }
};

/// The largest value a warp collective exchanges per lane (the GPU's shuffles move 32-bit words;
/// we allow anything trivially copyable up to this size, split into words on the GPU).
inline constexpr std::size_t max_exchange_bytes = 32;
inline constexpr int max_warp_size = 64;

/// What one worker counted of a launch's shared-memory traffic (wavefronts.hpp); summed at its end.
struct traffic_counts {
  access_traffic by_kind[shared_access_kinds];
  long long uncounted = 0;  // plain accesses seen by the race-check build's hooks
  long long unpaired = 0;
};

/// A warp request being assembled from its lanes' k-th counted access (wavefronts.hpp).
struct pending_request {
  std::uint64_t lanes = 0;  // bit l: lane l contributed; 0: free
  int bytes = 0;
  shared_access kind = shared_access::cp_async;
  std::uint32_t offset[max_warp_size];  // shared-memory byte offset per lane, bank_model::inactive if none
};

struct warp_state {
  int lanes = 0;       // lanes that exist (a partial last warp has fewer than the warp size)
  int arrived = 0;     // lanes waiting at the current collective
  int parity = 0;      // which slot bank the current collective fills
  collective op = collective::sync;
  site where;
  int first_lane = 0;  // the lane that opened the current collective (for messages)
  std::uint32_t sync_epoch = 0;  // completed collectives (the race detector's warp-level order)
  alignas(16) unsigned char slots[2][max_warp_size][max_exchange_bytes];
  // A warpgroup-wide atom (wgmma), kept in the first warp of each group of four.
  int group_arrived = 0;   // threads of the warpgroup waiting in it
  site group_where;        // where the first of them waits
  int group_first = 0;     // that thread's rank in the block

  // Shared-memory wavefront counting (wavefronts.hpp), only while a statistics_recorder asks for it.
  traffic_counts* traffic = nullptr;  // this worker's counts; null: counting is off
  const unsigned char* smem = nullptr;  // the block's shared memory and its size
  std::size_t smem_bytes = 0;
  int warp_size = 32;                    // the target's (a partial last warp has fewer lanes)
  std::uint64_t exited = 0;              // bit l: lane l has exited
  int pending_used = 0;                  // requests opened since the last collective or barrier
  std::vector<pending_request> pending;  // index k: the k-th counted access of each lane
  std::uint32_t next_access[max_warp_size] = {};  // per lane: its next k
};

struct barrier_state {
  int expected = 0;
  int arrived = 0;
  site where;
  int first_thread = 0;
};

struct block_state {
  dims index;
  long long rank = 0;     // linear block id in the grid
  int unit_index = 0;     // position among the blocks of the unit being run (its threads start there)
  int cluster_rank = 0;   // linear rank inside its cluster
  int cluster_base = 0;   // unit_index of its cluster's rank-0 block
  barrier_state* cluster_barrier = nullptr;
  int chiplet = 0;
  int threads = 0;
  unsigned char* smem = nullptr;
  barrier_state barrier;
  std::uint32_t sync_epoch = 0;  // completed block and cluster barriers (the race detector's order)
  site last_barrier;             // where the last completed block barrier was (for race reports)
  std::vector<warp_state>* warps = nullptr;  // owned by the worker, reused
  int warp_base = 0;                         // index of this block's first warp in *warps

  /// Bulk copies (TMA, copy/tma.hpp) into this block's shared memory that have not landed: each lands,
  /// and completes its bytes on its mbarrier, when a thread waits on that barrier (arch/mbarrier.hpp).
  /// Meanwhile the destination holds poison.
  struct pending_bulk {
    unsigned char* dst;
    const void* barrier;              // the mbarrier's word
    std::vector<unsigned char> data;  // the shared-memory image that lands at dst
  };
  std::vector<pending_bulk> bulk_pending;

  /// The 15 named barriers (bar.sync / bar.arrive with ids 1..15; arch/named_barrier.hpp; id 0 is
  /// block().sync()'s). A barrier completes when `expected` threads have arrived, waiting or not;
  /// `generation` counts completions, so a waiting thread waits for it to move.
  struct named_barrier {
    int expected = 0;  // the thread count of the barrier's current round (0: no round open)
    int arrived = 0;
    std::uint32_t generation = 0;
  };
  named_barrier named[16];

  /// Shared-memory spans that issued wgmmas read and that no thread of the issuing warpgroup has
  /// waited for yet (mma/wgmma.hpp). On the GPU the tensor cores may read them until that wait, so a
  /// TMA copy into one of them (copy/tma.hpp) is a kernel bug: a stage released too early. `id` ties
  /// a span to the results it produces (gpu_thread::pending_mma::operands); a span ends when the
  /// first of them lands.
  struct wgmma_operands {
    const unsigned char* lo;
    const unsigned char* hi;  // one past the last byte read
    std::uint64_t id;
  };
  std::vector<wgmma_operands> wgmma_reads;
  std::uint64_t wgmma_issued = 0;  // ids
};

struct unit_state;

/// One GPU thread: its fiber, where it is in the hierarchy, and what it waits for.
struct gpu_thread {
  boost::context::fiber self;    // the suspended fiber (empty while it runs)
  boost::context::fiber caller;  // the scheduler, while the fiber runs
  void (*entry)(const void* launch, gpu_thread& self) = nullptr;
  const void* launch = nullptr;

  unit_state* unit = nullptr;
  block_state* block = nullptr;
  warp_state* warp = nullptr;
  dims thread_index;
  int thread_rank = 0;  // in the block
  int lane = 0;
  int warp_index = 0;

  wait_kind waiting = wait_kind::none;
  collective waiting_op = collective::sync;
  site waiting_at;
  bool runnable = false;
  bool abort = false;  // the unit failed: unwind this thread back to its fiber's loop
  bool quit = false;   // the worker is going away: leave the fiber's loop
  std::exception_ptr error;

  const char* gather_name = "";    // the atom this thread waits in (collective::gather), for messages
  void* gather_io = nullptr;       // this lane's operands and results while it waits in a gather
  int in_counted_atom = 0;         // > 0 inside an atom whose shared accesses are counted (wavefronts.hpp)

  /// Asynchronous copies (cp.async, buffer loads to LDS) this thread issued that have not landed yet:
  /// they land at the wait that covers their group, not at issue (copy/ implements the atoms).
  struct pending_copy {
    void* dst;
    const void* src;     // null: fill `bytes` of zeros (an out-of-bounds, predicated-off copy)
    std::size_t bytes;
  };
  std::vector<pending_copy> async_pending;  // issued, in order
  std::vector<std::size_t> async_groups;    // end index into async_pending of each committed group

  /// Results of asynchronous warpgroup MMAs (wgmma.mma_async) this thread issued that have not landed
  /// in its accumulator registers yet: they land at the wgmma.wait_group that covers their group
  /// (mma/wgmma.hpp implements the atom). Meanwhile the registers hold NaN.
  struct pending_mma {
    void* acc;                 // the thread's accumulator fragment
    std::size_t bytes;         // its size
    std::uint32_t group;       // wgmma group: the count of commits before its issue
    std::array<std::uint32_t, 128> value;  // what lands (a wgmma writes at most 128 32-bit registers)
    std::uint64_t operands = 0;            // its block_state::wgmma_operands id (0: none)
  };
  std::uint32_t bulk_stores_open = 0;    // TMA stores (copy/tma.hpp) issued since the last bulk commit
  std::uint32_t bulk_store_groups = 0;   // committed TMA store groups no bulk wait has covered yet
  std::vector<pending_mma> mma_pending;  // issued, in order
  std::uint32_t mma_groups = 0;          // wgmma.commit_group calls so far
  bool mma_fenced = false;  // a wgmma.fence since the thread started or last landed results

  stack_bounds stack;             // this fiber's stack (for AddressSanitizer)
  stack_bounds* scheduler_stack;  // the worker thread's stack (for AddressSanitizer)
  void* fake_stack = nullptr;
};

/// Forgets a thread's asynchronous state (cp.async copies, wgmma results): when its fiber is set up
/// for a block, and when it ends (a failed thread's copies never land; the fiber is reused).
inline void reset_async(gpu_thread& t) {
  t.async_pending.clear();
  t.async_groups.clear();
  t.mma_pending.clear();
  t.mma_groups = 0;
  t.mma_fenced = false;
  t.bulk_stores_open = 0;
  t.bulk_store_groups = 0;
}

namespace race {
// The race detector records the copies as writes of the thread that waits for them (race_check.hpp,
// included at the end of this file).
inline void on_access(const void* p, std::size_t bytes, bool write);
}  // namespace race

/// Lands the `groups` oldest committed groups of `t`'s asynchronous copies, in issue order (what
/// cp.async.wait_group does for the groups it covers). copy/cp_async.hpp implements the atoms.
inline void land_async_groups(gpu_thread& t, std::size_t groups) {
  if (groups == 0 || t.async_groups.empty()) return;
  if (groups > t.async_groups.size()) groups = t.async_groups.size();
  const std::size_t end = t.async_groups[groups - 1];
  ++t.in_counted_atom;  // the writes were counted at issue (cp_async.hpp), not as plain stores here
  for (std::size_t i = 0; i < end; ++i) {
    const gpu_thread::pending_copy& c = t.async_pending[i];
    race::on_access(c.dst, c.bytes, true);
    if (c.src) std::memmove(c.dst, c.src, c.bytes);
    else std::memset(c.dst, 0, c.bytes);
  }
  --t.in_counted_atom;
  t.async_pending.erase(t.async_pending.begin(), t.async_pending.begin() + static_cast<std::ptrdiff_t>(end));
  t.async_groups.erase(t.async_groups.begin(), t.async_groups.begin() + static_cast<std::ptrdiff_t>(groups));
  for (std::size_t& g : t.async_groups) g -= end;
}

/// Lands every outstanding copy of `t`, committed or not (cp.async.wait_all; a thread that exits).
inline void land_all_async(gpu_thread& t) {
  t.async_groups.push_back(t.async_pending.size());
  land_async_groups(t, t.async_groups.size());
}

/// Thrown inside a suspended GPU thread to unwind it when its block has failed.
struct abort_unit {};

}  // namespace strata::emulator::detail

#include "strata/emulator/detail/race_check.hpp"
#include "strata/emulator/detail/wavefronts.hpp"
