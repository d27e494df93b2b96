// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/emulator/detail/scheduler.hpp -- runs the threads of one block (or one cluster of blocks) as
// fibers on one worker thread, and implements the barriers and warp collectives they meet.
//
// A fiber runs until it must wait (a barrier, a warp collective) or exits, then switches back to the
// scheduler, which resumes the next ready fiber in the chosen order. The last thread to arrive at a
// barrier releases the others and carries on without switching. When no fiber is ready and some have
// not exited, the block can never finish: the scheduler reports who waits where, at once.
#pragma once

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "strata/emulator/detail/launch_info.hpp"
#include "strata/emulator/detail/state.hpp"
#include "strata/emulator/options.hpp"
#include "strata/runtime/error.hpp"

namespace strata::emulator::detail {

namespace bctx = boost::context;

/// Bytes written after each block's shared memory; a kernel that writes past its shared memory
/// changes them and the launch fails with an error naming the kernel and block.
inline constexpr std::size_t canary_bytes = 64;
static_assert(canary_bytes == race::overrun_zone, "the race-check build reports accesses into the canary zone");
inline constexpr unsigned char canary_byte = 0xA5;
/// Shared memory starts filled with this byte (0xFFFFFFFF is a NaN as a float): reading shared
/// memory nobody wrote gives NaN or -1, not a plausible zero.
inline constexpr unsigned char poison_byte = 0xFF;

/// The blocks of one cluster (or one block) being run, and their threads.
struct unit_state {
  const launch_info* info = nullptr;
  std::vector<block_state> blocks;
  std::vector<barrier_state> cluster_barriers;  // one per cluster of the unit
  std::vector<gpu_thread*> threads;  // all threads of the unit, block-major
  int runnable = 0;                  // threads ready to run
  int exited = 0;
  long long idle_spins = 0;          // resumes that found a spin-wait's condition still false
  traffic_counts* traffic = nullptr; // this worker's shared-memory traffic counts (null: not counting)
};

inline std::string dims_str(dims d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

// ---- switching -----------------------------------------------------------------------------------

/// Suspends the calling GPU thread until the scheduler resumes it. If its block failed meanwhile,
/// it unwinds (abort_unit) back to the fiber's loop, running the destructors of kernel locals.
inline void suspend(gpu_thread& t) {
  switch_begin(&t.fake_stack, *t.scheduler_stack);
  t.caller = std::move(t.caller).resume();
  switch_end(t.fake_stack, t.scheduler_stack);
  if (t.abort) throw abort_unit{};
}

inline void make_ready(unit_state& u, gpu_thread& t) {
  if (!t.runnable) {
    t.runnable = true;
    ++u.runnable;
  }
  t.waiting = wait_kind::none;
}

inline void block_wait(unit_state& u, gpu_thread& t, wait_kind k, const site& where) {
  t.waiting = k;
  t.waiting_at = where;
  t.runnable = false;
  --u.runnable;
  suspend(t);
}

[[noreturn]] inline void kernel_bug(const gpu_thread& t, const std::string& what) {
  const launch_info& L = *t.unit->info;
  throw emulator_error("strata emulator: kernel '" + L.kernel + "' (as " + L.target + "), block " +
                       dims_str(t.block->index) + ", thread " + dims_str(t.thread_index) + ": " + what);
}

// ---- barriers -----------------------------------------------------------------------------------

/// Every warp of block `b` met at a barrier: their open shared-memory requests are complete.
inline void flush_block_requests(unit_state& u, const block_state& b) {
  if (!u.traffic) return;
  const launch_info& L = *u.info;
  const int base = b.unit_index * L.threads_per_block;
  for (int i = 0; i < L.threads_per_block; i += L.warp_size) flush_requests(*u.threads[base + i]->warp);
}

/// Block barrier (__syncthreads): every thread of the block must arrive at the same barrier.
inline void block_sync(gpu_thread& t, const site& where) {
  unit_state& u = *t.unit;
  barrier_state& b = t.block->barrier;
  if (b.arrived == 0) {
    b.where = where;
    b.first_thread = t.thread_rank;
  } else if (!(b.where == where)) {
    kernel_bug(t, "threads wait at different block barriers: this thread (rank " + std::to_string(t.thread_rank) +
                      ") at " + where.str() + ", thread rank " + std::to_string(b.first_thread) + " at " +
                      b.where.str() + ". Every thread of a block must reach the same block.sync().");
  }
  if (++b.arrived == b.expected) {
    b.arrived = 0;
    ++t.block->sync_epoch;
    t.block->last_barrier = where;
    flush_block_requests(u, *t.block);
    const int base = t.block->unit_index * u.info->threads_per_block;
    for (int i = 0; i < b.expected; ++i) make_ready(u, *u.threads[base + i]);
    return;  // the last arrival goes on without a switch
  }
  block_wait(u, t, wait_kind::block_barrier, where);
}

/// Cluster barrier: every thread of every block of the cluster.
inline void cluster_sync(gpu_thread& t, const site& where) {
  unit_state& u = *t.unit;
  barrier_state& b = *t.block->cluster_barrier;
  const int me = t.block->cluster_rank * u.info->threads_per_block + t.thread_rank;
  if (b.arrived == 0) {
    b.where = where;
    b.first_thread = me;
  } else if (!(b.where == where)) {
    kernel_bug(t, "threads wait at different cluster barriers: this thread at " + where.str() + ", another at " +
                      b.where.str() + ". Every thread of a cluster must reach the same cluster.sync().");
  }
  if (++b.arrived == b.expected) {
    b.arrived = 0;
    for (int r = 0; r < u.info->cluster_blocks; ++r) {
      block_state& cb = u.blocks[static_cast<std::size_t>(t.block->cluster_base + r)];
      ++cb.sync_epoch;
      cb.last_barrier = where;
      flush_block_requests(u, cb);
    }
    const int base = t.block->cluster_base * u.info->threads_per_block;
    for (int i = 0; i < b.expected; ++i) make_ready(u, *u.threads[base + i]);
    return;
  }
  block_wait(u, t, wait_kind::cluster_barrier, where);
}

/// A spin-wait: returns once pred() is true. In between, the thread yields to the others of its unit
/// (a raw spin loop would starve them: they share one OS thread). pred must not have side effects;
/// the scheduler relies on that to tell a wait that can never end from one that is merely early.
///
/// Only a resume that re-checks pred and finds it still false counts as idle (unit_state::idle_spins):
/// the resume that reached the wait did work on the way (arrivals, copies, another wait passed), so its
/// first false check is not idle. Counting it was wrong: a sweep in which every thread made progress
/// and then began a new wait looked idle, and the unit was reported as never finishing (found with the
/// Hopper GEMM's producer, whose barrier phase flipped in the same sweep).
template <class Pred>
void spin_until(gpu_thread& t, Pred&& pred, const site& where) {
  if (!pred()) {
    for (;;) {
      t.waiting = wait_kind::spin;
      t.waiting_at = where;
      suspend(t);  // stays runnable: the scheduler resumes it in its next sweep
      if (pred()) break;
      ++t.unit->idle_spins;
    }
  }
  t.waiting = wait_kind::none;
}

/// Lets the other threads of the unit run before this one goes on (it stays runnable). Where a step
/// may unblock another thread (an mbarrier phase completing), yielding there lets that thread act at
/// once, so the emulator's interleavings include the GPU's "the waiter saw it immediately" ones.
inline void yield_thread(gpu_thread& t, const site& where) {
  t.waiting = wait_kind::spin;
  t.waiting_at = where;
  suspend(t);
  t.waiting = wait_kind::none;
}

// ---- warp collectives ---------------------------------------------------------------------------

/// Every lane deposits `bytes` of its value and waits for all lanes of its warp; returns the slot bank
/// that now holds every lane's value. Two banks alternate: a lane cannot overwrite a bank another lane
/// still reads, because it must first pass the next collective, which waits for that lane.
inline int warp_rendezvous(gpu_thread& t, collective op, const void* value, std::size_t bytes,
                           const site& where) {
  unit_state& u = *t.unit;
  warp_state& w = *t.warp;
  if (w.arrived == 0) {
    w.op = op;
    w.where = where;
    w.first_lane = t.lane;
  } else if (w.op != op || !(w.where == where)) {
    kernel_bug(t, std::string("lanes of warp ") + std::to_string(t.warp_index) + " meet at different collectives: lane " +
                      std::to_string(t.lane) + " at " + to_string(op) + " (" + where.str() + "), lane " +
                      std::to_string(w.first_lane) + " at " + to_string(w.op) + " (" + w.where.str() +
                      "). Every lane of a warp must reach the same collective.");
  }
  const int bank = w.parity;
  if (bytes) std::memcpy(w.slots[bank][t.lane], value, bytes);
  if (++w.arrived == w.lanes) {
    w.arrived = 0;
    w.parity ^= 1;
    ++w.sync_epoch;
    flush_requests(w);
    const int base = t.block->unit_index * u.info->threads_per_block + t.warp_index * u.info->warp_size;
    for (int i = 0; i < w.lanes; ++i) {
      gpu_thread& x = *u.threads[base + i];
      if (&x != &t) make_ready(u, x);
    }
    return bank;
  }
  t.waiting_op = op;
  block_wait(u, t, wait_kind::warp_collective, where);
  return bank;
}

/// A warp-wide atom (MMA, ldmatrix, ...): every lane parks a pointer to its operands and results; the
/// last lane to arrive runs fn(io, lanes) once, with io[l] the pointer of lane l, then releases the
/// warp. The lanes' io objects live on their own fiber stacks, which stay valid while they wait.
template <class Fn>
void warp_gather(gpu_thread& t, const char* name, void* io, const site& where, Fn&& fn) {
  unit_state& u = *t.unit;
  warp_state& w = *t.warp;
  t.gather_io = io;
  t.gather_name = name;
  if (w.arrived == 0) {
    w.op = collective::gather;
    w.where = where;
    w.first_lane = t.lane;
  } else if (w.op != collective::gather || !(w.where == where)) {
    kernel_bug(t, std::string("lanes of warp ") + std::to_string(t.warp_index) + " meet at different collectives: lane " +
                      std::to_string(t.lane) + " at " + name + " (" + where.str() + "), lane " +
                      std::to_string(w.first_lane) + " at " + to_string(w.op) + " (" + w.where.str() +
                      "). Every lane of a warp must reach the same collective.");
  }
  if (++w.arrived == w.lanes) {
    w.arrived = 0;
    const int base = t.block->unit_index * u.info->threads_per_block + t.warp_index * u.info->warp_size;
    void* all[max_warp_size];
    for (int i = 0; i < w.lanes; ++i) all[i] = u.threads[base + i]->gather_io;
    ++w.sync_epoch;  // the atom runs after every lane arrived: ordered after their earlier accesses
    flush_requests(w);
    fn(all, w.lanes);
    for (int i = 0; i < w.lanes; ++i) {
      gpu_thread& x = *u.threads[base + i];
      if (&x != &t) make_ready(u, x);
    }
    return;
  }
  t.waiting_op = collective::gather;
  block_wait(u, t, wait_kind::warp_collective, where);
}

/// A warpgroup-wide atom (wgmma): as warp_gather, over the four consecutive warps (128 threads) of the
/// caller's warpgroup, whose first warp's index is a multiple of 4. The last thread to arrive runs
/// fn(io, 128) once, with io[i] the pointer of the group's thread i, then releases the group. A
/// warpgroup the block does not hold whole (fewer than 128 threads from its first warp on) is a
/// kernel bug: the GPU would wait forever for the missing threads.
template <class Fn>
void warpgroup_gather(gpu_thread& t, const char* name, void* io, const site& where, Fn&& fn) {
  unit_state& u = *t.unit;
  const auto& L = *u.info;
  constexpr int group_threads = 128;
  const int group = t.thread_rank / group_threads;
  if (L.warp_size != 32 || (group + 1) * group_threads > L.threads_per_block)
    kernel_bug(t, std::string(name) + " needs the whole warpgroup " + std::to_string(group) + " (threads " +
                      std::to_string(group * group_threads) + ".." + std::to_string(group * group_threads + 127) +
                      " of 32-lane warps), but the block has " + std::to_string(L.threads_per_block) +
                      " threads of warps of " + std::to_string(L.warp_size) +
                      " (make the block size a multiple of 128)");
  warp_state* warps = t.warp - t.warp_index;  // this block's warps
  warp_state& lead = warps[group * 4];
  t.gather_io = io;
  t.gather_name = name;
  if (lead.group_arrived == 0) {
    lead.group_where = where;
    lead.group_first = t.thread_rank;
  } else if (!(lead.group_where == where)) {
    kernel_bug(t, std::string("threads of warpgroup ") + std::to_string(group) +
                      " meet at different warpgroup collectives: thread " + std::to_string(t.thread_rank) + " at " +
                      name + " (" + where.str() + "), thread " + std::to_string(lead.group_first) + " at " +
                      lead.group_where.str() + ". Every thread of a warpgroup must reach the same wgmma.");
  }
  if (++lead.group_arrived == group_threads) {
    lead.group_arrived = 0;
    const int base = t.block->unit_index * L.threads_per_block + group * group_threads;
    void* all[group_threads];
    for (int i = 0; i < group_threads; ++i) all[i] = u.threads[base + i]->gather_io;
    for (int w = 0; w < 4; ++w) {
      ++warps[group * 4 + w].sync_epoch;  // ordered after every thread's earlier accesses
      flush_requests(warps[group * 4 + w]);
    }
    fn(all, group_threads);
    for (int i = 0; i < group_threads; ++i) {
      gpu_thread& x = *u.threads[base + i];
      if (&x != &t) make_ready(u, x);
    }
    return;
  }
  t.waiting_op = collective::group_gather;
  block_wait(u, t, wait_kind::warp_collective, where);
}

// ---- the report for a block that can never finish -----------------------------------------------

inline std::string rank_ranges(const std::vector<int>& r) {
  std::string s;
  for (std::size_t i = 0; i < r.size();) {
    std::size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1) ++j;
    if (!s.empty()) s += ",";
    s += std::to_string(r[i]);
    if (j > i) s += "-" + std::to_string(r[j]);
    i = j + 1;
  }
  return s;
}

inline std::string describe_wait(const gpu_thread& t) {
  switch (t.waiting) {
    case wait_kind::block_barrier: return "wait at block.sync() (" + t.waiting_at.str() + ")";
    case wait_kind::cluster_barrier: return "wait at cluster.sync() (" + t.waiting_at.str() + ")";
    case wait_kind::warp_collective:
      return std::string("wait at ") + (t.waiting_op == collective::gather || t.waiting_op == collective::group_gather ? t.gather_name
                                                                                             : to_string(t.waiting_op)) +
             " (" + t.waiting_at.str() + ")";
    case wait_kind::spin: return "spin-wait (" + t.waiting_at.str() + ") for a condition nobody can make true";
    case wait_kind::exited: return "have exited";
    default: return "are running";
  }
}

/// "threads 1-255 wait at block.sync() (k.hpp:34); thread 0 has exited", per block of the unit.
inline std::string deadlock_report(const unit_state& u) {
  const launch_info& L = *u.info;
  std::string msg = "strata emulator: kernel '" + L.kernel + "' (as " + L.target + ") can never finish: ";
  // Blocks whose threads all exited say nothing; a cooperative grid may hold many blocks, so list the
  // first few that are stuck and count the rest.
  constexpr int max_listed = 8;
  int listed = 0, unlisted = 0;
  for (std::size_t b = 0; b < u.blocks.size(); ++b) {
    bool stuck = false;
    for (int i = 0; i < L.threads_per_block; ++i)
      stuck = stuck || u.threads[b * L.threads_per_block + i]->waiting != wait_kind::exited;
    if (!stuck) continue;
    if (listed == max_listed) {
      ++unlisted;
      continue;
    }
    std::vector<std::pair<std::string, std::vector<int>>> groups;
    for (int i = 0; i < L.threads_per_block; ++i) {
      const gpu_thread& t = *u.threads[b * L.threads_per_block + i];
      const std::string what = describe_wait(t);
      auto it = std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == what; });
      if (it == groups.end()) groups.push_back({what, {i}});
      else it->second.push_back(i);
    }
    msg += (listed++ ? "; block " : "block ") + dims_str(u.blocks[b].index) + ": ";
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const auto& [what, ranks] = groups[g];
      std::string w = what;
      if (ranks.size() == 1 && w.rfind("have ", 0) == 0) w = "has " + w.substr(5);
      msg += (g ? "; " : "") + std::string(ranks.size() == 1 ? "thread " : "threads ") + rank_ranges(ranks) + " " + w;
    }
  }
  if (unlisted) msg += "; and " + std::to_string(unlisted) + " more blocks";
  msg += ". A barrier or warp collective must be reached by every thread of its scope"
         " (thread numbers are ranks in the block).";
  return msg;
}

