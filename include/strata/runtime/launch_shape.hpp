// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/launch_shape.hpp -- the shape of a launch, and its validation against a target.
#pragma once

#include <cstddef>
#include <string>

#include "strata/arch/target.hpp"
#include "strata/hierarchy/dims.hpp"
#include "strata/hierarchy/kernel.hpp"
#include "strata/runtime/error.hpp"

namespace strata {

/// Grid of blocks, threads per block, blocks per cluster and dynamic shared memory of one launch.
struct launch_shape {
  dims grid{1};
  dims block{1};
  dims cluster{1};                       // {1,1,1}: no clusters. Must divide grid in each dimension.
  std::size_t dynamic_shared_bytes = 0;  // reached in the kernel with ctx.dynamic_shared<T>()
  // Every block resident at once (CUDA/HIP cooperative launch), so blocks may wait for each other:
  // persistent kernels, grid-wide and chiplet-scope barriers. The grid must fit the device at once.
  bool cooperative = false;
};

namespace detail {

inline std::string to_string(dims d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

/// Checks a launch of kernel K, run as target T, before anything reaches a device. Throws
/// strata::invalid_argument naming "strata::launch(<kernel>)" and the argument at fault.
template <class K, arch::target T>
void validate_launch(const launch_shape& s) {
  const auto op = [] { return "strata::launch(" + kernel_name<K>() + ")"; };
  auto positive = [&](dims d, const char* arg) {
    if (d.x < 1 || d.y < 1 || d.z < 1)
      throw invalid_argument(op(), arg, "must be at least 1 in every dimension, got " + to_string(d));
  };
  positive(s.grid, "grid");
  positive(s.block, "block");
  positive(s.cluster, "cluster");
  if (s.grid.y > 65535 || s.grid.z > 65535)
    throw invalid_argument(op(), "grid", "y and z must be at most 65535, got " + to_string(s.grid));
  if (s.block.volume() > T::max_threads_per_block)
    throw invalid_argument(op(), "block",
                           "has " + std::to_string(s.block.volume()) + " threads; " + std::string(T::name) +
                               " allows at most " + std::to_string(T::max_threads_per_block));
  if (s.block.z > 64)
    throw invalid_argument(op(), "block", "z must be at most 64, got " + to_string(s.block));
  if (s.cluster.volume() > T::max_cluster_size)
    throw invalid_argument(op(), "cluster",
                           "has " + std::to_string(s.cluster.volume()) + " blocks; " + std::string(T::name) +
                               " allows at most " + std::to_string(T::max_cluster_size) + " blocks per cluster");
  if (s.grid.x % s.cluster.x || s.grid.y % s.cluster.y || s.grid.z % s.cluster.z)
    throw invalid_argument(op(), "cluster",
                           to_string(s.cluster) + " does not divide grid " + to_string(s.grid));
  const std::size_t static_bytes = dynamic_shared_offset<K>;
  const std::size_t total = static_bytes + s.dynamic_shared_bytes;
  if (total > T::shared_memory_per_block)
    throw invalid_argument(op(), "dynamic_shared_bytes",
                           "brings shared memory to " + std::to_string(total) + " bytes (" +
                               std::to_string(static_bytes) + " static + " + std::to_string(s.dynamic_shared_bytes) +
                               " dynamic); " + std::string(T::name) + " allows at most " +
                               std::to_string(T::shared_memory_per_block) + " bytes per block");
}

}  // namespace detail
}  // namespace strata
