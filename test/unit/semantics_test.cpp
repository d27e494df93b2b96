// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The emulator's rules: barriers that cannot complete, divergent collectives, shared-memory overruns,
// exceptions from GPU threads, launch validation, atomics, dynamic shared memory, shuffle edge cases.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>

#include "../kernels/block_reduce.hpp"
#include "../kernels/missing_barrier.hpp"
#include "support.hpp"

using namespace strata_test;
namespace arch = strata::arch;
using Catch::Matchers::Contains;

template <class K>
std::string launch_error(strata::launch_shape shape, const K& k, int* out) {
  strata::stream s;
  try {
    strata::launch(s, shape, k, bug_params{out});
  } catch (const strata::emulator_error& e) {
    return e.what();
  }
  return "no error";
}

TEST_CASE("a thread that exits before a block barrier is reported at once, never a hang", "[emulator][deadlock]") {
  strata::device_buffer<int> out(1024);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string msg = launch_error({.grid = 64, .block = 1024}, early_exit_kernel<arch::host>{}, out.data());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK_THAT(msg, Contains("early_exit_kernel"));
  CHECK_THAT(msg, Contains("block (0,0,0)") || Contains("block ("));
  CHECK_THAT(msg, Contains("thread 0 has exited"));
  CHECK_THAT(msg, Contains("threads 1-1023 wait at block.sync() (missing_barrier.hpp:"));
  CHECK(seconds < 10.0);
}

TEST_CASE("threads waiting at two different barriers are reported with both lines", "[emulator][deadlock]") {
  strata::device_buffer<int> out(256);
  const std::string msg = launch_error({.grid = 2, .block = 256}, divergent_barrier_kernel<arch::sm80>{}, out.data());
  CHECK_THAT(msg, Contains("divergent_barrier_kernel"));
  CHECK_THAT(msg, Contains("different block barriers"));
  CHECK_THAT(msg, Contains("missing_barrier.hpp:45"));
  CHECK_THAT(msg, Contains("missing_barrier.hpp:48"));
}

TEST_CASE("a warp collective skipped by half the warp is reported", "[emulator][deadlock][warp]") {
  strata::device_buffer<int> out(256);
  const std::string msg32 = launch_error({.grid = 1, .block = 64}, divergent_shuffle_kernel<arch::sm80>{}, out.data());
  CHECK_THAT(msg32, Contains("threads 0-15,32-47 wait at warp.shfl_xor()"));
  CHECK_THAT(msg32, Contains("threads 16-31,48-63 have exited"));
  const std::string msg64 = launch_error({.grid = 1, .block = 64}, divergent_shuffle_kernel<arch::gfx90a>{}, out.data());
  CHECK_THAT(msg64, Contains("threads 0-31 wait at warp.shfl_xor()"));
}

