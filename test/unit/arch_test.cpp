// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Target descriptors and the dispatch model: the numbers kernels and schedulers are sized from.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "strata/arch/arch.hpp"
#include "strata/arch/fast_math.hpp"
#include "strata/hierarchy/dims.hpp"

namespace arch = strata::arch;
using arch::atom_family;

TEST_CASE("target descriptors", "[arch]") {
  STATIC_REQUIRE(arch::sm80::warp_size == 32);
  STATIC_REQUIRE(arch::gfx90a::warp_size == 64);
  STATIC_REQUIRE(arch::gfx942::warp_size == 64);
  STATIC_REQUIRE(arch::gfx942::chiplets.count == 8);
  STATIC_REQUIRE(arch::gfx942::chiplets.units() == 304);
  STATIC_REQUIRE(arch::gfx950::chiplets.units() == 256);
  STATIC_REQUIRE(arch::gfx950::shared_memory_per_block == 160 * 1024);
  STATIC_REQUIRE(arch::sm90a::shared_memory_per_block == 227 * 1024);
  STATIC_REQUIRE(arch::sm80::atoms.has(atom_family::mma_sync_f16));
  STATIC_REQUIRE(!arch::sm80::atoms.has(atom_family::mma_sync_f8));  // fp8 mma.sync needs sm89+
  STATIC_REQUIRE(arch::sm90a::atoms.has(atom_family::wgmma));
  STATIC_REQUIRE(!arch::gfx90a::atoms.has(atom_family::mfma_f8));    // fp8 MFMA needs CDNA3
  STATIC_REQUIRE(arch::gfx942::atoms.has(atom_family::mfma_f8));
  STATIC_REQUIRE(arch::host::atoms.has(atom_family::fma));
  STATIC_REQUIRE(!arch::host::atoms.has(atom_family::mma_sync_f16));
  STATIC_REQUIRE(arch::sm100a::chiplets.experimental);
  STATIC_REQUIRE(std::is_same_v<arch::current, arch::host>);  // a host compile pass
}

TEST_CASE("modelled chiplet: round robin and contiguous dispatch", "[arch][chiplet]") {
  constexpr auto rr = arch::gfx942::chiplets;
  STATIC_REQUIRE(arch::modelled_chiplet(rr, 0, 100) == 0);
  STATIC_REQUIRE(arch::modelled_chiplet(rr, 9, 100) == 1);
  constexpr auto halves = arch::sm100a::chiplets;
  for (long long blocks : {1LL, 2LL, 7LL, 148LL, 1001LL}) {
    std::vector<long long> per(halves.count, 0);
    int last = 0;
    for (long long b = 0; b < blocks; ++b) {
      const int c = arch::modelled_chiplet(halves, b, blocks);
      REQUIRE(c >= 0);
      REQUIRE(c < halves.count);
      REQUIRE(c >= last);  // contiguous ranges
      last = c;
      ++per[c];
    }
    REQUIRE(per[0] - per[1] <= 1);  // balanced to within one block
  }
  for (int blocks : {1, 8, 13, 1000}) {
    std::vector<int> per(8, 0);
    for (int b = 0; b < blocks; ++b) ++per[arch::modelled_chiplet(rr, b, blocks)];
    for (int c = 0; c < 8; ++c) REQUIRE(per[c] == blocks / 8 + (c < blocks % 8 ? 1 : 0));
  }
  STATIC_REQUIRE(arch::modelled_chiplet(arch::sm90a::chiplets, 12345, 20000) == 0);
}

TEST_CASE("dims: linear and unlinear are inverse", "[hierarchy]") {
  const strata::dims e(5, 3, 4);
  for (long long l = 0; l < e.volume(); ++l) REQUIRE(e.linear(e.unlinear(l)) == l);
  STATIC_REQUIRE(strata::dims(2, 3, 4).volume() == 24);
}

TEST_CASE("arch::tanh_fast: absolute error within a few ulps of 1, exact limits, NaN kept", "[arch][fast_math]") {
  // The host form is the GPU formula with exact exp2 and division (the GPU's ex2.approx / rcp.approx
  // add relative errors of 2^-22 / 2^-23 to its two steps).
  double worst = 0;
  for (int i = -40000; i <= 40000; ++i) {
    const float x = static_cast<float>(i) * 5e-4f;  // [-20, 20]
    const double err = std::abs(static_cast<double>(strata::arch::tanh_fast(x)) - std::tanh(static_cast<double>(x)));
    worst = err > worst ? err : worst;
  }
  CHECK(worst < 4.0 * 1.2e-7);
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(strata::arch::tanh_fast(inf) == 1.f);
  CHECK(strata::arch::tanh_fast(-inf) == -1.f);
  CHECK(strata::arch::tanh_fast(100.f) == 1.f);
  CHECK(strata::arch::tanh_fast(-100.f) == -1.f);
  CHECK(strata::arch::tanh_fast(0.f) == 0.f);
  CHECK(std::isnan(strata::arch::tanh_fast(std::numeric_limits<float>::quiet_NaN())));
}
