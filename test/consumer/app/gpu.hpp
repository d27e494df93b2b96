// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The kernel of the GPU consumers (cuda.cu, hip.cpp): the same source for nvcc and hipcc, as a downstream
// project would write it. They are built, not run, where there is no GPU.
#pragma once

#include <strata/strata.hpp>

#include <cstdio>
#include <vector>

struct square_kernel {
  struct params {
    int* out;
    int n;
  };
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    const long long i = ctx.block().rank() * ctx.block().size() + ctx.block().thread_rank();
    if (i < p.n) p.out[i] = static_cast<int>(i * i);
  }
};

inline int run_square(const char* backend) {
  const int n = 1000;
  strata::stream s;
  strata::device_buffer<int> out(n);
  strata::launch(s, {.grid = (n + 255) / 256, .block = 256}, square_kernel{}, square_kernel::params{out.data(), n});
  std::vector<int> h(n);
  strata::copy_to_host(s, h.data(), out.data(), n);
  s.synchronize();
  for (int i = 0; i < n; ++i)
    if (h[i] != i * i) {
      std::printf("element %d is %d\n", i, h[i]);
      return 1;
    }
  std::printf("%s kernel (backend %s): %d elements right\nstrata-consumer: ok\n", backend,
              strata::to_string(strata::compiled_backend), n);
  return 0;
}