namespace {

struct two_collectives_kernel {
  static constexpr const char* name = "two_collectives_kernel";
  template <class Ctx>
  void operator()(Ctx& ctx, const bug_params& p) const {
    int v = ctx.lane().index();
    if (v == 0) v = ctx.warp().shfl(v, 1);  // lane 0 here ...
    else v = ctx.warp().shfl_xor(v, 1);     // ... the others there
    p.out[ctx.block().thread_rank()] = v;
  }
};

// warp.whole(): a promise that the warp has all its lanes (CUDA then shuffles with the constant full
// mask). The block of 48 threads has a partial second warp.
struct whole_warp_kernel {
  static constexpr const char* name = "whole_warp_kernel";
  template <class Ctx>
  void operator()(Ctx& ctx, const bug_params& p) const {
    const auto warp = ctx.warp().whole();
    p.out[ctx.block().thread_rank()] = warp.shfl_xor(ctx.lane().index(), 1);
  }
};

struct overrun_kernel {
  static constexpr const char* name = "overrun_kernel";
  struct shared_storage {
    float v[32];
  };
  template <class Ctx>
  void operator()(Ctx& ctx, const bug_params&) const {
    float* v = ctx.template shared<shared_storage>().v;
    v[ctx.block().thread_rank()] = 1.f;  // 64 threads write 32 floats: half run past the end
  }
};

struct throwing_kernel {
  static constexpr const char* name = "throwing_kernel";
  template <class Ctx>
  void operator()(Ctx& ctx, const bug_params&) const {
    if (ctx.block().rank() == 2 && ctx.block().thread_rank() == 5) throw std::runtime_error("bad thing");
    ctx.block().sync();
  }
};

struct big_shared_kernel {
  struct shared_storage {
    char bytes[40 * 1024];
  };
  template <class Ctx>
  void operator()(Ctx&, const bug_params&) const {}
};

struct bounded_kernel {
  static constexpr const char* name = "bounded_kernel";
  static constexpr int max_threads_per_block = 128;  // launch bounds: the GPU builds rely on it
  template <class Ctx>
  void operator()(Ctx&, const bug_params&) const {}
};

/// The CUDA trampoline's second launch bound: the kernel's min_blocks_per_multiprocessor, else 0 (none).
struct occupancy_kernel {
  static constexpr int max_threads_per_block = 128;
  static constexpr int min_blocks_per_multiprocessor = 4;  // at most 128 registers per thread
  template <class Ctx>
  void operator()(Ctx&, const bug_params&) const {}
};
static_assert(strata::detail::kernel_min_blocks<occupancy_kernel>() == 4);
static_assert(strata::detail::kernel_min_blocks<bounded_kernel>() == 0);

struct counter_params {
  unsigned* global_count;
  int* per_block;  // per block: the shared-memory atomic count
  float* dyn_out;
};

/// Atomics on global and shared memory, and dynamic shared memory after a static part.
template <class Target>
struct atomics_kernel {
  using target = Target;
  struct shared_storage {
    int count;
  };
  template <class Ctx>
  void operator()(Ctx& ctx, const counter_params& p) const {
    auto block = ctx.block();
    auto& s = ctx.template shared<shared_storage>();
    float* dyn = ctx.template dynamic_shared<float>();
    if (block.thread_rank() == 0) s.count = 0;
    dyn[block.thread_rank()] = static_cast<float>(block.thread_rank()) * 0.5f;
    block.sync();
    strata::atomic::add(p.global_count, 1u);
    strata::atomic::add(&s.count, 1);
    block.sync();
    if (block.thread_rank() == 0) p.per_block[block.rank()] = s.count;
    p.dyn_out[block.rank() * block.size() + block.thread_rank()] = dyn[block.size() - 1 - block.thread_rank()];
  }
};

struct poison_params {
  float* out;
};
struct reads_unwritten_shared_kernel {
  struct shared_storage {
    float v[64];
  };
  template <class Ctx>
  void operator()(Ctx& ctx, const poison_params& p) const {
    auto& s = ctx.template shared<shared_storage>();
    const int t = ctx.block().thread_rank();
    if (t % 2 == 0) s.v[t] = 1.f;
    ctx.block().sync();
    p.out[t] = s.v[t];
  }
};

struct shuffle_params {
  int* out;  // [threads][6]
  unsigned long long* ballots;
};
template <class Target>
struct shuffle_edges_kernel {
  using target = Target;
  template <class Ctx>
  void operator()(Ctx& ctx, const shuffle_params& p) const {
    auto warp = ctx.warp();
    const int lane = ctx.lane().index();
    const int t = ctx.block().thread_rank();
    const int v = 100 + t;
    int* o = p.out + t * 6;
    o[0] = warp.shfl(v, lane + Ctx::warp_size + 1);  // source taken modulo the warp size
    o[1] = warp.shfl_down(v, 3);                     // past the end: own value
    o[2] = warp.shfl_up(v, 5);                       // before the start: own value
    o[3] = warp.shfl_xor(v, 2);
    o[4] = warp.any(lane == 3) ? 1 : 0;
    o[5] = warp.all(lane < 1000) ? 1 : 0;
    warp.sync();
    const auto b = warp.ballot(lane % 3 == 0);
    if (lane == 0) p.ballots[t / Ctx::warp_size] = static_cast<unsigned long long>(b);
  }
};

}  // namespace

