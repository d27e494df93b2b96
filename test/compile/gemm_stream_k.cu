// test/compile/gemm_stream_k.cu -- the stream-K GEMM (strata/ops/gemm/stream_k.hpp) for the NVIDIA
// targets: the bf16 configuration the host entry picks for large problems (128 x 128 x 32, 2 x 4
// warps, 16-byte rows). Checks that the fix-up protocol reaches the hardware as ordered GPU-scope
// atomics, that the mainloop still issues mma.sync, and that nothing spills.
//
// Not built for gfx yet: on gfx940 the GEMM kernels this wraps already spill SGPRs under Debian's
// hipcc (clang 15), with or without stream-K (docs/gemm.md, "Performance status"), so
// this file is registered for the NVIDIA targets only until that is fixed.
//
// compile-targets sm_.*
// compile-expect-kernels sm_.*: gemm_stream_k_kernel
// compile-expect-code sm_.*: tensor-core MMA = mma\.sync\.aligned\.m16n8k16
// compile-expect-code sm_.*: fragments loaded with ldmatrix = ldmatrix\.sync\.aligned\.m8n8\.x4
// compile-expect-code sm_.*: release of a partial at GPU scope = st\.release\.gpu
// compile-expect-code sm_.*: acquire of a partial at GPU scope = ld\.acquire\.gpu
#if !defined(__HIP__) && !defined(__HIPCC__)
// Only the kernel template and its configurations: the host entry (strata/gemm.hpp) would compile
// every configuration it dispatches to.
#include "strata/ops/gemm/configs.hpp"
#include "strata/ops/gemm/stream_k.hpp"
#include "strata/strata.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor>, e.g. sm80 or gfx90a"
#endif

namespace strata_test {
namespace ep = strata::epilogue;
using E = ep::chain<ep::alpha_beta<strata::bf16>, ep::convert_to<strata::bf16>>;

// Named wrapper, so that the report (which shows strata_test:: kernels) lists it. A template: nvcc's
// host stub generator mishandles a class-type template argument (gemm::shape) named through an alias
// template at namespace scope.
template <class Target>
struct gemm_stream_k_kernel
    : strata::ops::gemm::stream_k_kernel<
          strata::ops::gemm::configs::sm80<Target, strata::bf16, E, strata::ops::gemm::configs::sm80_large, 16>> {};

template <class Target>
void instantiate(strata::stream& s) {
  using SK = gemm_stream_k_kernel<Target>;
  const typename SK::params p{};
  strata::launch(s, SK::launch_shape_of(p), SK{}, p);
}
}  // namespace strata_test

// Never called: only instantiated, so that the kernel is compiled for the device.
void strata_compile_instantiate_gemm_stream_k(strata::stream& s) {
  strata_test::instantiate<strata::arch::STRATA_COMPILE_TARGET>(s);
}
#endif
