// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Property test of strata::gemm: random shapes (0, 1, tile edges, odd sizes), layouts, padded lds,
// batches with strides (and broadcast A / B), alpha / beta with C aliasing D or separate, bias, ReLU,
// every dtype combination of this build, split-K (heuristic, fixed, over-split) and stream-K, against
// the double reference (gemm_oracle.hpp: test/gemm's tolerance), fp8 included (the emulator has the units).
// STRATA_PROPERTY_CASES / STRATA_PROPERTY_SEED: see property.hpp.
#include "gemm_case.hpp"
#include "property.hpp"

using namespace strata_property;

TEST_CASE("property: strata::gemm matches the double reference", "[property][gemm]") {
  int ran = 0, skipped = 0, fp8 = 0;
  bool oracle_checked = false;
  for_each_case([&](std::uint64_t seed, int) {
    rng r(seed);
    gemm::gemm_case gc;
    if (!gemm::make_case(r, false, gc, 64u << 20)) {
      ++skipped;
      return;
    }
    INFO(gc.describe());
    strata::stream s;
    gc.run(s);
    const std::string err = gc.check();
    INFO(err);
    REQUIRE(err.empty());
    // The oracle itself: a changed D element must be caught.
    if (gc.d.rows > 0 && gc.d.cols > 0 && !oracle_checked) {
      auto* d0 = static_cast<unsigned char*>(const_cast<void*>(gc.d.data));
      const std::size_t es = strata::ops::gemm::size_of(gc.d.type);
      for (std::size_t i = 0; i < es; ++i) d0[i] ^= 0x5A;
      CHECK_FALSE(gc.check().empty());
      oracle_checked = true;
    }
    ++ran;
    fp8 += gc.fp8;
  }, 200);
  INFO("ran " << ran << ", skipped " << skipped << ", fp8 " << fp8);
  CHECK(ran + skipped == cases(200));
}
