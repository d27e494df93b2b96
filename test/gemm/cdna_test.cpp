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

TEST_CASE("gemm CDNA tiles compiled for A row-major, B column-major (operand_orders::a_row_b_col)", "[gemm]") {
  // What strata::gemm runs on HIP for that layout with 16-byte rows: the operands' copies as streams
  // staged through registers (one barrier per K step), fragments read with 16-byte LDS reads along a
  // K order permuted within the stage (mma::vector_fragments). Leading dimensions stay multiples of
  // 16 bytes (the emulator reports a misaligned 16-byte load).
  const auto tn = [](case_t c) {
    c.a = sg::layout::row_major;
    c.b = sg::layout::col_major;
    return c;
  };
  using E = ep::chain<ep::alpha_beta<bf16>, ep::convert_to<bf16>>;
  using KL = cfg::cdna<arch::gfx942, bf16, E, true, 16, sg::operand_orders::a_row_b_col>;
  using KS = cfg::cdna<arch::gfx942, bf16, E, false, 16, sg::operand_orders::a_row_b_col>;
  using KA = cfg::cdna<arch::gfx942, bf16, E, true, 16>;  // the same tile, layouts read at run time
  // Edges in M, N and K (a K residue, loaded first), K = 0, K of one partial step only, padded leading
  // dimensions, batch, split-K (parallel and serial, the residue in the last split) and stream-K.
  check<KL>(tn({.m = 130, .n = 70, .k = 72, .beta = 0.5f, .seed = 101}));
  check<KL>(tn({.m = 257, .n = 129, .k = 64, .pad = 8, .seed = 102}));
  check<KL>(tn({.m = 5, .n = 3, .k = 0, .beta = 1.f, .seed = 103}));
  check<KL>(tn({.m = 33, .n = 40, .k = 8, .seed = 104}));
  check<KL>(tn({.m = 140, .n = 20, .k = 200, .batch = 2, .splits = 3, .seed = 105}));
  check<KL>(tn({.m = 131, .n = 33, .k = 104, .splits = 2, .serial = true, .seed = 106}));
  check<KL>(tn({.m = 129, .n = 130, .k = 96, .stream_k = 2, .seed = 107}));
  check<KS>(tn({.m = 13, .n = 70, .k = 136, .d = sg::layout::col_major, .beta = 0.5f, .seed = 108}));
  check<KS>(tn({.m = 1, .n = 1, .k = 8, .splits = 2, .seed = 109}));
  check<KS>(tn({.m = 32, .n = 65, .k = 64, .pad = 8, .seed = 110}));
  // The fixed-order tile sums each stage's K in the permuted order, so it agrees with the any-order
  // kernel to rounding (each within the tolerance of the reference), and it is deterministic: the same
  // inputs give the same bits twice.
  const case_t same = tn({.m = 150, .n = 90, .k = 96, .beta = 0.5f, .pad = 8, .seed = 111});
  check<KA>(same);
  REQUIRE(check<KL>(same) == check<KL>(same));
  // The other input types on their fixed-order tiles: f16, fp32 (f32 MFMA, one k per lane), int8 on
  // CDNA2 (4 per lane) and CDNA3 (8 per lane), FNUZ fp8 and OCP fp8 (remapped bytes, product rescaled).
  using EF = ep::chain<ep::alpha_beta<float>, ep::convert_to<float>>;
  check<cfg::cdna<arch::gfx942, strata::f16, EF, true, 16, sg::operand_orders::a_row_b_col>>(
      tn({.m = 70, .n = 66, .k = 40, .beta = 0.5f, .seed = 112}));
  check<cfg::cdna<arch::gfx90a, float, EF, true, 16, sg::operand_orders::a_row_b_col>>(
      tn({.m = 131, .n = 37, .k = 36, .beta = 0.5f, .seed = 113}));
  check<cfg::cdna<arch::gfx942, float, EF, false, 16, sg::operand_orders::a_row_b_col>>(
      tn({.m = 9, .n = 70, .k = 68, .seed = 114}));
  using EI = ep::chain<ep::alpha_beta<std::int32_t>, ep::convert_to<std::int32_t>>;
  check<cfg::cdna<arch::gfx90a, std::int8_t, EI, true, 16, sg::operand_orders::a_row_b_col>>(
      tn({.m = 67, .n = 33, .k = 80, .seed = 115}));
  check<cfg::cdna<arch::gfx942, std::int8_t, EI, false, 16, sg::operand_orders::a_row_b_col>>(
      tn({.m = 3, .n = 70, .k = 144, .beta = 1.f, .seed = 116}));
  using EB = ep::chain<ep::alpha_beta<bf16>, ep::convert_to<bf16>>;
  check<cfg::cdna<arch::gfx942, strata::f8_e4m3_fnuz, EB, false, 16, sg::operand_orders::a_row_b_col>>(
      tn({.m = 18, .n = 19, .k = 80, .beta = 0.5f, .seed = 117}));
  check<cfg::cdna<arch::gfx942, strata::f8_e5m2, EB, true, 16, sg::operand_orders::a_row_b_col>>(
      tn({.m = 40, .n = 35, .k = 48, .seed = 118}));
}