// ---- the worker: fibers kept across blocks and launches -----------------------------------------

/// The body of every fiber: run a GPU thread's job, park, repeat. Fibers outlive blocks and launches;
/// they are only left (never destroyed while suspended) when their worker goes away.
inline bctx::fiber fiber_main(gpu_thread* t, bctx::fiber&& scheduler) {
  switch_end(nullptr, t->scheduler_stack);
  t->caller = std::move(scheduler);
  for (;;) {
    if (t->quit) break;
    if (!t->abort) {
      try {
        t->entry(t->launch, *t);
        // Copies still in flight when a thread exits land now, as they eventually do on the GPU
        // (its block's shared memory outlives the thread); a later reader still needs a barrier.
        land_all_async(*t);
        if (!t->mma_pending.empty())
          kernel_bug(*t, std::to_string(t->mma_pending.size()) +
                             " wgmma result(s) of this thread were never waited for: a wgmma.mma_async needs a "
                             "wgmma.commit_group and a wgmma.wait_group covering it before its accumulators are "
                             "read or the thread exits");
        if (t->bulk_stores_open || t->bulk_store_groups)
          kernel_bug(*t, "TMA store(s) of this thread were never waited for: tma_store needs a tma_store_commit and a "
                         "tma_store_wait covering it before the thread exits (its shared-memory source goes away)");
        count_lane_exit(*t);
      } catch (const abort_unit&) {
        // the block failed elsewhere; this thread was unwound
      } catch (...) {
        t->error = std::current_exception();
      }
    }
    // A failed thread's copies never land; the fiber is reused, so nothing may carry over.
    reset_async(*t);
    t->waiting = wait_kind::exited;
    if (t->runnable) {
      t->runnable = false;
      --t->unit->runnable;
    }
    ++t->unit->exited;
    switch_begin(&t->fake_stack, *t->scheduler_stack);
    t->caller = std::move(t->caller).resume();  // park; resumed with the next job (or to quit)
    switch_end(t->fake_stack, t->scheduler_stack);
  }
  switch_begin(nullptr, *t->scheduler_stack);  // leaving for good
  return std::move(t->caller);
}

