// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/multiarch/attention_fp8.cu -- the fp8 attention kernels of a newer target compile in a
// multi-architecture build. The sm_80 (CUDA) and gfx90a (HIP) passes of such a build compile the
// sm90a / gfx942 fp8 kernels too, where the fp8 instructions do not exist; the kernel body is then a
// device trap (mma::available_in_this_pass). Before that guard this file did not compile.
// Compiled by test/compile/CMakeLists.txt for two architectures at once (compile.multiarch.*).
#include "strata/attention.hpp"

namespace A = strata::attn;

#if STRATA_BACKEND_HIP
using fp8_target = strata::arch::gfx942;
#else
using fp8_target = strata::arch::sm90a;
#endif

void strata_multiarch_attention_fp8(strata::stream& s, const A::tensor& q, const A::tensor& k, const A::tensor& v,
                                    const A::tensor& o) {
  A::run<strata::f8_e4m3, 128, 128, fp8_target>(s, q, k, v, o);
}
