// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/cuda/error.hpp -- strata::cuda::detail::check, the shared check of runtime/gpu/error.hpp
// (a failed CUDA runtime call becomes strata::backend_error naming the call).
#pragma once

#include "strata/runtime/cuda/api.hpp"
#include "strata/runtime/gpu/error.hpp"

namespace strata::cuda::detail {
using strata::detail::gpu::check;
}  // namespace strata::cuda::detail
