// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/workspace.hpp -- scratch memory that the caller owns.
//
// Launches never allocate: an operator that needs scratch (split-K partials, stream-K fix-ups,
// split-KV partial results) reports its size with a `*_workspace_size(...)` function and takes a
// `workspace` from the caller, or asks a caller-supplied `workspace_allocator`. That keeps every
// launch capturable in a CUDA or HIP graph and lets frameworks use their caching allocators.
#pragma once

#include <cstddef>

namespace strata {

/// A block of device memory lent to one operator call. Alignment: at least 256 bytes.
struct workspace {
  void* data = nullptr;
  std::size_t bytes = 0;
};

/// Interface a framework implements to lend scratch memory (e.g. over PyTorch's caching allocator).
class workspace_allocator {
 public:
  virtual ~workspace_allocator() = default;
  /// Returns at least `bytes` bytes of device memory aligned to 256 bytes, usable in stream order.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p, std::size_t bytes) noexcept = 0;
};

}  // namespace strata