TEST_CASE("lanes meeting at different collectives are reported", "[emulator][warp]") {
  strata::device_buffer<int> out(32);
  const std::string msg = launch_error({.grid = 1, .block = 32}, two_collectives_kernel{}, out.data());
  CHECK_THAT(msg, Contains("meet at different collectives"));
  CHECK_THAT(msg, Contains("warp.shfl()"));
  CHECK_THAT(msg, Contains("warp.shfl_xor()"));
}

TEST_CASE("warp.whole() on a partial warp is reported; on whole warps it is the warp", "[emulator][warp]") {
  strata::device_buffer<int> out(64);
  const std::string msg = launch_error({.grid = 1, .block = 48}, whole_warp_kernel{}, out.data());
  CHECK_THAT(msg, Contains("warp.whole()"));
  CHECK_THAT(msg, Contains("16 of 32 lanes"));
  CHECK(launch_error({.grid = 2, .block = 64}, whole_warp_kernel{}, out.data()) == "no error");
  std::vector<int> h(64);
  strata::stream s;
  strata::copy_to_host(s, h.data(), out.data(), 64);
  for (int i = 0; i < 64; ++i) CHECK(h[static_cast<std::size_t>(i)] == ((i % 32) ^ 1));
}

TEST_CASE("writing past a block's shared memory is reported", "[emulator][shared]") {
  strata::device_buffer<int> out(1);
  const std::string msg = launch_error({.grid = 3, .block = 64}, overrun_kernel{}, out.data());
  CHECK_THAT(msg, Contains("overrun_kernel"));
  CHECK_THAT(msg, Contains("wrote past the end of its shared memory (128 bytes"));
}

TEST_CASE("an exception in a GPU thread names kernel, block and thread; the emulator stays usable",
          "[emulator]") {
  strata::device_buffer<int> out(1);
  const std::string msg = launch_error({.grid = 4, .block = 32}, throwing_kernel{}, out.data());
  CHECK_THAT(msg, Contains("throwing_kernel"));
  CHECK_THAT(msg, Contains("block (2,0,0), thread (5,0,0) threw: bad thing"));
  // The workers dropped their stopped fibers; the next launch runs normally.
  strata::stream s;
  const long long n = 1000;
  auto in = to_device(s, std::vector<float>(n, 1.f));
  auto o = poisoned<float>(s, 2, NAN);
  strata::launch(s, {.grid = 2, .block = 256}, block_reduce_kernel<arch::host>{}, reduce_params{in.data(), o.data(), n});
  const auto h = to_host(s, o);
  CHECK(h[0] + h[1] == 1000.f);
}

