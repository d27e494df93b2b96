// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/hip/stream.hpp -- strata::stream on HIP: the shared implementation in
// runtime/gpu/stream.hpp over the HIP table (runtime/hip/api.hpp).
#pragma once

#include "strata/runtime/hip/api.hpp"
#include "strata/runtime/gpu/stream.hpp"
