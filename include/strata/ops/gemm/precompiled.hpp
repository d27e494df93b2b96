// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/gemm/precompiled.hpp -- the GEMM entries' instantiations that a precompiled kernel library
// (cmake: strata_add_kernel_library, docs/performance.md "Cost of use") compiles once.
//
// With STRATA_PRECOMPILED_ENTRIES defined (the library target sets it for its users), gemm.hpp includes
// this header and declares every instance `extern`, so a file calling strata::gemm compiles the
// entry's host code only and links the kernels from the library. The library's sources define the
// instances with the same macros (src/kernels/gemm_*.cpp), so the two lists cannot drift apart.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/ops/gemm/gemm.hpp"

/// One dtype pair of the runtime-typed entry (and of strata::gemm<TA, TD>): detail::run_pair.
#define STRATA_GEMM_PAIR_INSTANCE(prefix, TA, TD)                                                             \
  prefix template void strata::ops::gemm::detail::run_pair<strata::ops::gemm::detail::build_platform, TA, TD>( \
      strata::stream&, const strata::ops::gemm::matrix&, const strata::ops::gemm::matrix&,                       \
      const strata::ops::gemm::matrix&, const strata::ops::gemm::matrix&, const strata::ops::gemm::options&);

/// One dtype pair of the grouped entry.
#define STRATA_GEMM_GROUPED_INSTANCE(prefix, TA, TD)                                                            \
  prefix template void strata::ops::gemm::run_grouped<TA, TD>(                                                   \
      strata::stream&, std::vector<strata::ops::gemm::group_entry<TA, TA, TD>>, strata::ops::gemm::layout,      \
      strata::ops::gemm::layout, strata::ops::gemm::layout, float, float, strata::workspace);

/// Every pair of the runtime-typed entry, by input family (one library source each, so that they
/// compile in parallel; the runtime dispatch names all of them, so its users link all five).
#define STRATA_GEMM_F32_INSTANCES(prefix) STRATA_GEMM_PAIR_INSTANCE(prefix, float, float)
// f16 and bf16 inputs (T) write fp32, f16 or bf16.
#define STRATA_GEMM_HALF_INSTANCES(prefix, T)        \
  STRATA_GEMM_PAIR_INSTANCE(prefix, T, float)        \
  STRATA_GEMM_PAIR_INSTANCE(prefix, T, strata::f16)  \
  STRATA_GEMM_PAIR_INSTANCE(prefix, T, strata::bf16)
#define STRATA_GEMM_F16_INSTANCES(prefix) STRATA_GEMM_HALF_INSTANCES(prefix, strata::f16)
#define STRATA_GEMM_BF16_INSTANCES(prefix) STRATA_GEMM_HALF_INSTANCES(prefix, strata::bf16)
#define STRATA_GEMM_I8_INSTANCES(prefix) STRATA_GEMM_PAIR_INSTANCE(prefix, std::int8_t, std::int32_t)
// The grouped entry's pairs (a piece of their own: a user of strata::gemm alone does not compile them).
#define STRATA_GEMM_GROUPED_INSTANCES(prefix)                           \
  STRATA_GEMM_GROUPED_INSTANCE(prefix, float, float)                    \
  STRATA_GEMM_GROUPED_INSTANCE(prefix, strata::f16, float)              \
  STRATA_GEMM_GROUPED_INSTANCE(prefix, strata::f16, strata::f16)        \
  STRATA_GEMM_GROUPED_INSTANCE(prefix, strata::f16, strata::bf16)       \
  STRATA_GEMM_GROUPED_INSTANCE(prefix, strata::bf16, float)             \
  STRATA_GEMM_GROUPED_INSTANCE(prefix, strata::bf16, strata::f16)       \
  STRATA_GEMM_GROUPED_INSTANCE(prefix, strata::bf16, strata::bf16)      \
  STRATA_GEMM_GROUPED_INSTANCE(prefix, std::int8_t, std::int32_t)
// fp8 on a platform without fp8 units instantiates only the entry's strata::unsupported error.
#define STRATA_GEMM_FP8_INSTANCES(prefix)                          \
  STRATA_GEMM_PAIR_INSTANCE(prefix, strata::f8_e4m3, strata::bf16) \
  STRATA_GEMM_PAIR_INSTANCE(prefix, strata::f8_e5m2, strata::bf16)

#if STRATA_PRECOMPILED_ENTRIES
STRATA_GEMM_F32_INSTANCES(extern)
STRATA_GEMM_F16_INSTANCES(extern)
STRATA_GEMM_BF16_INSTANCES(extern)
STRATA_GEMM_I8_INSTANCES(extern)
STRATA_GEMM_FP8_INSTANCES(extern)
STRATA_GEMM_GROUPED_INSTANCES(extern)
#endif
