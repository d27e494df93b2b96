// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The GEMM kernel template with the scalar-FMA configuration, run as the host target (warp 32) and as
// gfx942 (wave64): fp32, bf16 -> bf16, int8 -> int32, every layout, batched, alpha/beta, bias+ReLU,
// parallel split-K, over the odd shapes of support.hpp.
#include "support.hpp"

using namespace strata_test::gemm;
namespace arch = strata::arch;
namespace cfg = strata::ops::gemm::configs;
using strata::bf16;

TEST_CASE("gemm fma fp32 on host", "[gemm]") {
  using K = cfg::fma<arch::host, float, ep::chain<ep::alpha_beta<float>, ep::convert_to<float>>>;
  for (const auto& c : shapes(300)) check<K>(c);
}

TEST_CASE("gemm fma bf16 -> bf16 with bias + relu, and split-K", "[gemm]") {
  using K = cfg::fma<arch::host, bf16, ep::chain<ep::alpha_beta<bf16>, ep::bias_col<float>, ep::relu, ep::convert_to<bf16>>>;
  for (auto c : shapes()) check<K, true>(c);
  for (auto c : shapes(90)) {
    c.splits = 3;
    check<K, true>(c);
  }
}

TEST_CASE("gemm fma int8 -> int32, exact", "[gemm]") {
  using K = cfg::fma<arch::host, std::int8_t, ep::chain<ep::alpha_beta<std::int32_t>, ep::convert_to<std::int32_t>>>;
  for (auto c : shapes()) {
    c.alpha = 1.f;
    c.beta = c.beta != 0.f ? 1.f : 0.f;
    check<K>(c);
  }
}

TEST_CASE("gemm fma fp32 as gfx942 (wave64) with the chiplet order", "[gemm]") {
  using K = cfg::fma<arch::gfx942, float, ep::chain<ep::alpha_beta<float>, ep::convert_to<float>>>;
  static_assert(std::is_same_v<K::order_type, strata::order::chiplet_default>);
  for (const auto& c : shapes()) check<K>(c);
  check<K>({.m = 150, .n = 70, .k = 9, .seed = 11});  // 3 x 3 tiles over the 8-XCD dispatch model
}

TEST_CASE("gemm serial split-K: splits take turns per tile, deterministic, any epilogue", "[gemm]") {
  using K = cfg::fma<arch::host, bf16, ep::chain<ep::alpha_beta<bf16>, ep::bias_col<float>, ep::relu, ep::convert_to<bf16>>>;
  for (auto c : shapes(90)) {
    c.splits = 3;
    c.serial = true;
    check<K, true>(c);
  }
  using KF = cfg::fma<arch::host, float, ep::chain<ep::alpha_beta<float>, ep::convert_to<float>>>;
  // More splits than K steps (some splits add zeros), several tiles, batched.
  check<KF>({.m = 70, .n = 40, .k = 24, .batch = 2, .beta = 0.5f, .splits = 5, .serial = true, .seed = 12});
  check<KF>({.m = 9, .n = 33, .k = 300, .a = sg::layout::col_major, .splits = 7, .serial = true, .seed = 13});
  using KI = cfg::fma<arch::host, std::int8_t, ep::chain<ep::alpha_beta<std::int32_t>, ep::convert_to<std::int32_t>>>;
  check<KI>({.m = 33, .n = 65, .k = 100, .splits = 4, .serial = true, .seed = 14});
}

TEST_CASE("gemm serial split-K as gfx942 (wave64, chiplet order)", "[gemm]") {
  using K = cfg::fma<arch::gfx942, float, ep::chain<ep::alpha_beta<float>, ep::convert_to<float>>>;
  check<K>({.m = 150, .n = 70, .k = 64, .beta = 1.f, .splits = 3, .serial = true, .seed = 15});
}
