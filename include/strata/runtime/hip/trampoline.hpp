// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/hip/trampoline.hpp -- the __global__ trampoline behind strata::launch on HIP, and the
// launch call itself. HIP's own (the rest of the launch path is runtime/gpu/launch.hpp): the kernel
// reads its parameters in place in the kernarg segment (an AMDGPU builtin; see kernel_entry for the
// SGPR spills this avoids), its launch bound is always explicit, and a cooperative launch is a
// separate call (hipLaunchCooperativeKernel) rather than an attribute. There are no clusters to pass.
#pragma once

#include <hip/hip_runtime.h>

#include <cstddef>
#include <type_traits>

#include "strata/config/config.hpp"
#include "strata/hierarchy/kernel.hpp"
#include "strata/runtime/detail/kernel_launch.hpp"
#include "strata/runtime/hip/api.hpp"
#include "strata/runtime/hip/device_context.hpp"
#include "strata/runtime/launch_shape.hpp"

namespace strata::hip::detail {

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
__device__ STRATA_FORCEINLINE void run_in_place() {
  extern __shared__ __attribute__((aligned(128))) unsigned char strata_shared_memory[];
  static_assert(shared_alignment == 128, "the trampoline's shared array alignment must match strata::shared_alignment");
  // The explicit arguments start at offset 0 of the kernarg segment; `arguments` is the only one.
  const auto& in_place = *(const entry_arguments<Kernel, Params>*)__builtin_amdgcn_kernarg_segment_ptr();
  device_context<Target> ctx(strata_shared_memory, dynamic_shared_offset<Kernel>);
  in_place.kernel(ctx, in_place.params);
}

template <class Kernel, class Params, class Target>
__global__ void __launch_bounds__((strata::detail::kernel_max_threads<Kernel, Target>()))
    kernel_entry(const entry_arguments<Kernel, Params> arguments) {
  (void)arguments;  // the same bytes, read in place
  run_in_place<Kernel, Params, Target>();
}

/// kernel_entry for a kernel that states `min_waves_per_eu` over 1: at least that many waves per SIMD
/// (clang's amdgpu_waves_per_eu), which caps its registers per lane at 512 / N for VGPRs and AGPRs
/// together. gemm::kernel states 2, which is what makes clang 15 accumulate MFMA results in VGPRs
/// (ops/gemm/kernel.hpp says what it cost without).
template <class Kernel, class Params, class Target>
__global__ void __launch_bounds__((strata::detail::kernel_max_threads<Kernel, Target>()))
    __attribute__((amdgpu_waves_per_eu(Kernel::min_waves_per_eu)))
    kernel_entry_bounded(const entry_arguments<Kernel, Params> arguments) {
  (void)arguments;
  run_in_place<Kernel, Params, Target>();
}

/// The vendor half of strata::launch (runtime/gpu/launch.hpp calls it as strata::detail::gpu_launcher).
struct launcher {
  template <class Kernel, class Params, class Target>
  static constexpr auto entry_point() {
    if constexpr (requires { Kernel::min_waves_per_eu; }) {
      if constexpr (Kernel::min_waves_per_eu > 1) return &kernel_entry_bounded<Kernel, Params, Target>;
      else return &kernel_entry<Kernel, Params, Target>;
    } else {
      return &kernel_entry<Kernel, Params, Target>;
    }
  }

  /// Queues `fn` (entry_point's trampoline) with the grid, block and cooperative flag of `shape`.
  template <class Kernel, class Params, class Target, class Entry>
  static api::launch_result launch(Entry fn, const launch_shape& shape, std::size_t shared_bytes, api::stream_t stream,
                       const Kernel& kernel, const Params& params) {
    const dim3 grid(static_cast<unsigned>(shape.grid.x), static_cast<unsigned>(shape.grid.y),
                    static_cast<unsigned>(shape.grid.z));
    const dim3 block(static_cast<unsigned>(shape.block.x), static_cast<unsigned>(shape.block.y),
                     static_cast<unsigned>(shape.block.z));
    // hipLaunchKernel returns the launch's own error (unlike <<<>>> followed by hipGetLastError,
    // which could report an earlier failure). It copies the arguments before returning.
    static_assert(std::is_trivially_copyable_v<entry_arguments<Kernel, Params>>,
                  "strata::launch: the kernel object and its params are copied to the GPU byte for byte; both "
                  "must be trivially copyable");
    entry_arguments<Kernel, Params> arguments{kernel, params};
    void* args[] = {&arguments};
    const void* entry = reinterpret_cast<const void*>(fn);
    // A cooperative launch guarantees every block is resident at once, or fails (never a silent hang).
    if (shape.cooperative)
      return {hipLaunchCooperativeKernel(entry, grid, block, args, static_cast<unsigned>(shared_bytes), stream),
              "hipLaunchCooperativeKernel"};
    return {hipLaunchKernel(entry, grid, block, args, shared_bytes, stream), "hipLaunchKernel"};
  }
};

}  // namespace strata::hip::detail

namespace strata::detail {
using gpu_launcher = hip::detail::launcher;
}  // namespace strata::detail
