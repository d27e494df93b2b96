// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/tensor_kernels.cu -- the tensor layer's emulator-test kernel (test/tensor/tile_copy_kernel.hpp)
// compiled for every GPU target: layouts, partitions, swizzled shared views and predicates must fold to
// plain index arithmetic with no register spills. Two thread arrangements: 8 x 32 (divides the tile)
// and 6 x 16 (does not: predicated).
//
// compile-expect-kernels sm_.*|gfx.*: tensor_tile_copy_kernel
// compile-expect-code sm_.*: shared-memory stores = st\.shared
// compile-expect-code sm_.*: shared-memory loads = ld\.shared
// compile-expect-code sm_.*: block barrier = (bar|barrier)\.sync
// compile-expect-code gfx.*: LDS writes = ds_write
// compile-expect-code gfx.*: LDS reads = ds_read
// compile-expect-code gfx.*: workgroup barrier = s_barrier
#include "strata/strata.hpp"

#include "tensor/tile_copy_kernel.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor>, e.g. sm80 or gfx90a"
#endif

namespace {
using target = strata::arch::STRATA_COMPILE_TARGET;
}

extern "C" STRATA_DEVICE unsigned long long strata_report_shared_tensor_tile_copy =
    strata::dynamic_shared_offset<strata_test::tensor_tile_copy_kernel<target>>;

// Never called: only instantiated, so that the kernels are compiled for the device.
void strata_compile_instantiate_tensor(strata::stream& s) {
  using namespace strata_test;
  strata::launch(s, strata::launch_shape{.grid = {4, 4}, .block = {256}}, tensor_tile_copy_kernel<target>{},
                 tile_copy_params{});
  strata::launch(s, strata::launch_shape{.grid = {4, 4}, .block = {96}},
                 tensor_tile_copy_kernel<target, 32, 64, 6, 16>{}, tile_copy_params{});
}
