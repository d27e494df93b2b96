// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/gpu/api_table.hpp -- the part of the vendor runtime table that CUDA and HIP share.
//
// Included only by runtime/cuda/api.hpp and runtime/hip/api.hpp, with STRATA_GPU_API(name) defined to
// paste the vendor prefix (cuda##name, hip##name): HIP's runtime API mirrors CUDA's call for call and
// enumerator for enumerator (hipMalloc/cudaMalloc, hipMemcpyHostToDevice/cudaMemcpyHostToDevice), so
// the entries that differ only by that prefix are written once here. Each backend's api.hpp derives
// its table from this one and adds what really differs (device properties, launch).
#pragma once

#include <cstddef>

#ifndef STRATA_GPU_API
#error "strata/runtime/gpu/api_table.hpp is included by runtime/cuda/api.hpp or runtime/hip/api.hpp, which define STRATA_GPU_API"
#endif

namespace strata::detail {

/// Static inline wrappers and type aliases only: the shared runtime compiles to the same calls as if
/// it named the vendor functions itself.
struct gpu_api_table {
  using error_t = STRATA_GPU_API(Error_t);
  using stream_t = STRATA_GPU_API(Stream_t);
  using memcpy_kind = STRATA_GPU_API(MemcpyKind);

  static constexpr error_t success = STRATA_GPU_API(Success);
  static constexpr memcpy_kind host_to_device = STRATA_GPU_API(MemcpyHostToDevice);
  static constexpr memcpy_kind device_to_host = STRATA_GPU_API(MemcpyDeviceToHost);
  static constexpr memcpy_kind device_to_device = STRATA_GPU_API(MemcpyDeviceToDevice);

  // ---- errors
  static error_t get_last_error() noexcept { return STRATA_GPU_API(GetLastError)(); }
  static const char* error_string(error_t e) noexcept { return STRATA_GPU_API(GetErrorString)(e); }
  static const char* error_name(error_t e) noexcept { return STRATA_GPU_API(GetErrorName)(e); }
  /// No device or no driver: device_count() reports 0 devices instead of failing.
  static bool no_device(error_t e) noexcept {
    return e == STRATA_GPU_API(ErrorNoDevice) || e == STRATA_GPU_API(ErrorInsufficientDriver);
  }

  // ---- memory
  static error_t malloc(void** p, std::size_t bytes) noexcept { return STRATA_GPU_API(Malloc)(p, bytes); }
  static error_t free(void* p) noexcept { return STRATA_GPU_API(Free)(p); }
  static error_t memcpy_async(void* dst, const void* src, std::size_t bytes, memcpy_kind kind, stream_t s) noexcept {
    return STRATA_GPU_API(MemcpyAsync)(dst, src, bytes, kind, s);
  }
  static error_t memset_async(void* dst, int value, std::size_t bytes, stream_t s) noexcept {
    return STRATA_GPU_API(MemsetAsync)(dst, value, bytes, s);
  }

  // ---- streams
  static error_t stream_create_non_blocking(stream_t* s) noexcept {
    return STRATA_GPU_API(StreamCreateWithFlags)(s, STRATA_GPU_API(StreamNonBlocking));
  }
  static error_t stream_synchronize(stream_t s) noexcept { return STRATA_GPU_API(StreamSynchronize)(s); }
  static error_t stream_destroy(stream_t s) noexcept { return STRATA_GPU_API(StreamDestroy)(s); }

  // ---- devices
  static error_t get_device_count(int* n) noexcept { return STRATA_GPU_API(GetDeviceCount)(n); }
  static error_t get_device(int* device) noexcept { return STRATA_GPU_API(GetDevice)(device); }

  // ---- launch
  /// What a vendor launcher (runtime/<vendor>/trampoline.hpp) returns: the launch's status and the
  /// call that returned it, for the error message.
  struct launch_result {
    error_t status;
    const char* call;
  };
  /// Raises a kernel's dynamic shared memory limit (needed above api::default_dynamic_shared_limit).
  static error_t set_max_dynamic_shared(const void* fn, int bytes) noexcept {
    return STRATA_GPU_API(FuncSetAttribute)(fn, STRATA_GPU_API(FuncAttributeMaxDynamicSharedMemorySize), bytes);
  }
};

}  // namespace strata::detail
