// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/attention_sm90_backward_kernels.cu -- the Hopper attention backward's dK/dV kernel
// (ops/attention/sm90_backward.hpp) compiled for sm_90a at head dims 64 and 128 in bf16 and 128 in
// f16, and the form with soft-cap, ALiBi and dropout at 64 and 128 (at 128 also with score and mask
// modifiers). The PTX must hold the warp-specialized kernel's instructions (4-D TMA loads of K, V, Q and dO
// and 2-D ones of the rows' statistics onto mbarriers; S^T and dP^T by wgmma from shared memory; dV
// and dK by wgmma with P^T and dS^T from registers and dO / Q read N-major; dQ by wgmma with dS read
// M-major; the register hand-over between warpgroups) and nothing may spill: a consumer holds dK and
// dV (D floats) beside S^T, dP^T and dQ's part under setmaxnreg's 240 registers. ptxas may not
// re-fence or serialize a wgmma (the compile check fails on its C75xx notes). The emulator runs the
// same kernels in test/attention/sm90_backward_test.cpp.
//
// compile-targets sm_90a
// compile-expect-kernels sm_90a: sm90_backward_bf16_d64_kernel sm90_backward_bf16_d128_kernel sm90_backward_f16_d128_kernel
// compile-expect-kernels sm_90a: sm90_backward_bf16_d64_extras_kernel sm90_backward_bf16_d128_extras_kernel
// compile-expect-kernels sm_90a: sm90_backward_bf16_d128_mods_kernel
// compile-expect-code sm_90a: TMA 4-D load onto an mbarrier = cp\.async\.bulk\.tensor\.4d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes
// compile-expect-code sm_90a: TMA 2-D load of LSE2 / Di = cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes
// compile-expect-code sm_90a: S^T and dP^T by m64n64k16 from shared memory = wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.bf16\.bf16 \{[^}]*\}, %rd[0-9]+, %rd[0-9]+, p, 1, 1, 0, 0
// compile-expect-code sm_90a: dV and dK with A from registers, B N-major = wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16 \{[^}]*\}, \{%r[0-9]+, %r[0-9]+, %r[0-9]+, %r[0-9]+\}, %rd[0-9]+, p, 1, 1, 1
// compile-expect-code sm_90a: dQ with A M-major and B N-major = wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.bf16\.bf16 \{[^}]*\}, %rd[0-9]+, %rd[0-9]+, p, 1, 1, 1, 1
// compile-expect-code sm_90a: producer gives registers back = setmaxnreg\.dec\.sync\.aligned\.u32 24
// compile-expect-code sm_90a: consumers take them = setmaxnreg\.inc\.sync\.aligned\.u32 240
// compile-expect-code sm_90a: dQ's parts added by TMA reductions = cp\.reduce\.async\.bulk\.tensor\.3d\.global\.shared::cta\.add\.tile\.bulk_group
#include "strata/ops/attention/sm90_backward.hpp"
#include "strata/runtime/runtime.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=sm90a"
#endif

namespace strata_test {
namespace sa = strata::attn;
struct sm90_backward_bf16_d64_kernel : sa::sm90_backward_kernel<strata::bf16, 64> {};
struct sm90_backward_bf16_d128_kernel : sa::sm90_backward_kernel<strata::bf16, 128> {};
struct sm90_backward_f16_d128_kernel : sa::sm90_backward_kernel<strata::f16, 128> {};
// With soft-cap, ALiBi and dropout compiled in.
struct sm90_backward_bf16_d64_extras_kernel : sa::sm90_backward_kernel<strata::bf16, 64, true> {};
struct sm90_backward_bf16_d128_extras_kernel : sa::sm90_backward_kernel<strata::bf16, 128, true> {};
// With a differentiable score modifier (a squashing) and a mask modifier (a document mask).
struct squash {
  STRATA_HOST_DEVICE float operator()(float s, int, int, int, int) const { return s + 0.25f * ::tanhf(s); }
  STRATA_HOST_DEVICE float grad(float s, int, int, int, int) const {
    const float t = ::tanhf(s);
    return 1.f + 0.25f * (1.f - t * t);
  }
};
struct same_document {
  STRATA_HOST_DEVICE bool operator()(int, int, int q, int k) const { return q / 64 == k / 64; }
};
struct sm90_backward_bf16_d128_mods_kernel : sa::sm90_backward_kernel<strata::bf16, 128, true, squash, same_document> {};

template <class K>
void launch_sm90(strata::stream& s) {
  const typename K::params p{};
  strata::launch(s, K::launch_shape_of(p), K{}, p);
}
}  // namespace strata_test

// Never called: only instantiated, so that every kernel is compiled for the device.
void strata_compile_attention_sm90_backward_kernels(strata::stream& s) {
  using namespace strata_test;
  launch_sm90<sm90_backward_bf16_d64_kernel>(s);
  launch_sm90<sm90_backward_bf16_d128_kernel>(s);
  launch_sm90<sm90_backward_f16_d128_kernel>(s);
  launch_sm90<sm90_backward_bf16_d64_extras_kernel>(s);
  launch_sm90<sm90_backward_bf16_d128_extras_kernel>(s);
  launch_sm90<sm90_backward_bf16_d128_mods_kernel>(s);
}
