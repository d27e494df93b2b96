// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/atomic.hpp -- atomic read-modify-write on global or shared memory, on every backend.
//
// Device scope, relaxed ordering (the GPU's atomicAdd semantics). On the host emulator blocks run on
// several OS threads at once, so these are real std::atomic_ref operations there too.
#pragma once

#include <type_traits>

#include "strata/arch/arch.hpp"
#include "strata/config/config.hpp"
#include "strata/config/race_exempt.hpp"

#if !STRATA_DEVICE_PASS
#include <atomic>
#endif
#if STRATA_CUDA_DEVICE_PASS
#include <cuda/atomic>
#endif
#if STRATA_BACKEND_HIP
// atomicAdd and friends are named in templates below; HIP declares them in its runtime header, which
// must come first whatever order a user includes Strata's headers in.
#include <hip/hip_runtime.h>
#endif

namespace strata::atomic {

/// *p += v; returns the old value.
template <class T>
STRATA_HOST_DEVICE T add(T* p, T v) {
#if STRATA_DEVICE_PASS
  return atomicAdd(p, v);
#else
  STRATA_RACE_EXEMPT();  // an atomic is not a race (emulator race-check build)
  return std::atomic_ref<T>(*p).fetch_add(v, std::memory_order_relaxed);
#endif
}

namespace detail {
// (a namespace-scope constant: nvcc rejects calling the host constexpr atom_set::has in a device function)
inline constexpr bool red_vector_in_this_pass = arch::current::atoms.has(arch::atom_family::red_vector);
}  // namespace detail

/// p[0] += first and p[1] += second, each an atomic add of its own, with no result (`p` in global
/// memory, 8-byte aligned). Where the compile pass's target has atom_family::red_vector (sm_90+) both
/// go as one red.global.add.v2.f32: half the instructions and half the atomic requests at L2 (the
/// attention backward's dQ, whose C fragments hold column pairs); elsewhere two adds.
STRATA_HOST_DEVICE STRATA_FORCEINLINE void add_pair(float* p, float first, float second) {
#if STRATA_CUDA_DEVICE_PASS
  if constexpr (detail::red_vector_in_this_pass) {
    asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(p), "f"(first), "f"(second) : "memory");
  } else {
    atomicAdd(p, first);
    atomicAdd(p + 1, second);
  }
#else
  add(p, first);
  add(p + 1, second);
#endif
}

/// *p = max(*p, v); returns the old value. Integers only (as on the GPU).
template <class T>
STRATA_HOST_DEVICE T max(T* p, T v) {
  static_assert(std::is_integral_v<T>, "strata::atomic::max: only integer types have a hardware atomic max");
#if STRATA_DEVICE_PASS
  return atomicMax(p, v);
#else
  STRATA_RACE_EXEMPT();  // an atomic is not a race (emulator race-check build)
  std::atomic_ref<T> a(*p);
  T old = a.load(std::memory_order_relaxed);
  while (old < v && !a.compare_exchange_weak(old, v, std::memory_order_relaxed)) {
  }
  return old;
#endif
}

/// *p = min(*p, v); returns the old value. Integers only.
template <class T>
STRATA_HOST_DEVICE T min(T* p, T v) {
  static_assert(std::is_integral_v<T>, "strata::atomic::min: only integer types have a hardware atomic min");
#if STRATA_DEVICE_PASS
  return atomicMin(p, v);
#else
  STRATA_RACE_EXEMPT();  // an atomic is not a race (emulator race-check build)
  std::atomic_ref<T> a(*p);
  T old = a.load(std::memory_order_relaxed);
  while (v < old && !a.compare_exchange_weak(old, v, std::memory_order_relaxed)) {
  }
  return old;
#endif
}

/// *p = v; returns the old value.
template <class T>
STRATA_HOST_DEVICE T exchange(T* p, T v) {
#if STRATA_DEVICE_PASS
  return atomicExch(p, v);
#else
  STRATA_RACE_EXEMPT();  // an atomic is not a race (emulator race-check build)
  return std::atomic_ref<T>(*p).exchange(v, std::memory_order_relaxed);
#endif
}

