// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CDNA configurations (MFMA, wave64) run as gfx942 / gfx90a on the emulator with the atoms' exact
// fragment layouts and the chiplet-aware tile order.
#include "support.hpp"

using namespace strata_test::gemm;
namespace arch = strata::arch;
namespace cfg = strata::ops::gemm::configs;
using strata::bf16;

TEST_CASE("gemm gfx942 bf16 -> f32: MFMA 32x32x8 and 16x16x16", "[gemm]") {
  using E = ep::chain<ep::alpha_beta<float>, ep::convert_to<float>>;
  using KL = cfg::cdna<arch::gfx942, bf16, E, true>;
  using KS = cfg::cdna<arch::gfx942, bf16, E, false>;
  check<KL>({.m = 33, .n = 130, .k = 40, .a = sg::layout::col_major, .beta = 0.5f, .seed = 51});
  for (const auto& c : shapes()) check<KS>(c);
}

TEST_CASE("gemm gfx90a / gfx942 fp32 on the f32 MFMA: 32x32x2 and 16x16x4", "[gemm]") {
  using E = ep::chain<ep::alpha_beta<float>, ep::convert_to<float>>;
  check<cfg::cdna<arch::gfx942, float, E, true>>({.m = 131, .n = 37, .k = 35, .b = sg::layout::col_major, .beta = 0.5f, .seed = 55});
  check<cfg::cdna<arch::gfx90a, float, E, false>>({.m = 13, .n = 70, .k = 9, .a = sg::layout::col_major, .seed = 56});
  check<cfg::cdna<arch::gfx942, float, E, false>>({.m = 1, .n = 1, .k = 1, .seed = 57});
}

TEST_CASE("gemm gfx90a / gfx942 int8 -> int32 and gfx942 FNUZ fp8", "[gemm]") {
  using EI = ep::chain<ep::alpha_beta<std::int32_t>, ep::convert_to<std::int32_t>>;
  check<cfg::cdna<arch::gfx90a, std::int8_t, EI, false>>({.m = 21, .n = 17, .k = 45, .b = sg::layout::col_major, .seed = 61});
  check<cfg::cdna<arch::gfx942, std::int8_t, EI, false>>({.m = 3, .n = 70, .k = 77, .beta = 1.f, .seed = 62});
  using EB = ep::chain<ep::alpha_beta<bf16>, ep::convert_to<bf16>>;
  check<cfg::cdna<arch::gfx942, strata::f8_e4m3_fnuz, EB, false>>({.m = 18, .n = 19, .k = 65, .beta = 0.5f, .seed = 63});
  check<cfg::cdna<arch::gfx942, strata::f8_e5m2_fnuz, EB, false>>({.m = 7, .n = 5, .k = 33, .a = sg::layout::col_major, .seed = 64});
}
