// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/device_memory.hpp -- which memory is device memory on the host emulator, and the
// host-pointer check that holds the emulator to what a GPU allows.
//
// On a GPU, a kernel handed a pointer to host memory (a std::vector's data()) faults; on the emulator,
// where device memory is host memory, the same call would run and give the right answer, so a bug that
// breaks every GPU run passes every CPU test. The emulator therefore records device allocations:
//
//   strata::device_buffer<T>                  registers its memory while it lives (host backend)
//   strata::register_device_memory(p, bytes)  memory a framework allocated itself (PyTorch's CPU
//   strata::unregister_device_memory(p)       tensors standing in for device tensors); or the RAII
//   strata::device_memory_registration r(p, bytes);
//
// and, with the host-pointer check on, the host entries (every row of their pointer tables,
// strata/runtime/pointer_table.hpp) and strata::launch (every pointer-sized word of the kernel's
// parameters that points into mapped memory) refuse a pointer that no registered allocation covers:
//
//   strata::gemm: argument 'a' points to host memory that no device allocation covers (...)
//
// The check is on when the environment variable STRATA_CHECK_HOST_POINTERS is 1 (every Strata test
// and example runs with it: cmake/StrataTesting.cmake, examples/CMakeLists.txt) or after
// strata::set_host_pointer_check(true); off by default, so a framework that hands the emulator memory
// of its own opts in once it registers that memory, and opts out with STRATA_CHECK_HOST_POINTERS=0 or
// set_host_pointer_check(false). On CUDA and HIP these calls do nothing (the GPU itself refuses host
// pointers): code that registers its memory stays portable.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <type_traits>

#include "strata/config/config.hpp"
#include "strata/runtime/error.hpp"

#if STRATA_BACKEND_HOST && (defined(__unix__) || defined(__APPLE__))
#include <cerrno>
#include <sys/mman.h>
#include <unistd.h>
#define STRATA_HOST_POINTER_PROBE 1
#else
#define STRATA_HOST_POINTER_PROBE 0
#endif

namespace strata {

namespace detail {
/// The registered device allocations, [begin, end) by begin; never destroyed (buffers with static
/// storage may unregister after every other static is gone).
struct device_memory_registry {
  std::shared_mutex mutex;
  std::map<std::uintptr_t, std::uintptr_t> ranges;
  std::atomic<int> check{-1};  // -1: not decided yet (STRATA_CHECK_HOST_POINTERS), 0 off, 1 on

  static device_memory_registry& get() {
    static device_memory_registry* r = new device_memory_registry;
    return *r;
  }
};
}  // namespace detail

#if STRATA_BACKEND_HOST

/// Records [p, p + bytes) as device memory (memory a framework allocated itself). Registering the
/// same pointer again replaces its extent.
inline void register_device_memory(const void* p, std::size_t bytes) {
  if (!p || bytes == 0) return;
  auto& r = detail::device_memory_registry::get();
  std::unique_lock lock(r.mutex);
  const auto b = reinterpret_cast<std::uintptr_t>(p);
  r.ranges[b] = b + bytes;
}

/// Forgets the allocation registered at p (nothing when none is).
inline void unregister_device_memory(const void* p) {
  if (!p) return;
  auto& r = detail::device_memory_registry::get();
  std::unique_lock lock(r.mutex);
  r.ranges.erase(reinterpret_cast<std::uintptr_t>(p));
}

/// True when one registered allocation covers [p, p + bytes) (bytes 0: p itself, or one past an end).
inline bool is_device_memory(const void* p, std::size_t bytes = 1) {
  auto& r = detail::device_memory_registry::get();
  std::shared_lock lock(r.mutex);
  const auto b = reinterpret_cast<std::uintptr_t>(p);
  auto it = r.ranges.upper_bound(b);
  if (it == r.ranges.begin()) return false;
  --it;
  return b >= it->first && (bytes == 0 ? b <= it->second : b + bytes <= it->second && b + bytes > b);
}

/// Whether the entries and strata::launch refuse host pointers (see the top of this file).
inline bool host_pointer_check() {
  auto& r = detail::device_memory_registry::get();
  int c = r.check.load(std::memory_order_relaxed);
  if (c < 0) {
    const char* e = std::getenv("STRATA_CHECK_HOST_POINTERS");
    int expected = -1;
    r.check.compare_exchange_strong(expected, e && e[0] == '1' ? 1 : 0, std::memory_order_relaxed);
    c = r.check.load(std::memory_order_relaxed);
  }
  return c == 1;
}
inline void set_host_pointer_check(bool on) {
  detail::device_memory_registry::get().check.store(on ? 1 : 0, std::memory_order_relaxed);
}

#else  // CUDA, HIP: the GPU refuses host pointers itself; registration is a no-op.

inline void register_device_memory(const void*, std::size_t) {}
inline void unregister_device_memory(const void*) {}
inline bool is_device_memory(const void*, std::size_t = 1) { return true; }
inline bool host_pointer_check() { return false; }
inline void set_host_pointer_check(bool) {}

#endif

/// Registers memory for its lifetime (a framework's tensor handed to the emulator).
class device_memory_registration {
 public:
  device_memory_registration(const void* p, std::size_t bytes) : p_(p) { register_device_memory(p, bytes); }
  ~device_memory_registration() { unregister_device_memory(p_); }
  device_memory_registration(const device_memory_registration&) = delete;
  device_memory_registration& operator=(const device_memory_registration&) = delete;

