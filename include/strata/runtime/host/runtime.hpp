// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/host/runtime.hpp -- the runtime interface on the host backend: the "device" is the
// emulator, device memory is host memory, and a stream runs each launch to completion in order.
//
// Stream order holds trivially: launch() returns when the kernel is done, so later work on the stream
// sees its results, and stream::synchronize() has nothing to wait for. That keeps kernels debuggable
// with gdb on the calling thread's stack (worker 0 is the calling thread).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <utility>

#include "strata/arch/host.hpp"
#include "strata/emulator/emulator.hpp"
#include "strata/runtime/device_memory.hpp"
#include "strata/runtime/device_properties.hpp"
#include "strata/runtime/error.hpp"
#include "strata/runtime/launch_shape.hpp"

namespace strata {

/// An in-order queue of work on the emulator; carries the emulator's options for its launches.
class stream {
 public:
  using native_handle_type = emulator::options*;

  stream() : opts_(emulator::options::from_environment()) {}
  explicit stream(const emulator::options& o) : opts_(o) {}

  void synchronize() {}
  const emulator::options& emulator_options() const { return opts_; }
  void set_emulator_options(const emulator::options& o) { opts_ = o; }
  native_handle_type native_handle() { return &opts_; }

 private:
  emulator::options opts_;
};

/// `count` elements of device memory (host memory on this backend), 256-byte aligned, uninitialized.
/// Registered as device memory while it lives (strata/runtime/device_memory.hpp: the host-pointer check).
template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t count) : count_(count) {
    if (count == 0) return;
    if (count > static_cast<std::size_t>(-1) / sizeof(T))
      throw invalid_argument("strata::device_buffer", "count", std::to_string(count) + " elements overflow size_t");
    const std::size_t bytes = (count * sizeof(T) + 255) / 256 * 256;
    data_ = static_cast<T*>(::operator new(bytes, std::align_val_t{256}, std::nothrow));
    if (!data_)
      throw backend_error("strata::device_buffer(" + std::to_string(count * sizeof(T)) + " bytes)", 0,
                          "host allocation failed: out of memory");
    try {
      register_device_memory(data_, bytes);
    } catch (...) {
      ::operator delete(static_cast<void*>(data_), std::align_val_t{256});
      throw;
    }
  }
  device_buffer(device_buffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  device_buffer& operator=(device_buffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer() { release(); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  void release() {
    if (data_) {
      unregister_device_memory(data_);
      ::operator delete(static_cast<void*>(data_), std::align_val_t{256});
    }
    data_ = nullptr;
  }
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

namespace detail {
template <class T>
void host_copy(const char* call, T* dst, const T* src, std::size_t count) {
  if (count == 0) return;
  if (!dst || !src)
    throw invalid_argument(std::string("strata::") + call, dst ? "src" : "dst", "is null for a copy of " +
                                                                               std::to_string(count) + " elements");
  std::memmove(static_cast<void*>(dst), static_cast<const void*>(src), count * sizeof(T));
}
}  // namespace detail

template <class T>
void copy_to_device(stream&, T* dst, const T* src, std::size_t count) {
  detail::host_copy("copy_to_device", dst, src, count);
}
template <class T>
void copy_to_host(stream&, T* dst, const T* src, std::size_t count) {
  detail::host_copy("copy_to_host", dst, src, count);
}
template <class T>
void copy_on_device(stream&, T* dst, const T* src, std::size_t count) {
  detail::host_copy("copy_on_device", dst, src, count);
}

/// Sets `count` elements to all-zero bytes (scratch counters, split-K partials).
template <class T>
void zero_on_device(stream&, T* dst, std::size_t count) {
  if (count == 0) return;
  if (!dst) throw invalid_argument("strata::zero_on_device", "dst", "is null for " + std::to_string(count) + " elements");
  std::memset(static_cast<void*>(dst), 0, count * sizeof(T));
}

/// The emulator counts as one device.
inline int device_count() { return 1; }

inline device_properties get_device_properties(int device = 0) {
  if (device != 0)
    throw invalid_argument("strata::get_device_properties", "device",
                           "is " + std::to_string(device) + " but the host backend has one device (0)");
  device_properties p;
  const int workers = emulator::options::from_environment().resolved_workers();
  p.name = "Strata host emulator (" + std::to_string(workers) + " workers)";
  p.arch = "host";
  p.multiprocessor_count = workers;
  p.warp_size = arch::host::warp_size;
  p.shared_memory_per_block = arch::host::shared_memory_per_block;
  p.l2_bytes = 0;
  p.chiplets = arch::host::chiplets.count;
  p.units_per_chiplet = workers;
  return p;
}

/// Runs kernel(ctx, params) over `shape` on the emulator, as Kernel::target (default: arch::host).
template <class Kernel, class Params>
void launch(stream& s, const launch_shape& shape, const Kernel& kernel, const Params& params) {
  using target = kernel_target_t<Kernel, arch::host>;
  // The host-pointer check (device_memory.hpp): no parameter may point to unregistered host memory.
  if (host_pointer_check()) detail::require_device_params([] { return kernel_name<Kernel>(); }, params);
  emulator::launch<target>(s.emulator_options(), shape, kernel, params);
}

}  // namespace strata
