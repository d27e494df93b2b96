// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/attention/precompiled.hpp -- the runtime-typed attention entries (forward, backward,
// decode, without score or mask mods) that a precompiled kernel library (strata_add_kernel_library)
// compiles once; declared `extern` under STRATA_PRECOMPILED_ENTRIES (scheme: strata/ops/gemm/precompiled.hpp).
// Calls with mods, or attn::run<Elem, D, Dv>, instantiate in the calling file as before.
#pragma once

#include "strata/ops/attention/host.hpp"

#define STRATA_ATTENTION_FORWARD_INSTANCE(prefix)                                                                 \
  prefix template void strata::attention<strata::attn::default_target, strata::attn::no_score_mod,                 \
                                         strata::attn::no_mask_mod>(                                               \
      strata::stream&, const strata::attn::tensor&, const strata::attn::tensor&, const strata::attn::tensor&,      \
      const strata::attn::tensor&, const strata::attn::options&, const strata::attn::no_score_mod&,                \
      const strata::attn::no_mask_mod&);
#define STRATA_ATTENTION_BACKWARD_INSTANCE(prefix)                                                                \
  prefix template void strata::attention_backward<strata::attn::default_target, strata::attn::no_score_mod,        \
                                                  strata::attn::no_mask_mod>(                                      \
      strata::stream&, const strata::attn::tensor&, const strata::attn::tensor&, const strata::attn::tensor&,      \
      const strata::attn::tensor&, const strata::attn::tensor&, const strata::attn::tensor&,                       \
      const strata::attn::tensor&, const strata::attn::tensor&, const strata::attn::options&, strata::workspace,   \
      const strata::attn::no_score_mod&, const strata::attn::no_mask_mod&);
#define STRATA_ATTENTION_DECODE_INSTANCE(prefix)                                                                  \
  prefix template void strata::attention_decode<strata::attn::default_target>(                                     \
      strata::stream&, const strata::attn::tensor&, const strata::attn::tensor&, const strata::attn::tensor&,      \
      const strata::attn::tensor&, const strata::attn::decode_args&, const strata::attn::options&, strata::workspace);

#if STRATA_PRECOMPILED_ENTRIES
STRATA_ATTENTION_FORWARD_INSTANCE(extern)
STRATA_ATTENTION_BACKWARD_INSTANCE(extern)
STRATA_ATTENTION_DECODE_INSTANCE(extern)
#endif
