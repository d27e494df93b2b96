// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/conv/depthwise.hpp -- the direct depthwise convolution (groups == input channels).
//
//   using K = strata::ops::conv::depthwise_kernel<strata::arch::sm80, bf16, ep>;
//   auto p = K::make_params(geometry, x, w, y, ep_params);
//   strata::launch(stream, K::launch_shape_of(p), K{}, p);
//
// Why not implicit GEMM: with one input channel per group the GEMM has K = T R S (9 for a 3 x 3
// filter) and N = the channel multiplier (usually 1), so a tensor-core tile would be almost all
// padding, and the gathers could not use vectors (one channel per group). Depthwise convolution is
// memory-bound: what matters is that every x element is read from cache, not recomputed.
//
// One thread per output element (pixel, channel), channels fastest, so on a channels-last tensor
// a warp reads and writes consecutive channels (coalesced) and the taps of neighbouring pixels hit
// the same cache lines. Output channel k reads input channel k / multiplier (multiplier = K / C) and
// filter row k: w[k][t][r][s] (the KRSC filter with C / groups = 1). Accumulation in float (int32
// for int8), then the epilogue chain at (output pixel, k), as conv::kernel's fprop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "strata/config/config.hpp"
#include "strata/epilogue/epilogue.hpp"
#include "strata/hierarchy/dims.hpp"
#include "strata/numeric/numeric.hpp"
#include "strata/ops/conv/types.hpp"
#include "strata/runtime/launch_shape.hpp"

namespace strata::ops::conv {

template <class Target, class T, class Epilogue>
struct depthwise_kernel {
  using target = Target;
  using epilogue_type = Epilogue;
  using acc_type = std::conditional_t<std::is_integral_v<T>, std::int32_t, float>;
  using td = typename Epilogue::output_type;
  static constexpr const char* name = "strata::ops::conv::depthwise_kernel";
  static constexpr int threads = 256;
  static constexpr int max_threads_per_block = threads;
  // CUDA occupancy request (the second __launch_bounds__ argument; HIP and the emulator ignore it):
  // up to 64 registers per thread, 4 blocks of 256 threads per SM. Given only the block size, ptxas
  // (nvcc 13) picked a target of 40 registers for the bf16 kernel on sm_90a and spilled 4 bytes
  // under it once bf16 widened without branches (2026-12-06), as the embedding kernels did before.
  static constexpr int register_budget = 64;
  static constexpr int min_blocks_per_multiprocessor = 65536 / (threads * register_budget);

  struct params {
    geometry g;
    long long pixels = 0;   // N Z P Q
    int k = 0;              // output channels
    int multiplier = 1;     // output channels per input channel
    const T* x = nullptr;
    const T* w = nullptr;
    td* y = nullptr;
    typename Epilogue::params epilogue;
  };

  static params make_params(const geometry& g, const T* x, const T* w, td* y, const typename Epilogue::params& ep) {
    params p{};
    p.g = g;
    p.pixels = (long long)g.n * g.out.extent.d * g.out.extent.h * g.out.extent.w;
    p.k = g.k_group * g.groups;
    p.multiplier = g.k_group;
    p.x = x;
    p.w = w;
    p.y = y;
    p.epilogue = ep;
    return p;
  }

  STRATA_HOST_DEVICE static long long elements(const params& p) { return p.pixels * p.k; }

  static launch_shape launch_shape_of(const params& p) {
    const long long blocks = (elements(p) + threads - 1) / threads;
    return launch_shape{.grid = dims(int(blocks > 0 ? blocks : 1)), .block = dims(threads)};
  }

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    const long long e = (long long)ctx.block().index().x * threads + ctx.block().thread_rank();
    if (e >= elements(p)) return;
    const geometry& g = p.g;
    const int k = int(e % p.k);
    const long long m = e / p.k;
    const auto o = g.out.decode(m);
    const int c = k / p.multiplier;
    const T* x = p.x + (long long)c * g.in_stride_c;
    const T* w = p.w + (long long)k * g.taps();
    acc_type acc = acc_type(0);
    for (int t = 0; t < g.filter.d; ++t) {
      const int zi = o.d * g.stride.d - g.pad.d + t * g.dilation.d;
      if (zi < 0 || zi >= g.in.extent.d) continue;
      for (int r = 0; r < g.filter.h; ++r) {
        const int yi = o.h * g.stride.h - g.pad.h + r * g.dilation.h;
        if (yi < 0 || yi >= g.in.extent.h) continue;
        for (int s = 0; s < g.filter.w; ++s) {
          const int xi = o.w * g.stride.w - g.pad.w + s * g.dilation.w;
          if (xi < 0 || xi >= g.in.extent.w) continue;
          const T xv = x[g.in.offset(o.n, zi, yi, xi)];
          const T wv = w[(t * g.filter.h + r) * g.filter.w + s];
          if constexpr (std::is_integral_v<T>) acc += acc_type(xv) * acc_type(wv);
          else acc += static_cast<float>(xv) * static_cast<float>(wv);
        }
      }
    }
    p.y[g.out.offset(m) + (long long)k * g.out_stride_c] = Epilogue::apply(acc, int(m), k, p.epilogue);
  }
};

}  // namespace strata::ops::conv
