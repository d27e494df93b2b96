// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Emulator speed: the cost of a fiber switch, of a block barrier and of a warp collective, and the
// throughput of a real reduction kernel. Run: build/<preset>/benchmark/strata_bench_emulator
//
// "Barrier-crossing fiber switches": at a block barrier each GPU thread switches out to the scheduler
// and is later switched back in, so one thread crossing one barrier costs two fiber switches.
#include <benchmark/benchmark.h>

#include <boost/context/fiber.hpp>

#include <vector>

#include "../test/kernels/block_reduce.hpp"
#include "strata/strata.hpp"

namespace {

namespace arch = strata::arch;
namespace bctx = boost::context;

/// Raw Boost.Context ping-pong: the floor under every emulator operation.
void raw_fiber_switch(benchmark::State& state) {
  bool stop = false;
  bctx::fiber f{[&stop](bctx::fiber&& main) {
    while (!stop) main = std::move(main).resume();
    return std::move(main);
  }};
  for (auto _ : state) f = std::move(f).resume();  // two switches: in and out
  stop = true;
  f = std::move(f).resume();
  state.counters["switches/s"] = benchmark::Counter(2.0 * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(raw_fiber_switch);

struct loop_params {
  int iterations;
  int* sink;
};

struct barrier_loop_kernel {
  template <class Ctx>
  void operator()(Ctx& ctx, const loop_params& p) const {
    for (int i = 0; i < p.iterations; ++i) ctx.block().sync();
    if (ctx.block().thread_rank() == 0) p.sink[ctx.block().rank()] = p.iterations;
  }
};

struct shuffle_loop_kernel {
  template <class Ctx>
  void operator()(Ctx& ctx, const loop_params& p) const {
    int v = ctx.lane().index();
    for (int i = 0; i < p.iterations; ++i) v = ctx.warp().shfl_xor(v, 1 + (i & 15));
    p.sink[ctx.block().rank() * ctx.block().size() + ctx.block().thread_rank()] = v;
  }
};

/// One worker, one block of `threads` threads crossing 1000 barriers: per-core cost.
void block_barrier(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const int iterations = 1000;
  strata::stream s(strata::emulator::options{.workers = 1});
  strata::device_buffer<int> sink(1);
  for (auto _ : state)
    strata::launch(s, {.grid = 1, .block = threads}, barrier_loop_kernel{}, loop_params{iterations, sink.data()});
  const double crossings = static_cast<double>(state.iterations()) * iterations * threads;
  state.counters["barrier crossings/s"] = benchmark::Counter(crossings, benchmark::Counter::kIsRate);
  state.counters["fiber switches/s"] = benchmark::Counter(2 * crossings, benchmark::Counter::kIsRate);
  state.counters["time/barrier"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * iterations, benchmark::Counter::kIsRate |
                                                                                   benchmark::Counter::kInvert);
}
BENCHMARK(block_barrier)->Arg(32)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);

/// One worker, one block, warp shuffles at warp size 32 (host target) or 64 (gfx942).
template <class Target>
struct shuffle_loop_as : shuffle_loop_kernel {
  using target = Target;
};
template <class Target>
void warp_shuffle(benchmark::State& state) {
  const int threads = 256, iterations = 1000;
  strata::stream s(strata::emulator::options{.workers = 1});
  strata::device_buffer<int> sink(threads);
  for (auto _ : state)
    strata::launch(s, {.grid = 1, .block = threads}, shuffle_loop_as<Target>{}, loop_params{iterations, sink.data()});
  const double lane_ops = static_cast<double>(state.iterations()) * iterations * threads;
  state.counters["lane shuffles/s"] = benchmark::Counter(lane_ops, benchmark::Counter::kIsRate);
}
BENCHMARK(warp_shuffle<arch::host>)->Unit(benchmark::kMillisecond);
BENCHMARK(warp_shuffle<arch::gfx942>)->Unit(benchmark::kMillisecond);

/// The block reduction test kernel over 2^22 floats, on `workers` workers.
void reduction_kernel(benchmark::State& state) {
  const int workers = static_cast<int>(state.range(0));
  const long long n = 1 << 22;
  const int grid = 256;
  strata::stream s(strata::emulator::options{.workers = workers});
  std::vector<float> h(n, 1.f);
  strata::device_buffer<float> in(n), out(grid);
  strata::copy_to_device(s, in.data(), h.data(), n);
  for (auto _ : state)
    strata::launch(s, {.grid = grid, .block = 256}, strata_test::block_reduce_kernel<arch::host>{},
                   strata_test::reduce_params{in.data(), out.data(), n});
  state.SetBytesProcessed(static_cast<long long>(state.iterations()) * n * static_cast<long long>(sizeof(float)));
  state.counters["elements/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * n, benchmark::Counter::kIsRate);
}
BENCHMARK(reduction_kernel)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
