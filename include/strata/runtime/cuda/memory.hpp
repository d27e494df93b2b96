// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/cuda/memory.hpp -- device_buffer<T> and the stream-ordered copies on CUDA: the shared implementation in
// runtime/gpu/memory.hpp over the CUDA table (runtime/cuda/api.hpp).
#pragma once

#include "strata/runtime/cuda/api.hpp"
#include "strata/runtime/gpu/memory.hpp"