 private:
  const void* p_;
};

namespace detail {

inline std::string hex(std::uintptr_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  do s.insert(s.begin(), digits[v % 16]), v /= 16;
  while (v);
  return "0x" + s;
}

inline std::string host_memory_words(std::uintptr_t p, std::size_t bytes) {
  return "points to host memory that no device allocation covers (" + std::to_string(bytes) + " bytes at " + hex(p) +
         "; allocate it with strata::device_buffer, or register memory a framework allocated with "
         "strata::register_device_memory: STRATA_CHECK_HOST_POINTERS is on, docs/design.md)";
}

/// An entry's argument: [p, p + bytes) must lie in one registered allocation (check on, emulator).
inline void require_device_memory(const std::string& op, const std::string& arg, const void* p, std::size_t bytes) {
  if (!p || !host_pointer_check() || is_device_memory(p, bytes ? bytes : 1)) return;
  throw invalid_argument(op, arg, host_memory_words(reinterpret_cast<std::uintptr_t>(p), bytes ? bytes : 1));
}

/// Under AddressSanitizer (x86-64 Linux) its shadow memory, [0x7fff8000, 0x10007fff8000), is mapped:
/// a parameter word such as two ints 1 and 3 (0x300000001) lies in it and read as a mapped pointer
/// (CI's ASan run refused every launch so). ASan's heap and stacks lie above it; words below are
/// skipped there. 0 elsewhere.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr std::uintptr_t asan_shadow_end = std::uintptr_t(0x10007fff8000ULL);
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr std::uintptr_t asan_shadow_end = std::uintptr_t(0x10007fff8000ULL);
#else
inline constexpr std::uintptr_t asan_shadow_end = 0;
#endif
#else
inline constexpr std::uintptr_t asan_shadow_end = 0;
#endif

/// True when the page holding v is mapped in this process (so v, if it is a pointer, points to memory).
inline bool mapped(std::uintptr_t v) {
#if STRATA_HOST_POINTER_PROBE
  static const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  errno = 0;
  return msync(reinterpret_cast<void*>(v / page * page), page, MS_ASYNC) == 0 || errno != ENOMEM;
#else
  (void)v;
  return false;
#endif
}

/// strata::launch on the emulator: each pointer-sized, pointer-aligned word of the kernel's parameters
/// (padding cleared) that points into mapped memory outside every registered allocation is refused.
/// Words that are not user-space addresses (small integers, floats, sizes) are skipped. `kernel()`
/// gives the kernel's name for the message.
template <class Name, class Params>
void require_device_params(const Name& kernel, const Params& params) {
#if STRATA_HOST_POINTER_PROBE && defined(__has_builtin)
#if __has_builtin(__builtin_clear_padding)
  if constexpr (std::is_trivially_copyable_v<Params> && sizeof(Params) >= sizeof(void*)) {
    if (!host_pointer_check()) return;
    Params copy;
    std::memcpy(static_cast<void*>(&copy), static_cast<const void*>(&params), sizeof(Params));
    __builtin_clear_padding(&copy);
    unsigned char bytes[sizeof(Params)];
    std::memcpy(bytes, static_cast<const void*>(&copy), sizeof(Params));
    for (std::size_t off = 0; off + sizeof(void*) <= sizeof(Params); off += alignof(void*)) {
      std::uintptr_t v;
      std::memcpy(&v, bytes + off, sizeof(v));
      if (v < (std::uintptr_t(1) << 16) || v >= (std::uintptr_t(1) << 47)) continue;  // not a user-space address
      if (v < asan_shadow_end) continue;  // under ASan: its shadow is mapped, so small integers looked mapped
      if (is_device_memory(reinterpret_cast<const void*>(v), 0) || !mapped(v)) continue;
      throw invalid_argument("strata::launch(" + kernel() + ")", "params",
                             "bytes " + std::to_string(off) + "-" + std::to_string(off + sizeof(void*) - 1) + " hold " + hex(v) +
                                 ", a pointer that " + host_memory_words(v, 1));
    }
  }
#else
  (void)kernel, (void)params;
#endif
#else
  (void)kernel, (void)params;
#endif
}

}  // namespace detail
}  // namespace strata
