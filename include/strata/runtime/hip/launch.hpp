// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/hip/launch.hpp -- strata::launch on HIP: the __global__ trampoline and the host call.
#pragma once

#include <hip/hip_runtime.h>

#include <cstddef>
#include <string>
#include <type_traits>

#include "strata/arch/arch.hpp"
#include "strata/config/config.hpp"
#include "strata/hierarchy/kernel.hpp"
#include "strata/runtime/detail/format.hpp"
#include "strata/runtime/detail/kernel_launch.hpp"
#include "strata/runtime/error.hpp"
#include "strata/runtime/hip/device_context.hpp"
#include "strata/runtime/hip/error.hpp"
#include "strata/runtime/hip/stream.hpp"
#include "strata/runtime/launch_shape.hpp"

namespace strata {

namespace hip::detail {

/// The kernel object and its parameters as the one argument of the trampoline: their layout is then
/// this struct's, fixed by C++ rather than by the kernel-argument ABI, at offset 0 of the kernarg segment.
template <class Kernel, class Params>
struct entry_arguments {
  Kernel kernel;
  Params params;
};

/// The one __global__ function behind every kernel. The block's LDS is a single dynamic array,
/// aligned to strata::shared_alignment: the kernel's static storage at offset 0 and the launch's
/// dynamic part at dynamic_shared_offset<Kernel>, the layout the emulator uses too.
/// The launch bound is always explicit (the kernel's max_threads_per_block, else the target's 1024):
/// clang's default flat work-group size has changed between releases, and a kernel compiled for
/// fewer threads than it is launched with fails at run time.
///
/// The kernel reads its parameters in place, in the kernarg segment, not through the by-value
/// argument: clang copies a by-value argument into private memory at entry, SROA turns that copy into
/// a load of every field in the entry block, and a value needed only after a long loop (the GEMM
/// epilogue's C pointer and strides, the split-K state) then holds SGPRs across the whole K loop. Read
/// in place, each field is loaded (s_load, uniform) where it is used. Measured on the bf16 MFMA GEMM
/// (gfx940, clang 15): 26 SGPR spills before, none after (docs/design.md, "Kernel arguments on HIP").
template <class Kernel, class Params, class Target>
__global__ void __launch_bounds__((strata::detail::kernel_max_threads<Kernel, Target>()))
    kernel_entry(const entry_arguments<Kernel, Params> arguments) {
  extern __shared__ __attribute__((aligned(128))) unsigned char strata_shared_memory[];
  static_assert(shared_alignment == 128, "the trampoline's shared array alignment must match strata::shared_alignment");
  (void)arguments;  // the same bytes, read in place below
  // The explicit arguments start at offset 0 of the kernarg segment; `arguments` is the only one.
  const auto& in_place = *(const entry_arguments<Kernel, Params>*)__builtin_amdgcn_kernarg_segment_ptr();
  device_context<Target> ctx(strata_shared_memory, dynamic_shared_offset<Kernel>);
  in_place.kernel(ctx, in_place.params);
}

/// LDS beyond 64 KiB (gfx950 has 160 KiB) is requested explicitly, as on CUDA.
inline constexpr std::size_t default_dynamic_shared_limit = 64 * 1024;

}  // namespace hip::detail

/// Launches `kernel(ctx, params)` on `s` with the grid, block and dynamic shared memory of `shape`.
/// Asynchronous; allocates nothing (error text is built only on failure). Throws
/// strata::invalid_argument for a shape the kernel's target cannot run, strata::unsupported for a
/// cluster launch (AMD GPUs have no thread block clusters) and strata::backend_error when HIP
/// rejects the launch.
template <class Kernel, class Params>
void launch(stream& s, const launch_shape& shape, const Kernel& kernel, const Params& params) {
  using Target = kernel_target_t<Kernel, arch::gfx90a>;
  static_assert(arch::target<Target>, "strata::launch: Kernel::target must be an arch descriptor");
  strata::detail::validate_launch<Kernel, Target>(shape);
  strata::detail::validate_kernel_launch<Kernel, Params, Target>(shape);
  if (shape.cluster.volume() > 1)
    throw unsupported("strata::launch(" + kernel_name<Kernel>() + "): cluster " +
                      strata::detail::dims_string(shape.cluster) +
                      " requested, but the HIP backend has no thread block clusters (AMD GPUs lack them); "
                      "launch with cluster (1, 1, 1)");

  const void* fn = reinterpret_cast<const void*>(&hip::detail::kernel_entry<Kernel, Params, Target>);
  const std::size_t shared_bytes = strata::detail::launch_shared_bytes<Kernel>(shape);

  if (shared_bytes > hip::detail::default_dynamic_shared_limit) {
    hip::detail::check(
        hipFuncSetAttribute(fn, hipFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)), [&] {
          return "hipFuncSetAttribute(" + kernel_name<Kernel>() + ", hipFuncAttributeMaxDynamicSharedMemorySize, " +
                 std::to_string(shared_bytes) + ")";
        });
  }

  const dim3 grid(static_cast<unsigned>(shape.grid.x), static_cast<unsigned>(shape.grid.y),
                  static_cast<unsigned>(shape.grid.z));
  const dim3 block(static_cast<unsigned>(shape.block.x), static_cast<unsigned>(shape.block.y),
                   static_cast<unsigned>(shape.block.z));
  // hipLaunchKernel returns the launch's own error (unlike <<<>>> followed by hipGetLastError,
  // which could report an earlier failure). It copies the arguments before returning.
  static_assert(std::is_trivially_copyable_v<hip::detail::entry_arguments<Kernel, Params>>,
                "strata::launch: the kernel object and its params are copied to the GPU byte for byte; both must be "
                "trivially copyable");
  hip::detail::entry_arguments<Kernel, Params> arguments{kernel, params};
  void* args[] = {&arguments};
  // A cooperative launch guarantees every block is resident at once, or fails (never a silent hang).
  const hipError_t status = shape.cooperative
                                ? hipLaunchCooperativeKernel(fn, grid, block, args, static_cast<unsigned>(shared_bytes),
                                                             s.native_handle())
                                : hipLaunchKernel(fn, grid, block, args, shared_bytes, s.native_handle());
  hip::detail::check(status, [&] {
    using strata::detail::dims_string;
    return std::string(shape.cooperative ? "hipLaunchCooperativeKernel(" : "hipLaunchKernel(") + kernel_name<Kernel>() + ", grid " + dims_string(shape.grid) + ", block " +
           dims_string(shape.block) + ", " + strata::detail::bytes_string(shared_bytes) + " shared, stream " +
           strata::detail::pointer_string(s.native_handle()) + ")";
  });
}

}  // namespace strata
