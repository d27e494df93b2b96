// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/cuda/memory.hpp -- device_buffer<T> and stream-ordered copies on CUDA.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "strata/runtime/cuda/error.hpp"
#include "strata/runtime/cuda/stream.hpp"
#include "strata/runtime/detail/format.hpp"
#include "strata/runtime/error.hpp"

namespace strata {

/// `count` elements of T in device memory (cudaMalloc), freed by the destructor. count 0 allocates
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
    cuda::detail::check(cudaMalloc(&p, b), [b] { return "cudaMalloc(" + strata::detail::bytes_string(b) + ")"; });
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
    // cudaFree synchronizes the device, so in-flight work on this buffer finishes first. Its error
    // (only possible with a broken context) cannot be thrown from a destructor.
    if (data_) (void)cudaFree(data_);
    data_ = nullptr;
    size_ = 0;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

namespace cuda::detail {
inline const char* kind_string(cudaMemcpyKind k) {
  switch (k) {
    case cudaMemcpyHostToDevice: return "cudaMemcpyHostToDevice";
    case cudaMemcpyDeviceToHost: return "cudaMemcpyDeviceToHost";
    case cudaMemcpyDeviceToDevice: return "cudaMemcpyDeviceToDevice";
    default: return "cudaMemcpyDefault";
  }
}
template <class T>
void copy_async(stream& s, T* dst, const T* src, std::size_t count, cudaMemcpyKind kind) {
  if (count == 0) return;
  const std::size_t b = count * sizeof(T);
  check(cudaMemcpyAsync(dst, src, b, kind, s.native_handle()), [&] {
    using strata::detail::pointer_string;
    return "cudaMemcpyAsync(dst " + pointer_string(dst) + ", src " + pointer_string(src) + ", " +
           strata::detail::bytes_string(b) + ", " + kind_string(kind) + ", stream " + pointer_string(s.native_handle()) + ")";
  });
}
}  // namespace cuda::detail

/// Copies `count` elements host -> device, in stream order. With pageable host memory CUDA stages
/// the data, so `src` may be reused once the call returns.
template <class T>
void copy_to_device(stream& s, T* dst, const T* src, std::size_t count) {
  cuda::detail::copy_async(s, dst, src, count, cudaMemcpyHostToDevice);
}
/// Copies `count` elements device -> host, in stream order; read `dst` after s.synchronize().
template <class T>
void copy_to_host(stream& s, T* dst, const T* src, std::size_t count) {
  cuda::detail::copy_async(s, dst, src, count, cudaMemcpyDeviceToHost);
}
/// Copies `count` elements device -> device, in stream order.
template <class T>
void copy_on_device(stream& s, T* dst, const T* src, std::size_t count) {
  cuda::detail::copy_async(s, dst, src, count, cudaMemcpyDeviceToDevice);
}

/// Sets `count` elements to all-zero bytes, in stream order (scratch counters, split-K partials).
template <class T>
void zero_on_device(stream& s, T* dst, std::size_t count) {
  if (count == 0) return;
  const std::size_t b = count * sizeof(T);
  cuda::detail::check(cudaMemsetAsync(dst, 0, b, s.native_handle()), [&] {
    using strata::detail::pointer_string;
    return "cudaMemsetAsync(dst " + pointer_string(dst) + ", 0, " + strata::detail::bytes_string(b) + ", stream " +
           pointer_string(s.native_handle()) + ")";
  });
}

}  // namespace strata