/// Switches from the scheduler into GPU thread `t` until it suspends or parks.
inline void resume(gpu_thread& t, void** scheduler_fake_stack) {
  race::worker_state& rs = race::local();
  rs.current = &t;  // the race detector attributes accesses to the running GPU thread
  switch_begin(scheduler_fake_stack, t.stack);
  t.self = std::move(t.self).resume();
  switch_end(*scheduler_fake_stack, nullptr);
  rs.current = nullptr;
}

/// A stack allocator that remembers the stack it handed out (AddressSanitizer needs its bounds).
struct recorded_stack {
  bctx::protected_fixedsize_stack inner;
  gpu_thread* owner;
  bctx::stack_context allocate() {
    bctx::stack_context s = inner.allocate();
    owner->stack = {static_cast<const char*>(s.sp) - s.size, s.size};
    return s;
  }
  void deallocate(bctx::stack_context& s) noexcept { inner.deallocate(s); }
};

/// Per-OS-thread resources: a fiber per GPU thread of the largest unit seen, shared memory, warps.
struct worker {
  std::vector<std::unique_ptr<gpu_thread>> fibers;
  std::size_t stack_bytes = 0;
  std::vector<unsigned char> arena;
  std::vector<warp_state> warps;
  unit_state unit;
  stack_bounds own_stack;
  void* fake_stack = nullptr;

