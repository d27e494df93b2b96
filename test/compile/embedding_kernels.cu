// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/embedding_kernels.cu -- compiles the embedding kernels for one GPU target per compile
// (STRATA_COMPILE_TARGET = sm80, sm90a, sm100a, gfx90a or gfx942) so that the compile check reads
// their resource report (registers, spills) and finds the 16-byte global row loads in the code.
// The forward kernel for every row format (fp32, fp16, bf16, fp8 e4m3, int8 and int4 row-wise) and every
// backward kernel, the apply kernel in the three row formats it writes (fp32, fp16, bf16).
//
// compile-expect-kernels sm_.*|gfx.*: embedding_forward_fp32_kernel embedding_forward_fp16_kernel
// compile-expect-kernels sm_.*|gfx.*: embedding_forward_int8_kernel embedding_forward_int4_kernel
// compile-expect-kernels sm_.*|gfx.*: embedding_forward_bf16_kernel embedding_forward_fp8_kernel
// compile-expect-kernels sm_.*|gfx.*: embedding_reset_kernel embedding_backward_prepare_kernel
// compile-expect-kernels sm_.*|gfx.*: embedding_backward_bags_kernel embedding_sort_histogram_kernel
// compile-expect-kernels sm_.*|gfx.*: embedding_sort_scatter_kernel embedding_scan_kernel
// compile-expect-kernels sm_.*|gfx.*: embedding_segment_heads_kernel embedding_segment_starts_kernel
// compile-expect-kernels sm_.*|gfx.*: embedding_zero_kernel
// compile-expect-kernels sm_.*|gfx.*: embedding_backward_apply_fp32_kernel embedding_backward_apply_fp16_kernel
// compile-expect-kernels sm_.*|gfx.*: embedding_backward_apply_bf16_kernel
// compile-expect-code sm_.*: 128-bit global row loads = ld\.global(\.nc)?\.v4\.(u32|b32)
// compile-expect-code sm_.*: warp ballots (radix sort ranks) = vote\.sync\.ballot
// compile-expect-code sm_.*: 64-bit integer atomics (status record) = atom\.global\.(min|add)\.u64
// compile-expect-code gfx.*: 128-bit global row loads = global_load_dwordx4
// Every kernel is built on every target, and the check rejects any spill. History (details in
// docs/embedding.md): on gfx the forward kernels build since the HIP trampoline reads its parameters
// in place (strata/runtime/hip/trampoline.hpp; before, they spilled 10-55 SGPRs). Until 2026-12-02 two
// kernels were left out: the int4 forward on gfx90a / gfx940 (32-36 SGPR spills: a bounds test per
// element of an unaligned row chunk, 32 lane masks hoisted out of the row loop; now a full chunk has
// no test, detail::load_chunk_unaligned) and the fp32 backward apply on gfx90a (4 SGPR spills) and
// sm_100a (48 bytes at 40 registers, a target ptxas chose itself under the 256-thread launch bound;
// now a 32-bit row loop, lane-strided column loops and a named occupancy,
// min_blocks_per_multiprocessor, which the forward kernels declare too).
#include "strata/embedding.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor>, e.g. sm80 or gfx90a"
#endif

