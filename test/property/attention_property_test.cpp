// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Property test of strata::attention, strata::attention_decode and strata::attention_backward:
// random batch / heads / GQA ratio / sequence lengths (0, 1, odd) / supported head dims / dtypes /
// layouts with padded strides / causal, alignment, window, soft-cap, ALiBi, sinks, scale; decode with
// appended rows, dense or paged caches, split-KV. Against ops/attention/reference.hpp at
// test/attention's tolerances (attention_case.hpp). A head dim a target cannot hold may be
// strata::unsupported naming the operator. STRATA_PROPERTY_CASES / _SEED: see property.hpp.
#include "attention_case.hpp"
#include "property.hpp"

using namespace strata_property;

namespace {

template <class Case>
void run_case(Case& c, const char* op, int& ran, int& unsupported) {
  INFO(c.describe());
  strata::stream s;
  try {
    c.run(s);
  } catch (const strata::unsupported& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).rfind(op, 0) == 0);
    ++unsupported;
    return;
  }
  const std::string err = c.check();
  INFO(err);
  REQUIRE(err.empty());
  // The oracle itself: a changed output element must be caught (once per test).
  if (ran == 0 && c.corrupt_output()) CHECK_FALSE(c.check().empty());
  ++ran;
}

}  // namespace

TEST_CASE("property: strata::attention matches the reference", "[property][attention]") {
  int ran = 0, skipped = 0, unsup = 0;
  for_each_case([&](std::uint64_t seed, int) {
    rng r(seed);
    attention::forward_case c;
    if (!attention::make_forward(r, false, c, 3000000, 64u << 20)) return void(++skipped);
    run_case(c, "strata::attention: ", ran, unsup);
  }, 100);
  WARN("forward: ran " << ran << ", unsupported " << unsup << ", skipped " << skipped);
}

TEST_CASE("property: strata::attention_decode matches the reference", "[property][attention][decode]") {
  int ran = 0, skipped = 0, unsup = 0;
  for_each_case([&](std::uint64_t seed, int) {
    rng r(seed);
    attention::decode_case c;
    if (!attention::make_decode(r, false, c, 3000000, 64u << 20)) return void(++skipped);
    run_case(c, "strata::attention_decode: ", ran, unsup);
  }, 100);
  WARN("decode: ran " << ran << ", unsupported " << unsup << ", skipped " << skipped);
}

TEST_CASE("property: strata::attention_backward matches the reference", "[property][attention][backward]") {
  int ran = 0, skipped = 0, unsup = 0;
  for_each_case([&](std::uint64_t seed, int) {
    rng r(seed);
    attention::backward_case c;
    if (!attention::make_backward(r, false, c, 1000000, 64u << 20)) return void(++skipped);
    {
      INFO(c.f.describe());
      strata::stream s;
      try {
        c.f.run(s);  // the forward: o and the LSE the backward takes
      } catch (const strata::unsupported& e) {
        CHECK(std::string(e.what()).rfind("strata::attention: ", 0) == 0);
        ++unsup;
        return;
      }
    }
    run_case(c, "strata::attention_backward: ", ran, unsup);
  }, 50);
  WARN("backward: ran " << ran << ", unsupported " << unsup << ", skipped " << skipped);
}