  void ensure_fibers(std::size_t n, std::size_t stack) {
    if (stack != stack_bytes) {
      release();
      stack_bytes = stack;
    }
    while (fibers.size() < n) {
      auto t = std::make_unique<gpu_thread>();
      gpu_thread* raw = t.get();
      raw->scheduler_stack = &own_stack;
      t->self = bctx::fiber(std::allocator_arg, recorded_stack{bctx::protected_fixedsize_stack(stack), raw},
                            [raw](bctx::fiber&& s) { return fiber_main(raw, std::move(s)); });
      fibers.push_back(std::move(t));
    }
  }

  /// Lets every started fiber leave its loop and return, so no stack is abandoned mid-frame.
  void release() {
    for (auto& t : fibers) {
      if (!t->self) continue;
      t->quit = true;  // a parked or never-started fiber checks this first and returns
      resume(*t, &fake_stack);
    }
    fibers.clear();
  }

  ~worker() { release(); }

  static worker& local() {
    thread_local worker w;
    return w;
  }
};

/// Unwinds every thread of a failed unit that has not exited, back to its fiber's loop.
inline void abort_unit_threads(worker& w, unit_state& u) {
  for (gpu_thread* t : u.threads) t->abort = true;
  for (gpu_thread* t : u.threads)
    if (t->waiting != wait_kind::exited) resume(*t, &w.fake_stack);
}

