// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/copy_kernels.cu -- the copy atoms and the pipeline built for one GPU target per compile
// (see kernels.cu and compile_check.cmake): the instructions they must produce, and no spills.
//
// NVIDIA: the block tile copy with 16-byte vectors, the pipeline over cp.async (2 and 4 stages), ldmatrix.
// AMD: buffer loads with range checks, the pipeline's portable path whose consumer reads 128 bits of LDS.
//
// compile-expect-kernels sm_.*: tile_copy_kernel ksum_kernel ldmatrix_kernel cp_async_groups_kernel
// compile-expect-kernels gfx.*: tile_copy_kernel ksum_kernel buffer_load_kernel
// compile-expect-code sm_.*: 128-bit global loads = ld\.global(\.nc)?\.v4\.[usb]32
// compile-expect-code sm_.*: cp.async 16 bytes, L2 only = cp\.async\.cg\.shared\.global
// compile-expect-code sm_.*: cp.async 4 bytes = cp\.async\.ca\.shared\.global
// compile-expect-code sm_.*: cp.async commit = cp\.async\.commit_group
// compile-expect-code sm_.*: cp.async wait = cp\.async\.wait_group
// compile-expect-code sm_.*: ldmatrix x4 = ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16
// compile-expect-code sm_.*: ldmatrix x2 trans = ldmatrix\.sync\.aligned\.m8n8\.x2\.trans\.shared\.b16
// compile-expect-code sm_.*: 128-bit shared loads = ld\.shared\.v4\.[fubs]32
// compile-expect-code gfx.*: buffer load, 1 dword = buffer_load_dword[ \t]
// compile-expect-code gfx.*: buffer load, 4 dwords = buffer_load_dwordx4
// compile-expect-code gfx.*: 128-bit LDS read = ds_read_b128
// compile-expect-code gfx.*: 128-bit global loads = global_load_dwordx4
#include "strata/strata.hpp"

#include "copy/kernels.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor>, e.g. sm80 or gfx90a"
#endif

namespace {
using target = strata::arch::STRATA_COMPILE_TARGET;
constexpr bool nvidia = target::atoms.has(strata::arch::atom_family::cp_async);
}  // namespace

#define STRATA_REPORT_SHARED(tag, ...) \
  extern "C" STRATA_DEVICE unsigned long long strata_report_shared_##tag = strata::dynamic_shared_offset<__VA_ARGS__>;

STRATA_REPORT_SHARED(tile_copy, strata_test::tile_copy_kernel<target, 64, 32, 16, false>)
STRATA_REPORT_SHARED(ksum, strata_test::ksum_kernel<target, 4, 16>)

// Never called: only instantiated, so that every kernel is compiled for the device.
void strata_compile_copy_kernels(strata::stream& s) {
  using namespace strata_test;
  strata::launch(s, {.grid = {8}, .block = {256}}, tile_copy_kernel<target, 64, 32, 16, false>{}, tile_params{});
  strata::launch(s, {.grid = {8}, .block = {128}}, ksum_kernel<target, 4, 16>{}, ksum_params{});
  strata::launch(s, {.grid = {8}, .block = {128}}, ksum_kernel<target, 2, 16>{}, ksum_params{});
  if constexpr (nvidia) {
    strata::launch(s, {.grid = {1}, .block = {32}}, ldmatrix_kernel<target, 4, false>{}, ldmatrix_params{});
    strata::launch(s, {.grid = {1}, .block = {32}}, ldmatrix_kernel<target, 2, true>{}, ldmatrix_params{});
    strata::launch(s, {.grid = {1}, .block = {256}}, cp_async_groups_kernel<target>{}, groups_params{});
  } else {
    strata::launch(s, {.grid = {1}, .block = {64}}, buffer_load_kernel<target>{}, buffer_params{});
  }
}
