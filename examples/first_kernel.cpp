// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// examples/first_kernel.cpp -- the README's example: one kernel source, run here on the host emulator.
// Build: g++ -std=c++20 -Iinclude examples/first_kernel.cpp -lboost_context -pthread
#include <cstdio>
#include <vector>

#include <strata/strata.hpp>

// y = a*x + y, then each warp adds up its part of y with a warp reduction.
struct saxpy_kernel {
  struct params { float a; const float* x; float* y; float* warp_sums; int n; };

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    const long long i = ctx.block().rank() * ctx.block().size() + ctx.block().thread_rank();
    const float y = i < p.n ? p.a * p.x[i] + p.y[i] : 0.f;
    if (i < p.n) p.y[i] = y;
    const float sum = ctx.warp().sum(y);                    // every lane of the warp takes part
    if (ctx.lane().index() == 0) p.warp_sums[i / Ctx::warp_size] = sum;
  }
};

int main() {
  const int n = 1000;
  std::vector<float> x(n, 1.f), y(n, 2.f), sums((n + 31) / 32);
  strata::stream s;
  strata::device_buffer<float> dx(n), dy(n), dsums(sums.size());
  strata::copy_to_device(s, dx.data(), x.data(), n);
  strata::copy_to_device(s, dy.data(), y.data(), n);
  strata::launch(s, {.grid = (n + 255) / 256, .block = 256}, saxpy_kernel{},
                 saxpy_kernel::params{3.f, dx.data(), dy.data(), dsums.data(), n});
  strata::copy_to_host(s, sums.data(), dsums.data(), sums.size());
  s.synchronize();
  std::printf("first warp sum: %g (expect %g)\n", sums[0], 32 * 5.0);
  return sums[0] == 160.f ? 0 : 1;
}