/// if (*p == expected) *p = desired; returns the old value.
template <class T>
STRATA_HOST_DEVICE T compare_exchange(T* p, T expected, T desired) {
#if STRATA_DEVICE_PASS
  return atomicCAS(p, expected, desired);
#else
  STRATA_RACE_EXEMPT();  // an atomic is not a race (emulator race-check build)
  std::atomic_ref<T>(*p).compare_exchange_strong(expected, desired, std::memory_order_relaxed);
  return expected;
#endif
}

}  // namespace strata::atomic

// ---- ordered atomics and fences, with a scope ------------------------------------------------------
//
// Protocols between blocks (persistent schedulers, chiplet-scope barriers) need acquire/release
// ordering. `scope` says which threads must observe it:
//   block    the threads of one block
//   chiplet  the blocks of one chiplet (they share its L2). No GPU memory model has a narrower scope
//            than the device that covers one XCD or die, so this maps to device scope in the
//            instruction; protocols gain by needing fewer device-wide escalations, not weaker fences.
//   device   every block of the grid
namespace strata::atomic {

enum class scope { block, chiplet, device };

namespace detail {
#if STRATA_CUDA_DEVICE_PASS
template <scope S>
inline constexpr ::cuda::thread_scope cuda_scope = S == scope::block ? ::cuda::thread_scope_block : ::cuda::thread_scope_device;
#elif STRATA_HIP_DEVICE_PASS
template <scope S>
inline constexpr int hip_scope = S == scope::block ? __HIP_MEMORY_SCOPE_WORKGROUP : __HIP_MEMORY_SCOPE_AGENT;
#endif
}  // namespace detail

/// Reads *p with acquire ordering at scope S.
template <scope S = scope::device, class T>
STRATA_HOST_DEVICE T load_acquire(const T* p) {
#if STRATA_CUDA_DEVICE_PASS
  return ::cuda::atomic_ref<const T, detail::cuda_scope<S>>(*p).load(::cuda::memory_order_acquire);
#elif STRATA_HIP_DEVICE_PASS
  return __hip_atomic_load(p, __ATOMIC_ACQUIRE, detail::hip_scope<S>);
#else
  STRATA_RACE_EXEMPT();  // an atomic is not a race (emulator race-check build)
  return std::atomic_ref<T>(*const_cast<T*>(p)).load(std::memory_order_acquire);
#endif
}

/// Writes *p = v with release ordering at scope S.
template <scope S = scope::device, class T>
STRATA_HOST_DEVICE void store_release(T* p, T v) {
#if STRATA_CUDA_DEVICE_PASS
  ::cuda::atomic_ref<T, detail::cuda_scope<S>>(*p).store(v, ::cuda::memory_order_release);
#elif STRATA_HIP_DEVICE_PASS
  __hip_atomic_store(p, v, __ATOMIC_RELEASE, detail::hip_scope<S>);
#else
  STRATA_RACE_EXEMPT();  // an atomic is not a race (emulator race-check build)
  std::atomic_ref<T>(*p).store(v, std::memory_order_release);
#endif
}

/// *p += v with acquire-release ordering at scope S; returns the old value.
template <scope S = scope::device, class T>
STRATA_HOST_DEVICE T add_acq_rel(T* p, T v) {
#if STRATA_CUDA_DEVICE_PASS
  return ::cuda::atomic_ref<T, detail::cuda_scope<S>>(*p).fetch_add(v, ::cuda::memory_order_acq_rel);
#elif STRATA_HIP_DEVICE_PASS
  return __hip_atomic_fetch_add(p, v, __ATOMIC_ACQ_REL, detail::hip_scope<S>);
#else
  STRATA_RACE_EXEMPT();  // an atomic is not a race (emulator race-check build)
  return std::atomic_ref<T>(*p).fetch_add(v, std::memory_order_acq_rel);
#endif
}

/// A sequentially consistent fence at scope S.
template <scope S = scope::device>
STRATA_HOST_DEVICE void fence() {
#if STRATA_CUDA_DEVICE_PASS
  ::cuda::atomic_thread_fence(::cuda::memory_order_seq_cst, detail::cuda_scope<S>);
#elif STRATA_HIP_DEVICE_PASS
  if constexpr (S == scope::block) __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "workgroup");
  else __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent");
#else
  STRATA_RACE_EXEMPT();  // an atomic is not a race (emulator race-check build)
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace strata::atomic
