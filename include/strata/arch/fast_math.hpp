// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/fast_math.hpp -- the hardware's approximate transcendental instructions, for the inner
// loops that can take their error (a softmax's exponentials), with the exact library call elsewhere.
//
//   strata::arch::exp2_approx(x)   2^x: one ex2.approx.ftz.f32 (MUFU.EX2) on NVIDIA, v_exp_f32 on
//                                  CDNA, std::exp2 on the host and the emulator
//   strata::arch::tanh_fast(x)     tanh x = 1 - 2 / (2^(2 x log2 e) + 1): one FMUL, MUFU.EX2, FADD,
//                                  MUFU.RCP and FFMA on NVIDIA (v_exp_f32 and v_rcp_f32 on CDNA)
//
// Why not ::exp2f: without --use_fast_math nvcc wraps MUFU.EX2 in subnormal handling (a compare and
// two multiplies per call); the softmax needs neither subnormal inputs nor outputs (a probability
// below 2^-126 of the row maximum rounds to zero in any 16-bit P anyway). PTX ISA: ex2.approx.ftz.f32
// has a maximum relative error of 2^-22 over the whole range; -inf gives +0, which the softmax relies
// on for masked scores.
//
// tanh_fast is for an attention soft-cap, cap * tanh(s / cap): the library's tanhf is about 20
// instructions with a call on its slow path, and PTX's tanh.approx.f32 has a relative error of 2^-11,
// which the capped logit carries as an absolute error of up to cap * 2^-11 (0.025 at cap 50, a 2.5 %
// error in its probability). Through ex2.approx and rcp.approx (relative errors 2^-22 and 2^-23) the
// absolute error stays within a few float ulps of 1 over the whole range; x -> +inf gives 1 (rcp of
// +inf is +0), x -> -inf gives -1, NaN stays NaN. Near 0 the result is absolutely, not relatively,
// accurate (the subtraction cancels), which is what a logit needs.
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

STRATA_HOST_DEVICE STRATA_FORCEINLINE float tanh_fast(float x) {
  constexpr float two_log2e = 2.8853900817779268f;  // 2 log2(e)
  const float e = exp2_approx(x * two_log2e) + 1.f;
#if STRATA_CUDA_DEVICE_PASS
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(e));
#elif STRATA_HIP_DEVICE_PASS
  const float r = __builtin_amdgcn_rcpf(e);  // v_rcp_f32 (1 ulp)
#else
  const float r = 1.f / e;
#endif
  return ::fmaf(-2.f, r, 1.f);
}

}  // namespace strata::arch
