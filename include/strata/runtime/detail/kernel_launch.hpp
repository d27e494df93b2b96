// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/detail/kernel_launch.hpp -- launch-time facts about a kernel that every launcher
// (CUDA, HIP and the host emulator) shares, so a launch the emulator accepts is one a GPU accepts.
#pragma once

#include <concepts>
#include <cstddef>
#include <string>
#include <type_traits>

#include "strata/hierarchy/kernel.hpp"
#include "strata/runtime/error.hpp"
#include "strata/runtime/launch_shape.hpp"

namespace strata::detail {

template <class K>
concept has_max_threads_per_block = requires {
  { K::max_threads_per_block } -> std::convertible_to<int>;
};

/// The most threads a block of kernel K may have when run as Target: K::max_threads_per_block if the
/// kernel declares it (an optional trait: it becomes the trampoline's __launch_bounds__, which lets
/// the compiler give each thread more registers), else the target's limit.
template <class K, class Target>
constexpr int kernel_max_threads() {
  if constexpr (has_max_threads_per_block<K>) {
    static_assert(K::max_threads_per_block >= 1 && K::max_threads_per_block <= Target::max_threads_per_block,
                  "Kernel::max_threads_per_block must be between 1 and the target's max_threads_per_block");
    return K::max_threads_per_block;
  } else {
    return Target::max_threads_per_block;
  }
}

template <class K>
concept has_min_blocks_per_multiprocessor = requires {
  { K::min_blocks_per_multiprocessor } -> std::convertible_to<int>;
};

/// The blocks of K that must fit on one multiprocessor at once: K::min_blocks_per_multiprocessor if
/// the kernel declares it (an optional trait, the second argument of CUDA's __launch_bounds__: it
/// caps the registers per thread at the register file / (blocks x threads)), else 0 (no cap but the
/// compiler's own). Given only the block size, ptxas picks a register target of its own and will
/// spill a few bytes under it with registers to spare (docs/design.md, item 16): naming the
/// occupancy lets it use them. Ignored by HIP (its second bound counts waves per SIMD) and the
/// emulator.
template <class K>
constexpr int kernel_min_blocks() {
  if constexpr (has_min_blocks_per_multiprocessor<K>) {
    static_assert(K::min_blocks_per_multiprocessor >= 0, "Kernel::min_blocks_per_multiprocessor must not be negative");
    return K::min_blocks_per_multiprocessor;
  } else {
    return 0;
  }
}

/// Bytes of shared memory one block of K gets: the static storage, padded to the dynamic offset,
/// then the dynamic bytes of this launch (the layout of hierarchy/kernel.hpp).
template <class K>
constexpr std::size_t launch_shared_bytes(const launch_shape& s) {
  return dynamic_shared_offset<K> + s.dynamic_shared_bytes;
}

/// The checks every launcher makes on top of validate_launch: properties of the kernel type, and a
/// block no larger than the kernel's declared maximum.
template <class K, class Params, class Target>
void validate_kernel_launch(const launch_shape& s) {
  static_assert(std::is_trivially_copyable_v<K>,
                "strata::launch: the kernel object is copied to the device by value, so it must be trivially copyable");
  static_assert(std::is_trivially_copyable_v<Params>,
                "strata::launch: the params are copied to the device by value, so they must be trivially copyable");
  if constexpr (has_max_threads_per_block<K>) {
    if (s.block.volume() > kernel_max_threads<K, Target>())
      throw invalid_argument("strata::launch(" + kernel_name<K>() + ")", "block",
                             "has " + std::to_string(s.block.volume()) +
                                 " threads; the kernel declares max_threads_per_block = " +
                                 std::to_string(kernel_max_threads<K, Target>()));
  }
}

}  // namespace strata::detail