TEST_CASE("gemm CDNA tiles compiled for the orders along M or N (A column-major, B row-major)", "[gemm]") {
  // What strata::gemm runs on HIP for the other pairs of orders with 16-byte rows: an operand stored
  // along M or N is copied down its rows and written into its stage transposed
  // (copy::tile_stream_transposed), so the stages run along K and the fragments are 16-byte reads as
  // for the K-major pair. Every leading dimension of A and B is a multiple of 16 bytes (the padding
  // makes it so), as the entry checks. M or N not a multiple of the vector (8 bf16) makes the tile at
  // that edge read its straddling vector element by element (the loop's other form); a multiple
  // leaves whole vectors past the edge, which read the row's start.
  using sg::layout;
  const auto orders = [](case_t c, layout a, layout b) {
    c.a = a;
    c.b = b;
    return c;
  };
  using E = ep::chain<ep::alpha_beta<bf16>, ep::convert_to<bf16>>;
  using O = sg::operand_orders;
  using RR = cfg::cdna<arch::gfx942, bf16, E, true, 16, O::a_row_b_row>;
  using CC = cfg::cdna<arch::gfx942, bf16, E, true, 16, O::a_col_b_col>;
  using CR = cfg::cdna<arch::gfx942, bf16, E, true, 16, O::a_col_b_row>;
  using RRs = cfg::cdna<arch::gfx942, bf16, E, false, 16, O::a_row_b_row>;
  using CRs = cfg::cdna<arch::gfx942, bf16, E, false, 16, O::a_col_b_row>;
  const layout R = layout::row_major, C = layout::col_major;
  // N straddling (70) with a K residue; N a multiple of 8 below the tile; one partial K step only;
  // K = 0; split-K parallel and serial; batch; stream-K.
  check<RR>(orders({.m = 130, .n = 70, .k = 70, .beta = 0.5f, .pad = 2, .seed = 121}, R, R));
  check<RR>(orders({.m = 67, .n = 40, .k = 104, .seed = 122}, R, R));
  check<RR>(orders({.m = 257, .n = 136, .k = 8, .seed = 123}, R, R));
  check<RR>(orders({.m = 5, .n = 3, .k = 0, .beta = 1.f, .seed = 124}, R, R));
  check<RR>(orders({.m = 140, .n = 24, .k = 200, .batch = 2, .splits = 3, .seed = 125}, R, R));
  check<RR>(orders({.m = 129, .n = 130, .k = 98, .pad = 6, .stream_k = 2, .seed = 126}, R, R));
  // M straddling (67); M and N both (70, 134), batch; serial split-K with the residue in the last split.
  check<CC>(orders({.m = 67, .n = 129, .k = 43, .pad = 5, .seed = 127}, C, C));
  check<CR>(orders({.m = 70, .n = 134, .k = 64, .batch = 2, .beta = 0.5f, .pad = 2, .seed = 128}, C, R));
  check<CR>(orders({.m = 40, .n = 48, .k = 104, .splits = 2, .serial = true, .seed = 129}, C, R));
  // The skinny tile: A's stage has fewer vectors than the block has threads.
  check<RRs>(orders({.m = 13, .n = 70, .k = 134, .d = layout::col_major, .pad = 2, .seed = 130}, R, R));
  check<CRs>(orders({.m = 32, .n = 16, .k = 8, .batch = 2, .seed = 131}, C, R));
  check<CRs>(orders({.m = 11, .n = 75, .k = 133, .beta = 0.5f, .pad = 5, .seed = 132}, C, R));
  // Deterministic: the same inputs give the same bits twice.
  const case_t same = orders({.m = 146, .n = 90, .k = 96, .beta = 0.5f, .pad = 6, .seed = 133}, C, R);
  REQUIRE(check<CR>(same) == check<CR>(same));
  // The other input types: f16, fp32 (one k per lane, 4-element vectors), int8 on CDNA2 and CDNA3 (16
  // elements a vector), FNUZ fp8 and OCP fp8.
  using EF = ep::chain<ep::alpha_beta<float>, ep::convert_to<float>>;
  check<cfg::cdna<arch::gfx942, strata::f16, EF, true, 16, O::a_col_b_row>>(
      orders({.m = 66, .n = 66, .k = 40, .beta = 0.5f, .pad = 6, .seed = 134}, C, R));
  check<cfg::cdna<arch::gfx90a, float, EF, true, 16, O::a_col_b_row>>(orders({.m = 70, .n = 38, .k = 20, .pad = 2, .seed = 135}, C, R));
  check<cfg::cdna<arch::gfx942, float, EF, false, 16, O::a_row_b_row>>(orders({.m = 9, .n = 70, .k = 66, .pad = 2, .seed = 136}, R, R));
  using EI = ep::chain<ep::alpha_beta<std::int32_t>, ep::convert_to<std::int32_t>>;
  check<cfg::cdna<arch::gfx90a, std::int8_t, EI, true, 16, O::a_col_b_col>>(
      orders({.m = 67, .n = 33, .k = 83, .pad = 13, .seed = 137}, C, C));
  check<cfg::cdna<arch::gfx942, std::int8_t, EI, false, 16, O::a_col_b_row>>(
      orders({.m = 9, .n = 41, .k = 64, .pad = 7, .seed = 138}, C, R));
  using EB = ep::chain<ep::alpha_beta<bf16>, ep::convert_to<bf16>>;
  check<cfg::cdna<arch::gfx942, strata::f8_e4m3_fnuz, EB, false, 16, O::a_row_b_row>>(
      orders({.m = 18, .n = 19, .k = 83, .beta = 0.5f, .pad = 13, .seed = 139}, R, R));
  check<cfg::cdna<arch::gfx942, strata::f8_e5m2, EB, true, 16, O::a_col_b_col>>(
      orders({.m = 40, .n = 35, .k = 56, .pad = 8, .seed = 140}, C, C));
}
