// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/embedding/precompiled.hpp -- the embedding entries (forward, its bounds check, backward)
// that a precompiled kernel library (strata_add_kernel_library) compiles once; declared `extern` under
// STRATA_PRECOMPILED_ENTRIES (scheme: strata/ops/gemm/precompiled.hpp).
#pragma once

#include "strata/ops/embedding/backward_host.hpp"
#include "strata/ops/embedding/host.hpp"

#define STRATA_EMBEDDING_FORWARD_INSTANCES(prefix)                                                               \
  prefix template void strata::embedding_bag_async<void>(strata::stream&, const strata::embedding::forward_args&,  \
                                                         strata::workspace);                                      \
  prefix template void strata::embedding_check<void>(strata::stream&, const strata::embedding::lookup&,            \
                                                     strata::workspace, const char*);
#define STRATA_EMBEDDING_BACKWARD_INSTANCES(prefix)                                                               \
  prefix template void strata::embedding_bag_backward_async<void>(strata::stream&,                                 \
                                                                  const strata::embedding::backward_args&,         \
                                                                  strata::workspace);

#if STRATA_PRECOMPILED_ENTRIES
STRATA_EMBEDDING_FORWARD_INSTANCES(extern)
STRATA_EMBEDDING_BACKWARD_INSTANCES(extern)
#endif
