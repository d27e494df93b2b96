// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/hip/stream.hpp -- strata::stream over a hipStream_t.
#pragma once

#include <hip/hip_runtime.h>

#include <utility>

#include "strata/runtime/hip/error.hpp"
#include "strata/runtime/detail/format.hpp"

namespace strata {

/// An in-order queue of device work. The default constructor creates a new non-blocking stream (it
/// does not synchronize with the legacy default stream, so independent libraries do not serialize);
/// wrap() borrows a stream that the caller owns (e.g. a framework's current stream).
class stream {
 public:
  stream() {
    hip::detail::check(hipStreamCreateWithFlags(&handle_, hipStreamNonBlocking),
                        [] { return std::string("hipStreamCreateWithFlags(hipStreamNonBlocking)"); });
    owned_ = true;
  }
  /// A non-owning view of `s`: the destructor leaves it alone. `s` may be 0 (the legacy default stream).
  static stream wrap(hipStream_t s) noexcept { return stream(s, false); }

  stream(stream&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)), owned_(std::exchange(o.owned_, false)) {}
  stream& operator=(stream&& o) noexcept {
    if (this != &o) {
      release();
      handle_ = std::exchange(o.handle_, nullptr);
      owned_ = std::exchange(o.owned_, false);
    }
    return *this;
  }
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  ~stream() { release(); }

  hipStream_t native_handle() const noexcept { return handle_; }

  /// Blocks until all work queued so far has finished; errors of that work surface here.
  void synchronize() {
    hip::detail::check(hipStreamSynchronize(handle_), [this] {
      return "hipStreamSynchronize(stream " + strata::detail::pointer_string(handle_) + ")";
    });
  }

 private:
  stream(hipStream_t s, bool owned) noexcept : handle_(s), owned_(owned) {}
  void release() noexcept {
    // A destructor cannot throw; a failure here means the context is already broken and the next
    // checked call will report it.
    if (owned_ && handle_) (void)hipStreamDestroy(handle_);
    handle_ = nullptr;
    owned_ = false;
  }

  hipStream_t handle_ = nullptr;
  bool owned_ = false;
};

}  // namespace strata
