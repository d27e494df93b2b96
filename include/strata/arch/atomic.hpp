// strata/arch/atomic.hpp -- atomic read-modify-write on global or shared memory, on every backend.
//
// Device scope, relaxed ordering (the GPU's atomicAdd semantics). On the host emulator blocks run on
// several OS threads at once, so these are real std::atomic_ref operations there too.
#pragma once

#include <type_traits>

#include "strata/config/config.hpp"

#if !STRATA_DEVICE_PASS
#include <atomic>
#endif

namespace strata::atomic {

/// *p += v; returns the old value.
template <class T>
STRATA_HOST_DEVICE T add(T* p, T v) {
#if STRATA_DEVICE_PASS
  return atomicAdd(p, v);
#else
  return std::atomic_ref<T>(*p).fetch_add(v, std::memory_order_relaxed);
#endif
}

/// *p = max(*p, v); returns the old value. Integers only (as on the GPU).
template <class T>
STRATA_HOST_DEVICE T max(T* p, T v) {
  static_assert(std::is_integral_v<T>, "strata::atomic::max: only integer types have a hardware atomic max");
#if STRATA_DEVICE_PASS
  return atomicMax(p, v);
#else
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
  return std::atomic_ref<T>(*p).exchange(v, std::memory_order_relaxed);
#endif
}

/// if (*p == expected) *p = desired; returns the old value.
template <class T>
STRATA_HOST_DEVICE T compare_exchange(T* p, T expected, T desired) {
#if STRATA_DEVICE_PASS
  return atomicCAS(p, expected, desired);
#else
  std::atomic_ref<T>(*p).compare_exchange_strong(expected, desired, std::memory_order_relaxed);
  return expected;
#endif
}

}  // namespace strata::atomic
