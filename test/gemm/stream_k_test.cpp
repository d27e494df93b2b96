// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stream-K: the work division (pure arithmetic, exhaustively over small cases) and the stream-K GEMM
// kernel on the emulator against the double reference, under shuffled chiplet placements and random
// fiber orders, bitwise identical from run to run.
#include <cstring>

#include "strata/hierarchy/stream_k.hpp"
#include "support.hpp"

using namespace strata_test::gemm;
namespace arch = strata::arch;
namespace cfg = strata::ops::gemm::configs;
using strata::bf16;
using strata::stream_k_schedule;

namespace {

// Checks one schedule: every iteration of every tile is done by exactly one unit, in segments that
// follow the rules the kernel relies on.
void check_schedule(long long tiles, int iters, int chiplets, int units) {
  INFO("tiles " << tiles << " iters " << iters << " chiplets " << chiplets << " units/chiplet " << units);
  const stream_k_schedule s(tiles, iters, chiplets, units, nullptr);
  std::vector<int> done(std::size_t(tiles * iters), 0);
  for (int c = 0; c < chiplets; ++c) {
    long long smallest = -1, largest = -1;
    for (int j = 0; j < units; ++j) {
      const long long u = (long long)c * units + j;
      const long long size = s.unit_end(u) - s.unit_begin(u);
      smallest = smallest < 0 ? size : std::min(smallest, size);
      largest = std::max(largest, size);
      REQUIRE(s.has_work(u) == (size > 0));
      int segments = 0, partial_segments = 0;
      bool last_was_partial = false;
      s.for_each_segment(u, [&](const stream_k_schedule::segment& g) {
        ++segments;
        REQUIRE(g.k_begin < g.k_end);
        REQUIRE(g.k_end <= iters);
        REQUIRE(g.starts_tile == (g.k_begin == 0));
        REQUIRE(g.ends_tile == (g.k_end == iters));
        // The unit stays in its chiplet's tile range.
        REQUIRE(g.tile >= s.tile_begin(c));
        REQUIRE(g.tile < s.tile_begin(c) + s.tile_count(c));
        REQUIRE(s.chiplet_of_tile(g.tile) == c);
        for (int k = g.k_begin; k < g.k_end; ++k) {
          ++done[std::size_t(g.tile * iters + k)];
          REQUIRE(s.unit_of(g.tile * iters + k) == u);
        }
        if (!g.ends_tile) ++partial_segments;
        last_was_partial = !g.ends_tile;
        // A finisher's contributors: lower units of the same chiplet, with work.
        if (g.ends_tile && !g.starts_tile) {
          const auto from = s.contributors(g.tile, g.k_begin);
          REQUIRE(from.first < from.last);
          REQUIRE(from.last <= u);
          REQUIRE(s.chiplet_of_unit(from.first) == c);
          REQUIRE(s.has_work(from.first));
          REQUIRE(s.has_work(from.last - 1));
        }
      });
      // At most one partial per unit, and only as its last segment (one partial slot per unit).
      REQUIRE(partial_segments <= 1);
      if (partial_segments == 1) REQUIRE(last_was_partial);
      (void)segments;
    }
    // Balanced to within one iteration inside a chiplet.
    REQUIRE(largest - smallest <= 1);
  }
  for (long long i = 0; i < tiles * iters; ++i) {
    INFO("iteration " << i);
    REQUIRE(done[std::size_t(i)] == 1);
  }
}

}  // namespace

TEST_CASE("stream-K schedule: every iteration once, fix-ups inside one chiplet, balanced units", "[gemm][stream-k]") {
  for (int chiplets : {1, 2, 4, 8})
    for (int units : {1, 2, 3, 5, 38})
      for (long long tiles : {0LL, 1LL, 2LL, 7LL, 9LL, 64LL})
        for (int iters : {1, 2, 3, 11}) check_schedule(tiles, iters, chiplets, units);
  // An MI300X-sized grid: 8 chiplets x 38 CUs over a 1000-tile, 64-step problem.
  check_schedule(1000, 64, 8, 38);
}

TEST_CASE("stream-K schedule: units past the iterations are empty and never waited on", "[gemm][stream-k]") {
  const stream_k_schedule s(3, 1, 1, 5, nullptr);  // 3 iterations, 5 units: two are empty
  int empty = 0;
  for (long long u = 0; u < s.units(); ++u) empty += !s.has_work(u);
  CHECK(empty == 2);
}

TEST_CASE("stream-K GEMM: host FMA fp32 and bf16 -> bf16 with bias + ReLU, odd shapes", "[gemm][stream-k]") {
  using KF = cfg::fma<arch::host, float, ep::chain<ep::alpha_beta<float>, ep::convert_to<float>>>;
  int units = 1;
  for (auto c : shapes(150)) {
    c.stream_k = units;
    units = units % 5 + 1;
    check<KF>(c);
  }
  using KB = cfg::fma<arch::host, bf16, ep::chain<ep::alpha_beta<bf16>, ep::bias_col<float>, ep::relu, ep::convert_to<bf16>>>;
  // 3 x 2 tiles of 10 K steps over 4 units: every tile is split, some across three units.
  check<KB, true>({.m = 150, .n = 40, .k = 300, .beta = 0.5f, .stream_k = 4, .seed = 21});
  // More units than K steps in all: empty units.
  check<KB, true>({.m = 20, .n = 20, .k = 40, .batch = 2, .stream_k = 7, .seed = 22});
  using KI = cfg::fma<arch::host, std::int8_t, ep::chain<ep::alpha_beta<std::int32_t>, ep::convert_to<std::int32_t>>>;
  check<KI>({.m = 70, .n = 33, .k = 200, .b = sg::layout::col_major, .stream_k = 3, .seed = 23});
}

TEST_CASE("stream-K GEMM as gfx942 (8 chiplets): shuffled placements, bitwise reproducible", "[gemm][stream-k]") {
  using K = cfg::fma<arch::gfx942, float, ep::chain<ep::alpha_beta<float>, ep::convert_to<float>>>;
  // 3 x 3 tiles of 8 K steps over 8 chiplets x 2 units: most tiles are finished by a fix-up.
  const case_t base{.m = 150, .n = 150, .k = 256, .beta = 1.f, .stream_k = 2, .seed = 31};
  const auto first = check<K>(base);
  for (std::uint64_t placement : {5u, 17u}) {
    case_t c = base;
    c.placement = placement;
    const auto again = check<K>(c);
    REQUIRE(again.size() == first.size());
    CHECK(std::memcmp(again.data(), first.data(), first.size() * sizeof(float)) == 0);
  }
  // Batched, K = 0 (every tile is one empty step: D = beta * C).
  check<K>({.m = 70, .n = 9, .k = 0, .batch = 3, .beta = 0.5f, .stream_k = 1, .seed = 32, .placement = 3});
}

TEST_CASE("stream-K GEMM with the sm80 mma.sync bf16 configuration", "[gemm][stream-k]") {
  using E = ep::chain<ep::alpha_beta<bf16>, ep::convert_to<bf16>>;
  using K = cfg::sm80<arch::sm80, bf16, E, cfg::sm80_medium>;
  check<K>({.m = 70, .n = 72, .k = 200, .a = sg::layout::col_major, .beta = 0.5f, .stream_k = 3, .seed = 41, .placement = 9});
}
