// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/conv/precompiled.hpp -- the convolution entries' instantiations that a precompiled kernel
// library (strata_add_kernel_library) compiles once; declared `extern` under STRATA_PRECOMPILED_ENTRIES
// (see strata/ops/gemm/precompiled.hpp for the scheme).
#pragma once

#include <cstdint>

#include "strata/ops/conv/host.hpp"

/// One pass and dtype pair: detail::run<Kind, TA, TD>, which both entry forms call after their checks.
#define STRATA_CONV_INSTANCE(prefix, KIND, TA, TD)                                                              \
  prefix template void strata::ops::conv::detail::run<strata::ops::conv::kind::KIND, TA, TD>(                   \
      strata::stream&, const strata::ops::conv::detail::roles&, const strata::ops::conv::problem&,               \
      const strata::ops::conv::tensor&, const strata::ops::conv::tensor&, const strata::ops::conv::tensor&,      \
      const strata::ops::conv::options&);

/// Every dtype pair of one pass (one library source per pass and input family).
#define STRATA_CONV_FLOAT_INSTANCES(prefix, KIND)                   \
  STRATA_CONV_INSTANCE(prefix, KIND, float, float)                  \
  STRATA_CONV_INSTANCE(prefix, KIND, strata::f16, strata::f16)      \
  STRATA_CONV_INSTANCE(prefix, KIND, strata::f16, float)            \
  STRATA_CONV_INSTANCE(prefix, KIND, strata::bf16, strata::bf16)    \
  STRATA_CONV_INSTANCE(prefix, KIND, strata::bf16, float)
#define STRATA_CONV_I8_INSTANCES(prefix, KIND)                      \
  STRATA_CONV_INSTANCE(prefix, KIND, std::int8_t, std::int8_t)      \
  STRATA_CONV_INSTANCE(prefix, KIND, std::int8_t, std::int32_t)

#if STRATA_PRECOMPILED_ENTRIES
STRATA_CONV_FLOAT_INSTANCES(extern, fprop)
STRATA_CONV_FLOAT_INSTANCES(extern, dgrad)
STRATA_CONV_FLOAT_INSTANCES(extern, wgrad)
STRATA_CONV_I8_INSTANCES(extern, fprop)
STRATA_CONV_I8_INSTANCES(extern, dgrad)
STRATA_CONV_I8_INSTANCES(extern, wgrad)
#endif
