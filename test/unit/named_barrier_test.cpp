// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata::arch::named_barrier (arch/named_barrier.hpp) on the emulator: two warpgroups taking turns
// through two barriers (the Hopper attention's ping-pong), in strict alternation under every schedule,
// with the other warps of the block never stopped by them; a producer warp's arrive releasing a
// consumer group's sync; and the misuse the emulator reports (an id outside 1..15, a count that is not
// a multiple of 32, two counts in one round, a sync nobody completes).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "strata/arch/named_barrier.hpp"
#include "strata/strata.hpp"
#include "support.hpp"

using namespace strata_test;
namespace arch = strata::arch;
using Catch::Matchers::Contains;

namespace {

struct turns_params {
  int rounds;
  int* log;       // rounds x 2 entries: which warpgroup took each turn, in order
  int* bystander; // warp 8's count of steps it took meanwhile (it never waits on the turn barriers)
};

/// Warpgroups 0 and 1 take turns: each turn, the group's thread 0 appends its index to the log.
/// Turn barriers: ids 1 (warpgroup 0 may go) and 2 (warpgroup 1 may go), 256 threads each: the 128
/// that sync and the 128 of the other group that arrive. Warp 8 (threads 256..287) only counts.
struct turns_kernel {
  using target = arch::sm90a;
  static constexpr const char* name = "turns_kernel";
  struct shared_storage {
    int next;
  };
  template <class Ctx>
  void operator()(Ctx& ctx, const turns_params& p) const {
    auto& s = ctx.template shared<shared_storage>();
    const int t = ctx.block().thread_rank();
    if (t == 0) s.next = 0;
    ctx.block().sync();
    if (t >= 256) {
      for (int i = 0; i < 100; ++i) ctx.warp().sync();
      if (t == 256) *p.bystander = 100;
      return;
    }
    const int g = t / 128;
    const arch::named_barrier mine{1 + g, 256}, other{2 - g, 256};
    if (g == 1) other.arrive(ctx);  // warpgroup 0 goes first
    for (int r = 0; r < p.rounds; ++r) {
      mine.sync(ctx);
      if (t % 128 == 0) p.log[s.next++] = g;  // ordered by the rounds: written, then arrived on
      // The last turn of the round's second group is not signalled: every round of each barrier has
      // its 256 arrivals, none left open when the block ends.
      if (!(g == 1 && r == p.rounds - 1)) other.arrive(ctx);
    }
  }
};

enum class misuse { id_zero, count_48, two_counts, never_completed };

struct misuse_kernel {
  using target = arch::sm90a;
  static constexpr const char* name = "misuse_kernel";
  template <class Ctx>
  void operator()(Ctx& ctx, const misuse& m) const {
    const int t = ctx.block().thread_rank();
    switch (m) {
      case misuse::id_zero: arch::named_barrier{0, 64}.sync(ctx); break;
      case misuse::count_48: arch::named_barrier{3, 48}.arrive(ctx); break;
      case misuse::two_counts: arch::named_barrier{3, t < 32 ? 64 : 32}.arrive(ctx); break;
      case misuse::never_completed:  // one of the two warps
        if (t < 32) arch::named_barrier{4, 64}.sync(ctx);
        break;
    }
  }
};

std::string error_of(misuse m) {
  strata::stream s;
  try {
    strata::launch(s, {.grid = 1, .block = 64}, misuse_kernel{}, m);
    s.synchronize();
  } catch (const strata::emulator_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("named barriers: two warpgroups alternate, the other warps run on", "[unit][named_barrier]") {
  strata::stream s;
  for (const auto& opt : schedules()) {
    s.set_emulator_options(opt);
    constexpr int rounds = 7;
    auto log = poisoned<int>(s, 2 * rounds, -1);
    auto by = poisoned<int>(s, 1, -1);
    strata::launch(s, {.grid = 2, .block = 288}, turns_kernel{}, turns_params{rounds, log.data(), by.data()});
    const auto l = to_host(s, log);
    for (int i = 0; i < 2 * rounds; ++i) {
      INFO("turn " << i);
      REQUIRE(l[i] == i % 2);
    }
    REQUIRE(to_host(s, by)[0] == 100);
  }
}

TEST_CASE("named barrier misuse is reported", "[unit][named_barrier][negative]") {
  CHECK_THAT(error_of(misuse::id_zero), Contains("the id must be 1..15"));
  CHECK_THAT(error_of(misuse::count_48), Contains("multiple of 32"));
  CHECK_THAT(error_of(misuse::two_counts), Contains("named 64 threads"));
  CHECK_THAT(error_of(misuse::never_completed), Contains("can never finish") && Contains("named_barrier"));
}
