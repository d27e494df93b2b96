// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/tma_kernels.cu -- TMA loads onto an mbarrier feeding chained wgmmas, a cluster's
// multicast and remote arrivals, and a TMA store (test/copy/tma_kernels.hpp), compiled for sm_90a: the PTX must hold the bulk tensor copy completing
// on the barrier, the barrier's transaction count and wait, and the wgmmas; nothing may spill. The
// tensor maps are read from the kernel's __grid_constant__ parameters. The emulator runs the same
// kernel in test/copy/tma_test.cpp.
//
// compile-targets sm_90a
// compile-expect-kernels sm_90a: tma_wgmma_n128_kernel tma_wgmma_n256_kernel multicast_kernel store_kernel
// compile-expect-code sm_90a: TMA 2-D store from shared memory = cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group
// compile-expect-code sm_90a: bulk store group closed = cp\.async\.bulk\.commit_group
// compile-expect-code sm_90a: and waited for until its source is read = cp\.async\.bulk\.wait_group\.read 0
// compile-expect-code sm_90a: TMA multicast into the cluster = cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes\.multicast::cluster
// compile-expect-code sm_90a: arrival on another block's barrier = mbarrier\.arrive\.release\.cluster\.shared::cluster\.b64
// compile-expect-code sm_90a: barrier init visible to the cluster = fence\.mbarrier_init\.release\.cluster
// compile-expect-code sm_90a: TMA 2-D load onto an mbarrier = cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes
// compile-expect-code sm_90a: arrive with a transaction count = mbarrier\.arrive\.expect_tx\.shared::cta\.b64
// compile-expect-code sm_90a: wait by phase parity = mbarrier\.try_wait\.parity\.shared::cta\.b64
// compile-expect-code sm_90a: wgmma m64n128k16 = wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16
// compile-expect-code sm_90a: wgmma m64n256k16 = wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.bf16\.bf16
#include "copy/tma_kernels.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=sm90a"
#endif

namespace strata_test {
struct tma_wgmma_n128_kernel : tma_wgmma_kernel<128> {};
struct tma_wgmma_n256_kernel : tma_wgmma_kernel<256> {};
}  // namespace strata_test

// Never called: only instantiated, so that every kernel is compiled for the device.
void strata_compile_tma_kernels(strata::stream& s) {
  using namespace strata_test;
  strata::launch(s, {.grid = {1}, .block = {128}, .dynamic_shared_bytes = tma_wgmma_n128_kernel::dynamic_shared_bytes},
                 tma_wgmma_n128_kernel{}, mainloop_params{});
  strata::launch(s, {.grid = {1}, .block = {128}, .dynamic_shared_bytes = tma_wgmma_n256_kernel::dynamic_shared_bytes},
                 tma_wgmma_n256_kernel{}, mainloop_params{});
  strata::launch(s, {.grid = {2}, .block = {128}, .cluster = {2}, .dynamic_shared_bytes = 32 * 64 * 2 + 1024},
                 multicast_kernel{}, cluster_params{});
  strata::launch(s, {.grid = {1}, .block = {128}, .dynamic_shared_bytes = 64 * 64 * 2 + 1024}, store_kernel{}, store_params{});
}
