// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/hip/launch.hpp -- strata::launch on HIP: runtime/gpu/launch.hpp, with HIP's trampoline
// and launch call from runtime/hip/trampoline.hpp.
#pragma once

#include "strata/runtime/hip/api.hpp"
#include "strata/runtime/hip/trampoline.hpp"
#include "strata/runtime/gpu/launch.hpp"
