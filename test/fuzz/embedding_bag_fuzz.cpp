// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target of strata::embedding_bag: the bytes choose row format, tables (rows, dims, row strides,
// padding index), features, CSR or fixed-size bags, index type, index values incl. out-of-range ones,
// offsets incl. decreasing and past-the-end ones, weights, pooling, bounds policy, output format and
// stride, and breakages (negative or mismatched extents, bad
// strides, null or misaligned pointers, weights with mean / max, small workspaces). Every input is
// either rejected with strata::invalid_argument (incl. embedding::bounds_error) / strata::unsupported
// naming "strata::embedding_bag", or the call returns and matches the double reference
// (test/property/embedding_case.hpp), with nothing outside the outputs written.
#include <cstddef>
#include <cstdint>

#include "../property/embedding_case.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  strata_fuzz::byte_source src(data, size);
  strata_property::embedding::embedding_case c;
  if (!strata_property::embedding::make_case(src, true, false, c)) return 0;
  strata::stream s;
  strata_fuzz::trace(c.describe());
  if (!strata_fuzz::call_entry("strata::embedding_bag: ", [&] { c.run(s); })) {
    const std::string intact = c.inputs_intact();  // a rejected call wrote nothing outside its outputs
    if (!intact.empty() && !(false && c.ba.kind == strata::embedding::gradient::fused)) strata_fuzz::fail(intact + "\n  case: " + c.describe());
    return 0;
  }
  const std::string err = c.check();
  if (!err.empty()) strata_fuzz::fail(err + "\n  case: " + c.describe());
  return 0;
}
