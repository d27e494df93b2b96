// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Persistent scheduling and chiplet-scope synchronization on the emulator, with cooperative launches
// (every block resident) and a shuffled chiplet placement unlike the dispatch model, so a protocol that
// secretly relied on the model would fail here.
#include <catch2/catch.hpp>

#include <cstring>

#include "../unit/support.hpp"
#include "persistent_kernels.hpp"
#include "strata/hierarchy/chiplet_topology.hpp"
#include "strata/hierarchy/turn.hpp"

using namespace strata_test;
namespace arch = strata::arch;
using Catch::Matchers::Contains;

namespace {
// A small MI300X-like part: 4 chiplets of 2 CUs, one resident block per CU.
using small_mi300 = arch::with_chiplets<arch::gfx942, 4, 2>;
constexpr int resident_blocks = 8;

std::vector<strata::emulator::options> placements() {
  using strata::emulator::placement;
  using strata::emulator::schedule;
  return {{.workers = 1, .order = schedule::round_robin, .seed = 1, .chiplets = placement::dispatch_model},
          {.workers = 2, .order = schedule::random, .seed = 7, .chiplets = placement::shuffled},
          {.workers = 1, .order = schedule::reverse, .seed = 99, .chiplets = placement::shuffled}};
}
}  // namespace

TEST_CASE("persistent scheduler: every tile exactly once, wherever the blocks land", "[chiplet][persistent]") {
  for (long long tiles : {0LL, 1LL, 5LL, 8LL, 37LL, 301LL}) {
    for (const auto& opt : placements()) {
      strata::stream s(opt);
      strata::device_buffer<unsigned long long> counters(strata::persistent_tiles::workspace_elements(4));
      strata::zero_on_device(s, counters.data(), counters.size());
      auto visits = to_device(s, std::vector<unsigned>(std::max<long long>(tiles, 1), 0u));
      auto owner = poisoned<int>(s, std::max<long long>(tiles, 1), -1);
      strata::launch(s, {.grid = resident_blocks, .block = 64, .cooperative = true}, persistent_kernel<small_mi300>{},
                     persistent_params{tiles, counters.data(), visits.data(), owner.data()});
      const auto v = to_host(s, visits);
      const auto o = to_host(s, owner);
      long long home = 0;
      const strata::persistent_tiles ranges(tiles, 4, nullptr);
      for (long long t = 0; t < tiles; ++t) {
        INFO("tiles " << tiles << " tile " << t << " seed " << opt.seed);
        REQUIRE(v[t] == 1u);
        REQUIRE(o[t] >= 0);
        REQUIRE(o[t] < 4);
        home += (t >= ranges.range_begin(o[t]) && t < ranges.range_begin(o[t]) + ranges.range_size(o[t]));
      }
      // Blocks start on their own chiplet's range and only steal at the tail.
      if (tiles >= 37) CHECK(home * 2 > tiles);
    }
  }
}

TEST_CASE("two-level chiplet barrier completes under shuffled placements and random interleavings",
          "[chiplet][barrier]") {
  for (const auto& opt : placements()) {
    strata::stream s(opt);
    strata::device_buffer<unsigned> ws(strata::chiplet_barrier::workspace_elements(4));
    strata::zero_on_device(s, ws.data(), ws.size());
    auto data = to_device(s, std::vector<int>(resident_blocks * 96, 0));
    auto errors = to_device(s, std::vector<unsigned>{0u});
    strata::launch(s, {.grid = resident_blocks, .block = 96, .cooperative = true}, chiplet_barrier_kernel<small_mi300>{},
                   barrier_params{6, ws.data(), data.data(), errors.data(), true});
    CHECK(to_host(s, errors)[0] == 0u);
  }
}

TEST_CASE("without the barrier the same kernel reads stale data (the test can fail)", "[chiplet][barrier]") {
  strata::stream s(strata::emulator::options{.workers = 1});
  strata::device_buffer<unsigned> ws(strata::chiplet_barrier::workspace_elements(4));
  strata::zero_on_device(s, ws.data(), ws.size());
  auto data = to_device(s, std::vector<int>(resident_blocks * 96, 0));
  auto errors = to_device(s, std::vector<unsigned>{0u});
  strata::launch(s, {.grid = resident_blocks, .block = 96, .cooperative = true}, chiplet_barrier_kernel<small_mi300>{},
                 barrier_params{6, ws.data(), data.data(), errors.data(), false});
  CHECK(to_host(s, errors)[0] > 0u);
}

