// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The sm80 configurations (mma.sync m16n8k16 / m16n8k8 tf32 / m16n8k32 s8, cp.async multistage) run
// as arch::sm80 on the emulator with the atoms' exact fragment layouts; fp8 e4m3 / e5m2 as sm90a.
#include "support.hpp"

using namespace strata_test::gemm;
namespace arch = strata::arch;
namespace cfg = strata::ops::gemm::configs;
using strata::bf16;
using strata::f16;

TEST_CASE("gemm sm80 bf16 -> bf16, 16-byte cp.async and 2-byte plain copies", "[gemm]") {
  using E = ep::chain<ep::alpha_beta<bf16>, ep::convert_to<bf16>>;
  using K2 = cfg::sm80<arch::sm80, bf16, E, cfg::sm80_medium>;
  for (const auto& c : shapes()) check<K2>(c);
  // 16-byte rows: leading dimensions a multiple of 8 elements.
  using K16 = cfg::sm80<arch::sm80, bf16, E, cfg::sm80_medium, 16>;
  check<K16>({.m = 24, .n = 40, .k = 72, .beta = 0.5f, .seed = 21});
  check<K16>({.m = 8, .n = 16, .k = 48, .a = sg::layout::col_major, .b = sg::layout::col_major, .pad = 8, .seed = 22});
}

TEST_CASE("gemm sm80 f16 -> f32 large tile, skinny tile, bias + relu, split-K", "[gemm]") {
  using E = ep::chain<ep::alpha_beta<float>, ep::bias_col<float>, ep::relu, ep::convert_to<float>>;
  using KL = cfg::sm80<arch::sm80, f16, E, cfg::sm80_large>;
  using KS = cfg::sm80<arch::sm80, f16, E, cfg::sm80_skinny>;
  check<KL, true>({.m = 130, .n = 9, .k = 33, .b = sg::layout::col_major, .beta = 1.f, .seed = 31});
  for (const auto& c : shapes()) check<KS, true>(c);
  check<KS, true>({.m = 5, .n = 70, .k = 200, .splits = 3, .seed = 32});
}

TEST_CASE("gemm sm80 tf32 and int8", "[gemm]") {
  using KT = cfg::sm80<arch::sm80, float, ep::chain<ep::alpha_beta<float>, ep::convert_to<float>>, cfg::sm80_medium>;
  for (const auto& c : shapes()) check<KT>(c);
  using KI = cfg::sm80<arch::sm80, std::int8_t, ep::chain<ep::alpha_beta<std::int32_t>, ep::convert_to<std::int32_t>>,
                       cfg::sm80_skinny>;
  for (auto c : shapes()) {
    c.alpha = 1.f;
    c.beta = c.beta != 0.f ? 1.f : 0.f;
    check<KI>(c);
  }
}

TEST_CASE("gemm fp32 FMA tile of the CUDA entry (configs::fma_sm80) as sm80", "[gemm]") {
  // What strata::gemm runs for fp32 without options.tf32 in a CUDA build: 64 x 64 x 4, 2 x 2 warps.
  using E = ep::chain<ep::alpha_beta<float>, ep::bias_col<float>, ep::relu, ep::convert_to<float>>;
  using KF = cfg::fma<arch::sm80, float, E, cfg::fma_sm80>;
  for (const auto& c : shapes()) check<KF, true>(c);
  check<KF, true>({.m = 70, .n = 130, .k = 9, .b = sg::layout::col_major, .beta = 1.f, .splits = 2, .seed = 45});
  check<KF, true>({.m = 67, .n = 129, .k = 41, .beta = 0.5f, .stream_k = 3, .seed = 46});
}

TEST_CASE("gemm sm90a fp8 e4m3 / e5m2 (mma.sync m16n8k32) -> bf16", "[gemm]") {
  using E = ep::chain<ep::alpha_beta<bf16>, ep::convert_to<bf16>>;
  using K4 = cfg::sm80<arch::sm90a, strata::f8_e4m3, E, cfg::sm80_skinny>;
  using K5 = cfg::sm80<arch::sm90a, strata::f8_e5m2, E, cfg::sm80_skinny>;
  for (const auto& c : shapes()) check<K4>(c);
  check<K5>({.m = 13, .n = 21, .k = 70, .a = sg::layout::col_major, .beta = 0.5f, .seed = 41});
}

TEST_CASE("gemm sm80 serial split-K (bf16 -> bf16, tf32)", "[gemm]") {
  using E = ep::chain<ep::alpha_beta<bf16>, ep::convert_to<bf16>>;
  check<cfg::sm80<arch::sm80, bf16, E, cfg::sm80_medium>>({.m = 70, .n = 9, .k = 200, .beta = 0.5f, .splits = 3, .serial = true, .seed = 33});
  using KT = cfg::sm80<arch::sm80, float, ep::chain<ep::alpha_beta<float>, ep::convert_to<float>>, cfg::sm80_skinny>;
  check<KT>({.m = 5, .n = 70, .k = 260, .b = sg::layout::col_major, .splits = 4, .serial = true, .seed = 34});
}
