// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/emulator/launch.hpp -- run a kernel on the CPU: every GPU thread a fiber, blocks (or whole
// clusters) spread over worker threads, all cores by default.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>
#include <numeric>
#include <vector>
#include <random>
#include <string>

#include "strata/arch/dispatch.hpp"
#include "strata/arch/target.hpp"
#include "strata/emulator/context.hpp"
#include "strata/emulator/detail/pool.hpp"
#include "strata/emulator/detail/scheduler.hpp"
#include "strata/emulator/options.hpp"
#include "strata/emulator/statistics.hpp"
#include "strata/hierarchy/kernel.hpp"
#include "strata/runtime/detail/kernel_launch.hpp"
#include "strata/runtime/launch_shape.hpp"

namespace strata::emulator {

namespace detail {

template <class Kernel, class Params>
struct launch_frame {
  const Kernel* kernel;
  const Params* params;
};

template <class Target, class Kernel, class Params>
void thread_entry(const void* frame, gpu_thread& t) {
  const auto& f = *static_cast<const launch_frame<Kernel, Params>*>(frame);
  context<Target> ctx(t);
  (*f.kernel)(ctx, *f.params);
}

/// Prepares worker `w` to run unit `unit` of the launch (clusters [unit * per, (unit + 1) * per)):
/// blocks, shared memory, cluster barriers, warps, threads.
inline void setup_unit(worker& w, const launch_info& L, long long unit, std::size_t stack,
                       void (*entry)(const void*, gpu_thread&), const void* frame) {
  const int per_cluster = L.cluster_blocks;
  const int nclusters = static_cast<int>(L.clusters_per_unit);
  const int nb = per_cluster * nclusters;
  const int nt = L.threads_per_block;
  const std::size_t stride = (L.shared_total + canary_bytes + 127) / 128 * 128;

  w.ensure_fibers(static_cast<std::size_t>(nb) * nt, stack);
  if (w.arena.size() < stride * nb + 128) w.arena.assign(stride * nb + 128, 0);
  unsigned char* base = w.arena.data();
  base += (128 - reinterpret_cast<std::uintptr_t>(base) % 128) % 128;
  w.warps.resize(static_cast<std::size_t>(nb) * L.warps_per_block);
  race::begin_unit(L.race_check, base, stride * static_cast<std::size_t>(nb), L.shared_total, L.warp_size);

  unit_state& u = w.unit;
  u.info = &L;
  u.blocks.resize(nb);
  u.threads.resize(static_cast<std::size_t>(nb) * nt);
  u.cluster_barriers.assign(nclusters, barrier_state{});
  u.runnable = nb * nt;
  u.exited = 0;
  u.idle_spins = 0;

  for (int ci = 0; ci < nclusters; ++ci) {
    const dims cc = L.clusters.unlinear(unit * nclusters + ci);
    barrier_state& cb = u.cluster_barriers[ci];
    cb.expected = per_cluster * nt;
    for (int r = 0; r < per_cluster; ++r) {
      const int ub = ci * per_cluster + r;
      block_state& b = u.blocks[ub];
      const dims in = L.cluster.unlinear(r);
      b.index = dims(cc.x * L.cluster.x + in.x, cc.y * L.cluster.y + in.y, cc.z * L.cluster.z + in.z);
      b.rank = L.grid.linear(b.index);
      b.unit_index = ub;
      b.cluster_rank = r;
      b.cluster_base = ci * per_cluster;
      b.cluster_barrier = &cb;
      b.chiplet = L.placement ? L.placement[b.rank] : arch::modelled_chiplet(L.chiplets, b.rank, L.blocks);
      b.threads = nt;
      b.smem = base + stride * ub;
      std::memset(b.smem, poison_byte, L.shared_total);
      std::memset(b.smem + L.shared_total, canary_byte, canary_bytes);
      b.barrier = barrier_state{};
      b.barrier.expected = nt;
      b.sync_epoch = 0;
      b.last_barrier = site{};
      b.bulk_pending.clear();
      b.wgmma_reads.clear();
      for (auto& nb_ : b.named) nb_ = block_state::named_barrier{};
      for (int wi = 0; wi < L.warps_per_block; ++wi) {
        warp_state& ws = w.warps[static_cast<std::size_t>(ub) * L.warps_per_block + wi];
        ws.lanes = std::min(L.warp_size, nt - wi * L.warp_size);
        ws.arrived = 0;
        ws.parity = 0;
        ws.sync_epoch = 0;
        reset_counting(ws, u.traffic, b.smem, L.shared_total, L.warp_size);
      }
      for (int i = 0; i < nt; ++i) {
        gpu_thread& t = *w.fibers[static_cast<std::size_t>(ub) * nt + i];
        t.entry = entry;
        t.launch = frame;
        t.unit = &u;
        t.block = &b;
        t.thread_rank = i;
        t.thread_index = L.block.unlinear(i);
        t.lane = i % L.warp_size;
        t.warp_index = i / L.warp_size;
        t.warp = &w.warps[static_cast<std::size_t>(ub) * L.warps_per_block + t.warp_index];
        t.waiting = wait_kind::none;
        t.runnable = true;
        t.abort = false;
        t.error = nullptr;
        reset_async(t);
        u.threads[static_cast<std::size_t>(ub) * nt + i] = &t;
      }
    }
  }
}

/// A seeded, balanced chiplet placement unlike the dispatch model: a random permutation of the blocks,
/// then the model's contiguous split of the permuted order.
inline std::vector<int> shuffled_placement(const arch::chiplet_topology& t, long long blocks, std::uint64_t seed) {
  std::vector<long long> order(static_cast<std::size_t>(blocks));
  std::iota(order.begin(), order.end(), 0LL);
  std::mt19937_64 g(seed ^ 0x5EED5EEDull);
  std::shuffle(order.begin(), order.end(), g);
  arch::chiplet_topology even = t;
  even.dispatch = arch::dispatch_model::contiguous;
  std::vector<int> chiplet(static_cast<std::size_t>(blocks));
  for (long long i = 0; i < blocks; ++i) chiplet[order[i]] = arch::modelled_chiplet(even, i, blocks);
  return chiplet;
}

/// The launch's record for a statistics_recorder: the workers' counts summed.
inline launch_statistics statistics_of(const launch_info& L, const std::vector<traffic_counts>& per_worker) {
  launch_statistics s;
  s.kernel = L.kernel;
  s.target = L.target;
  s.blocks = L.blocks;
  s.threads_per_block = L.threads_per_block;
  s.warp_size = L.warp_size;
  s.warps_per_block = L.warps_per_block;
  long long uncounted = 0;
  for (const traffic_counts& c : per_worker) {
    for (int k = 0; k < shared_access_kinds; ++k) s.shared.by_kind[k] += c.by_kind[k];
    uncounted += c.uncounted;
    s.shared.unpaired += c.unpaired;
  }
  // Only the race-check build's compiler reports plain loads and stores; elsewhere they are unseen.
  if (STRATA_RACE_CHECK) s.shared.uncounted = uncounted;
  return s;
}

/// The most threads a cooperative grid may have on the emulator: every one is a live fiber with its own
/// stack mapping, and Linux allows about 65k mappings per process.
inline constexpr long long max_cooperative_threads = 16384;

}  // namespace detail

/// Runs `kernel(ctx, params)` for every thread of `shape` as target `Target` and returns when all
/// blocks are done. Throws strata::invalid_argument for a bad shape and strata::emulator_error for a
/// kernel bug the emulator detects; the first error of a launch is reported, later blocks are skipped.
template <arch::target Target, class Kernel, class Params>
void launch(const options& opt, const launch_shape& shape, const Kernel& kernel, const Params& params) {
  strata::detail::validate_launch<Kernel, Target>(shape);
  strata::detail::validate_kernel_launch<Kernel, Params, Target>(shape);

  detail::launch_info L;
  L.kernel = kernel_name<Kernel>();
  L.target = std::string(Target::name);
  L.grid = shape.grid;
  L.block = shape.block;
  L.cluster = shape.cluster;
  L.clusters = dims(shape.grid.x / shape.cluster.x, shape.grid.y / shape.cluster.y, shape.grid.z / shape.cluster.z);
  L.blocks = shape.grid.volume();
  L.threads_per_block = static_cast<int>(shape.block.volume());
  L.cluster_blocks = static_cast<int>(shape.cluster.volume());
  L.warp_size = Target::warp_size;
  L.warps_per_block = (L.threads_per_block + L.warp_size - 1) / L.warp_size;
  L.static_shared = dynamic_shared_offset<Kernel>;
  L.dynamic_shared = shape.dynamic_shared_bytes;
  L.shared_total = L.static_shared + L.dynamic_shared;
  L.chiplets = Target::chiplets;
  L.cooperative = shape.cooperative;
  L.race_check = opt.race_check;
  statistics_recorder* const recorder = statistics_recorder::current();
  L.count_shared = recorder != nullptr;
#if !(defined(STRATA_RACE_CHECK) && STRATA_RACE_CHECK)
  if (opt.race_check)
    throw invalid_argument("strata::launch(" + L.kernel + ")", "options.race_check",
                           "needs the race-check build, whose compiler reports every load and store (CMake preset "
                           "'racecheck': clang with -fsanitize-coverage=trace-pc-guard,trace-loads,trace-stores "
                           "-DSTRATA_RACE_CHECK=1); this build has no such instrumentation");
#endif
  L.clusters_per_unit = shape.cooperative ? L.clusters.volume() : 1;
  if (shape.cooperative && L.blocks * L.threads_per_block > detail::max_cooperative_threads)
    throw invalid_argument("strata::launch(" + L.kernel + ")", "grid",
                           "of a cooperative launch has " + std::to_string(L.blocks * L.threads_per_block) +
                               " threads; the emulator runs at most " +
                               std::to_string(detail::max_cooperative_threads) +
                               " at once (every one co-resident); use a smaller persistent grid");
  std::vector<int> placement;
  if (opt.chiplets == placement::shuffled) {
    placement = detail::shuffled_placement(L.chiplets, L.blocks, opt.seed);
    L.placement = placement.data();
  }

  const detail::launch_frame<Kernel, Params> frame{&kernel, &params};
  auto* entry = &detail::thread_entry<Target, Kernel, Params>;
  const long long units = L.clusters.volume() / L.clusters_per_unit;
  const int workers = static_cast<int>(std::min<long long>(opt.resolved_workers(), units));
  const std::size_t stack = opt.resolved_stack_bytes();

  // Shared-memory traffic, counted per worker and summed at the end: sums of per-block counts, so
  // the same for any worker count and schedule.
  std::vector<detail::traffic_counts> traffic(L.count_shared ? static_cast<std::size_t>(workers) : 0);

  std::atomic<long long> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  long long first_error_unit = -1;
  std::mutex error_mutex;

  detail::worker_pool::instance().run(workers, [&](int id) {
    detail::worker& w = detail::worker::local();
    w.unit.traffic = L.count_shared ? &traffic[static_cast<std::size_t>(id)] : nullptr;
    for (;;) {
      if (failed.load(std::memory_order_relaxed)) return;
      const long long c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= units) return;
      try {
        detail::setup_unit(w, L, c, stack, entry, &frame);
        std::mt19937_64 rng(opt.seed * 0x9E3779B97F4A7C15ull + static_cast<unsigned long long>(c));
        detail::run_unit(w, w.unit, opt.order, rng);
      } catch (...) {
        std::lock_guard<std::mutex> lk(error_mutex);
        // Of the errors that occur, report the lowest-numbered unit's (fewer surprises across worker counts).
        if (first_error_unit < 0 || c < first_error_unit) {
          first_error = std::current_exception();
          first_error_unit = c;
        }
        failed.store(true, std::memory_order_relaxed);
        return;
      }
    }
  });
  if (first_error) std::rethrow_exception(first_error);
  if (recorder) recorder->record(detail::statistics_of(L, traffic));
}

}  // namespace strata::emulator
