// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The runtime topology: STRATA_CHIPLETS (valid and malformed values), the device-reported counts, and
// the compile-time adaptor arch::with_chiplets, down to the emulator's ctx.chiplet().
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "strata/hierarchy/chiplet_topology.hpp"
#include "strata/arch/dispatch.hpp"
#include "strata/strata.hpp"

namespace arch = strata::arch;
namespace chiplet = strata::chiplet;

namespace {

/// Sets STRATA_CHIPLETS for one scope.
struct scoped_env {
  explicit scoped_env(const char* v) { ::setenv(chiplet::environment_variable, v, 1); }
  ~scoped_env() { ::unsetenv(chiplet::environment_variable); }
};

using dpx942 = arch::with_chiplets<arch::gfx942, 4, 38>;

struct chiplet_probe_params {
  int* out;
};

/// Records chiplet().index() * 100 + chiplet().count() per block.
struct chiplet_probe {
  using target = dpx942;
  template <class Ctx>
  void operator()(Ctx& ctx, const chiplet_probe_params& p) const {
    if (ctx.block().thread_rank() == 0)
      p.out[ctx.block().rank()] = ctx.chiplet().index() * 100 + ctx.chiplet().count();
  }
};

}  // namespace

TEST_CASE("STRATA_CHIPLETS: valid values", "[chiplet][topology]") {
  const auto base = arch::gfx942::chiplets;
  auto t = chiplet::parse_topology("4x38", base);
  CHECK(t.count == 4);
  CHECK(t.units_per_chiplet == 38);
  CHECK(t.l2_bytes_per_chiplet == base.l2_bytes_per_chiplet);  // not given: kept
  CHECK(t.dispatch == arch::dispatch_model::round_robin);
  t = chiplet::parse_topology("2x74,l2=63M,llc=0,dispatch=contiguous", base);
  CHECK(t.l2_bytes_per_chiplet == 63 * arch::MiB);
  CHECK(t.last_level_cache_bytes == 0);
  CHECK(t.dispatch == arch::dispatch_model::contiguous);
  t = chiplet::parse_topology("1x38", base);  // CPX: no chiplet level
  CHECK(t.dispatch == arch::dispatch_model::monolithic);
  t = chiplet::parse_topology("8x38,l2=4096KiB", arch::host::chiplets);  // a chiplet level on the host target
  CHECK(t.dispatch == arch::dispatch_model::round_robin);
  CHECK(t.l2_bytes_per_chiplet == 4 * arch::MiB);
  CHECK(chiplet::to_string(arch::gfx942::chiplets) == "8x38, L2 4 MiB, LLC 256 MiB, round_robin");
}

TEST_CASE("STRATA_CHIPLETS: a malformed value is an error naming the variable and the grammar", "[chiplet][topology]") {
  const auto base = arch::gfx942::chiplets;
  using Catch::Matchers::Contains;
  REQUIRE_THROWS_AS(chiplet::parse_topology("8by38", base), strata::invalid_argument);
  REQUIRE_THROWS_WITH(chiplet::parse_topology("8by38", base),
                      Contains("argument 'STRATA_CHIPLETS' is '8by38'") && Contains("is not <count>x<units>") &&
                          Contains("expected <count>x<units>"));
  REQUIRE_THROWS_WITH(chiplet::parse_topology("0x38", base), Contains("the chiplet count '0'"));
  REQUIRE_THROWS_WITH(chiplet::parse_topology("8x", base), Contains("the units per chiplet ''"));
  REQUIRE_THROWS_WITH(chiplet::parse_topology("8x38x2", base), Contains("the units per chiplet '38x2'"));
  REQUIRE_THROWS_WITH(chiplet::parse_topology("8x38,l2=lots", base), Contains("'lots' is not a size for l2"));
  REQUIRE_THROWS_WITH(chiplet::parse_topology("8x38,l2=4T", base), Contains("'4T' is not a size for l2"));
  REQUIRE_THROWS_WITH(chiplet::parse_topology("8x38,dispatch=random", base), Contains("'random' is not a dispatch model"));
  REQUIRE_THROWS_WITH(chiplet::parse_topology("8x38,colour=blue", base), Contains("unknown key 'colour'"));
  REQUIRE_THROWS_WITH(chiplet::parse_topology("8x38,", base), Contains("the field '' is not <key>=<value>"));
  REQUIRE_THROWS_WITH(chiplet::parse_topology(" 8x38", base), Contains("the chiplet count ' 8'"));
}

TEST_CASE("runtime_topology: environment over device over target", "[chiplet][topology]") {
  ::unsetenv(chiplet::environment_variable);
  CHECK(chiplet::runtime_topology<arch::gfx942>().count == 8);
  strata::device_properties cpx;
  cpx.chiplets = 1;
  cpx.units_per_chiplet = 38;
  const auto from_device = chiplet::runtime_topology<arch::gfx942>(cpx);
  CHECK(from_device.count == 1);
  CHECK(from_device.dispatch == arch::dispatch_model::monolithic);
  CHECK(from_device.l2_bytes_per_chiplet == 4 * arch::MiB);
  {
    scoped_env env("4x38");
    CHECK(chiplet::runtime_topology<arch::gfx942>().count == 4);
    CHECK(chiplet::runtime_topology<arch::gfx942>(cpx).count == 4);  // the variable wins
  }
  {
    scoped_env env("");  // empty: not set
    CHECK(chiplet::runtime_topology<arch::gfx950>().units_per_chiplet == 32);
  }
  {
    scoped_env env("eight");
    using Catch::Matchers::Contains;
    REQUIRE_THROWS_WITH(chiplet::runtime_topology<arch::gfx942>(), Contains("STRATA_CHIPLETS") && Contains("'eight'"));
  }
}

TEST_CASE("with_chiplets: a target with another chiplet level", "[chiplet][topology]") {
  STATIC_REQUIRE(arch::target<dpx942>);
  STATIC_REQUIRE(dpx942::chiplets.count == 4);
  STATIC_REQUIRE(dpx942::chiplets.units() == 152);
  STATIC_REQUIRE(dpx942::chiplets.dispatch == arch::dispatch_model::round_robin);
  STATIC_REQUIRE(dpx942::warp_size == 64);                        // the rest is gfx942's
  STATIC_REQUIRE(dpx942::chiplets.last_level_cache_bytes == 256 * arch::MiB);
  STATIC_REQUIRE(arch::with_chiplets<arch::gfx942, 1, 38>::chiplets.dispatch == arch::dispatch_model::monolithic);
  STATIC_REQUIRE(arch::with_chiplets<arch::host, 2, 4, 2 * arch::MiB>::chiplets.dispatch ==
                 arch::dispatch_model::round_robin);
  STATIC_REQUIRE(arch::with_chiplets<arch::host, 2, 4, 2 * arch::MiB>::chiplets.l2_bytes_per_chiplet == 2 * arch::MiB);

  // The emulator runs a kernel "as" the adapted target: 4 chiplets, block b on chiplet b % 4.
  strata::stream s;
  constexpr int blocks = 10;
  strata::device_buffer<int> out(blocks);
  strata::launch(s, {.grid = strata::dims(blocks), .block = strata::dims(64)}, chiplet_probe{},
                 chiplet_probe_params{out.data()});
  std::vector<int> host(blocks);
  strata::copy_to_host(s, host.data(), out.data(), blocks);
  for (int b = 0; b < blocks; ++b) {
    CHECK(host[b] == (b % 4) * 100 + 4);
    CHECK(chiplet::chiplet_of(dpx942::chiplets, b, blocks) == b % 4);
  }
}
