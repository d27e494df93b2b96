// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/gpu/launch.hpp -- strata::launch on CUDA and HIP: the checks, the shared-memory opt-in
// and the error text are the same for both; the trampoline and the launch call are the vendor's
// (runtime/cuda/trampoline.hpp, runtime/hip/trampoline.hpp).
#pragma once

#include <cstddef>
#include <string>

#include "strata/arch/arch.hpp"
#include "strata/config/config.hpp"
#include "strata/hierarchy/kernel.hpp"
#include "strata/runtime/detail/format.hpp"
#include "strata/runtime/detail/kernel_launch.hpp"
#include "strata/runtime/error.hpp"
#include "strata/runtime/gpu/api.hpp"
#include "strata/runtime/gpu/error.hpp"
#include "strata/runtime/gpu/stream.hpp"
#include "strata/runtime/launch_shape.hpp"

#if STRATA_BACKEND_CUDA
#include "strata/runtime/cuda/trampoline.hpp"
#elif STRATA_BACKEND_HIP
#include "strata/runtime/hip/trampoline.hpp"
#endif

namespace strata {

/// Launches `kernel(ctx, params)` on `s` with the grid, block, cluster and dynamic shared memory of
/// `shape`. Asynchronous; allocates nothing (error text is built only on failure). Throws
/// strata::invalid_argument for a shape the kernel's target cannot run (on CUDA also for a chiplet
/// calibration of the current device whose chiplet count differs from the target's),
/// strata::unsupported for a cluster launch on HIP (AMD GPUs have no thread block clusters), and
/// strata::backend_error when the runtime rejects the launch. On CUDA a target with more than one
/// chiplet gets the current device's %smid -> chiplet calibration table, if one is set
/// (strata::set_chiplet_calibration).
template <class Kernel, class Params>
void launch(stream& s, const launch_shape& shape, const Kernel& kernel, const Params& params) {
  using api = detail::gpu_api;
  using launcher = detail::gpu_launcher;
  using Target = kernel_target_t<Kernel, typename api::default_target>;
  static_assert(arch::target<Target>, "strata::launch: Kernel::target must be an arch descriptor");
  strata::detail::validate_launch<Kernel, Target>(shape);
  strata::detail::validate_kernel_launch<Kernel, Params, Target>(shape);
  if constexpr (!api::launch_has_clusters) {
    if (shape.cluster.volume() > 1)
      throw unsupported("strata::launch(" + kernel_name<Kernel>() + "): cluster " +
                        strata::detail::dims_string(shape.cluster) +
                        " requested, but the HIP backend has no thread block clusters (AMD GPUs lack them); "
                        "launch with cluster (1, 1, 1)");
  }

  const auto fn = launcher::template entry_point<Kernel, Params, Target>();
  const std::size_t shared_bytes = strata::detail::launch_shared_bytes<Kernel>(shape);

  if (shared_bytes > api::default_dynamic_shared_limit) {
    detail::gpu::check(api::set_max_dynamic_shared(reinterpret_cast<const void*>(fn), static_cast<int>(shared_bytes)),
                       [&] {
                         return std::string(api::prefix) + "FuncSetAttribute(" + kernel_name<Kernel>() + ", " +
                                api::prefix + "FuncAttributeMaxDynamicSharedMemorySize, " +
                                std::to_string(shared_bytes) + ")";
                       });
  }

  const auto launched =
      launcher::template launch<Kernel, Params, Target>(fn, shape, shared_bytes, s.native_handle(), kernel, params);
  detail::gpu::check(launched.status, [&] {
    using strata::detail::dims_string;
    std::string text = std::string(launched.call) + "(" + kernel_name<Kernel>() + ", grid " + dims_string(shape.grid) +
                       ", block " + dims_string(shape.block);
    if (api::launch_has_clusters) text += ", cluster " + dims_string(shape.cluster);
    return text + ", " + strata::detail::bytes_string(shared_bytes) + " shared, stream " +
           strata::detail::pointer_string(s.native_handle()) + ")";
  });
}

}  // namespace strata
