// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Property test of strata::embedding_bag and strata::embedding_bag_backward (embedding_case.hpp):
// random tables / dims / row strides / padding indices in every row format, features with batch
// sizes incl. 0, CSR bags incl. empty ones or fixed-size bags, int32 / int64 indices, weights, every
// pooling, every bounds policy (bad indices and malformed offsets under clamp / skip; under error they
// must throw embedding::bounds_error), output formats and strides; backward dense / sparse / fused
// SGD, Adagrad, row-wise Adagrad. Against ops/embedding/reference.hpp at test/embedding's tolerances.
// STRATA_PROPERTY_CASES / STRATA_PROPERTY_SEED: see property.hpp.
#include "embedding_case.hpp"
#include "property.hpp"

using namespace strata_property;

namespace {

void run_embedding(bool backward, int default_cases) {
  int ran = 0, bounds_errors = 0, skipped = 0;
  bool self_tested = false;
  for_each_case([&](std::uint64_t seed, int) {
    rng r(seed);
    embedding::embedding_case c;
    if (!embedding::make_case(r, false, backward, c, 64u << 20)) return void(++skipped);
    INFO(c.describe());
    const bool bad = c.input_bad();
    const auto policy = backward ? c.ba.in.policy : c.fa.in.policy;
    strata::stream s;
    if (bad && policy == strata::embedding::bounds::error) {
      try {
        c.run(s);
        FAIL("bad input under bounds::error must throw strata::embedding::bounds_error");
      } catch (const strata::embedding::bounds_error& e) {
        CHECK(std::string(e.what()).rfind(backward ? "strata::embedding_bag_backward: " : "strata::embedding_bag: ", 0) == 0);
      }
      ++bounds_errors;
      const std::string intact = c.inputs_intact();  // and nothing was updated (fused: rows untouched)
      INFO(intact);
      if (!(backward && c.ba.kind == strata::embedding::gradient::fused)) CHECK(intact.empty());
      return;
    }
    c.run(s);
    const std::string err = c.check();
    INFO(err);
    REQUIRE(err.empty());
    if (!self_tested && c.corrupt_output()) {  // the oracle itself: a changed output must be caught
      CHECK_FALSE(c.check().empty());
      self_tested = true;
    }
    ++ran;
  }, default_cases);
  WARN((backward ? "backward" : "forward") << ": ran " << ran << ", bounds errors " << bounds_errors << ", skipped " << skipped);
}

}  // namespace

TEST_CASE("property: strata::embedding_bag matches the reference", "[property][embedding]") { run_embedding(false, 300); }

TEST_CASE("property: strata::embedding_bag_backward matches the reference", "[property][embedding][backward]") {
  run_embedding(true, 300);
}
