// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/cuda/launch.hpp -- strata::launch on CUDA: runtime/gpu/launch.hpp, with CUDA's trampoline
// and launch call from runtime/cuda/trampoline.hpp.
#pragma once

#include "strata/runtime/cuda/api.hpp"
#include "strata/runtime/cuda/trampoline.hpp"
#include "strata/runtime/gpu/launch.hpp"
