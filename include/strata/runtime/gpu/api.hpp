// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/gpu/api.hpp -- selects the vendor table (strata::detail::gpu_api) of the shared GPU
// runtime: runtime/cuda/api.hpp under nvcc, runtime/hip/api.hpp under hipcc.
#pragma once

#include "strata/config/config.hpp"

#if STRATA_BACKEND_CUDA
#include "strata/runtime/cuda/api.hpp"
#elif STRATA_BACKEND_HIP
#include "strata/runtime/hip/api.hpp"
#else
#error "strata/runtime/gpu/ is the CUDA and HIP runtime: compile this translation unit with nvcc or hipcc (include <strata/strata.hpp>)"
#endif
