// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target of strata::attention: the bytes choose dtype, head dims, batch / heads / GQA / lengths,
// layouts and padded strides, the options, and breakages (dtype / extent / head-dim mismatches,
// strides that are not multiples of 16 bytes, misaligned or null pointers, bad scale / window /
// soft-cap / dropout).
// Every input is either rejected with strata::invalid_argument / strata::unsupported naming
// "strata::attention", or the call returns and matches the double reference (test/property/attention_case.hpp).
#include <cstddef>
#include <cstdint>

#include "../property/attention_case.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  strata_fuzz::byte_source src(data, size);
  strata_property::attention::forward_case c;
  if (!strata_property::attention::make_forward(src, true, c)) return 0;
  strata::stream s;
  strata_fuzz::trace(c.describe());
  if (!strata_fuzz::call_entry("strata::attention: ", [&] { c.run(s); })) return 0;
  const std::string err = c.check();
  if (!err.empty()) strata_fuzz::fail(err + "\n  case: " + c.describe());
  return 0;
}
