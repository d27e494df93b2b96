// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/unit/mbarrier_kernels.hpp -- kernels of the mbarrier tests (test/unit/mbarrier_test.cpp), also
// compiled for sm_80 and sm_90a by test/compile/mbarrier_kernels.cu.
//
//   ring_kernel<Target>   warp 0 produces `tiles` tiles of 32 floats into a ring of Stages shared
//                         stages, warp 1 consumes them: "full" barriers (one arrival from the producer,
//                         plus the stage's bytes as transactions on sm90+) and "empty" barriers (one
//                         arrival per consumer lane), waited on by phase parity; out[i] = the sum of
//                         tile i as the consumer read it.
#pragma once

#include <cstdint>

#include "strata/arch/mbarrier.hpp"
#include "strata/strata.hpp"

namespace strata_test {

struct ring_params {
  const float* in;  // tiles x 32
  float* out;       // tiles
  int tiles;
};

template <class Target, int Stages = 2>
struct ring_kernel {
  using target = Target;
  static constexpr const char* name = "ring_kernel";
  static constexpr bool tx = strata::detail::has_mbarrier_tx<Target>;
  struct shared_storage {
    strata::mbarrier full[Stages], empty[Stages];
    float stage[Stages][32];
  };

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const ring_params& p) const {
    auto& s = ctx.template shared<shared_storage>();
    const int lane = ctx.lane().index();
    if (ctx.block().thread_rank() == 0)
      for (int i = 0; i < Stages; ++i) {
        s.full[i].init(ctx, 1);
        s.empty[i].init(ctx, 32);
      }
    ctx.block().sync();
    if (ctx.warp().index() == 0) {  // producer
      for (int i = 0; i < p.tiles; ++i) {
        const int st = i % Stages, round = i / Stages;
        s.empty[st].wait(ctx, (round & 1) ^ 1);  // round 0 passes: the phase before the first
        if constexpr (tx) {
          // The stage's 128 bytes come as transactions: announced with the arrival, completed by each
          // lane's 4 bytes (as a copy engine would).
          if (lane == 0) s.full[st].arrive_expect_tx(ctx, 32 * sizeof(float));
          ctx.warp().sync();
          s.stage[st][lane] = p.in[i * 32 + lane];
          s.full[st].complete_tx(ctx, sizeof(float));
        } else {
          s.stage[st][lane] = p.in[i * 32 + lane];
          ctx.warp().sync();
          if (lane == 0) s.full[st].arrive(ctx);
        }
      }
    } else if (ctx.warp().index() == 1) {  // consumer
      for (int i = 0; i < p.tiles; ++i) {
        const int st = i % Stages, round = i / Stages;
        s.full[st].wait(ctx, round & 1);
        const float sum = ctx.warp().sum(s.stage[st][lane]);
        if (lane == 0) p.out[i] = sum;
        s.empty[st].arrive(ctx);
      }
    }
  }
};

}  // namespace strata_test
