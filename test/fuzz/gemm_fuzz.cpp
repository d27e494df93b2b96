// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target of strata::gemm: the bytes choose shapes, layouts, lds, batch strides, dtypes,
// alpha / beta, C aliasing D, bias, ReLU, split-K / stream-K, the workspace, and breakages (short lds,
// null or misaligned pointers, mismatched shapes / dtypes, negative extents, bad options). Every input
// is either rejected with strata::invalid_argument / strata::unsupported naming "strata::gemm", or
// the call returns and D matches the double reference (test/property/gemm_oracle.hpp).
#include <cstddef>
#include <cstdint>

#include "../property/gemm_case.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  strata_fuzz::byte_source src(data, size);
  strata_property::gemm::gemm_case gc;
  if (!strata_property::gemm::make_case(src, true, gc)) return 0;
  strata::stream s;
  strata_fuzz::trace(gc.describe());
  if (!strata_fuzz::call_entry("strata::gemm: ", [&] { gc.run(s); })) return 0;
  const std::string err = gc.check();
  if (!err.empty()) strata_fuzz::fail(err + "\n  case: " + gc.describe());
  return 0;
}
