// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/config/config.hpp -- backend detection and the one family of qualifier macros.
//
// This is the only header that tests __CUDACC__, __HIP__, __CUDA_ARCH__ or
// __HIP_DEVICE_COMPILE__. Everything else asks the STRATA_* macros below.
//
//   STRATA_BACKEND_CUDA / _HIP / _HOST   which backend this translation unit targets (exactly one is 1)
//   STRATA_DEVICE_PASS                   1 while the compiler generates GPU code (nvcc/clang device pass)
//   STRATA_CUDA_DEVICE_PASS / STRATA_HIP_DEVICE_PASS   the same, per vendor
//   STRATA_HOST_DEVICE, STRATA_DEVICE, STRATA_GLOBAL   function qualifiers (empty on the host backend)
//   STRATA_FORCEINLINE, STRATA_UNROLL, STRATA_NO_UNROLL
#pragma once

#if defined(__HIP__) || defined(__HIPCC__)
#define STRATA_BACKEND_HIP 1
#define STRATA_BACKEND_CUDA 0
#define STRATA_BACKEND_HOST 0
#elif defined(__CUDACC__)
#define STRATA_BACKEND_CUDA 1
#define STRATA_BACKEND_HIP 0
#define STRATA_BACKEND_HOST 0
#else
#define STRATA_BACKEND_HOST 1
#define STRATA_BACKEND_CUDA 0
#define STRATA_BACKEND_HIP 0
#endif

#if defined(__CUDA_ARCH__)
#define STRATA_DEVICE_PASS 1
#define STRATA_CUDA_DEVICE_PASS 1
#define STRATA_HIP_DEVICE_PASS 0
#elif defined(__HIP_DEVICE_COMPILE__)
#define STRATA_DEVICE_PASS 1
#define STRATA_CUDA_DEVICE_PASS 0
#define STRATA_HIP_DEVICE_PASS 1
#else
#define STRATA_DEVICE_PASS 0
#define STRATA_CUDA_DEVICE_PASS 0
#define STRATA_HIP_DEVICE_PASS 0
#endif

#if STRATA_BACKEND_CUDA || STRATA_BACKEND_HIP
#define STRATA_HOST_DEVICE __host__ __device__
#define STRATA_DEVICE __device__
#define STRATA_GLOBAL __global__
// Spelled with the attribute, not __forceinline__: HIP defines that macro only in its runtime headers,
// which a Strata header may be included before.
#define STRATA_FORCEINLINE inline __attribute__((always_inline))
#else
#define STRATA_HOST_DEVICE
#define STRATA_DEVICE
#define STRATA_GLOBAL
#define STRATA_FORCEINLINE inline __attribute__((always_inline))
#endif

#define STRATA_PRAGMA(x) _Pragma(#x)
// `#pragma unroll` is for GPU device passes and clang; GCC (the host backend) spells it `GCC unroll`.
// nvcc's host pass gets neither: its front end rejects `GCC unroll` and GCC then warns about `unroll`,
// and a CUDA build runs no kernel code on the host anyway.
#if STRATA_DEVICE_PASS || (defined(__clang__) && !STRATA_BACKEND_CUDA)
#define STRATA_UNROLL STRATA_PRAGMA(unroll)
#define STRATA_NO_UNROLL STRATA_PRAGMA(unroll 1)
#define STRATA_UNROLL_BY(n) STRATA_PRAGMA(unroll n)
#elif defined(__GNUC__) && !STRATA_BACKEND_CUDA
#define STRATA_UNROLL STRATA_PRAGMA(GCC unroll 16)
#define STRATA_NO_UNROLL STRATA_PRAGMA(GCC unroll 1)
#define STRATA_UNROLL_BY(n) STRATA_PRAGMA(GCC unroll n)
#else
#define STRATA_UNROLL
#define STRATA_NO_UNROLL
#define STRATA_UNROLL_BY(n)
#endif

#if __cplusplus < 202002L && !defined(_MSVC_LANG)
#error "Strata needs C++20: compile with -std=c++20 (nvcc: -std=c++20; hipcc: -std=c++20)."
#endif

namespace strata {

/// The backend this translation unit was compiled for.
enum class backend { host, cuda, hip };

inline constexpr backend compiled_backend =
#if STRATA_BACKEND_CUDA
    backend::cuda;
#elif STRATA_BACKEND_HIP
    backend::hip;
#else
    backend::host;
#endif

constexpr const char* to_string(backend b) noexcept {
  switch (b) {
    case backend::cuda: return "cuda";
    case backend::hip: return "hip";
    default: return "host";
  }
}

}  // namespace strata
