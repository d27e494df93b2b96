// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/gpu/memory.hpp -- device_buffer<T> and stream-ordered copies on CUDA and HIP.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "strata/runtime/detail/format.hpp"
#include "strata/runtime/error.hpp"
#include "strata/runtime/gpu/api.hpp"
#include "strata/runtime/gpu/error.hpp"
#include "strata/runtime/gpu/stream.hpp"

namespace strata {

/// `count` elements of T in device memory (cudaMalloc, hipMalloc), freed by the destructor. count 0
/// allocates nothing and data() is nullptr. The elements are not initialized.
template <class T>
class device_buffer {
  static_assert(std::is_trivially_copyable_v<T>, "strata::device_buffer<T>: T must be trivially copyable (it is copied as bytes)");
  using api = detail::gpu_api;

 public:
  explicit device_buffer(std::size_t count) : size_(count) {
    if (count == 0) return;
    if (count > std::numeric_limits<std::size_t>::max() / sizeof(T))
      throw invalid_argument("strata::device_buffer", "count",
                             std::to_string(count) + " elements of " + std::to_string(sizeof(T)) +
                                 " bytes overflow the size of an allocation");
    void* p = nullptr;
    const std::size_t b = bytes();
    detail::gpu::check(api::malloc(&p, b),
                       [b] { return std::string(api::prefix) + "Malloc(" + strata::detail::bytes_string(b) + ")"; });
    data_ = static_cast<T*>(p);
  }
  device_buffer(device_buffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  device_buffer& operator=(device_buffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer() { release(); }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }

 private:
  void release() noexcept {
    // cudaFree / hipFree synchronize the device, so in-flight work on this buffer finishes first.
    // Their error (only possible with a broken context) cannot be thrown from a destructor.
    if (data_) (void)api::free(data_);
    data_ = nullptr;
    size_ = 0;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

namespace detail::gpu {
/// "cudaMemcpyHostToDevice", "hipMemcpyDeviceToHost", ...
inline std::string kind_string(gpu_api::memcpy_kind k) {
  const char* kind = k == gpu_api::host_to_device     ? "MemcpyHostToDevice"
                     : k == gpu_api::device_to_host   ? "MemcpyDeviceToHost"
                     : k == gpu_api::device_to_device ? "MemcpyDeviceToDevice"
                                                      : "MemcpyDefault";
  return std::string(gpu_api::prefix) + kind;
}
template <class T>
void copy_async(stream& s, T* dst, const T* src, std::size_t count, gpu_api::memcpy_kind kind) {
  if (count == 0) return;
  const std::size_t b = count * sizeof(T);
  check(gpu_api::memcpy_async(dst, src, b, kind, s.native_handle()), [&] {
    using strata::detail::pointer_string;
    return std::string(gpu_api::prefix) + "MemcpyAsync(dst " + pointer_string(dst) + ", src " + pointer_string(src) +
           ", " + strata::detail::bytes_string(b) + ", " + kind_string(kind) + ", stream " +
           pointer_string(s.native_handle()) + ")";
  });
}
}  // namespace detail::gpu

/// Copies `count` elements host -> device, in stream order. With pageable host memory the runtime
/// stages the data, so `src` may be reused once the call returns.
template <class T>
void copy_to_device(stream& s, T* dst, const T* src, std::size_t count) {
  detail::gpu::copy_async(s, dst, src, count, detail::gpu_api::host_to_device);
}
/// Copies `count` elements device -> host, in stream order; read `dst` after s.synchronize().
template <class T>
void copy_to_host(stream& s, T* dst, const T* src, std::size_t count) {
  detail::gpu::copy_async(s, dst, src, count, detail::gpu_api::device_to_host);
}
/// Copies `count` elements device -> device, in stream order.
template <class T>
void copy_on_device(stream& s, T* dst, const T* src, std::size_t count) {
  detail::gpu::copy_async(s, dst, src, count, detail::gpu_api::device_to_device);
}

/// Sets `count` elements to all-zero bytes, in stream order (scratch counters, split-K partials).
template <class T>
void zero_on_device(stream& s, T* dst, std::size_t count) {
  if (count == 0) return;
  const std::size_t b = count * sizeof(T);
  detail::gpu::check(detail::gpu_api::memset_async(dst, 0, b, s.native_handle()), [&] {
    using strata::detail::pointer_string;
    return std::string(detail::gpu_api::prefix) + "MemsetAsync(dst " + pointer_string(dst) + ", 0, " +
           strata::detail::bytes_string(b) + ", stream " + pointer_string(s.native_handle()) + ")";
  });
}

}  // namespace strata
