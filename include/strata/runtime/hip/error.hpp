// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/hip/error.hpp -- strata::hip::detail::check, the shared check of runtime/gpu/error.hpp
// (a failed HIP runtime call becomes strata::backend_error naming the call).
#pragma once

#include "strata/runtime/hip/api.hpp"
#include "strata/runtime/gpu/error.hpp"

namespace strata::hip::detail {
using strata::detail::gpu::check;
}  // namespace strata::hip::detail
