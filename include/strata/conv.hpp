// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/conv.hpp -- the convolution operator: implicit-GEMM kernel template (fprop, dgrad, wgrad),
// the direct depthwise kernel, host entries (strata::conv, conv_backward_data, conv_backward_weight),
// and the double-precision reference.
#pragma once

#include "strata/strata.hpp"
#include "strata/ops/conv/types.hpp"
#include "strata/ops/conv/kernel.hpp"
#include "strata/ops/conv/depthwise.hpp"
#include "strata/ops/conv/reference.hpp"
#include "strata/ops/conv/host.hpp"
