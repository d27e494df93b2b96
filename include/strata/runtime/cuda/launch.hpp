// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/cuda/launch.hpp -- strata::launch on CUDA: the __global__ trampoline and the host call.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "strata/arch/arch.hpp"
#include "strata/config/config.hpp"
#include "strata/hierarchy/kernel.hpp"
#include "strata/runtime/chiplet_calibration.hpp"
#include "strata/runtime/cuda/device_context.hpp"
#include "strata/runtime/cuda/error.hpp"
#include "strata/runtime/cuda/stream.hpp"
#include "strata/runtime/detail/format.hpp"
#include "strata/runtime/detail/kernel_launch.hpp"
#include "strata/runtime/launch_shape.hpp"

namespace strata {

namespace cuda::detail {

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
template <class Kernel, class Params, class Target>
__global__ void kernel_entry(const Kernel kernel, const Params params, const unsigned char* smid_table,
                             int smid_table_size) {
  extern __shared__ __align__(128) unsigned char strata_shared_memory[];
  static_assert(shared_alignment == 128, "the trampoline's shared array alignment must match strata::shared_alignment");
  device_context<Target> ctx(strata_shared_memory, dynamic_shared_offset<Kernel>, smid_table, smid_table_size);
  kernel(ctx, params);
}

template <class Kernel, class Params, class Target>
__global__ void __launch_bounds__((strata::detail::kernel_max_threads<Kernel, Target>()),
                                  (strata::detail::kernel_min_blocks<Kernel>()))
    kernel_entry_bounded(const Kernel kernel, const Params params, const unsigned char* smid_table,
                         int smid_table_size) {
  extern __shared__ __align__(128) unsigned char strata_shared_memory[];
  device_context<Target> ctx(strata_shared_memory, dynamic_shared_offset<Kernel>, smid_table, smid_table_size);
  kernel(ctx, params);
}

template <class Kernel, class Params, class Target>
constexpr auto entry_point() {
  if constexpr (strata::detail::has_max_threads_per_block<Kernel>) return &kernel_entry_bounded<Kernel, Params, Target>;
  else return &kernel_entry<Kernel, Params, Target>;
}

/// Above 48 KiB a block's dynamic shared memory needs an explicit opt-in per function.
inline constexpr std::size_t default_dynamic_shared_limit = 48 * 1024;

}  // namespace cuda::detail

/// Launches `kernel(ctx, params)` on `s` with the grid, block, cluster and dynamic shared memory of
/// `shape`. Asynchronous; allocates nothing (error text is built only on failure). Throws
/// strata::invalid_argument for a shape the kernel's target cannot run, or a chiplet calibration of
/// the current device whose chiplet count differs from the target's, and strata::backend_error when
/// CUDA rejects the launch. A target with more than one chiplet gets the current device's
/// %smid -> chiplet calibration table, if one is set (strata::set_chiplet_calibration).
template <class Kernel, class Params>
void launch(stream& s, const launch_shape& shape, const Kernel& kernel, const Params& params) {
  using Target = kernel_target_t<Kernel, arch::sm80>;
  static_assert(arch::target<Target>, "strata::launch: Kernel::target must be an arch descriptor");
  strata::detail::validate_launch<Kernel, Target>(shape);
  strata::detail::validate_kernel_launch<Kernel, Params, Target>(shape);

  constexpr auto fn = cuda::detail::entry_point<Kernel, Params, Target>();
  const std::size_t shared_bytes = strata::detail::launch_shared_bytes<Kernel>(shape);
  const auto describe = [&](const char* call) {
    using strata::detail::dims_string;
    return std::string(call) + "(" + kernel_name<Kernel>() + ", grid " + dims_string(shape.grid) + ", block " +
           dims_string(shape.block) + ", cluster " + dims_string(shape.cluster) + ", " +
           strata::detail::bytes_string(shared_bytes) + " shared, stream " +
           strata::detail::pointer_string(s.native_handle()) + ")";
  };

  if (shared_bytes > cuda::detail::default_dynamic_shared_limit) {
    cuda::detail::check(
        cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)), [&] {
          return "cudaFuncSetAttribute(" + kernel_name<Kernel>() + ", cudaFuncAttributeMaxDynamicSharedMemorySize, " +
                 std::to_string(shared_bytes) + ")";
        });
  }

  // The %smid -> chiplet table, read only for targets whose chiplet index needs it.
  const unsigned char* smid_table = nullptr;
  int smid_table_size = 0;
  if constexpr (Target::chiplets.count > 1) {
    int device = 0;
    cuda::detail::check(cudaGetDevice(&device), [] { return std::string("cudaGetDevice()"); });
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
  config.stream = s.native_handle();
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
  cuda::detail::check(cudaLaunchKernelEx(&config, fn, kernel, params, smid_table, smid_table_size),
                      [&] { return describe("cudaLaunchKernelEx"); });
}

}  // namespace strata