namespace strata_test {
using target = strata::arch::STRATA_COMPILE_TARGET;
namespace E = strata::embedding;
// Named wrappers, so that the report (which shows strata_test:: kernels) lists each configuration.
struct embedding_forward_fp32_kernel : E::forward_kernel<E::scalar::fp32, target, E::detail::forward_config<target, E::scalar::fp32>> {};
struct embedding_forward_fp16_kernel : E::forward_kernel<E::scalar::fp16, target, E::detail::forward_config<target, E::scalar::fp16>> {};
struct embedding_forward_int8_kernel : E::forward_kernel<E::scalar::int8_rowwise, target, E::detail::forward_config<target, E::scalar::int8_rowwise>> {};
struct embedding_forward_int4_kernel : E::forward_kernel<E::scalar::int4_rowwise, target, E::detail::forward_config<target, E::scalar::int4_rowwise>> {};
struct embedding_forward_bf16_kernel : E::forward_kernel<E::scalar::bf16, target, E::detail::forward_config<target, E::scalar::bf16>> {};
struct embedding_forward_fp8_kernel : E::forward_kernel<E::scalar::fp8_e4m3, target, E::detail::forward_config<target, E::scalar::fp8_e4m3>> {};
struct embedding_reset_kernel : E::detail::reset_kernel<target> {};
struct embedding_backward_prepare_kernel : E::backward_prepare_kernel<target> {};
struct embedding_backward_bags_kernel : E::backward_bags_kernel<target> {};
struct embedding_sort_histogram_kernel : E::sort_histogram_kernel<target> {};
struct embedding_sort_scatter_kernel : E::sort_scatter_kernel<target> {};
struct embedding_scan_kernel : E::scan_kernel<target> {};
struct embedding_segment_heads_kernel : E::segment_heads_kernel<target> {};
struct embedding_segment_starts_kernel : E::segment_starts_kernel<target> {};
struct embedding_backward_apply_fp32_kernel : E::backward_apply_kernel<E::scalar::fp32, target> {};
struct embedding_backward_apply_fp16_kernel : E::backward_apply_kernel<E::scalar::fp16, target> {};
struct embedding_backward_apply_bf16_kernel : E::backward_apply_kernel<E::scalar::bf16, target> {};
struct embedding_zero_kernel : E::zero_kernel<target> {};
}  // namespace strata_test

#define STRATA_REPORT_SHARED(tag) \
  extern "C" STRATA_DEVICE unsigned long long strata_report_shared_##tag = strata::dynamic_shared_offset<strata_test::tag##_kernel>;
STRATA_REPORT_SHARED(embedding_forward_fp32)
STRATA_REPORT_SHARED(embedding_sort_scatter)
STRATA_REPORT_SHARED(embedding_scan)

// Never called: only instantiated, so that every kernel is compiled for the device.
void strata_compile_embedding(strata::stream& s) {
  using namespace strata_test;
  const strata::launch_shape b256{.grid = {8}, .block = {256}};
  const E::detail::forward_params fp{};
  strata::launch(s, b256, embedding_forward_fp32_kernel{}, fp);
  strata::launch(s, b256, embedding_forward_fp16_kernel{}, fp);
  strata::launch(s, b256, embedding_forward_int8_kernel{}, fp);
  strata::launch(s, b256, embedding_forward_int4_kernel{}, fp);
  strata::launch(s, b256, embedding_forward_bf16_kernel{}, fp);
  strata::launch(s, b256, embedding_forward_fp8_kernel{}, fp);
  strata::launch(s, {.grid = {1}, .block = {32}}, embedding_reset_kernel{}, embedding_reset_kernel::params{});
  const E::detail::backward_params bp{};
  strata::launch(s, b256, embedding_backward_prepare_kernel{}, bp);
  strata::launch(s, b256, embedding_backward_bags_kernel{}, bp);
  strata::launch(s, b256, embedding_sort_histogram_kernel{}, bp);
  strata::launch(s, b256, embedding_sort_scatter_kernel{}, bp);
  strata::launch(s, {.grid = {1}, .block = {256}}, embedding_scan_kernel{}, embedding_scan_kernel::params{});
  strata::launch(s, b256, embedding_segment_heads_kernel{}, bp);
  strata::launch(s, b256, embedding_segment_starts_kernel{}, bp);
  strata::launch(s, b256, embedding_backward_apply_fp32_kernel{}, bp);
  strata::launch(s, b256, embedding_backward_apply_fp16_kernel{}, bp);
  strata::launch(s, b256, embedding_backward_apply_bf16_kernel{}, bp);
  strata::launch(s, b256, embedding_zero_kernel{}, embedding_zero_kernel::params{});
}
