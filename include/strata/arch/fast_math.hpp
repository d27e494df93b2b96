// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/fast_math.hpp -- the hardware's approximate transcendental instructions, for the inner
// loops that can take their error (a softmax's exponentials), with the exact library call elsewhere.
//
//   strata::arch::exp2_approx(x)   2^x: one ex2.approx.ftz.f32 (MUFU.EX2) on NVIDIA, v_exp_f32 on
//                                  CDNA, std::exp2 on the host and the emulator
//
// Why not ::exp2f: without --use_fast_math nvcc wraps MUFU.EX2 in subnormal handling (a compare and
// two multiplies per call); the softmax needs neither subnormal inputs nor outputs (a probability
// below 2^-126 of the row maximum rounds to zero in any 16-bit P anyway). PTX ISA: ex2.approx.ftz.f32
// has a maximum relative error of 2^-22 over the whole range; -inf gives +0, which the softmax relies
// on for masked scores.
#pragma once

#include <cmath>

#include "strata/config/config.hpp"

namespace strata::arch {

STRATA_HOST_DEVICE STRATA_FORCEINLINE float exp2_approx(float x) {
#if STRATA_CUDA_DEVICE_PASS
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#elif STRATA_HIP_DEVICE_PASS
  return __builtin_exp2f(x);  // llvm.exp2.f32: v_exp_f32 (clang 15 has no __builtin_amdgcn_exp2f)
#else
  return std::exp2(x);
#endif
}

}  // namespace strata::arch