namespace {
struct never_arrives_kernel {
  using target = small_mi300;
  static constexpr const char* name = "never_arrives_kernel";
  using shared_storage = strata::chiplet_barrier::shared_storage;
  template <class Ctx>
  void operator()(Ctx& ctx, const barrier_params& p) const {
    auto& s = ctx.template shared<shared_storage>();
    const strata::chiplet_barrier bar(ctx.chiplet().count(), ctx.grid().size(), p.workspace);
    bar.init(ctx, s);
    if (ctx.block().rank() == 3) return;  // the bug: one block skips the grid barrier
    bar.sync(ctx, s);
  }
};
}  // namespace

TEST_CASE("a grid barrier a block never reaches is reported as a spin-wait deadlock, not a hang",
          "[chiplet][barrier][deadlock]") {
  strata::stream s;
  strata::device_buffer<unsigned> ws(strata::chiplet_barrier::workspace_elements(4));
  strata::zero_on_device(s, ws.data(), ws.size());
  try {
    strata::launch(s, {.grid = resident_blocks, .block = 32, .cooperative = true}, never_arrives_kernel{},
                   barrier_params{1, ws.data(), nullptr, nullptr, true});
    FAIL("the launch should have failed");
  } catch (const strata::emulator_error& e) {
    CHECK_THAT(e.what(), Contains("never_arrives_kernel"));
    CHECK_THAT(e.what(), Contains("spin-wait (chiplet_barrier.hpp:"));
  }
}

TEST_CASE("cooperative launches are bounded on the emulator", "[chiplet][persistent]") {
  strata::stream s;
  CHECK_THROWS_WITH(strata::launch(s, {.grid = 100, .block = 1024, .cooperative = true}, persistent_kernel<small_mi300>{},
                                   persistent_params{0, nullptr, nullptr, nullptr}),
                    Contains("cooperative launch has 102400 threads"));
}

namespace {
// Turns (hierarchy/turn.hpp): block r takes turn `blocks - 1 - r`, so the order is the reverse of the
// ranks. In its turn every thread of the block reads the running count (plain loads: only the turn
// orders them) and thread 0 writes the block's rank at that position and the count + 1.
struct turn_params {
  unsigned* counter;
  int* log;
  int* count;
  unsigned* errors;
};
struct turns_kernel {
  using target = small_mi300;
  static constexpr const char* name = "turns_kernel";
  template <class Ctx>
  void operator()(Ctx& ctx, const turn_params& p) const {
    const int blocks = static_cast<int>(ctx.grid().size()), r = static_cast<int>(ctx.block().rank());
    const unsigned mine = static_cast<unsigned>(blocks - 1 - r);
    strata::wait_turn(ctx, p.counter, mine);
    const int at = *p.count;  // every thread: what the previous holder wrote is visible to each
    if (at != static_cast<int>(mine)) strata::atomic::add(p.errors, 1u);
    ctx.block().sync();
    if (ctx.block().thread_rank() == 0) p.log[at] = r, *p.count = at + 1;
    strata::pass_turn(ctx, p.counter, mine + 1u);
  }
};
}  // namespace

TEST_CASE("turns: blocks write in their turn's order whatever the schedule and placement", "[chiplet][turn]") {
  for (const auto& opt : placements()) {
    strata::stream s(opt);
    strata::device_buffer<unsigned> counter(1), errors(1);
    strata::device_buffer<int> log(resident_blocks), count(1);
    strata::zero_on_device(s, counter.data(), 1);
    strata::zero_on_device(s, errors.data(), 1);
    strata::zero_on_device(s, count.data(), 1);
    strata::launch(s, {.grid = resident_blocks, .block = 64, .cooperative = true}, turns_kernel{},
                   turn_params{counter.data(), log.data(), count.data(), errors.data()});
    std::vector<int> got(resident_blocks);
    unsigned bad = 0, last = 0;
    strata::copy_to_host(s, got.data(), log.data(), got.size());
    strata::copy_to_host(s, &bad, errors.data(), 1);
    strata::copy_to_host(s, &last, counter.data(), 1);
    s.synchronize();
    for (int i = 0; i < resident_blocks; ++i) CHECK(got[i] == resident_blocks - 1 - i);
    CHECK(bad == 0);
    CHECK(last == static_cast<unsigned>(resident_blocks));
  }
}
