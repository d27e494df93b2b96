// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// benchmark/compile_time/framework_op.cu -- what a framework's operator file does: one call of the
// runtime-typed strata::gemm and one of strata::attention (measure.sh times it).
//   -DSTRATA_PRECOMPILED_ENTRIES=1  the entries come from a kernel library (strata_add_kernel_library):
//                                   the file compiles their host code only
//   -DSTRATA_BENCH_TYPED=1          strata::gemm<bf16> instead: one dtype pair's kernels, no attention
#include "strata/attention.hpp"
#include "strata/gemm.hpp"

namespace bench {
void linear(strata::stream& s, const strata::ops::gemm::matrix& a, const strata::ops::gemm::matrix& b,
            const strata::ops::gemm::matrix& d) {
#if STRATA_BENCH_TYPED
  strata::gemm<strata::bf16>(s, a, b, d, d);
#else
  strata::gemm(s, a, b, d, d);
#endif
}
#if !STRATA_BENCH_TYPED
void sdpa(strata::stream& s, const strata::attn::tensor& q, const strata::attn::tensor& k, const strata::attn::tensor& v,
          const strata::attn::tensor& o) {
  strata::attention(s, q, k, v, o);
}
#endif
}  // namespace bench
