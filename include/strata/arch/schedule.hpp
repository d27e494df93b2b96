// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/schedule.hpp -- pinning the order of a loop's phases against the compiler's scheduler.
//
//   strata::arch::scheduling_fence();   // nothing is moved across this point by the scheduler
//   const unsigned b = strata::arch::opaque(base);   // what the loop derives from b stays in the loop
//
// A register-staged K loop issues the next step's global loads, then the current step's MMAs, then
// writes the loaded registers to shared memory. clang's AMDGPU scheduler is free to move the loads
// below most of the MMAs (they do not touch memory) and it did (clang 15, the bf16 128 x 128 MFMA
// GEMM tile on gfx940: loads after 10 of 16 MFMA, their LDS writes, each waiting for its load, 3
// MFMA later), which leaves the load latency exposed. __builtin_amdgcn_sched_barrier(0) (LLVM 15+)
// is a barrier for the scheduler only: it emits no instruction. On NVIDIA, ptxas does its own
// scheduling after the PTX, where no such hint exists, and on the host there is nothing to pin: the
// function is empty there.
#pragma once

#include "strata/config/config.hpp"

namespace strata::arch {

STRATA_HOST_DEVICE STRATA_FORCEINLINE void scheduling_fence() {
#if STRATA_HIP_DEVICE_PASS
  __builtin_amdgcn_sched_barrier(0);
#endif
}

/// x, which the compiler must take as unknown at this point: what a loop derives from it is worked out
/// in the loop instead of hoisted before it and kept live through the whole loop. For values that are
/// cheap to recompute and many (the Hopper attention backward's 16 swizzled store offsets, one XOR
/// each, spilled when nvcc hoisted them). On CUDA an empty asm that claims to change the register; it
/// emits no instruction. Elsewhere x as it is.
template <class T>
STRATA_HOST_DEVICE STRATA_FORCEINLINE T opaque(T x) {
  static_assert(sizeof(T) == 4, "arch::opaque takes 32-bit values");
#if STRATA_CUDA_DEVICE_PASS
  asm volatile("" : "+r"(x));
#endif
  return x;
}

}  // namespace strata::arch