/// Runs every thread of `u` to completion in the order `order`; throws strata::emulator_error for a
/// thread that threw, a barrier that can never complete, or a shared-memory overrun.
inline void run_unit(worker& w, unit_state& u, schedule order, std::mt19937_64& rng) {
  const int n = static_cast<int>(u.threads.size());
  std::vector<int> sequence(n);
  std::iota(sequence.begin(), sequence.end(), 0);
  if (order == schedule::reverse) std::reverse(sequence.begin(), sequence.end());
  // A sweep in which every resume only re-checked a spin-wait that stayed false changed no memory: if
  // the unit holds the whole grid (or the grid is one unit) nothing else can, so the next sweep would
  // be identical and the unit can never finish. Otherwise blocks on other workers may still release it,
  // so only a long stretch of such sweeps counts.
  const bool alone = u.info->cooperative || u.info->clusters.volume() == 1;
  auto idle_since = std::chrono::steady_clock::time_point{};
  while (u.exited < n) {
    if (order == schedule::random) std::shuffle(sequence.begin(), sequence.end(), rng);
    long long resumes = 0;
    const long long spins_before = u.idle_spins;
    const int exited_before = u.exited;
    for (int i : sequence) {
      gpu_thread& t = *u.threads[i];
      if (!t.runnable) continue;
      ++resumes;
      counting_thread = u.traffic ? &t : nullptr;  // for the race-check build's uncounted accesses
      resume(t, &w.fake_stack);
      counting_thread = nullptr;
      if (!race::local().first_race.empty()) {
        std::string report = "strata emulator: kernel '" + u.info->kernel + "' (as " + u.info->target + "), block " +
                             dims_str(t.block->index) + ": " + race::local().first_race;
        race::local().first_race.clear();
        abort_unit_threads(w, u);
        throw emulator_error(report);
      }
      if (t.error) {
        std::exception_ptr e = t.error;
        t.error = nullptr;
        abort_unit_threads(w, u);
        try {
          std::rethrow_exception(e);
        } catch (const emulator_error&) {
          throw;
        } catch (const std::exception& ex) {
          throw emulator_error("strata emulator: kernel '" + u.info->kernel + "', block " + dims_str(t.block->index) +
                               ", thread " + dims_str(t.thread_index) + " threw: " + ex.what());
        } catch (...) {
          throw emulator_error("strata emulator: kernel '" + u.info->kernel + "', block " + dims_str(t.block->index) +
                               ", thread " + dims_str(t.thread_index) + " threw a non-standard exception");
        }
      }
    }
    bool stuck = u.exited < n && u.runnable == 0;
    if (!stuck && resumes > 0 && u.idle_spins - spins_before == resumes && u.exited == exited_before) {
      if (alone) {
        stuck = true;
      } else {
        const auto now = std::chrono::steady_clock::now();
        if (idle_since == decltype(idle_since){}) idle_since = now;
        stuck = now - idle_since > std::chrono::seconds(10);
      }
    } else {
      idle_since = {};
    }
    if (stuck) {
      std::string report = deadlock_report(u);
      abort_unit_threads(w, u);
      throw emulator_error(report);
    }
  }
  // Shared memory overruns: each block's canary must be intact.
  for (const block_state& b : u.blocks) {
    const unsigned char* c = b.smem + u.info->shared_total;
    for (std::size_t i = 0; i < canary_bytes; ++i)
      if (c[i] != canary_byte)
        throw emulator_error("strata emulator: kernel '" + u.info->kernel + "', block " + dims_str(b.index) +
                             " wrote past the end of its shared memory (" + std::to_string(u.info->shared_total) +
                             " bytes: " + std::to_string(u.info->static_shared) + " static + " +
                             std::to_string(u.info->dynamic_shared) + " dynamic), at byte " +
                             std::to_string(u.info->shared_total + i));
  }
}

}  // namespace strata::emulator::detail
