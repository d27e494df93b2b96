// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/kernels.cu -- instantiates strata::launch for every test kernel, for one target per
// compile, so that the compile tests (compile_check.cmake) can build the trampolines for that target
// and read the compiler's resource report. Compiled by nvcc as CUDA and by hipcc with `-x hip`.
//
// STRATA_COMPILE_TARGET names the arch descriptor (sm80, sm90a, sm100a, gfx90a, gfx942); the
// compile check passes it with -D together with the matching -gencode / --offload-arch.
//
// compile-expect-kernels sm_.*|gfx.*: block_reduce_kernel transpose_kernel warp_scan_kernel early_exit_kernel
// compile-expect-kernels sm_.*|gfx.*: divergent_barrier_kernel divergent_shuffle_kernel hierarchy_probe_kernel
// compile-expect-kernels sm_90a|sm_100a: cluster_exchange_kernel
// compile-expect-code sm_.*: warp shuffles = shfl\.sync
// compile-expect-code sm_.*: warp votes = vote\.sync
// compile-expect-code sm_.*: block barrier = (bar|barrier)\.sync
// compile-expect-code sm_90a|sm_100a: cluster barrier arrive = barrier\.cluster\.arrive
// compile-expect-code sm_90a|sm_100a: cluster barrier wait = barrier\.cluster\.wait
// compile-expect-code sm_90a|sm_100a: distributed shared memory = mapa
// compile-expect-code sm_100a: chiplet id (experimental %smid split) = %smid
// compile-expect-code gfx.*: wavefront permutes = (ds_bpermute_b32|ds_swizzle_b32|_dpp|row_shr|quad_perm)
// compile-expect-code gfx.*: workgroup barrier = s_barrier
// compile-expect-code gfx94.|gfx950: chiplet id (HW_REG_XCC_ID) = s_getreg_b32[^\n]*(HW_REG_XCC_ID|hwreg\(20)
#include <type_traits>
#include <utility>

#include "strata/strata.hpp"

#include "compile/hierarchy_probe.hpp"
#include "kernels/block_reduce.hpp"
#include "kernels/cluster_exchange.hpp"
#include "kernels/missing_barrier.hpp"
#include "kernels/transpose.hpp"
#include "kernels/warp_scan.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor>, e.g. sm80 or gfx90a"
#endif

namespace {
using target = strata::arch::STRATA_COMPILE_TARGET;
}

// The shared-memory layout bytes of each kernel (static storage padded to the dynamic offset),
// published as device globals so that the compile check can read them from the PTX / assembly and
// put them in the resource report next to registers and spills.
#define STRATA_REPORT_SHARED(tag, ...) \
  extern "C" STRATA_DEVICE unsigned long long strata_report_shared_##tag = strata::dynamic_shared_offset<__VA_ARGS__>;

STRATA_REPORT_SHARED(block_reduce, strata_test::block_reduce_kernel<target, 256>)
STRATA_REPORT_SHARED(transpose, strata_test::transpose_kernel<target>)
STRATA_REPORT_SHARED(warp_scan, strata_test::warp_scan_kernel<target>)
STRATA_REPORT_SHARED(early_exit, strata_test::early_exit_kernel<target>)
STRATA_REPORT_SHARED(divergent_barrier, strata_test::divergent_barrier_kernel<target>)
STRATA_REPORT_SHARED(divergent_shuffle, strata_test::divergent_shuffle_kernel<target>)
STRATA_REPORT_SHARED(hierarchy_probe, strata_test::hierarchy_probe_kernel<target>)
STRATA_REPORT_SHARED(cluster_exchange, strata_test::cluster_exchange_kernel<target>)

// Never called: only instantiated, so that every kernel is compiled for the device.
void strata_compile_instantiate_all(strata::stream& s) {
  using namespace strata_test;
  const strata::launch_shape one_d{.grid = {8}, .block = {256}};
  strata::launch(s, one_d, block_reduce_kernel<target, 256>{}, reduce_params{});
  strata::launch(s, strata::launch_shape{.grid = {4, 4}, .block = {32, 8}}, transpose_kernel<target>{},
                 transpose_params{});
  strata::launch(s, strata::launch_shape{.grid = {8}, .block = {200}}, warp_scan_kernel<target>{}, scan_params{});
  // The buggy kernels compile fine; their bugs show at run time (the emulator reports them).
  strata::launch(s, one_d, early_exit_kernel<target>{}, bug_params{});
  strata::launch(s, one_d, divergent_barrier_kernel<target>{}, bug_params{});
  strata::launch(s, one_d, divergent_shuffle_kernel<target>{}, bug_params{});
  strata::launch(s, strata::launch_shape{.grid = {8}, .block = {256}, .dynamic_shared_bytes = 256 * sizeof(double)},
                 hierarchy_probe_kernel<target>{}, probe_params{});
  if constexpr (target::max_cluster_size > 1) {
    strata::launch(s, strata::launch_shape{.grid = {8}, .block = {256}, .cluster = {4}},
                   cluster_exchange_kernel<target>{}, exchange_params{});
  }
}

// Never called: compiles the rest of the backend's host interface (streams, buffers, copies, queries).
void strata_compile_runtime_interface() {
  strata::stream owned;                                            // new non-blocking stream
  strata::stream borrowed = strata::stream::wrap(owned.native_handle());
  strata::stream moved = std::move(borrowed);
  moved.synchronize();
  strata::device_buffer<float> a(1024), b(0);
  strata::device_buffer<float> c = std::move(a);
  static_assert(!std::is_copy_constructible_v<strata::device_buffer<float>>);
  static_assert(!std::is_copy_constructible_v<strata::stream>);
  float host[4] = {};
  strata::copy_to_device(owned, c.data(), host, 4);
  strata::copy_on_device(owned, b.data(), static_cast<const float*>(c.data()), 0);
  strata::copy_to_host(owned, host, static_cast<const strata::device_buffer<float>&>(c).data(), 4);
  const strata::device_properties p = strata::get_device_properties(strata::device_count() - 1);
  (void)p;
  (void)c.size();
  (void)c.bytes();
  strata_compile_instantiate_all(owned);
}
