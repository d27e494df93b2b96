// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/gpu/stream.hpp -- strata::stream over a cudaStream_t or hipStream_t.
#pragma once

#include <string>
#include <utility>

#include "strata/runtime/detail/format.hpp"
#include "strata/runtime/gpu/api.hpp"
#include "strata/runtime/gpu/error.hpp"

namespace strata {

/// An in-order queue of device work. The default constructor creates a new non-blocking stream (it
/// does not synchronize with the legacy default stream, so independent libraries do not serialize);
/// wrap() borrows a stream that the caller owns (e.g. a framework's current stream).
class stream {
  using api = detail::gpu_api;

 public:
  stream() {
    detail::gpu::check(api::stream_create_non_blocking(&handle_), [] {
      return std::string(api::prefix) + "StreamCreateWithFlags(" + api::prefix + "StreamNonBlocking)";
    });
    owned_ = true;
  }
  /// A non-owning view of `s`: the destructor leaves it alone. `s` may be 0 (the legacy default stream).
  static stream wrap(api::stream_t s) noexcept { return stream(s, false); }

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

  api::stream_t native_handle() const noexcept { return handle_; }

  /// Blocks until all work queued so far has finished; errors of that work surface here.
  void synchronize() {
    detail::gpu::check(api::stream_synchronize(handle_), [this] {
      return std::string(api::prefix) + "StreamSynchronize(stream " + strata::detail::pointer_string(handle_) + ")";
    });
  }

 private:
  stream(api::stream_t s, bool owned) noexcept : handle_(s), owned_(owned) {}
  void release() noexcept {
    // A destructor cannot throw; a failure here means the context is already broken and the next
    // checked call will report it.
    if (owned_ && handle_) (void)api::stream_destroy(handle_);
    handle_ = nullptr;
    owned_ = false;
  }

  api::stream_t handle_ = nullptr;
  bool owned_ = false;
};

}  // namespace strata
