// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/hip/memory.hpp -- device_buffer<T> and the stream-ordered copies on HIP: the shared implementation in
// runtime/gpu/memory.hpp over the HIP table (runtime/hip/api.hpp).
#pragma once

#include "strata/runtime/hip/api.hpp"
#include "strata/runtime/gpu/memory.hpp"
