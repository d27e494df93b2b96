// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/gpu/error.hpp -- turns a failed CUDA or HIP runtime call into strata::backend_error.
#pragma once

#include <string>
#include <utility>

#include "strata/runtime/error.hpp"
#include "strata/runtime/gpu/api.hpp"

namespace strata::detail::gpu {

/// Throws backend_error "<call>: <description> (<cudaErrorName>)" if `e` is not cudaSuccess (on HIP
/// hipErrorName, hipSuccess). `describe_call` builds the call text with its arguments; it runs only on
/// failure, so checking a call on the success path costs a comparison and allocates nothing.
/// Also reachable as strata::cuda::detail::check and strata::hip::detail::check.
template <class DescribeCall>
inline void check(gpu_api::error_t e, DescribeCall&& describe_call) {
  if (e == gpu_api::success) return;
  // Reset the runtime's "last error" so that a later, unrelated cudaGetLastError() does not report
  // this failure a second time (sticky errors stay: the context is unusable after them anyway).
  (void)gpu_api::get_last_error();
  throw backend_error(std::forward<DescribeCall>(describe_call)(), static_cast<int>(e),
                      std::string(gpu_api::error_string(e)) + " (" + gpu_api::error_name(e) + ")");
}

}  // namespace strata::detail::gpu
