// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A downstream program that links strata::host and runs a kernel on the CPU emulator: proves the
// installed (or add_subdirectory'd) package carries everything a kernel launch needs, Boost.Context's
// compiled library included.
#include <strata/strata.hpp>

#include <cstdio>
#include <vector>

struct iota_kernel {
  struct params {
    int* out;
    int n;
  };
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    const long long i = ctx.block().rank() * ctx.block().size() + ctx.block().thread_rank();
    const int lanes_before = ctx.warp().sum(1) * ctx.warp().index();  // a warp collective and a reduction
    if (i < p.n) p.out[i] = static_cast<int>(i) + lanes_before - ctx.warp().index() * Ctx::warp_size;
  }
};

int main() {
  const int n = 1000;
  strata::stream s;
  strata::device_buffer<int> out(n);
  strata::launch(s, {.grid = (n + 127) / 128, .block = 128}, iota_kernel{}, iota_kernel::params{out.data(), n});
  std::vector<int> h(n);
  strata::copy_to_host(s, h.data(), out.data(), n);
  s.synchronize();
  for (int i = 0; i < n; ++i)
    if (h[i] != i) {
      std::printf("element %d is %d\n", i, h[i]);
      return 1;
    }
  std::printf("emulator kernel: %d elements right\nstrata-consumer: ok\n", n);
  return 0;
}