TEST_CASE("launch validation names the kernel and the argument", "[emulator][validation]") {
  strata::stream s;
  strata::device_buffer<int> out(1);
  auto err = [&](auto kernel, strata::launch_shape shape) -> std::string {
    try {
      strata::launch(s, shape, kernel, bug_params{out.data()});
    } catch (const strata::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK_THAT(err(throwing_kernel{}, {.grid = 1, .block = 0}), Contains("strata::launch(throwing_kernel): argument 'block' must be at least 1"));
  CHECK_THAT(err(throwing_kernel{}, {.grid = strata::dims(1, 0), .block = 1}), Contains("argument 'grid'"));
  CHECK_THAT(err(throwing_kernel{}, {.grid = 1, .block = 1025}), Contains("has 1025 threads; host allows at most 1024"));
  CHECK_THAT(err(throwing_kernel{}, {.grid = 6, .block = 32, .cluster = 4}), Contains("argument 'cluster' (4, 1, 1) does not divide grid (6, 1, 1)"));
  CHECK_THAT(err(early_exit_kernel<arch::sm80>{}, {.grid = 2, .block = 32, .cluster = 2}),
             Contains("sm80 allows at most 1 blocks per cluster"));
  CHECK_THAT(err(big_shared_kernel{}, {.grid = 1, .block = 32, .dynamic_shared_bytes = 10 * 1024}),
             Contains("argument 'dynamic_shared_bytes' brings shared memory to 51200 bytes (40960 static + 10240 dynamic); host allows at most 49152"));
  CHECK_THAT(err(early_exit_kernel<arch::gfx942>{}, {.grid = 1, .block = 64, .dynamic_shared_bytes = 61 * 1024}),
             Contains("gfx942 allows at most 65536"));
  // The emulator enforces the kernel's own launch bounds as the GPU launchers do.
  CHECK_THAT(err(bounded_kernel{}, {.grid = 1, .block = 129}),
             Contains("strata::launch(bounded_kernel): argument 'block' has 129 threads; the kernel declares max_threads_per_block = 128"));
  CHECK(err(bounded_kernel{}, {.grid = 1, .block = 128}) == "no error");
}

TEST_CASE("atomics on global and shared memory; dynamic shared memory follows the static part", "[emulator][atomic]") {
  strata::stream s;
  for (const auto& opt : schedules()) {
    s.set_emulator_options(opt);
    const int grid = 37, block = 130;
    auto count = to_device(s, std::vector<unsigned>{0u});
    auto per_block = poisoned<int>(s, grid, -1);
    auto dyn = poisoned<float>(s, grid * block, NAN);
    strata::launch(s, {.grid = grid, .block = block, .dynamic_shared_bytes = block * sizeof(float)},
                   atomics_kernel<arch::gfx942>{}, counter_params{count.data(), per_block.data(), dyn.data()});
    CHECK(to_host(s, count)[0] == static_cast<unsigned>(grid * block));
    for (int c : to_host(s, per_block)) CHECK(c == block);
    const auto d = to_host(s, dyn);
    for (int b = 0; b < grid; ++b)
      for (int t = 0; t < block; ++t) REQUIRE(d[b * block + t] == static_cast<float>(block - 1 - t) * 0.5f);
  }
}

TEST_CASE("shared memory starts poisoned: unwritten elements read as NaN", "[emulator][shared]") {
  strata::stream s;
  auto out = poisoned<float>(s, 64, 0.f);
  strata::launch(s, {.grid = 1, .block = 64}, reads_unwritten_shared_kernel{}, poison_params{out.data()});
  const auto o = to_host(s, out);
  for (int t = 0; t < 64; ++t) {
    if (t % 2 == 0) CHECK(o[t] == 1.f);
    else CHECK(std::isnan(o[t]));
  }
}

template <class Target>
void check_shuffle_edges(int block) {
  constexpr int W = Target::warp_size;
  strata::stream s;
  auto out = poisoned<int>(s, block * 6, -1);
  const int warps = (block + W - 1) / W;
  auto ballots = poisoned<unsigned long long>(s, warps, ~0ull);
  strata::launch(s, {.grid = 1, .block = block}, shuffle_edges_kernel<Target>{}, shuffle_params{out.data(), ballots.data()});
  const auto o = to_host(s, out);
  const auto b = to_host(s, ballots);
  for (int t = 0; t < block; ++t) {
    const int lane = t % W, base = t - lane, lanes = std::min(W, block - base);
    auto value_of = [&](int src_lane) { return src_lane < lanes ? 100 + base + src_lane : 100 + t; };
    INFO("target " << Target::name << " block " << block << " thread " << t);
    CHECK(o[t * 6 + 0] == value_of((lane + 1) % W));
    CHECK(o[t * 6 + 1] == (lane + 3 < W ? value_of(lane + 3) : 100 + t));
    CHECK(o[t * 6 + 2] == (lane >= 5 ? 100 + t - 5 : 100 + t));
    CHECK(o[t * 6 + 3] == value_of(lane ^ 2));
    CHECK(o[t * 6 + 4] == (lanes > 3 ? 1 : 0));
    CHECK(o[t * 6 + 5] == 1);
  }
  for (int w = 0; w < warps; ++w) {
    unsigned long long expect = 0;
    for (int l = 0; l < std::min(W, block - w * W); ++l)
      if (l % 3 == 0) expect |= 1ull << l;
    CHECK(b[w] == expect);
  }
}

TEST_CASE("shuffle, vote and ballot edge cases follow the GPU's rules", "[emulator][warp]") {
  for (int block : {32, 45, 64, 3, 200}) {
    check_shuffle_edges<arch::sm80>(block);
    check_shuffle_edges<arch::gfx942>(block);
  }
}

TEST_CASE("emulator options come from the environment and reject malformed values", "[emulator][options]") {
  using strata::emulator::options;
  ::setenv("STRATA_EMU_WORKERS", "3", 1);
  ::setenv("STRATA_EMU_SCHEDULE", "random", 1);
  ::setenv("STRATA_EMU_SEED", "42", 1);
  auto o = options::from_environment();
  CHECK(o.workers == 3);
  CHECK(o.order == strata::emulator::schedule::random);
  CHECK(o.seed == 42);
  ::setenv("STRATA_EMU_PLACEMENT", "shuffled", 1);
  CHECK(options::from_environment().chiplets == strata::emulator::placement::shuffled);
  ::setenv("STRATA_EMU_PLACEMENT", "anywhere", 1);
  CHECK_THROWS_WITH(options::from_environment(), Contains("STRATA_EMU_PLACEMENT") && Contains("anywhere"));
  ::unsetenv("STRATA_EMU_PLACEMENT");
  ::setenv("STRATA_EMU_SCHEDULE", "sideways", 1);
  CHECK_THROWS_WITH(options::from_environment(), Contains("STRATA_EMU_SCHEDULE") && Contains("sideways"));
  ::setenv("STRATA_EMU_SCHEDULE", "reverse", 1);
  ::setenv("STRATA_EMU_WORKERS", "0x", 1);
  CHECK_THROWS_WITH(options::from_environment(), Contains("STRATA_EMU_WORKERS"));
  ::unsetenv("STRATA_EMU_WORKERS");
  ::unsetenv("STRATA_EMU_SCHEDULE");
  ::unsetenv("STRATA_EMU_SEED");
}

namespace {
struct gather_params {
  int* out;
};
/// A warp-wide atom made with warp.gather(): lane l receives the sum of all lanes' inputs plus l * 1000.
template <class Target>
struct gather_kernel {
  using target = Target;
  template <class Ctx>
  void operator()(Ctx& ctx, const gather_params& p) const {
    struct io {
      int in, out;
    } mine{ctx.block().thread_rank() * 3, -1};
    ctx.warp().gather("test_atom", &mine, [](void* const* lanes, int n) {
      int sum = 0;
      for (int l = 0; l < n; ++l) sum += static_cast<io*>(lanes[l])->in;
      for (int l = 0; l < n; ++l) static_cast<io*>(lanes[l])->out = sum + l * 1000;
    });
    p.out[ctx.block().thread_rank()] = mine.out;
  }
};
}  // namespace

TEST_CASE("warp.gather runs an atom once per warp over every lane's operands", "[emulator][warp]") {
  for (int block : {64, 70}) {
    strata::stream s;
    auto out = poisoned<int>(s, block, -1);
    strata::launch(s, {.grid = 1, .block = block}, gather_kernel<arch::gfx942>{}, gather_params{out.data()});
    const auto o = to_host(s, out);
    for (int t = 0; t < block; ++t) {
      const int base = t / 64 * 64, lanes = std::min(64, block - base);
      int sum = 0;
      for (int l = 0; l < lanes; ++l) sum += (base + l) * 3;
      REQUIRE(o[t] == sum + (t % 64) * 1000);
    }
  }
}
