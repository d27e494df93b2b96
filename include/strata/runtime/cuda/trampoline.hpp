// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/cuda/trampoline.hpp -- the __global__ trampoline behind strata::launch on CUDA, and the
// launch call itself. CUDA's own (the rest of the launch path is runtime/gpu/launch.hpp): the kernel
// and its params are ordinary by-value arguments, the launch is one cudaLaunchKernelEx whose attributes
// carry the cluster shape (thread block clusters exist only on NVIDIA GPUs) and the cooperative flag,
// and a target with more than one chiplet gets the device's %smid -> chiplet calibration table (NVIDIA
// documents no die id; AMD GPUs read theirs from a hardware register instead).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "strata/config/config.hpp"
#include "strata/hierarchy/kernel.hpp"
#include "strata/runtime/chiplet_calibration.hpp"
#include "strata/runtime/cuda/api.hpp"
#include "strata/runtime/cuda/device_context.hpp"
#include "strata/runtime/cuda/error.hpp"
#include "strata/runtime/detail/kernel_launch.hpp"
#include "strata/runtime/error.hpp"
#include "strata/runtime/launch_shape.hpp"

namespace strata::cuda::detail {

/// The one __global__ function behind every kernel. The block's shared memory is a single dynamic
/// array, aligned to strata::shared_alignment: the kernel's static storage at offset 0 and the
/// launch's dynamic part at dynamic_shared_offset<Kernel>, the layout the emulator uses too, so a
/// kernel sees the same offsets on every backend.
/// __launch_bounds__ only when the kernel declares max_threads_per_block: forcing 1024 on every
/// kernel would cap it at 64 registers per thread. Its second argument is the kernel's optional
/// min_blocks_per_multiprocessor (0, no minimum, when it declares none).
/// `smid_table` / `smid_table_size`: the device's %smid -> chiplet calibration
/// (strata/runtime/chiplet_calibration.hpp), nullptr and 0 when there is none or the target has one
/// chiplet.
/// `params` is __grid_constant__: its address is an address in the parameter space, which a TMA
/// copy's tensor map (copy/tma.hpp) must be, rather than a per-thread local copy.
template <class Kernel, class Params, class Target>
__global__ void kernel_entry(const Kernel kernel, const __grid_constant__ Params params, const unsigned char* smid_table,
                             int smid_table_size) {
  extern __shared__ __align__(128) unsigned char strata_shared_memory[];
  static_assert(shared_alignment == 128, "the trampoline's shared array alignment must match strata::shared_alignment");
  device_context<Target> ctx(strata_shared_memory, dynamic_shared_offset<Kernel>, smid_table, smid_table_size);
  kernel(ctx, params);
}

template <class Kernel, class Params, class Target>
__global__ void __launch_bounds__((strata::detail::kernel_max_threads<Kernel, Target>()),
                                  (strata::detail::kernel_min_blocks<Kernel>()))
    kernel_entry_bounded(const Kernel kernel, const __grid_constant__ Params params, const unsigned char* smid_table,
                         int smid_table_size) {
  extern __shared__ __align__(128) unsigned char strata_shared_memory[];
  device_context<Target> ctx(strata_shared_memory, dynamic_shared_offset<Kernel>, smid_table, smid_table_size);
  kernel(ctx, params);
}

/// The vendor half of strata::launch (runtime/gpu/launch.hpp calls it as strata::detail::gpu_launcher).
struct launcher {
  template <class Kernel, class Params, class Target>
  static constexpr auto entry_point() {
    if constexpr (strata::detail::has_max_threads_per_block<Kernel>) return &kernel_entry_bounded<Kernel, Params, Target>;
    else return &kernel_entry<Kernel, Params, Target>;
  }

  /// Queues `fn` (entry_point's trampoline) with the grid, block, cluster and cooperative flag of
  /// `shape`. Throws strata::invalid_argument when the current device's chiplet calibration maps SM
  /// ids to another chiplet count than the target's.
  template <class Kernel, class Params, class Target, class Entry>
  static api::launch_result launch(Entry fn, const launch_shape& shape, std::size_t shared_bytes, api::stream_t stream,
                       const Kernel& kernel, const Params& params) {
    // The %smid -> chiplet table, read only for targets whose chiplet index needs it.
    const unsigned char* smid_table = nullptr;
    int smid_table_size = 0;
    if constexpr (Target::chiplets.count > 1) {
      int device = 0;
      check(cudaGetDevice(&device), [] { return std::string("cudaGetDevice()"); });
      const auto calibration = strata::detail::chiplet_calibration_device_view(device);
      if (calibration.table != nullptr) {
        if (calibration.chiplets != Target::chiplets.count)
          throw invalid_argument("strata::launch(" + kernel_name<Kernel>() + ")", "kernel",
                                 "targets " + std::to_string(Target::chiplets.count) +
                                     " chiplets, but the chiplet calibration of device " + std::to_string(device) +
                                     " (strata::set_chiplet_calibration) maps SM ids to " +
                                     std::to_string(calibration.chiplets) + " chiplets");
        smid_table = calibration.table;
        smid_table_size = calibration.size;
      }
    }

    cudaLaunchConfig_t config{};
    config.gridDim = dim3(static_cast<unsigned>(shape.grid.x), static_cast<unsigned>(shape.grid.y),
                          static_cast<unsigned>(shape.grid.z));
    config.blockDim = dim3(static_cast<unsigned>(shape.block.x), static_cast<unsigned>(shape.block.y),
                           static_cast<unsigned>(shape.block.z));
    config.dynamicSmemBytes = shared_bytes;
    config.stream = stream;
    cudaLaunchAttribute attribute[2];
    unsigned attributes = 0;
    if (shape.cluster.volume() > 1) {
      attribute[attributes].id = cudaLaunchAttributeClusterDimension;
      attribute[attributes].val.clusterDim.x = static_cast<unsigned>(shape.cluster.x);
      attribute[attributes].val.clusterDim.y = static_cast<unsigned>(shape.cluster.y);
      attribute[attributes].val.clusterDim.z = static_cast<unsigned>(shape.cluster.z);
      ++attributes;
    }
    if (shape.cooperative) {  // every block resident at once, or the launch fails (never a silent hang)
      attribute[attributes].id = cudaLaunchAttributeCooperative;
      attribute[attributes].val.cooperative = 1;
      ++attributes;
    }
    if (attributes) {
      config.attrs = attribute;
      config.numAttrs = attributes;
    }
    // cudaLaunchKernelEx returns the launch's own error (unlike <<<>>> followed by cudaGetLastError,
    // which could report an earlier failure), and takes the cluster attribute.
    return {cudaLaunchKernelEx(&config, fn, kernel, params, smid_table, smid_table_size), "cudaLaunchKernelEx"};
  }
};

}  // namespace strata::cuda::detail

namespace strata::detail {
using gpu_launcher = cuda::detail::launcher;
}  // namespace strata::detail
