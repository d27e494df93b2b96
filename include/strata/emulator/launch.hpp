// strata/emulator/launch.hpp -- run a kernel on the CPU: every GPU thread a fiber, blocks (or whole
// clusters) spread over worker threads, all cores by default.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>
#include <random>
#include <string>

#include "strata/arch/dispatch.hpp"
#include "strata/arch/target.hpp"
#include "strata/emulator/context.hpp"
#include "strata/emulator/detail/pool.hpp"
#include "strata/emulator/detail/scheduler.hpp"
#include "strata/emulator/options.hpp"
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

/// Prepares worker `w` to run cluster `c` of the launch: blocks, shared memory, warps, threads.
inline void setup_unit(worker& w, const launch_info& L, long long c, std::size_t stack,
                       void (*entry)(const void*, gpu_thread&), const void* frame) {
  const int nb = L.cluster_blocks;
  const int nt = L.threads_per_block;
  const std::size_t stride = (L.shared_total + canary_bytes + 127) / 128 * 128;

  w.ensure_fibers(static_cast<std::size_t>(nb) * nt, stack);
  if (w.arena.size() < stride * nb + 128) w.arena.assign(stride * nb + 128, 0);
  unsigned char* base = w.arena.data();
  base += (128 - reinterpret_cast<std::uintptr_t>(base) % 128) % 128;
  w.warps.resize(static_cast<std::size_t>(nb) * L.warps_per_block);

  unit_state& u = w.unit;
  u.info = &L;
  u.blocks.resize(nb);
  u.threads.resize(static_cast<std::size_t>(nb) * nt);
  u.cluster_barrier = barrier_state{};
  u.cluster_barrier.expected = nb * nt;
  u.runnable = nb * nt;
  u.exited = 0;

  const dims cc = L.clusters.unlinear(c);
  for (int r = 0; r < nb; ++r) {
    block_state& b = u.blocks[r];
    const dims in = L.cluster.unlinear(r);
    b.index = dims(cc.x * L.cluster.x + in.x, cc.y * L.cluster.y + in.y, cc.z * L.cluster.z + in.z);
    b.rank = L.grid.linear(b.index);
    b.cluster_rank = r;
    b.chiplet = arch::modelled_chiplet(L.chiplets, b.rank, L.blocks);
    b.threads = nt;
    b.smem = base + stride * r;
    std::memset(b.smem, poison_byte, L.shared_total);
    std::memset(b.smem + L.shared_total, canary_byte, canary_bytes);
    b.barrier = barrier_state{};
    b.barrier.expected = nt;
    for (int wi = 0; wi < L.warps_per_block; ++wi) {
      warp_state& ws = w.warps[static_cast<std::size_t>(r) * L.warps_per_block + wi];
      ws.lanes = std::min(L.warp_size, nt - wi * L.warp_size);
      ws.arrived = 0;
      ws.parity = 0;
    }
    for (int i = 0; i < nt; ++i) {
      gpu_thread& t = *w.fibers[static_cast<std::size_t>(r) * nt + i];
      t.entry = entry;
      t.launch = frame;
      t.unit = &u;
      t.block = &b;
      t.thread_rank = i;
      t.thread_index = L.block.unlinear(i);
      t.lane = i % L.warp_size;
      t.warp_index = i / L.warp_size;
      t.warp = &w.warps[static_cast<std::size_t>(r) * L.warps_per_block + t.warp_index];
      t.waiting = wait_kind::none;
      t.runnable = true;
      t.abort = false;
      t.error = nullptr;
      t.async_pending.clear();
      t.async_groups.clear();
      u.threads[static_cast<std::size_t>(r) * nt + i] = &t;
    }
  }
}

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

  const detail::launch_frame<Kernel, Params> frame{&kernel, &params};
  auto* entry = &detail::thread_entry<Target, Kernel, Params>;
  const long long units = L.clusters.volume();
  const int workers = static_cast<int>(std::min<long long>(opt.resolved_workers(), units));
  const std::size_t stack = opt.resolved_stack_bytes();

  std::atomic<long long> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  long long first_error_unit = -1;
  std::mutex error_mutex;

  detail::worker_pool::instance().run(workers, [&](int) {
    detail::worker& w = detail::worker::local();
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
}

}  // namespace strata::emulator
