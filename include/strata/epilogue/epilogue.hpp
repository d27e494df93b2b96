// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/epilogue/epilogue.hpp -- composable element-wise tails shared by GEMM, attention and
// convolution: what happens to each accumulator element, with its (row, col) in the output, between
// the last MMA and the store.
//
//   op.hpp          the op concept (how to write your own op), value types, matrix_ref
//   ops.hpp         alpha_beta, bias_row / bias_col, scale_row / scale_col, residual, clamp, relu
//   activation.hpp  gelu_erf, gelu_tanh, silu, sigmoid (formulas and Inf/NaN behaviour there)
//   convert.hpp     convert_to<T>: float, f16, bf16, f8_e4m3, f8_e5m2 (saturating by default),
//                   int8 / int32 (saturating, NaN -> 0)
//   chain.hpp       chain<Ops...>: the ops in one template argument, their params in one aggregate
//
// Example: D = bf16(gelu_tanh(alpha * acc + beta * C + bias[col]))
//
//   namespace ep = strata::epilogue;
//   using tail = ep::chain<ep::alpha_beta<bf16>, ep::bias_col<bf16>, ep::gelu_tanh, ep::convert_to<bf16>>;
//   const tail::params p = tail::make_params({.alpha = 1.f, .beta = 1.f, .c = ep::row_major(c, ldc)},
//                                            {.data = bias}, {}, {});
//   ... d[row * ldd + col] = tail::apply(acc, row, col, p);   // inside the kernel
//
// Values flow in float (or int32 from integer accumulators, see op.hpp); the conversion at the end is
// the only narrowing. Everything is STRATA_HOST_DEVICE and header-only; nothing here touches memory
// except through the pointers in the params.
#pragma once

#include "strata/epilogue/activation.hpp"
#include "strata/epilogue/chain.hpp"
#include "strata/epilogue/convert.hpp"
#include "strata/epilogue/op.hpp"
#include "strata/epilogue/ops.hpp"
