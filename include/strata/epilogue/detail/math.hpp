// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/epilogue/detail/math.hpp -- the few float math functions the epilogue ops need, one spelling
// for every backend.
//
// The C names (::expf, ::erfcf, ::rintf) are what all three compilers provide: glibc's <math.h>
// (reached through <cmath>) on the host, the CUDA math library in nvcc's device pass, and clang's
// __clang_hip_math.h (ocml) in hipcc's device pass. std::exp(float) works too on the three, but the
// C names leave no doubt that the float overload is the one called (no silent double math on the
// device). Accuracy is the platform's: CUDA documents expf at 2 ulp and erfcf at 4 ulp; glibc is
// within 1-2 ulp. -use_fast_math / -ffast-math swap in faster, less accurate versions.
//
// Not STRATA_FORCEINLINE here or anywhere in epilogue/: under hipcc it expands to __forceinline__, which
// only the HIP runtime headers define, and these headers must compile on their own (before
// <strata/strata.hpp> or without it). The device compilers inline such small functions anyway.
#pragma once

#include <cmath>

#include "strata/config/config.hpp"

namespace strata::epilogue::detail {

STRATA_HOST_DEVICE inline float exp(float x) { return ::expf(x); }
STRATA_HOST_DEVICE inline float erfc(float x) { return ::erfcf(x); }
/// Round to the nearest integer, ties to even (the default rounding mode; CUDA's cvt.rni).
STRATA_HOST_DEVICE inline float rint(float x) { return ::rintf(x); }

}  // namespace strata::epilogue::detail
