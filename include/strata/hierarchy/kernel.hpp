// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/hierarchy/kernel.hpp -- what a kernel is, and the traits the launchers read from it.
//
// A kernel is a class (usually a template over its configuration) with:
//   template <class Ctx> STRATA_HOST_DEVICE void operator()(Ctx& ctx, const Params& p) const;
// and optionally:
//   using target = strata::arch::sm80;         the target it is configured for (default: see below)
//   struct shared_storage { ... };             its static shared memory, reached with ctx.shared<T>()
//   static constexpr const char* name = "..";  the name used in error messages (default: the type name)
//   static constexpr int max_threads_per_block = 256;  launch bounds for the GPU compilers (CUDA:
//                                              __launch_bounds__, none by default; HIP: 1024 by default);
//                                              a launch with a larger block is rejected
//   static constexpr int min_blocks_per_multiprocessor = 2;  CUDA only: the second __launch_bounds__
//                                              argument (registers per thread <= register file /
//                                              (blocks x threads)); HIP and the emulator ignore it
// Kernels are trivially copyable: they travel to the device by value, like Params.
#pragma once

#include <concepts>
#include <cstddef>
#include <string>
#include <type_traits>
#include <typeinfo>

#if __has_include(<cxxabi.h>)
#include <cxxabi.h>
#include <cstdlib>
#define STRATA_HAS_CXXABI 1
#else
#define STRATA_HAS_CXXABI 0
#endif

#include "strata/arch/arch.hpp"

namespace strata {

namespace detail {
struct no_shared_storage {};

template <class K>
concept has_target = requires { typename K::target; };
template <class K>
concept has_shared_storage = requires { typename K::shared_storage; };
template <class K>
concept has_name = requires {
  { K::name } -> std::convertible_to<const char*>;
};

template <class K, class Default>
struct target_of {
  using type = Default;
};
template <has_target K, class Default>
struct target_of<K, Default> {
  using type = typename K::target;
};

template <class K>
struct shared_storage_of {
  using type = no_shared_storage;
};
template <has_shared_storage K>
struct shared_storage_of<K> {
  using type = typename K::shared_storage;
};
}  // namespace detail

/// The target a kernel runs as: K::target if it names one, else `Default` (the backend's own).
template <class K, class Default>
using kernel_target_t = typename detail::target_of<K, Default>::type;

/// The kernel's static shared storage type (an empty struct if it declares none).
template <class K>
using kernel_shared_storage_t = typename detail::shared_storage_of<K>::type;

/// Bytes of static shared memory the kernel needs (0 if it declares no shared_storage).
template <class K>
inline constexpr std::size_t kernel_static_shared_bytes =
    detail::has_shared_storage<K> ? sizeof(kernel_shared_storage_t<K>) : 0;

/// Shared memory layout of every block, the same on every backend: the kernel's static
/// shared_storage at offset 0, the dynamic shared memory from `dynamic_shared_offset<K>` on.
inline constexpr std::size_t shared_alignment = 128;
template <class K>
inline constexpr std::size_t dynamic_shared_offset =
    (kernel_static_shared_bytes<K> + shared_alignment - 1) / shared_alignment * shared_alignment;

/// The kernel's name for messages: K::name, else its demangled type name.
template <class K>
std::string kernel_name() {
  if constexpr (detail::has_name<K>) {
    return K::name;
  } else {
    const char* raw = typeid(K).name();
#if STRATA_HAS_CXXABI
    int status = 0;
    char* d = abi::__cxa_demangle(raw, nullptr, nullptr, &status);
    if (status == 0 && d) {
      std::string s(d);
      std::free(d);
      return s;
    }
#endif
    return raw;
  }
}

}  // namespace strata
