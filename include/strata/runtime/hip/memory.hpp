// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/hip/memory.hpp -- device_buffer<T> and stream-ordered copies on HIP.
#pragma once

#include <hip/hip_runtime.h>

#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "strata/runtime/hip/error.hpp"
#include "strata/runtime/hip/stream.hpp"
#include "strata/runtime/detail/format.hpp"
#include "strata/runtime/error.hpp"

namespace strata {

/// `count` elements of T in device memory (hipMalloc), freed by the destructor. count 0 allocates
/// nothing and data() is nullptr. The elements are not initialized.
template <class T>
class device_buffer {
  static_assert(std::is_trivially_copyable_v<T>, "strata::device_buffer<T>: T must be trivially copyable (it is copied as bytes)");

 public:
  explicit device_buffer(std::size_t count) : size_(count) {
    if (count == 0) return;
    if (count > std::numeric_limits<std::size_t>::max() / sizeof(T))
      throw invalid_argument("strata::device_buffer", "count",
                             std::to_string(count) + " elements of " + std::to_string(sizeof(T)) +
                                 " bytes overflow the size of an allocation");
    void* p = nullptr;
    const std::size_t b = bytes();
    hip::detail::check(hipMalloc(&p, b), [b] { return "hipMalloc(" + strata::detail::bytes_string(b) + ")"; });
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
    // hipFree synchronizes the device, so in-flight work on this buffer finishes first. Its error
    // (only possible with a broken context) cannot be thrown from a destructor.
    if (data_) (void)hipFree(data_);
    data_ = nullptr;
    size_ = 0;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

namespace hip::detail {
inline const char* kind_string(hipMemcpyKind k) {
  switch (k) {
    case hipMemcpyHostToDevice: return "hipMemcpyHostToDevice";
    case hipMemcpyDeviceToHost: return "hipMemcpyDeviceToHost";
    case hipMemcpyDeviceToDevice: return "hipMemcpyDeviceToDevice";
    default: return "hipMemcpyDefault";
  }
}
template <class T>
void copy_async(stream& s, T* dst, const T* src, std::size_t count, hipMemcpyKind kind) {
  if (count == 0) return;
  const std::size_t b = count * sizeof(T);
  check(hipMemcpyAsync(dst, src, b, kind, s.native_handle()), [&] {
    using strata::detail::pointer_string;
    return "hipMemcpyAsync(dst " + pointer_string(dst) + ", src " + pointer_string(src) + ", " +
           strata::detail::bytes_string(b) + ", " + kind_string(kind) + ", stream " + pointer_string(s.native_handle()) + ")";
  });
}
}  // namespace hip::detail

/// Copies `count` elements host -> device, in stream order. With pageable host memory HIP stages
/// the data, so `src` may be reused once the call returns.
template <class T>
void copy_to_device(stream& s, T* dst, const T* src, std::size_t count) {
  hip::detail::copy_async(s, dst, src, count, hipMemcpyHostToDevice);
}
/// Copies `count` elements device -> host, in stream order; read `dst` after s.synchronize().
template <class T>
void copy_to_host(stream& s, T* dst, const T* src, std::size_t count) {
  hip::detail::copy_async(s, dst, src, count, hipMemcpyDeviceToHost);
}
/// Copies `count` elements device -> device, in stream order.
template <class T>
void copy_on_device(stream& s, T* dst, const T* src, std::size_t count) {
  hip::detail::copy_async(s, dst, src, count, hipMemcpyDeviceToDevice);
}

/// Sets `count` elements to all-zero bytes, in stream order (scratch counters, split-K partials).
template <class T>
void zero_on_device(stream& s, T* dst, std::size_t count) {
  if (count == 0) return;
  const std::size_t b = count * sizeof(T);
  hip::detail::check(hipMemsetAsync(dst, 0, b, s.native_handle()), [&] {
    using strata::detail::pointer_string;
    return "hipMemsetAsync(dst " + pointer_string(dst) + ", 0, " + strata::detail::bytes_string(b) + ", stream " +
           pointer_string(s.native_handle()) + ")";
  });
}

}  // namespace strata
