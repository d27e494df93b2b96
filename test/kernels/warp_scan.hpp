// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/kernels/warp_scan.hpp -- inclusive prefix sum inside each warp with shfl_up (Hillis-Steele),
// plus a ballot of which lanes hold odd values. Shows warp collectives at warp size 32 and 64 and a
// partial last warp when the block size is not a multiple of the warp size.
#pragma once

#include "strata/strata.hpp"

namespace strata_test {

struct scan_params {
  const int* in;
  int* out;                  // inclusive scan within each warp
  unsigned long long* odd;   // per warp: ballot(in is odd)
  int* warp_max;             // per warp: max of the inputs (warp.max)
  long long n;
};

template <class Target>
struct warp_scan_kernel {
  using target = Target;
  static constexpr const char* name = "warp_scan_kernel";

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const scan_params& p) const {
    auto block = ctx.block();
    auto warp = ctx.warp();
    const int lane = ctx.lane().index();
    const long long i = block.rank() * block.size() + block.thread_rank();
    const int x = i < p.n ? p.in[i] : 0;

    int v = x;
    for (int d = 1; d < Ctx::warp_size; d <<= 1) {
      const int up = warp.shfl_up(v, d);
      if (lane >= d) v += up;
    }
    const auto odd = warp.ballot(i < p.n && (x & 1));
    const int mx = warp.max(x);
    if (i < p.n) p.out[i] = v;
    const long long w = block.rank() * warp.count() + warp.index();
    if (lane == 0) {
      p.odd[w] = static_cast<unsigned long long>(odd);
      p.warp_max[w] = mx;
    }
  }
};

}  // namespace strata_test
