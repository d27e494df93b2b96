// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Conan test_package: a tiny kernel on the host emulator, linked through strata::host.
#include <strata/strata.hpp>

#include <cstdio>
#include <vector>

struct add_one_kernel {
  struct params {
    int* data;
    int n;
  };
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    const long long i = ctx.block().rank() * ctx.block().size() + ctx.block().thread_rank();
    if (i < p.n) p.data[i] += 1;
  }
};

int main() {
  const int n = 300;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = i;
  strata::stream s;
  strata::device_buffer<int> d(n);
  strata::copy_to_device(s, d.data(), h.data(), n);
  strata::launch(s, {.grid = (n + 127) / 128, .block = 128}, add_one_kernel{}, add_one_kernel::params{d.data(), n});
  strata::copy_to_host(s, h.data(), d.data(), n);
  s.synchronize();
  for (int i = 0; i < n; ++i)
    if (h[i] != i + 1) {
      std::printf("element %d is %d, not %d\n", i, h[i], i + 1);
      return 1;
    }
  std::printf("Strata %s (conan package): kernel on the host emulator, %d elements right\n", STRATA_VERSION_STRING, n);
  return 0;
}
