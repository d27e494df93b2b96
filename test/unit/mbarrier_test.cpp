// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata::mbarrier (arch/mbarrier.hpp) on the emulator: a producer / consumer ring over phases, with
// and without transaction counts, under every schedule; the phase-parity rule; and the misuse the
// emulator reports (use before init, double init, too many arrivals, too many bytes, a wait nothing
// ends, a barrier outside shared memory).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "mbarrier_kernels.hpp"
#include "support.hpp"

using namespace strata_test;
namespace arch = strata::arch;
using Catch::Matchers::Contains;

namespace {

template <class Target, int Stages>
void check_ring(int tiles) {
  strata::stream s;
  const auto in = random_vector<float>(std::size_t(tiles) * 32, 5 + tiles, -1.f, 1.f);
  auto din = to_device(s, in);
  for (const auto& opt : schedules()) {
    s.set_emulator_options(opt);
    auto out = poisoned<float>(s, tiles, NAN);
    strata::launch(s, {.grid = 1, .block = 64}, ring_kernel<Target, Stages>{}, ring_params{din.data(), out.data(), tiles});
    const auto o = to_host(s, out);
    for (int i = 0; i < tiles; ++i) {
      double ref = 0;
      for (int l = 0; l < 32; ++l) ref += in[std::size_t(i) * 32 + l];
      INFO(Target::name << " stages " << Stages << " tile " << i);
      REQUIRE(std::abs(o[i] - ref) <= 1e-5);
    }
  }
}

/// What the probe kernel does: one scenario per value.
enum class probe { parity, uninitialized, double_init, too_many_arrivals, too_many_bytes, wait_forever, not_shared };

struct probe_params {
  probe what;
  int* out;  // parity: 4 try_wait results
  strata::mbarrier* global;
};

struct probe_kernel {
  using target = arch::sm90a;
  static constexpr const char* name = "probe_kernel";
  struct shared_storage {
    strata::mbarrier bar;
  };
  template <class Ctx>
  void operator()(Ctx& ctx, const probe_params& p) const {
    auto& bar = ctx.template shared<shared_storage>().bar;
    const int t = ctx.block().thread_rank();
    switch (p.what) {
      case probe::parity:
        if (t == 0) {
          bar.init(ctx, 2);
          p.out[0] = bar.try_wait(ctx, 1);  // the phase before the first: complete
          p.out[1] = bar.try_wait(ctx, 0);  // phase 0: 2 arrivals pending
          bar.arrive(ctx);
          bar.arrive(ctx);
          p.out[2] = bar.try_wait(ctx, 0);  // phase 0 completed, phase 1 current
          p.out[3] = bar.try_wait(ctx, 1);
        }
        break;
      case probe::uninitialized:
        if (t == 0) bar.arrive(ctx);
        break;
      case probe::double_init:
        if (t == 0) {
          bar.init(ctx, 1);
          bar.init(ctx, 1);
        }
        break;
      case probe::too_many_arrivals:  // count 1: the phase waits for 16 bytes, a second thread arrives
        if (t == 0) bar.init(ctx, 1);
        ctx.block().sync();
        if (t == 0) bar.arrive_expect_tx(ctx, 16);
        ctx.block().sync();
        if (t == 1) bar.arrive(ctx);
        break;
      case probe::too_many_bytes:
        if (t == 0) {
          bar.init(ctx, 1);
          bar.expect_tx(ctx, 16);
          bar.complete_tx(ctx, 32);
          bar.arrive(ctx);
        }
        break;
      case probe::wait_forever:
        if (t == 0) bar.init(ctx, 1);
        ctx.block().sync();
        bar.wait(ctx, 0);  // nobody arrives
        break;
      case probe::not_shared:
        if (t == 0) p.global->init(ctx, 1);
        break;
    }
  }
};

std::string error_of(probe what) {
  strata::stream s;
  strata::device_buffer<strata::mbarrier> global(1);
  try {
    strata::launch(s, {.grid = 1, .block = 32}, probe_kernel{}, probe_params{what, nullptr, global.data()});
    s.synchronize();
  } catch (const strata::emulator_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("mbarrier: a producer / consumer ring over many phases", "[mbarrier]") {
  check_ring<arch::sm80, 2>(9);    // arrive / test_wait
  check_ring<arch::sm80, 3>(1);
  check_ring<arch::sm90a, 2>(11);  // with transaction counts
  check_ring<arch::sm90a, 4>(16);
}

TEST_CASE("mbarrier: wait(parity) returns once the phase of that parity has completed", "[mbarrier]") {
  strata::stream s;
  auto out = poisoned<int>(s, 4, -1);
  strata::launch(s, {.grid = 1, .block = 32}, probe_kernel{}, probe_params{probe::parity, out.data(), nullptr});
  const auto o = to_host(s, out);
  CHECK(o == std::vector<int>{1, 0, 1, 0});
}

TEST_CASE("mbarrier misuse is reported", "[mbarrier][negative]") {
  CHECK_THAT(error_of(probe::uninitialized), Contains("never initialized"));
  CHECK_THAT(error_of(probe::double_init), Contains("already initialized"));
  CHECK_THAT(error_of(probe::too_many_arrivals), Contains("more arrivals than the barrier's count (1)"));
  CHECK_THAT(error_of(probe::too_many_bytes), Contains("16 more bytes completed"));
  CHECK_THAT(error_of(probe::wait_forever), Contains("can never finish") && Contains("spin-wait (mbarrier.hpp"));
  CHECK_THAT(error_of(probe::not_shared), Contains("not in this block's shared memory"));
}
