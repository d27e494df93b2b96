// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/cuda/stream.hpp -- strata::stream on CUDA: the shared implementation in
// runtime/gpu/stream.hpp over the CUDA table (runtime/cuda/api.hpp).
#pragma once

#include "strata/runtime/cuda/api.hpp"
#include "strata/runtime/gpu/stream.hpp"
