// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/cuda/error.hpp -- turns a failed CUDA runtime call into strata::backend_error.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <utility>

#include "strata/runtime/error.hpp"

namespace strata::cuda::detail {

/// Throws backend_error "<call>: <description> (<cudaErrorName>)" if `e` is not cudaSuccess.
/// `describe_call` builds the call text with its arguments; it runs only on failure, so checking a
/// call on the success path costs a comparison and allocates nothing.
template <class DescribeCall>
inline void check(cudaError_t e, DescribeCall&& describe_call) {
  if (e == cudaSuccess) return;
  // Reset the runtime's "last error" so that a later, unrelated cudaGetLastError() does not report
  // this failure a second time (sticky errors stay: the context is unusable after them anyway).
  (void)cudaGetLastError();
  throw backend_error(std::forward<DescribeCall>(describe_call)(), static_cast<int>(e),
                      std::string(cudaGetErrorString(e)) + " (" + cudaGetErrorName(e) + ")");
}

}  // namespace strata::cuda::detail
