// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/registers.hpp -- moving registers between the warpgroups of a block (setmaxnreg, sm_90a).
//
//   if (ctx.warpgroup().index() == 0) { arch::decrease_registers<40>(ctx);  ... TMA producer ... }
//   else                              { arch::increase_registers<232>(ctx); ... wgmma consumers ... }
//
// A warp-specialized kernel's producer needs few registers and its consumers many: setmaxnreg.dec
// releases registers of the calling warpgroup to the SM's pool, setmaxnreg.inc waits until it can take
// them. N is per thread, a multiple of 8 in 24..256, the same in every thread of the warpgroup (the
// instruction is .sync.aligned). It takes effect only when the kernel's register count is fixed at
// entry: the kernel declares max_threads_per_block and min_blocks_per_multiprocessor = 1 (the
// trampoline's __launch_bounds__), and each role is one branch of an if / else (ptxas warns, C7508,
// when it ignores the request). The budget must add up: producers x 128 x N_dec + consumers x 128 x
// N_inc at most 64 Ki registers.
//
// On the emulator (the kernel's target must list atom_family::wgmma: arch::sm90a) registers do not
// exist; the call is a warpgroup collective that checks all 128 threads ask the same count and
// direction.
#pragma once

#include "strata/arch/arch.hpp"
#include "strata/arch/target.hpp"
#include "strata/config/config.hpp"

#if !STRATA_DEVICE_PASS
#include <string>
#endif

namespace strata::arch {

namespace detail {

template <class Target>
inline constexpr bool has_setmaxnreg = Target::atoms.has(atom_family::wgmma);

template <int N, bool Increase, class Ctx>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void set_max_registers(Ctx& ctx) {
  static_assert(has_setmaxnreg<typename Ctx::target>, "setmaxnreg needs sm_90a (atom_family::wgmma)");
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg takes a multiple of 8 in 24..256 registers per thread");
  if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
    struct io {
      int n;
      bool increase;
    } mine{N, Increase};
    ctx.warpgroup().gather("setmaxnreg", &mine, [&](void* const* all, int threads) {
      for (int i = 0; i < threads; ++i) {
        const auto& o = *static_cast<const io*>(all[i]);
        if (o.n != N || o.increase != Increase)
          kernel_bug(ctx.emulated_thread(), std::string("setmaxnreg: threads of one warpgroup ask different register "
                                                        "counts or directions (") + std::to_string(N) + " and " +
                                                        std::to_string(o.n) + "); it must be warpgroup-uniform");
      }
    });
#endif
  } else {
    (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
    static_assert(has_setmaxnreg<current>,
                  "setmaxnreg: this pass compiles for a GPU without it (build the kernel for sm_90a)");
    if constexpr (Increase) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
    else asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
  }
}

}  // namespace detail

/// This warpgroup's threads may hold N registers each from here on; waits for them.
template <int N, class Ctx>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void increase_registers(Ctx& ctx) {
  detail::set_max_registers<N, true>(ctx);
}

/// This warpgroup's threads keep at most N registers each from here on; the rest go back to the SM.
template <int N, class Ctx>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void decrease_registers(Ctx& ctx) {
  detail::set_max_registers<N, false>(ctx);
}

}  // namespace strata::arch
