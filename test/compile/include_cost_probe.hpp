// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/include_cost_probe.hpp -- the self-test of include_cost.cmake: a header written the way
// the GEMM entry was before 2026-12-05, a plain inline function that launches a kernel and is never
// called. compile.include_cost.<target>.probe includes it with the public headers and must see the
// check fail, naming the kernel count (a check that cannot fail proves nothing).
#pragma once

#include "strata/strata.hpp"

namespace strata_test {

struct include_cost_probe_kernel {
  struct params {
    float* out;
  };
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    p.out[ctx.block().thread_rank()] = 1.f;
  }
};

inline void include_cost_probe_never_called(strata::stream& s, float* out) {
  strata::launch(s, {.grid = 1, .block = 32}, include_cost_probe_kernel{}, include_cost_probe_kernel::params{out});
}

}  // namespace strata_test
