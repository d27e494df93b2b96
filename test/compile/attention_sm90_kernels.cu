// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/attention_sm90_kernels.cu -- the Hopper attention forward (ops/attention/sm90_forward.hpp)
// compiled for sm_90a at head dims 64, 128 and 256 in bf16 and 128 in f16, and the form with soft-cap,
// ALiBi and dropout at 128 and 256, and with score and mask modifiers at 128. The PTX must hold the
// warp-specialized kernel's instructions (4-D TMA loads onto mbarriers, Q K^T by wgmma from shared
// memory, P V by wgmma with P from registers and V read N-major, the register hand-over between
// warpgroups) and nothing may spill: a consumer holds S (64 floats at block_n 128) and O (D / 2
// floats) under setmaxnreg's 232 registers. ptxas may not re-fence or serialize a wgmma (the compile
// check fails on its C75xx notes). The emulator runs the same kernels in
// test/attention/sm90_forward_test.cpp.
//
// compile-targets sm_90a
// compile-expect-kernels sm_90a: sm90_attention_bf16_d64_kernel sm90_attention_bf16_d128_kernel sm90_attention_bf16_d256_kernel sm90_attention_f16_d128_kernel
// compile-expect-kernels sm_90a: sm90_attention_bf16_d128_extras_kernel sm90_attention_bf16_d256_extras_kernel
// compile-expect-kernels sm_90a: sm90_attention_bf16_d128_mods_kernel
// compile-expect-code sm_90a: TMA 4-D load onto an mbarrier = cp\.async\.bulk\.tensor\.4d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes
// compile-expect-code sm_90a: Q K^T by m64n128k16 bf16 from shared memory = wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16 \{[^}]*\}, %rd[0-9]+, %rd[0-9]+
// compile-expect-code sm_90a: P V by m64n128k16 bf16 with P from registers and V N-major = wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16 \{[^}]*\}, \{%r[0-9]+, %r[0-9]+, %r[0-9]+, %r[0-9]+\}, %rd[0-9]+, p, 1, 1, 1
// compile-expect-code sm_90a: P V at head dim 256 by m64n256k16 = wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.bf16\.bf16 \{[^}]*\}, \{%r
// compile-expect-code sm_90a: O stored from shared memory by TMA = cp\.async\.bulk\.tensor\.4d\.global\.shared::cta\.bulk_group
// compile-expect-code sm_90a: producer gives registers back = setmaxnreg\.dec\.sync\.aligned\.u32 40
// compile-expect-code sm_90a: consumers take them = setmaxnreg\.inc\.sync\.aligned\.u32 232
// compile-expect-code sm_90a: exp2 with the scale folded in = ex2\.approx\.ftz\.f32
// compile-expect-code sm_90a: ping-pong, a warpgroup waits for its turn = bar\.sync %r[0-9]+, %r[0-9]+
// compile-expect-code sm_90a: and hands it over = bar\.arrive %r[0-9]+, %r[0-9]+
#include "strata/ops/attention/sm90_forward.hpp"
#include "strata/runtime/runtime.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=sm90a"
#endif

namespace strata_test {
namespace sa = strata::attn;
struct sm90_attention_bf16_d64_kernel : sa::sm90_forward_kernel<strata::bf16, 64> {};
struct sm90_attention_bf16_d128_kernel : sa::sm90_forward_kernel<strata::bf16, 128> {};
struct sm90_attention_bf16_d256_kernel : sa::sm90_forward_kernel<strata::bf16, 256> {};
struct sm90_attention_f16_d128_kernel : sa::sm90_forward_kernel<strata::f16, 128> {};
// With soft-cap, ALiBi and dropout compiled in.
struct sm90_attention_bf16_d128_extras_kernel : sa::sm90_forward_kernel<strata::bf16, 128, true> {};
struct sm90_attention_bf16_d256_extras_kernel : sa::sm90_forward_kernel<strata::bf16, 256, true> {};
// With a score modifier (a relative-position bias) and a mask modifier (a document mask).
struct rel_bias {
  STRATA_HOST_DEVICE float operator()(float s, int, int h, int q, int k) const { return s + 0.05f * (h + 1) * ((q - k) % 3); }
};
struct same_document {
  STRATA_HOST_DEVICE bool operator()(int, int, int q, int k) const { return q / 64 == k / 64; }
};
struct sm90_attention_bf16_d128_mods_kernel : sa::sm90_forward_kernel<strata::bf16, 128, true, rel_bias, same_document> {};

template <class K>
void launch_sm90(strata::stream& s) {
  const typename K::params p{};
  strata::launch(s, K::launch_shape_of(p), K{}, p);
}
}  // namespace strata_test

// Never called: only instantiated, so that every kernel is compiled for the device.
void strata_compile_attention_sm90_kernels(strata::stream& s) {
  using namespace strata_test;
  launch_sm90<sm90_attention_bf16_d64_kernel>(s);
  launch_sm90<sm90_attention_bf16_d128_kernel>(s);
  launch_sm90<sm90_attention_bf16_d256_kernel>(s);
  launch_sm90<sm90_attention_f16_d128_kernel>(s);
  launch_sm90<sm90_attention_bf16_d128_extras_kernel>(s);
  launch_sm90<sm90_attention_bf16_d256_extras_kernel>(s);
  launch_sm90<sm90_attention_bf16_d128_mods_kernel>(s);
}
