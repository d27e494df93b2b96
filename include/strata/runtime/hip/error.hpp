// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/hip/error.hpp -- turns a failed HIP runtime call into strata::backend_error.
#pragma once

#include <hip/hip_runtime.h>

#include <string>
#include <utility>

#include "strata/runtime/error.hpp"

namespace strata::hip::detail {

/// Throws backend_error "<call>: <description> (<hipErrorName>)" if `e` is not hipSuccess.
/// `describe_call` builds the call text with its arguments; it runs only on failure, so checking a
/// call on the success path costs a comparison and allocates nothing.
template <class DescribeCall>
inline void check(hipError_t e, DescribeCall&& describe_call) {
  if (e == hipSuccess) return;
  // Reset the runtime's "last error" so that a later, unrelated hipGetLastError() does not report
  // this failure a second time (sticky errors stay: the context is unusable after them anyway).
  (void)hipGetLastError();
  throw backend_error(std::forward<DescribeCall>(describe_call)(), static_cast<int>(e),
                      std::string(hipGetErrorString(e)) + " (" + hipGetErrorName(e) + ")");
}

}  // namespace strata::hip::detail
