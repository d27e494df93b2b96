// strata/ops/attention/mods.hpp -- user score and mask modifiers (FlexAttention / FA4 style).
//
// A score modifier is a trivially copyable functor
//   STRATA_HOST_DEVICE float operator()(float score, int batch, int head, int q, int k) const;
// applied to every logit after scaling, soft-capping and ALiBi, before masking. A mask modifier is
//   STRATA_HOST_DEVICE bool operator()(int batch, int head, int q, int k) const;   // true: keep
// combined (AND) with causal / window masks. q and k are positions inside the sequence. Both are
// template arguments of forward_kernel and of the typed host entry strata::attention<...>(), and are
// stored in the kernel object, so they may carry state (a bias pointer, a document-id table).
#pragma once

#include "strata/config/config.hpp"

namespace strata::attn {

struct no_score_mod {
  STRATA_HOST_DEVICE constexpr float operator()(float s, int, int, int, int) const { return s; }
};
struct no_mask_mod {
  STRATA_HOST_DEVICE constexpr bool operator()(int, int, int, int) const { return true; }
};

}  // namespace strata::attn
