// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/detail/format.hpp -- text for the error messages of the CUDA and HIP runtimes.
//
// Every backend_error names the call and its arguments. The strings are only built once a call has
// failed (callers pass a lambda), so the success path of a launch or copy allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "strata/hierarchy/dims.hpp"

namespace strata::detail {

inline std::string pointer_string(const void* p) {
  if (!p) return "nullptr";
  char buf[2 + 2 * sizeof(void*) + 1];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p)));
  return buf;
}

inline std::string bytes_string(std::size_t n) { return std::to_string(n) + " bytes"; }

inline std::string dims_string(dims d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

}  // namespace strata::detail
