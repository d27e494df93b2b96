// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// benchmark/compile_time/gemm_attention_tu.cu -- the translation unit whose compile time and peak
// memory benchmark/compile_time/measure.sh records (docs/performance.md, "Compile time").
//
// One GEMM configuration (bf16 in, bf16 out, alpha/beta epilogue, the target family's large tile) and,
// with -DSTRATA_BENCH_ATTENTION=1, one attention forward configuration (bf16, head dim 128, no mods),
// instantiated for the target -DSTRATA_COMPILE_TARGET=<descriptor> (sm90a or gfx942). Nothing runs:
// the functions below exist only so that the kernels are instantiated and compiled for the device.
#include "strata/runtime/runtime.hpp"
#include "strata/gemm.hpp"
#if STRATA_BENCH_ATTENTION
#include "strata/attention.hpp"
#endif

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor>, e.g. sm90a or gfx942"
#endif

namespace bench {
using target = strata::arch::STRATA_COMPILE_TARGET;
namespace sg = strata::ops::gemm;
using epi = strata::epilogue::chain<strata::epilogue::alpha_beta<strata::bf16>, strata::epilogue::convert_to<strata::bf16>>;

#if STRATA_BACKEND_CUDA
using gemm_kernel = sg::configs::sm80<target, strata::bf16, epi, sg::configs::sm80_large>;
#elif STRATA_BACKEND_HIP
using gemm_kernel = sg::configs::cdna<target, strata::bf16, epi, true>;
#else
using gemm_kernel = sg::configs::fma<target, strata::bf16, epi>;
#endif

// The kernel type is named only inside the function body: nvcc's host stubs cannot spell a function
// signature that names a type with a class-type template argument (gemm::shape), so the parameters
// travel as plain values and make_params runs here.
void launch_gemm(strata::stream& s, const strata::bf16* a, const strata::bf16* b, strata::bf16* d, int m, int n, int k) {
  const auto p = gemm_kernel::make_params({m, n, k, 1}, {a, k, sg::layout::row_major}, {b, n, sg::layout::row_major},
                                          {d, n, sg::layout::row_major}, epi::make_params({.alpha = 1.f}, {}));
  strata::launch(s, gemm_kernel::launch_shape_of(p), gemm_kernel{}, p);
}

#if STRATA_BENCH_ATTENTION
template <class Target>
void launch_attention(strata::stream& s, const strata::attn::tensor& q, const strata::attn::tensor& k,
                      const strata::attn::tensor& v, const strata::attn::tensor& o) {
  strata::attn::run<strata::bf16, 128, 128, Target>(s, q, k, v, o);
}
#endif
}  // namespace bench

#if STRATA_BENCH_ATTENTION
template void bench::launch_attention<bench::target>(strata::stream&, const strata::attn::tensor&,
                                                     const strata::attn::tensor&, const strata::attn::tensor&,
                                                     const strata::attn::tensor&);
#endif
