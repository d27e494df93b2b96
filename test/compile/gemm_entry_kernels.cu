// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/gemm_entry_kernels.cu -- every GEMM kernel the CUDA host entry ships, compiled for
// sm_80, sm_90a and sm_100a: this file instantiates the entry itself (strata::gemm, and the grouped
// entry for each input type), so the set checked is exactly the set a CUDA build launches: for each
// dtype pair the skinny, medium and large tiles at element and 16-byte row alignment, their stream-K
// forms, the fp32 FMA kernel (fp32 without options.tf32) and the grouped forms.
// fp8 (STRATA_GEMM_FP8, sm90a+ tensor cores) is in on sm_90a and sm_100a. No kernel may spill.
//
// The kernel count is exact, so that a change to the dispatch is seen here: 159 on sm_80, 174 on
// sm_90a and sm_100a (fp8 adds 14 tiles, whose epilogue applies the dequantization scales, and its
// own split-K reduction). The grouped fp32 entry compiles only the FMA tile: it has no tf32 option,
// and the dispatch leaves the tf32 tiles out for it at compile time (they were 6 dead kernels). Since
// 2026-12-06 strata::gemm also compiles its tiles for A row-major x B column-major with 16-byte rows
// (operand_orders::a_row_b_col): 24 more, large, medium and skinny per non-fp8 dtype pair, and the
// two fp8 skinny tiles (the grouped entry does not: its 128 x 128 tile spilled 4 bytes in that form;
// before: 129 and 142). Since 2026-12-06 also the 128 x 256 tile (configs::sm80_wide, no split-K
// form) for the six dtype pairs with 16-bit inputs, fixed orders only: 6 more (153 / 168 before). If
// Since 2026-12-06 also the GEMV kernel (ops/gemm/gemv.hpp) for 4 and 8 rows, for the seven dtype
// pairs with f16, bf16 or fp32 inputs: 14 more (159 / 174 before); and split-K is serial, in one
// launch, so the entry no longer compiles the split-K reduction: 4 fewer on sm_80, 5 on sm_90a and
// sm_100a (one per output epilogue, fp8's included). Since 2026-12-07 the tiles with 16-byte rows
// also come compiled for the other three pairs of operand orders (a_row_b_row, a_col_b_col,
// a_col_b_row): 72 more per target (8 non-fp8 dtype pairs x 3 tiles x 3 pairs), and 6 fp8 skinny
// tiles on sm_90a / sm_100a (169 / 183 before; sm_90a compile 541 s on the idle 2-core machine). If
// a change to gemm.hpp's dispatch moves a count on purpose, update it from the report.
//
// Before this check, ptxas (nvcc 13) spilled 8 bytes in the tf32 64 x 64 tiles and 16 in the fp32
// FMA tile at 80-96 registers, with registers to spare; gemm::kernel, stream_k_kernel and
// grouped_kernel now state their occupancy (min_blocks_per_multiprocessor, docs/design.md item 16).
// The fp32 FMA tile also spilled on sm_100a (812 bytes at 255 registers) and, grouped or stream-K,
// everywhere: each lane held the whole K x N broadcast B fragment (8 x 32 values); CUDA now runs
// configs::fma_sm80 (K = 4).
// This file replaces gemm_stream_k.cu (one stream-K configuration) and keeps its hallmarks.
//
// The HIP entry is compile-checked kernel by kernel in gemm_cdna_kernels.cu (compiling the whole HIP
// entry for one gfx target takes 11 minutes with clang 15; docs/gemm.md).
//
// Only sm_90a in the test suite: it compiles the superset (fp8 included), and the three targets took
// 570 + 497 + 1110 s (sm_90a, sm_80, sm_100a) of CI's 2 cores on 2026-12-04, which took CI past its
// limit. The sm_80 and sm_100a checks: cmake -DSTRATA_COMPILE_ALL_TARGETS=ON (test/compile).
// compile-targets sm_90a
// compile-targets-full sm_.*
// compile-timeout 1800
// compile-flags sm_90a|sm_100a: -DSTRATA_GEMM_FP8
// compile-expect-kernel-count sm_80: 241
// compile-expect-kernel-count sm_90a|sm_100a: 261
// compile-expect-code sm_.*: tensor-core MMA bf16 = mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32
// compile-expect-code sm_.*: tensor-core MMA f16 = mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32
// compile-expect-code sm_.*: tensor-core MMA tf32 = mma\.sync\.aligned\.m16n8k8\.row\.col\.f32\.tf32\.tf32\.f32
// compile-expect-code sm_.*: tensor-core MMA int8 = mma\.sync\.aligned\.m16n8k32\.row\.col(\.satfinite)?\.s32\.s8\.s8\.s32
// compile-expect-code sm_90a|sm_100a: tensor-core MMA e4m3 = mma\.sync\.aligned\.m16n8k32\.row\.col\.f32\.e4m3\.e4m3\.f32
// compile-expect-code sm_90a|sm_100a: tensor-core MMA e5m2 = mma\.sync\.aligned\.m16n8k32\.row\.col\.f32\.e5m2\.e5m2\.f32
// compile-expect-code sm_.*: fragments loaded with ldmatrix = ldmatrix\.sync\.aligned\.m8n8\.x4
// compile-expect-code sm_.*: 16-byte asynchronous copies = cp\.async\.cg\.shared\.global[^\n]*16
// compile-expect-code sm_.*: stream-K release of a partial at GPU scope = st\.release\.gpu
// compile-expect-code sm_.*: stream-K acquire of a partial at GPU scope = ld\.acquire\.gpu
#if !defined(__HIP__) && !defined(__HIPCC__)
#include "strata/gemm.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor>, e.g. sm80 or sm90a"
#endif

namespace g = strata::ops::gemm;

// Never called: only instantiated, so that every kernel the entries can launch is compiled.
void strata_compile_gemm_entry(strata::stream& s, const g::matrix& a, const g::matrix& b, const g::matrix& c,
                               const g::matrix& d, const g::options& o, g::layout l, strata::workspace w) {
  strata::gemm(s, a, b, c, d, o);
  g::run_grouped<float, float>(s, {}, l, l, l, 1.f, 0.f, w);
  g::run_grouped<strata::f16, float>(s, {}, l, l, l, 1.f, 0.f, w);
  g::run_grouped<strata::f16, strata::f16>(s, {}, l, l, l, 1.f, 0.f, w);
  g::run_grouped<strata::f16, strata::bf16>(s, {}, l, l, l, 1.f, 0.f, w);
  g::run_grouped<strata::bf16, float>(s, {}, l, l, l, 1.f, 0.f, w);
  g::run_grouped<strata::bf16, strata::f16>(s, {}, l, l, l, 1.f, 0.f, w);
  g::run_grouped<strata::bf16, strata::bf16>(s, {}, l, l, l, 1.f, 0.f, w);
  g::run_grouped<std::int8_t, std::int32_t>(s, {}, l, l, l, 1.f, 0.f, w);
}
#endif
