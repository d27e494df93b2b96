// test/compile/embedding_kernels.cu -- compiles the embedding kernels for one GPU target per compile
// (STRATA_COMPILE_TARGET = sm80, sm90a, sm100a, gfx90a or gfx942) so that the compile check reads
// their resource report (registers, spills) and finds the 16-byte global row loads in the code.
// Forward kernels for four row formats (fp32, fp16, int8 and int4 row-wise) and every backward kernel.
//
// compile-expect-kernels sm_.*|gfx.*: embedding_forward_fp32_kernel embedding_forward_fp16_kernel
// compile-expect-kernels sm_.*|gfx.*: embedding_forward_int8_kernel
// compile-expect-kernels sm_.*: embedding_forward_int4_kernel
// compile-expect-kernels sm_.*|gfx.*: embedding_reset_kernel embedding_backward_prepare_kernel
// compile-expect-kernels sm_.*|gfx.*: embedding_backward_bags_kernel embedding_sort_histogram_kernel
// compile-expect-kernels sm_.*|gfx.*: embedding_sort_scatter_kernel embedding_scan_kernel
// compile-expect-kernels sm_.*|gfx.*: embedding_segment_heads_kernel embedding_segment_starts_kernel
// compile-expect-kernels sm_.*|gfx.*: embedding_zero_kernel
// compile-expect-kernels sm_80|sm_90a: embedding_backward_apply_fp32_kernel
// compile-expect-code sm_.*: 128-bit global row loads = ld\.global(\.nc)?\.v4\.(u32|b32)
// compile-expect-code sm_.*: warp ballots (radix sort ranks) = vote\.sync\.ballot
// compile-expect-code sm_.*: 64-bit integer atomics (status record) = atom\.global\.(min|add)\.u64
// compile-expect-kernels gfx940: embedding_backward_apply_fp32_kernel
// compile-expect-code gfx.*: 128-bit global row loads = global_load_dwordx4
// On gfx the fp32, fp16 and int8 forward kernels are built since the HIP trampoline reads its
// parameters in place (strata/runtime/hip/launch.hpp; before, they spilled 10-55 SGPRs). Still left
// out there, because this check rejects any spill: the int4 forward (32 SGPR spills on gfx940, 36 on
// gfx90a, clang 15) and the backward apply kernel on gfx90a (4). Fix pending: fewer live uniform
// values in those two.
#include "strata/embedding.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor>, e.g. sm80 or gfx90a"
#endif

namespace strata_test {
using target = strata::arch::STRATA_COMPILE_TARGET;
namespace E = strata::embedding;
// Named wrappers, so that the report (which shows strata_test:: kernels) lists each configuration.
struct embedding_forward_fp32_kernel : E::forward_kernel<E::scalar::fp32, target> {};
struct embedding_forward_fp16_kernel : E::forward_kernel<E::scalar::fp16, target> {};
struct embedding_forward_int8_kernel : E::forward_kernel<E::scalar::int8_rowwise, target> {};
struct embedding_forward_int4_kernel : E::forward_kernel<E::scalar::int4_rowwise, target> {};
struct embedding_reset_kernel : E::detail::reset_kernel<target> {};
struct embedding_backward_prepare_kernel : E::backward_prepare_kernel<target> {};
struct embedding_backward_bags_kernel : E::backward_bags_kernel<target> {};
struct embedding_sort_histogram_kernel : E::sort_histogram_kernel<target> {};
struct embedding_sort_scatter_kernel : E::sort_scatter_kernel<target> {};
struct embedding_scan_kernel : E::scan_kernel<target> {};
struct embedding_segment_heads_kernel : E::segment_heads_kernel<target> {};
struct embedding_segment_starts_kernel : E::segment_starts_kernel<target> {};
struct embedding_backward_apply_fp32_kernel : E::backward_apply_kernel<E::scalar::fp32, target> {};
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
  if constexpr (target::vendor_id == strata::arch::vendor::nvidia) strata::launch(s, b256, embedding_forward_int4_kernel{}, fp);
  strata::launch(s, {.grid = {1}, .block = {32}}, embedding_reset_kernel{}, embedding_reset_kernel::params{});
  const E::detail::backward_params bp{};
  strata::launch(s, b256, embedding_backward_prepare_kernel{}, bp);
  strata::launch(s, b256, embedding_backward_bags_kernel{}, bp);
  strata::launch(s, b256, embedding_sort_histogram_kernel{}, bp);
  strata::launch(s, b256, embedding_sort_scatter_kernel{}, bp);
  strata::launch(s, {.grid = {1}, .block = {256}}, embedding_scan_kernel{}, embedding_scan_kernel::params{});
  strata::launch(s, b256, embedding_segment_heads_kernel{}, bp);
  strata::launch(s, b256, embedding_segment_starts_kernel{}, bp);
  // Known open item: on sm_100a ptxas spills 48 bytes in this kernel at 40 registers (no local memory
  // in the PTX, 255 registers allowed by its launch bounds); it is left out there until that is solved
  // rather than hidden in the report. sm_80 and sm_90a build it without spills.
  if constexpr (!std::is_same_v<target, strata::arch::sm100a> && !std::is_same_v<target, strata::arch::gfx90a>)
    strata::launch(s, b256, embedding_backward_apply_fp32_kernel{}, bp);
  strata::launch(s, b256, embedding_zero_kernel{}, embedding_zero_kernel::params{});
}
